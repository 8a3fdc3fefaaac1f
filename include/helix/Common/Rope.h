//===- Rope.h - RoPE parameters shared by compiler and runtime --*- C++ -*-===//
//
// The RoPE parameters of one attention layer as Hugging Face configs spell
// them, and their defaults, defined once: the importer (ModelSpec), the
// #helix.rope attribute (its parameters' default values) and the runtime
// (helix::rt::RopeConfig) all use these, so a config that leaves a field out
// means the same thing everywhere. The defaults are transformers'
// (modeling_rope_utils: `_compute_yarn_parameters` takes beta_fast = 32 and
// beta_slow = 1; mscale and mscale_all_dim absent read as 0).
//
// Header-only and dependency-free: installed with helix and included by the
// generated host code through the runtime's headers.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_ROPE_H
#define HELIX_COMMON_ROPE_H

#include <cstdint>
#include <string>

namespace helix {

/// Default value of each RoPE parameter.
namespace rope_defaults {
inline constexpr double kTheta = 10000.0;
inline constexpr double kFactor = 1.0;
/// 0: max_position_embeddings (yarn, dynamic).
inline constexpr int64_t kOriginalMaxPosition = 0;
inline constexpr double kLowFreqFactor = 0.0;  // llama3 (required there)
inline constexpr double kHighFreqFactor = 0.0; // llama3 (required there)
inline constexpr double kBetaFast = 32.0;      // yarn
inline constexpr double kBetaSlow = 1.0;       // yarn
inline constexpr double kMscale = 0.0;         // yarn (DeepSeek; 0: absent)
inline constexpr double kMscaleAllDim = 0.0;   // yarn (DeepSeek; 0: absent)
} // namespace rope_defaults

/// RoPE and its scaled variants.
struct RopeParams {
  double theta = rope_defaults::kTheta;
  /// "" (no scaling), "linear", "dynamic", "yarn", "llama3", "longrope".
  std::string scaling;
  double factor = rope_defaults::kFactor;
  int64_t originalMaxPosition = rope_defaults::kOriginalMaxPosition;
  double lowFreqFactor = rope_defaults::kLowFreqFactor;
  double highFreqFactor = rope_defaults::kHighFreqFactor;
  double betaFast = rope_defaults::kBetaFast;
  double betaSlow = rope_defaults::kBetaSlow;
  double mscale = rope_defaults::kMscale;
  double mscaleAllDim = rope_defaults::kMscaleAllDim;
};

} // namespace helix

#endif // HELIX_COMMON_ROPE_H
