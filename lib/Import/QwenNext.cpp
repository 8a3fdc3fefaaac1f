//===- QwenNext.cpp - qwen3_next, qwen3_5, qwen3_5_moe --------------------===//
//
// Qwen3-Next and Qwen3.5 (whose language model sits under text_config, as
// HFConfig.cpp unwraps it): Gated DeltaNet linear-attention layers
// interleaved with gated full attention (layer_types, or every
// full_attention_interval-th layer), GQA with per-head q/k norms, partial
// RoPE and a sigmoid gate on the attention output; an MoE with one gated
// shared expert (or, for qwen3_5, a dense MLP).
//
//===----------------------------------------------------------------------===//

#include "CommonFields.h"
#include "Families.h"

namespace helix {
namespace import {

/// layer_types ("linear_attention" / "full_attention" per layer), or when
/// absent every full_attention_interval-th layer full.
static bool readHybridLayerTypes(const FieldReader &r, int64_t n,
                                 std::vector<bool> &linear) {
  std::vector<std::string> types;
  bool present = false;
  if (!r.getOptStringArray("layer_types", types, present))
    return false;
  linear.assign(n, false);
  if (!present) {
    int64_t interval = 0;
    if (!r.has("full_attention_interval"))
      return r.fail("layer_types", "missing, and no full_attention_interval "
                                   "says which layers are full attention");
    if (!r.getInt("full_attention_interval", interval, 1, n))
      return false;
    for (int64_t i = 0; i < n; ++i)
      linear[i] = (i + 1) % interval != 0;
    return true;
  }
  if (int64_t(types.size()) != n)
    return r.fail("layer_types", "has " + std::to_string(types.size()) +
                                     " entries, expected num_hidden_layers = " +
                                     std::to_string(n));
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] == "linear_attention")
      linear[i] = true;
    else if (types[i] != "full_attention")
      return r.fail("layer_types[" + std::to_string(i) + "]",
                    "unknown layer type " + nlohmann::json(types[i]).dump() +
                        ", expected \"linear_attention\" or "
                        "\"full_attention\"");
  }
  return true;
}

/// The Gated DeltaNet layers' sizes and state dtype.
static bool readGatedDeltaNet(const FieldReader &r, LinearAttentionSpec &l) {
  l = LinearAttentionSpec();
  l.variant = LinearAttentionSpec::Variant::GatedDeltaNet;
  if (!r.getInt("linear_num_key_heads", l.numKeyHeads) ||
      !r.getInt("linear_num_value_heads", l.numValueHeads) ||
      !r.getInt("linear_key_head_dim", l.keyHeadDim) ||
      !r.getInt("linear_value_head_dim", l.valueHeadDim) ||
      !r.getInt("linear_conv_kernel_dim", l.convKernel) ||
      !r.getOptString("mamba_ssm_dtype", l.stateDType, "float32"))
    return false;
  if (l.numValueHeads % l.numKeyHeads != 0)
    return r.fail("linear_num_value_heads",
                  std::to_string(l.numValueHeads) +
                      " is not a multiple of linear_num_key_heads = " +
                      std::to_string(l.numKeyHeads));
  if (stateDTypeBytes(l.stateDType) == 0)
    return r.fail("mamba_ssm_dtype", "unknown dtype \"" + l.stateDType +
                                         "\", expected \"float32\", "
                                         "\"bfloat16\" or \"float16\"");
  return true;
}

/// partial_rotary_factor (top level, or in rope_parameters) and the
/// multimodal RoPE sections, which for text tokens (all three position
/// ids equal) rotate exactly like RoPE but must cover the rotated dims.
static bool readPartialRotary(const FieldReader &r, AttentionSpec &attn) {
  const nlohmann::json *params = nullptr;
  if (!r.getOptObject("rope_parameters", params))
    return false;
  FieldReader p = params ? r.nested("rope_parameters", *params) : r;
  const FieldReader &where = p.has("partial_rotary_factor") ? p : r;
  if (!where.getOptDouble("partial_rotary_factor", attn.partialRotary, 1.0))
    return false;
  if (attn.partialRotary > 1.0)
    return where.fail("partial_rotary_factor",
                      "expected a fraction in (0, 1], got " +
                          nlohmann::json(attn.partialRotary).dump());
  double rotated = attn.partialRotary * double(attn.headDim);
  if (rotated != double(int64_t(rotated)) || int64_t(rotated) % 2 != 0)
    return where.fail("partial_rotary_factor",
                      "rotates " + nlohmann::json(rotated).dump() +
                          " of head_dim = " + std::to_string(attn.headDim) +
                          " values, expected an even whole number");
  if (!params)
    return true;
  std::vector<int64_t> sections;
  bool present = false;
  if (!p.getOptIntArray("mrope_section", sections, present))
    return false;
  int64_t sum = 0;
  for (int64_t s : sections)
    sum += s;
  if (present && 2 * sum != int64_t(rotated))
    return p.fail("mrope_section", "sums to " + std::to_string(sum) +
                                       " pairs, expected " +
                                       std::to_string(int64_t(rotated) / 2) +
                                       " (half the rotated dims of each head)");
  return true;
}

bool importQwenNext(const FieldReader &r, const std::string &modelType,
                    ModelSpec &m) {
  int64_t n = 0, numExperts = 0;
  AttentionSpec attn;
  LinearAttentionSpec linear;
  std::vector<bool> isLinear;
  bool bias = false;
  if (!readModelBasics(r, FamilyDefaults(), m, n) ||
      !readStandardAttention(r, m.hiddenSize, attn) ||
      !readRope(r, rope_defaults::kTheta, m.maxPositionEmbeddings, attn.rope) ||
      !readPartialRotary(r, attn) ||
      !r.getOptBool("attention_bias", bias, false) ||
      // Qwen3-Next always gates the attention output; Qwen3.5 says so.
      !r.getOptBool("attn_output_gate", attn.outputGate, true) ||
      !readHybridLayerTypes(r, n, isLinear) || !readGatedDeltaNet(r, linear) ||
      !r.getOptInt("num_experts", numExperts, 0, 0))
    return false;
  attn.qkvBias = attn.outBias = bias;
  attn.qkNorm = true;
  if (modelType != "qwen3_5" && modelType != "qwen3_5_text" && numExperts == 0)
    return r.fail("num_experts", "missing, expected the routed experts of "
                                 "this MoE model");
  MoESpec moe;
  FFNSpec ffn;
  std::vector<bool> isMoE(n, false);
  if (numExperts > 0) {
    int64_t step = 1;
    std::vector<int64_t> mlpOnly;
    bool present = false;
    if (!readRoutedExperts(r, "num_experts", "num_experts_per_tok",
                           "moe_intermediate_size", moe) ||
        // Qwen3-Next's configs renormalise the top-k weights by default.
        !r.getOptBool("norm_topk_prob", moe.normTopkProb, true) ||
        !r.getOptInt("shared_expert_intermediate_size", moe.sharedIntermediate,
                     0, 0) ||
        !r.getOptInt("decoder_sparse_step", step, 1) ||
        !r.getOptIntArray("mlp_only_layers", mlpOnly, present, 0, n - 1))
      return false;
    moe.numSharedExperts = moe.sharedIntermediate > 0 ? 1 : 0;
    moe.sharedExpertGate = moe.numSharedExperts > 0;
    std::vector<bool> dense(n, false);
    for (int64_t i : mlpOnly)
      dense[i] = true;
    for (int64_t i = 0; i < n; ++i)
      isMoE[i] = !dense[i] && (i + 1) % step == 0;
  }
  bool anyDense = false;
  for (bool b : isMoE)
    anyDense |= !b;
  if (!readDenseFFN(r, anyDense, ffn))
    return false;
  std::vector<int64_t> window(n, 0);
  buildLayers(attn, ffn, moe, window, isMoE, m);
  // Qwen3NextRMSNorm (and Qwen3.5's) scales by (1 + weight).
  m.zeroCenteredNorms = true;
  for (int64_t i = 0; i < n; ++i)
    if (isLinear[i]) {
      m.layers[i].mixer = MixerKind::LinearAttention;
      m.layers[i].linear = linear;
    }
  return true;
}

} // namespace import
} // namespace helix
