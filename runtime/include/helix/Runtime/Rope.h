//===- Rope.h - Rotary position embeddings and their scalings ---*- C++ -*-===//
//
// Inverse frequencies and the cos/sin scale ("attention factor") of RoPE as
// Hugging Face computes them (modeling_rope_utils): default, linear, dynamic
// (NTK), yarn (including DeepSeek's mscale / mscale_all_dim) and llama3.
// longrope needs per-dimension factor lists the configs carry and is
// refused.
//
// Two layouts: half-split (Llama: rotate_half pairs i and i + d/2) and
// interleaved (DeepSeek MLA's rope part: pairs 2i and 2i+1).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_ROPE_H
#define HELIX_RUNTIME_ROPE_H

#include "helix/Common/Rope.h"

#include <cstdint>
#include <string>
#include <vector>

namespace helix {
namespace rt {

/// A layer's RoPE: the parameters its config gives (helix/Common/Rope.h,
/// with the defaults the compiler uses) and what the model and layer add.
struct RopeConfig : RopeParams {
  int64_t maxPosition = 0;  // max_position_embeddings (dynamic, yarn)
  int64_t rotaryDim = 0;    // dimensions rotated per head
  bool interleaved = false; // pairs (2i, 2i+1) instead of (i, i+d/2)
};

class Rope {
public:
  /// Throws Error for unsupported scalings or an odd rotary dimension.
  explicit Rope(const RopeConfig &config);

  const RopeConfig &config() const { return config_; }
  /// rotaryDim / 2 inverse frequencies for a step whose longest sequence is
  /// `seqLen` positions (only dynamic scaling depends on it).
  std::vector<float> invFreq(int64_t seqLen) const;
  /// cos and sin are multiplied by this (yarn's attention factor; else 1).
  float attentionFactor() const { return attentionFactor_; }
  /// Multiplier of the softmax scale: DeepSeek's yarn mscale(factor,
  /// mscale_all_dim)^2 when mscale_all_dim is set, else 1.
  double softmaxScaleMultiplier() const;

  /// yarn_get_mscale.
  static double yarnMscale(double scale, double mscale);

private:
  RopeConfig config_;
  std::vector<float> invFreq_;
  float attentionFactor_ = 1.0f;
};

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_ROPE_H
