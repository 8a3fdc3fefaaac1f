//===- GptOss.cpp - gpt_oss -----------------------------------------------===//
//
// GQA attention with learned sinks and biases, alternating sliding/full
// layers, and every layer an MoE whose experts and router carry biases.
//
//===----------------------------------------------------------------------===//

#include "CommonFields.h"
#include "Families.h"

namespace helix {
namespace import {

bool importGptOss(const FieldReader &r, const std::string &, ModelSpec &m) {
  FamilyDefaults defaults;
  defaults.ropeTheta = 150000.0;
  defaults.rmsNormEps = 1e-5;
  int64_t n = 0;
  AttentionSpec attn;
  MoESpec moe;
  bool bias = true;
  // Older exports spell top-k experts_per_token.
  const char *topKKey = r.has("num_experts_per_tok") ? "num_experts_per_tok"
                                                     : "experts_per_token";
  if (!readModelBasics(r, defaults, m, n) ||
      !readStandardAttention(r, m.hiddenSize, attn) ||
      !readRope(r, defaults.ropeTheta, m.maxPositionEmbeddings, attn.rope) ||
      !r.getOptBool("attention_bias", bias, true) ||
      !readRoutedExperts(r, "num_local_experts", topKKey, "intermediate_size",
                         moe))
    return false;
  attn.qkvBias = attn.outBias = bias;
  attn.sinks = true;
  moe.expertBias = true;
  moe.normTopkProb = true; // softmax over the selected top-k logits

  std::vector<bool> sliding;
  bool present = false;
  if (!readLayerTypes(r, n, sliding, present))
    return false;
  if (!present) // Hugging Face GptOssConfig: sliding first, then alternate.
    for (int64_t i = 0; i < n; ++i)
      sliding[i] = i % 2 == 0;
  std::vector<int64_t> window;
  if (!windowsFromSliding(r, sliding, window))
    return false;
  buildLayers(attn, FFNSpec(), moe, window, std::vector<bool>(n, true), m);
  return true;
}

} // namespace import
} // namespace helix
