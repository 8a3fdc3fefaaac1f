//===- GptOss.cpp - gpt_oss -----------------------------------------------===//
//
// GQA attention with learned sinks and biases, alternating sliding/full
// layers, and every layer an MoE whose experts and router carry biases.
//
//===----------------------------------------------------------------------===//

#include "CommonFields.h"
#include "Families.h"

#include <cstdio>
#include <string>

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
  // The experts' clamped SwiGLU: gate and up clipped at swiglu_limit
  // (transformers' GptOssConfig default 7.0, every released checkpoint's).
  // The generated program's kernel clamps at 7, so another limit would
  // compute a different model: refused rather than planned as this one.
  double swigluLimit = 7.0;
  if (!r.getOptDouble("swiglu_limit", swigluLimit, 7.0))
    return false;
  if (swigluLimit != 7.0) {
    char got[32];
    std::snprintf(got, sizeof got, "%g", swigluLimit);
    return r.fail("swiglu_limit",
                  std::string("helix models gpt-oss's SwiGLU clamped at 7 "
                              "(the released models' value), got ") +
                      got);
  }
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
