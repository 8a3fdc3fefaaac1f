//===- DeepSeek.cpp - deepseek_v2/v3/v32, kimi_k2, glm_moe_dsa -----------===//
//
// Multi-head latent attention (MLA) and DeepSeek-MoE: shared experts,
// grouped routing, and dense layers before first_k_dense_replace and off
// the moe_layer_freq grid. Kimi-K2 is a DeepSeek-V3 with other sizes;
// DeepSeek-V3.2 and GLM-5 (glm_moe_dsa) add DeepSeek Sparse Attention's
// lightning indexer to every MLA layer.
//
//===----------------------------------------------------------------------===//

#include "CommonFields.h"
#include "Families.h"

namespace helix {
namespace import {

/// MLA: one compressed latent (kv_lora_rank) plus a shared RoPE key is
/// cached per token, so the spec records a single KV "head".
bool readMLA(const FieldReader &r, AttentionSpec &attn) {
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

/// DeepSeek Sparse Attention: index_n_heads index heads of index_head_dim
/// scoring every cached token; the MLA attends to the index_topk best.
static bool readIndexer(const FieldReader &r, AttentionSpec &attn) {
  IndexerSpec &x = attn.indexer;
  if (!r.getInt("index_n_heads", x.numHeads) ||
      !r.getInt("index_head_dim", x.headDim) ||
      !r.getInt("index_topk", x.topK) ||
      !r.getOptBool("indexer_rope_interleave", x.ropeInterleave, false))
    return false;
  x.ropeDim = attn.qkRopeHeadDim;
  if (x.ropeDim > x.headDim)
    return r.fail("index_head_dim",
                  std::to_string(x.headDim) +
                      " is smaller than the RoPE part qk_rope_head_dim = " +
                      std::to_string(x.ropeDim));
  return true;
}

/// GLM-5's index_topk_pattern: one letter per layer, "F" for a layer with
/// its own indexer, "S" for one that reuses the previous layer's top-k.
static bool readSharedIndexerLayers(const FieldReader &r, ModelSpec &m) {
  for (const char *key : {"index_topk_freq", "index_skip_topk_offset"})
    if (r.has(key))
      return r.fail(key, "not supported: say which layers share the "
                         "previous layer's top-k with index_topk_pattern");
  std::string pattern;
  if (!r.getOptString("index_topk_pattern", pattern, ""))
    return false;
  if (pattern.empty())
    return true;
  if (pattern.size() != m.layers.size())
    return r.fail("index_topk_pattern",
                  "has " + std::to_string(pattern.size()) +
                      " letters, expected num_hidden_layers = " +
                      std::to_string(m.layers.size()));
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != 'F' && pattern[i] != 'S')
      return r.fail("index_topk_pattern",
                    "letter " + std::to_string(i) + " is '" +
                        std::string(1, pattern[i]) +
                        "', expected 'F' (own indexer) or 'S' (shared)");
    if (i == 0 && pattern[i] == 'S')
      return r.fail("index_topk_pattern",
                    "layer 0 is 'S', but it has no previous layer to share "
                    "a top-k with");
    m.layers[i].attention.indexer.reusesPrevious = pattern[i] == 'S';
  }
  return true;
}

/// GLM-5 spells the q/k head size out (qk_head_dim) and interleaves its
/// RoPE pairs (rope_interleave, as DeepSeek's MLA does): check the one and
/// read the other.
static bool readGlmAttention(const FieldReader &r, AttentionSpec &attn) {
  int64_t qkHeadDim = 0;
  bool interleave = true;
  if (!r.getOptInt("qk_head_dim", qkHeadDim, attn.headDim) ||
      !r.getOptBool("rope_interleave", interleave, true))
    return false;
  if (qkHeadDim != attn.headDim)
    return r.fail("qk_head_dim",
                  std::to_string(qkHeadDim) +
                      " differs from qk_nope_head_dim + qk_rope_head_dim = " +
                      std::to_string(attn.headDim));
  if (!interleave)
    return r.fail("rope_interleave",
                  "false is not supported: MLA's decoupled RoPE key is "
                  "interleaved");
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
  const bool sparse = modelType == "deepseek_v32" || modelType == "glm_moe_dsa";
  if (sparse && !readIndexer(r, attn))
    return false;
  if (modelType == "glm_moe_dsa" && !readGlmAttention(r, attn))
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
  return !sparse || readSharedIndexerLayers(r, m);
}

} // namespace import
} // namespace helix
