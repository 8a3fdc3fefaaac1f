//===- DeepSeek.cpp - deepseek_v2, deepseek_v3, kimi_k2 -------------------===//
//
// Multi-head latent attention (MLA) and DeepSeek-MoE: shared experts,
// grouped routing, and dense layers before first_k_dense_replace and off
// the moe_layer_freq grid. Kimi-K2 is a DeepSeek-V3 with other sizes.
//
//===----------------------------------------------------------------------===//

#include "CommonFields.h"
#include "Families.h"

namespace helix {
namespace import {

/// MLA: one compressed latent (kv_lora_rank) plus a shared RoPE key is
/// cached per token, so the spec records a single KV "head".
static bool readMLA(const FieldReader &r, AttentionSpec &attn) {
  attn = AttentionSpec();
  bool bias = false;
  if (!r.getInt("num_attention_heads", attn.numHeads) ||
      !r.getOptInt("q_lora_rank", attn.qLoraRank, 0, 0) ||
      !r.getInt("kv_lora_rank", attn.kvLoraRank) ||
      !r.getInt("qk_nope_head_dim", attn.qkNopeHeadDim) ||
      !r.getInt("qk_rope_head_dim", attn.qkRopeHeadDim) ||
      !r.getInt("v_head_dim", attn.vHeadDim) ||
      !r.getOptBool("attention_bias", bias, false))
    return false;
  attn.kind = AttentionKind::MLA;
  attn.numKVHeads = 1;
  attn.headDim = attn.qkNopeHeadDim + attn.qkRopeHeadDim;
  attn.qkvBias = attn.outBias = bias;
  return true;
}

/// Grouped routing: experts split into n_group groups, top-k chosen within
/// the best topk_group groups.
static bool readGroupedRouting(const FieldReader &r, bool isV2, MoESpec &moe) {
  std::string method;
  if (!r.getOptInt("n_group", moe.nGroup, 1) ||
      !r.getOptInt("topk_group", moe.topkGroup, 1) ||
      !r.getOptString("topk_method", method, isV2 ? "greedy" : "noaux_tc"))
    return false;
  std::string groups = std::to_string(moe.nGroup);
  if (moe.topkGroup > moe.nGroup)
    return r.fail("topk_group", std::to_string(moe.topkGroup) +
                                    " exceeds n_group = " + groups);
  if (moe.numExperts % moe.nGroup != 0)
    return r.fail("n_routed_experts",
                  std::to_string(moe.numExperts) +
                      " is not divisible by n_group = " + groups);
  int64_t reachable = moe.topkGroup * (moe.numExperts / moe.nGroup);
  if (method != "greedy" && moe.topK > reachable)
    return r.fail("num_experts_per_tok",
                  "top-k " + std::to_string(moe.topK) + " exceeds the " +
                      std::to_string(reachable) + " experts in topk_group = " +
                      std::to_string(moe.topkGroup) +
                      " of n_group = " + groups + " groups");
  return true;
}

static bool readDeepSeekMoE(const FieldReader &r, bool isV2, MoESpec &moe) {
  moe = MoESpec();
  if (!readRoutedExperts(r, "n_routed_experts", "num_experts_per_tok",
                         "moe_intermediate_size", moe) ||
      !r.getOptInt("n_shared_experts", moe.numSharedExperts, 0, 0) ||
      !readGroupedRouting(r, isV2, moe) ||
      !r.getOptDouble("routed_scaling_factor", moe.routedScalingFactor, 1.0) ||
      !r.getOptBool("norm_topk_prob", moe.normTopkProb, false) ||
      !r.getOptString("scoring_func", moe.scoringFunc,
                      isV2 ? "softmax" : "sigmoid"))
    return false;
  if (moe.scoringFunc != "softmax" && moe.scoringFunc != "sigmoid")
    return r.fail("scoring_func",
                  "unknown scoring function \"" + moe.scoringFunc +
                      "\", expected \"softmax\" or \"sigmoid\"");
  moe.sharedIntermediate =
      moe.numSharedExperts > 0 ? moe.expertIntermediate : 0;
  return true;
}

bool importDeepSeek(const FieldReader &r, const std::string &modelType,
                    ModelSpec &m) {
  bool isV2 = modelType == "deepseek_v2";
  int64_t n = 0, numRouted = 0, firstDense = 0, freq = 1;
  AttentionSpec attn;
  MoESpec moe;
  FFNSpec ffn;
  if (!readModelBasics(r, FamilyDefaults(), m, n) || !readMLA(r, attn) ||
      !readRope(r, rope_defaults::kTheta, m.maxPositionEmbeddings, attn.rope) ||
      !r.getOptInt("n_routed_experts", numRouted, 0, 0) ||
      !r.getOptInt("first_k_dense_replace", firstDense, 0, 0) ||
      !r.getOptInt("moe_layer_freq", freq, 1))
    return false;
  if (numRouted > 0 && !readDeepSeekMoE(r, isV2, moe))
    return false;
  // Hugging Face DeepseekV2/V3DecoderLayer.
  std::vector<bool> isMoE(n, false);
  bool anyDense = false;
  for (int64_t i = 0; i < n; ++i) {
    isMoE[i] = numRouted > 0 && i >= firstDense && i % freq == 0;
    anyDense |= !isMoE[i];
  }
  if (!readDenseFFN(r, anyDense, ffn))
    return false;
  buildLayers(attn, ffn, moe, std::vector<int64_t>(n, 0), isMoE, m);
  return true;
}

} // namespace import
} // namespace helix
