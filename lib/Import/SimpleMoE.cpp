//===- SimpleMoE.cpp - mixtral, qwen3_moe ---------------------------------===//
//
// GQA attention with routed experts and no shared expert. Mixtral routes
// every layer; Qwen3-MoE places experts by decoder_sparse_step and
// mlp_only_layers.
//
//===----------------------------------------------------------------------===//

#include "CommonFields.h"
#include "Families.h"

namespace helix {
namespace import {

static bool importMixtral(const FieldReader &r, ModelSpec &m) {
  FamilyDefaults defaults;
  defaults.ropeTheta = 1e6;
  defaults.rmsNormEps = 1e-5;
  int64_t n = 0;
  AttentionSpec attn;
  MoESpec moe;
  std::vector<int64_t> window;
  if (!readModelBasics(r, defaults, m, n) ||
      !readStandardAttention(r, m.hiddenSize, attn) ||
      !readRope(r, defaults.ropeTheta, m.maxPositionEmbeddings, attn.rope) ||
      !readRoutedExperts(r, "num_local_experts", "num_experts_per_tok",
                         "intermediate_size", moe) ||
      !readUniformWindow(r, n, window))
    return false;
  moe.normTopkProb = true; // Mixtral renormalises the top-k weights.
  buildLayers(attn, FFNSpec(), moe, window, std::vector<bool>(n, true), m);
  return true;
}

/// Layer i is MoE iff it is not in mlp_only_layers, there are experts, and
/// (i + 1) % decoder_sparse_step == 0 (Hugging Face Qwen3MoeDecoderLayer).
static bool readQwenMoEPlacement(const FieldReader &r, int64_t n,
                                 int64_t numExperts, std::vector<bool> &isMoE) {
  int64_t step = 1;
  std::vector<int64_t> mlpOnly;
  bool present = false;
  if (!r.getOptInt("decoder_sparse_step", step, 1) ||
      !r.getOptIntArray("mlp_only_layers", mlpOnly, present))
    return false;
  std::vector<bool> dense(n, false);
  for (size_t i = 0; i < mlpOnly.size(); ++i) {
    if (mlpOnly[i] >= n)
      return r.fail("mlp_only_layers[" + std::to_string(i) + "]",
                    "layer index " + std::to_string(mlpOnly[i]) +
                        " is out of range, expected 0.." +
                        std::to_string(n - 1) +
                        " (num_hidden_layers = " + std::to_string(n) + ")");
    dense[mlpOnly[i]] = true;
  }
  isMoE.assign(n, false);
  for (int64_t i = 0; i < n; ++i)
    isMoE[i] = !dense[i] && numExperts > 0 && (i + 1) % step == 0;
  return true;
}

static bool importQwen3MoE(const FieldReader &r, ModelSpec &m) {
  int64_t n = 0, numExperts = 0;
  AttentionSpec attn;
  MoESpec moe;
  FFNSpec ffn;
  std::vector<bool> isMoE;
  std::vector<int64_t> window;
  bool bias = false;
  if (!readModelBasics(r, FamilyDefaults(), m, n) ||
      !readStandardAttention(r, m.hiddenSize, attn) ||
      !readRope(r, rope_defaults::kTheta, m.maxPositionEmbeddings, attn.rope) ||
      !r.getOptBool("attention_bias", bias, false) ||
      !r.getInt("num_experts", numExperts, 0) ||
      !readQwenMoEPlacement(r, n, numExperts, isMoE))
    return false;
  attn.qkvBias = attn.outBias = bias;
  attn.qkNorm = true;
  if (numExperts > 0 &&
      (!readRoutedExperts(r, "num_experts", "num_experts_per_tok",
                          "moe_intermediate_size", moe) ||
       !r.getOptBool("norm_topk_prob", moe.normTopkProb, false)))
    return false;
  bool anyDense = false;
  for (bool moeLayer : isMoE)
    anyDense |= !moeLayer;
  if (!readDenseFFN(r, anyDense, ffn) || !readQwenWindows(r, n, window))
    return false;
  buildLayers(attn, ffn, moe, window, isMoE, m);
  return true;
}

bool importSimpleMoE(const FieldReader &r, const std::string &modelType,
                     ModelSpec &m) {
  return modelType == "mixtral" ? importMixtral(r, m) : importQwen3MoE(r, m);
}

} // namespace import
} // namespace helix
