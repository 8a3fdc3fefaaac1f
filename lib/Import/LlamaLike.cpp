//===- LlamaLike.cpp - llama, mistral, qwen2, qwen3 -----------------------===//
//
// Dense decoders with GQA attention and a gated MLP. They differ only in
// biases, QK-norm and how sliding windows are spelled.
//
//===----------------------------------------------------------------------===//

#include "CommonFields.h"
#include "Families.h"

namespace helix {
namespace import {

bool importLlamaLike(const FieldReader &r, const std::string &modelType,
                     ModelSpec &m) {
  bool isLlama = modelType == "llama";
  bool isQwen = modelType == "qwen2" || modelType == "qwen3";
  int64_t n = 0;
  AttentionSpec attn;
  FFNSpec ffn;
  if (!readModelBasics(r, FamilyDefaults(), m, n) ||
      !readStandardAttention(r, m.hiddenSize, attn) ||
      !readRope(r, rope_defaults::kTheta, m.maxPositionEmbeddings, attn.rope) ||
      !readDenseFFN(r, /*needed=*/true, ffn))
    return false;

  if (modelType == "qwen2") {
    attn.qkvBias = true; // Qwen2 always has q/k/v biases, no o bias.
  } else if (isLlama || modelType == "qwen3") {
    bool bias = false;
    if (!r.getOptBool("attention_bias", bias, false))
      return false;
    attn.qkvBias = attn.outBias = bias;
  }
  attn.qkNorm = modelType == "qwen3";
  if (isLlama && !r.getOptBool("mlp_bias", ffn.bias, false))
    return false;

  std::vector<int64_t> window(n, 0);
  if (modelType == "mistral" && !readUniformWindow(r, n, window))
    return false;
  if (isQwen && !readQwenWindows(r, n, window))
    return false;
  buildLayers(attn, ffn, MoESpec(), window, std::vector<bool>(n, false), m);
  return true;
}

} // namespace import
} // namespace helix
