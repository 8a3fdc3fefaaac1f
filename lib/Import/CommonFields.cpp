//===- CommonFields.cpp - Readers shared by the model families ------------===//

#include "CommonFields.h"

#include "helix/Common/ModulePatterns.h"

namespace helix {
namespace import {

using nlohmann::json;

bool readModelBasics(const FieldReader &r, const FamilyDefaults &defaults,
                     ModelSpec &m, int64_t &numLayers) {
  if (!r.getInt("hidden_size", m.hiddenSize) ||
      !r.getInt("num_hidden_layers", numLayers, 1, kMaxLayers) ||
      !r.getInt("vocab_size", m.vocabSize) ||
      !r.getInt("max_position_embeddings", m.maxPositionEmbeddings) ||
      !r.getOptDouble("rms_norm_eps", m.rmsNormEps, defaults.rmsNormEps) ||
      !r.getOptBool("tie_word_embeddings", m.tieWordEmbeddings, false))
    return false;
  // Newer transformers write "dtype", older ones "torch_dtype".
  const char *dtypeKey = r.has("dtype") ? "dtype" : "torch_dtype";
  if (!r.getOptString(dtypeKey, m.checkpointDType, "bfloat16"))
    return false;
  const json *quant = nullptr;
  if (!r.getOptObject("quantization_config", quant))
    return false;
  m.quantMethod.clear();
  m.quantFormat.clear();
  m.quantExclude.clear();
  return !quant || readQuantization(r.nested("quantization_config", *quant), m);
}

bool readQuantization(const FieldReader &q, ModelSpec &m) {
  if (!q.getString("quant_method", m.quantMethod))
    return false;
  bool present = false;
  std::vector<std::string> list;
  for (const char *key :
       {"modules_to_not_convert", "ignore", "exclude_modules"}) {
    if (!q.getOptStringArray(key, list, present))
      return false;
    m.quantExclude.insert(m.quantExclude.end(), list.begin(), list.end());
  }
  for (const std::string &p : m.quantExclude) {
    std::string why;
    if (p.rfind("re:", 0) == 0 && !checkModuleRegex(p.substr(3), why))
      return q.fail("ignore", "the pattern " + json(p).dump() +
                                  " is not a regular expression helix "
                                  "reads: " +
                                  why);
  }
  const std::string &method = m.quantMethod;
  if (method == "compressed-tensors") {
    // The format of the packed weights (llm-compressor): MXFP4 and NVFP4
    // are the formats helix plans; others are priced as told.
    std::string format;
    if (!q.getOptString("format", format, ""))
      return false;
    if (format == "mxfp4-pack-quantized")
      m.quantFormat = "mxfp4";
    else if (format == "nvfp4-pack-quantized")
      m.quantFormat = "nvfp4";
    return true;
  }
  if (method == "fp8") {
    std::string fmt;
    std::vector<int64_t> block;
    if (!q.getOptString("fmt", fmt, "e4m3") ||
        !q.getOptIntArray("weight_block_size", block, present, 1))
      return false;
    if (fmt != "e4m3")
      return q.fail("fmt", "expected \"e4m3\", got \"" + fmt + "\"");
    if (present && block != std::vector<int64_t>{128, 128})
      return q.fail("weight_block_size",
                    "expected [128, 128] (DeepSeek-V3's FP8 block scales)");
    m.quantFormat = "fp8-block";
    return true;
  }
  if (method == "mxfp4") {
    m.quantFormat = "mxfp4";
    return true;
  }
  if (method == "modelopt") {
    std::string algo;
    if (!q.getString("quant_algo", algo))
      return false;
    if (algo == "FP8")
      m.quantFormat = "fp8-tensor";
    else if (algo == "NVFP4")
      m.quantFormat = "nvfp4";
    else
      return q.fail("quant_algo",
                    "unknown \"" + algo + "\" (expected FP8 or NVFP4)");
    return true;
  }
  // Another method (awq, gptq, ...): the planner prices the formats it is
  // told; helix compile refuses it (no program loads it).
  return true;
}

static const char *const kRopeTypes =
    "default, linear, dynamic, yarn, llama3, longrope";

/// The scaling parameters of one rope_scaling / rope_parameters object.
static bool readRopeScaling(const FieldReader &s, int64_t maxPosition,
                            RopeSpec &rope) {
  const char *typeKey = s.has("rope_type") ? "rope_type" : "type";
  std::string type;
  if (!s.has(typeKey))
    return s.fail("rope_type", std::string("missing required field, expected "
                                           "one of: ") +
                                   kRopeTypes);
  if (!s.getString(typeKey, type))
    return false;
  if (type == "default")
    return true;
  if (type != "linear" && type != "dynamic" && type != "yarn" &&
      type != "llama3" && type != "longrope")
    return s.fail(typeKey, "unknown RoPE scaling type \"" + type +
                               "\", expected one of: " + kRopeTypes);
  rope.scaling = type;
  bool factorRequired = type != "longrope";
  if (factorRequired
          ? !s.getDouble("factor", rope.factor)
          : !s.getOptDouble("factor", rope.factor, rope_defaults::kFactor))
    return false;
  bool origRequired = type == "llama3";
  if (origRequired ? !s.getInt("original_max_position_embeddings",
                               rope.originalMaxPosition)
                   : !s.getOptInt("original_max_position_embeddings",
                                  rope.originalMaxPosition,
                                  rope_defaults::kOriginalMaxPosition))
    return false;
  if (type == "llama3") {
    if (!s.getDouble("low_freq_factor", rope.lowFreqFactor) ||
        !s.getDouble("high_freq_factor", rope.highFreqFactor))
      return false;
    if (rope.highFreqFactor <= rope.lowFreqFactor)
      return s.fail("high_freq_factor",
                    "expected more than low_freq_factor = " +
                        json(rope.lowFreqFactor).dump() + ", got " +
                        json(rope.highFreqFactor).dump());
  }
  if (type == "yarn") {
    // Hugging Face defaults (helix/Common/Rope.h), and the original context
    // is max_position_embeddings when not given.
    namespace d = rope_defaults;
    if (!s.getOptDouble("beta_fast", rope.betaFast, d::kBetaFast) ||
        !s.getOptDouble("beta_slow", rope.betaSlow, d::kBetaSlow) ||
        !s.getOptDouble("mscale", rope.mscale, d::kMscale,
                        Bound::NonNegative) ||
        !s.getOptDouble("mscale_all_dim", rope.mscaleAllDim, d::kMscaleAllDim,
                        Bound::NonNegative))
      return false;
    if (rope.originalMaxPosition == 0)
      rope.originalMaxPosition = maxPosition;
  }
  return true;
}

bool readRope(const FieldReader &r, double defaultTheta, int64_t maxPosition,
              RopeSpec &rope) {
  rope = RopeSpec();
  if (!r.getOptDouble("rope_theta", rope.theta, defaultTheta))
    return false;
  const json *scaling = nullptr, *params = nullptr;
  if (!r.getOptObject("rope_scaling", scaling) ||
      !r.getOptObject("rope_parameters", params))
    return false;
  if (params) {
    // transformers >= 5 keeps rope_theta and the scaling together.
    FieldReader p = r.nested("rope_parameters", *params);
    if (!p.getOptDouble("rope_theta", rope.theta, rope.theta))
      return false;
    if (!scaling)
      return readRopeScaling(p, maxPosition, rope);
  }
  return !scaling ||
         readRopeScaling(r.nested("rope_scaling", *scaling), maxPosition, rope);
}

AttentionKind attentionKindFor(int64_t numHeads, int64_t numKVHeads) {
  if (numKVHeads == numHeads)
    return AttentionKind::MHA;
  if (numKVHeads == 1)
    return AttentionKind::MQA;
  return AttentionKind::GQA;
}

bool readStandardAttention(const FieldReader &r, int64_t hidden,
                           AttentionSpec &attn) {
  attn = AttentionSpec();
  if (!r.getInt("num_attention_heads", attn.numHeads) ||
      !r.getOptInt("num_key_value_heads", attn.numKVHeads, attn.numHeads))
    return false;
  std::string q = std::to_string(attn.numHeads);
  std::string kv = std::to_string(attn.numKVHeads);
  if (attn.numKVHeads > attn.numHeads)
    return r.fail("num_key_value_heads",
                  kv + " exceeds num_attention_heads = " + q);
  if (attn.numHeads % attn.numKVHeads != 0)
    return r.fail("num_key_value_heads",
                  kv + " does not divide num_attention_heads = " + q);
  if (r.has("head_dim")) {
    if (!r.getInt("head_dim", attn.headDim))
      return false;
  } else {
    if (hidden % attn.numHeads != 0)
      return r.fail("num_attention_heads",
                    "hidden_size = " + std::to_string(hidden) +
                        " is not divisible by " + q +
                        " heads, and no head_dim is given");
    attn.headDim = hidden / attn.numHeads;
  }
  attn.vHeadDim = attn.headDim;
  attn.kind = attentionKindFor(attn.numHeads, attn.numKVHeads);
  return true;
}

bool readActivation(const FieldReader &r, std::string &activation) {
  return r.getOptString("hidden_act", activation, "silu");
}

bool readDenseFFN(const FieldReader &r, bool needed, FFNSpec &ffn) {
  ffn = FFNSpec();
  bool ok = needed ? r.getInt("intermediate_size", ffn.intermediate)
                   : r.getOptInt("intermediate_size", ffn.intermediate, 0);
  return ok && readActivation(r, ffn.activation);
}

bool readRoutedExperts(const FieldReader &r, const char *expertsKey,
                       const char *topKKey, const char *interKey,
                       MoESpec &moe) {
  if (!r.getInt(expertsKey, moe.numExperts) || !r.getInt(topKKey, moe.topK))
    return false;
  if (moe.topK > moe.numExperts)
    return r.fail(topKKey, "top-k " + std::to_string(moe.topK) +
                               " exceeds the number of experts (" + expertsKey +
                               " = " + std::to_string(moe.numExperts) + ")");
  return r.getInt(interKey, moe.expertIntermediate) &&
         readActivation(r, moe.activation);
}

void buildLayers(const AttentionSpec &attn, const FFNSpec &ffn,
                 const MoESpec &moe, const std::vector<int64_t> &window,
                 const std::vector<bool> &isMoE, ModelSpec &m) {
  m.layers.clear();
  m.layers.reserve(isMoE.size());
  for (size_t i = 0; i < isMoE.size(); ++i) {
    LayerSpec layer;
    layer.index = static_cast<int64_t>(i);
    layer.attention = attn;
    layer.attention.slidingWindow = window[i];
    layer.isMoE = isMoE[i];
    if (layer.isMoE)
      layer.moe = moe;
    else
      layer.ffn = ffn;
    m.layers.push_back(std::move(layer));
  }
}

} // namespace import
} // namespace helix
