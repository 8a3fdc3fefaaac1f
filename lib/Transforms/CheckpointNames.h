//===- CheckpointNames.h - Hugging Face tensor names by family --*- C++ -*-===//
//
// Private to lib/Transforms. The model IR names each op's weights by a
// module prefix ("model.layers.3.mlp"); these are the tensors under it, as
// each supported model family's checkpoints spell them.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_TRANSFORMS_CHECKPOINTNAMES_H
#define HELIX_LIB_TRANSFORMS_CHECKPOINTNAMES_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace helix::sharding {

/// Tensors of one MoE block. Per-expert names hold "{expert}".
struct MoENames {
  std::string router, routerBias; // routerBias empty: none
  bool fused = false;             // gpt-oss: gate_up [E, H, 2I], down [E, I, H]
  std::string gate, up, down;     // one tensor per expert (not fused)
  std::string gateUp;             // fused
  std::string gateBias, upBias, gateUpBias, downBias;
  std::string sharedGate, sharedUp, sharedDown;
  /// The shared expert's sigmoid gate [1, H] (empty: none).
  std::string sharedExpertGate;
};

/// `modelType` is the Hugging Face model_type; `routerBias` says whether the
/// router has a bias or score correction (gpt-oss, DeepSeek-V3 style
/// sigmoid routing); `sharedExpertGate` that the block has one gated
/// shared expert (Qwen3-Next's mlp.shared_expert.* and
/// mlp.shared_expert_gate; DeepSeek's are mlp.shared_experts.*).
MoENames moeNames(llvm::StringRef modelType, llvm::StringRef prefix,
                  bool routerBias, bool sharedExpertGate = false);

/// Whether the family's router has a bias: gpt-oss, and sigmoid-scored
/// DeepSeek-V3 / Kimi-K2 / DeepSeek-V3.2 / GLM-5 (e_score_correction_bias).
bool hasRouterBias(llvm::StringRef modelType, bool sigmoid);

} // namespace helix::sharding

#endif // HELIX_LIB_TRANSFORMS_CHECKPOINTNAMES_H
