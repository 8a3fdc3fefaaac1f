//===- MakeCheckpoint.cpp - Random safetensors checkpoints for tests ------===//
//
//   helix-make-checkpoint --config CONFIG -o DIR [--seed S] [--shards N]
//                         [--dtype bf16|fp16|fp32]
//                         [--format bf16|fp8-block|fp8-tensor|nvfp4|mxfp4]
//                         [--drop NAME]... [--fast] [--config-only]
//
// Writes random weights with exactly the tensor names and shapes of the
// Hugging Face checkpoints of the config's architecture (llama, mistral,
// qwen2, qwen3, mixtral, qwen3_moe, deepseek_v2/v3, kimi_k2, gpt_oss,
// deepseek_v32 and glm_moe_dsa with DeepSeek Sparse Attention's indexer,
// qwen3_next / qwen3_5 / qwen3_5_moe with Gated DeltaNet layers):
// DIR/model.safetensors, or N shards plus model.safetensors.index.json; and
// a copy of the config as DIR/config.json. Scales keep activations O(1):
// linear weights ~ N(0, 1/in), norms ~ 1 + N(0, 0.1^2), biases small;
// zero-centred norms (Qwen3-Next's, applied as 1 + w) ~ N(0, 0.1^2), the
// Gated DeltaNet's A_log and dt_bias small (exp(A_log) about 1). The
// Qwen3-Next family's multi-token-prediction module (mtp.*) is not
// written.
//
// --format lays the checkpoint out as the quantized checkpoints of
// docs/quantization.md are stored (the default, bf16, is the unquantized
// checkpoint). Quantized are the linear weights of the decoder layers
// (attention projections, dense MLP, shared and routed experts, the Gated
// DeltaNet's in_proj_qkvz / in_proj_ba / out_proj, the DSA indexer's wq_b
// and wk); the token embedding, LM head, norms, biases, MoE routers,
// DeepSeek's correction bias, attention sinks, Qwen3-Next's
// shared_expert_gate, the indexer's weights_proj and the Gated DeltaNet's
// conv1d / A_log / dt_bias stay BF16. A config with num_nextn_predict_layers
// gets DeepSeek-V3's multi-token-prediction layers after the decoder
// layers, model.layers.<N + i> with N = num_hidden_layers: a decoder layer
// shaped like the last one, plus its embed_tokens, enorm, hnorm, eh_proj
// [H, 2H], shared_head.norm and shared_head.head (its own random values;
// eh_proj is quantized like the layers' linear weights, the embedding and
// head are not). For a linear weight X.weight [N, K]:
//
//   fp8-block   X.weight F8_E4M3 [N, K], X.weight_scale_inv F32
//               [ceil(N/128), ceil(K/128)]  (DeepSeek-V3/R1, Kimi-K2)
//   fp8-tensor  X.weight F8_E4M3 [N, K], X.weight_scale F32 [],
//               X.input_scale F32 []  (ModelOpt FP8)
//   nvfp4       X.weight U8 [N, K/2] (two E2M1, even element in the low
//               nibble), X.weight_scale F8_E4M3 [N, K/16],
//               X.weight_scale_2 F32 [], X.input_scale F32 []  (ModelOpt
//               NVFP4; K must be a multiple of 16)
//   mxfp4       gpt_oss only: the experts P = mlp.experts.gate_up_proj /
//               down_proj (bf16 layout [E, in, out]) as P_blocks U8
//               [E, out, in/32, 16] and P_scales U8 (E8M0) [E, out, in/32],
//               each expert's matrix transposed to out x in (gate_up rows
//               interleave gate and up as the bf16 columns do); in must be
//               a multiple of 32. Everything else stays BF16.
//
// The values are those of the bf16 checkpoint of the same seed (the same
// random draws, rounded to BF16) quantized with the runtime's quantizers
// (helix/Runtime/Quant.h: quantizeFP8Block with 128x128 blocks,
// quantizeFP8Tensor, quantizeNVFP4, quantizeMXFP4), so quantizing the bf16
// checkpoint's tensors gives exactly the stored bytes. input_scale (the
// static activation scale of ModelOpt checkpoints) is a placeholder 1.0.
// gpt_oss's experts are fused 3-D tensors, not linear weights: fp8-* and
// nvfp4 quantize only its attention projections. config.json gets the
// format's quantization_config (replacing any in CONFIG); with bf16 it is
// CONFIG unchanged. --dtype is the dtype of the unquantized checkpoint;
// quantized formats store their unquantized tensors as BF16 and accept only
// --dtype bf16.
//
// --drop NAME leaves the stored tensor NAME out (any tensor the format
// writes, scale tensors included), to test how programs report incomplete
// checkpoints. A weight, norm, ... left out together with all its scale
// tensors draws no random values (as --drop always did), so the tensors
// after it differ from those of the full checkpoint; leaving out only some
// of a weight's stored tensors (its scale, say) changes nothing else.
// Sharding keeps a weight and its scale tensors in one file.
//
// --config-only writes DIR/config.json alone (the format's
// quantization_config included): what `helix compile` plans the checkpoint
// from, without the weights (the device bundle writes those on the GPU
// machine).
//
// --fast draws every tensor from its own counter-based stream on every
// core (FastNormal below): other values than the default stream's, the
// same for any thread count, and minutes less for a checkpoint of billions
// of parameters (what a GPU run of a real model's plan needs).
//
//===----------------------------------------------------------------------===//

#include "helix/Import/HFConfig.h"
#include "helix/Runtime/DecodeIO.h"
#include "helix/Runtime/Error.h"
#include "helix/Runtime/Quant.h"
#include "helix/Runtime/Safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sys/stat.h>
#include <thread>

using namespace helix;
using namespace helix::rt;
using nlohmann::json;

namespace {

enum class Init { Linear, Embed, Norm, Bias, Sink, Correction, ZeroNorm };

struct Spec {
  std::string name;
  std::vector<int64_t> shape;
  Init init;
  int64_t fanIn = 1;
};

struct Builder {
  std::vector<Spec> specs;
  void linear(const std::string &n, int64_t out, int64_t in) {
    specs.push_back({n, {out, in}, Init::Linear, in});
  }
  void norm(const std::string &n, int64_t d) {
    specs.push_back({n, {d}, Init::Norm});
  }
  void bias(const std::string &n, std::vector<int64_t> shape) {
    specs.push_back({n, shape, Init::Bias});
  }
  void mlp(const std::string &p, int64_t H, int64_t I, bool withBias,
           const char *g = "gate_proj", const char *u = "up_proj",
           const char *d = "down_proj") {
    linear(p + g + ".weight", I, H);
    linear(p + u + ".weight", I, H);
    linear(p + d + ".weight", H, I);
    if (withBias) {
      bias(p + g + ".bias", {I});
      bias(p + u + ".bias", {I});
      bias(p + d + ".bias", {H});
    }
  }
};

std::vector<Spec> tensorsFor(const ModelSpec &m, const json &config) {
  Builder b;
  int64_t H = m.hiddenSize, V = m.vocabSize;
  const std::string &type = m.modelType;
  // Tied embeddings double as the LM head: keep them small so that the
  // layers, not the current token's own embedding, decide the logits.
  b.specs.push_back({"model.embed_tokens.weight",
                     {V, H},
                     Init::Embed,
                     m.tieWordEmbeddings ? 100 : 1});
  std::string topkMethod = config.value(
      "topk_method", type == "deepseek_v2" ? "greedy" : "noaux_tc");
  // The decoder's RMSNorms (not the MLA's low-rank or the gated norms):
  // zero-centred ones (Qwen3-Next: applied as 1 + w) draw w ~ N(0, 0.1^2).
  auto decoderNorm = [&](const std::string &n, int64_t d) {
    if (m.zeroCenteredNorms)
      b.specs.push_back({n, {d}, Init::ZeroNorm});
    else
      b.norm(n, d);
  };
  for (const LayerSpec &layer : m.layers) {
    // Qwen3-Next / Qwen3.5 keep their MTP module under mtp.* in another
    // shape than DeepSeek-V3's model.layers.<N>: not written.
    if (layer.isMTP && m.zeroCenteredNorms)
      continue;
    std::string p = "model.layers." + std::to_string(layer.index) + ".";
    const AttentionSpec &a = layer.attention;
    decoderNorm(p + "input_layernorm.weight", H);
    decoderNorm(p + "post_attention_layernorm.weight", H);
    std::string s = p + "self_attn.";
    if (layer.mixer == MixerKind::LinearAttention) {
      // Qwen3NextGatedDeltaNet.
      const LinearAttentionSpec &g = layer.linear;
      check(g.variant == LinearAttentionSpec::Variant::GatedDeltaNet,
            std::string("layer ") + std::to_string(layer.index) + ": " +
                stringifyLinearAttentionVariant(g.variant) +
                " linear attention has no checkpoint layout here");
      std::string x = p + "linear_attn.";
      int64_t Hk = g.numKeyHeads, Hv = g.numValueHeads, dk = g.keyHeadDim,
              dv = g.valueHeadDim, K = g.convKernel;
      b.linear(x + "in_proj_qkvz.weight", 2 * Hk * dk + 2 * Hv * dv, H);
      b.linear(x + "in_proj_ba.weight", 2 * Hv, H);
      b.specs.push_back(
          {x + "conv1d.weight", {g.convChannels(), 1, K}, Init::Linear, K});
      b.bias(x + "dt_bias", {Hv});
      b.bias(x + "A_log", {Hv}); // 0.05 z: exp(A_log) about 1
      b.norm(x + "norm.weight", dv);
      b.linear(x + "out_proj.weight", H, Hv * dv);
    } else if (layer.mixer != MixerKind::Attention) {
      check(false, std::string("layer ") + std::to_string(layer.index) +
                       ": a " + stringifyMixerKind(layer.mixer) +
                       " mixer has no checkpoint layout here");
    } else if (a.kind == AttentionKind::MLA) {
      int64_t qk = a.qkNopeHeadDim + a.qkRopeHeadDim;
      if (a.qLoraRank > 0) {
        b.linear(s + "q_a_proj.weight", a.qLoraRank, H);
        if (a.qkvBias)
          b.bias(s + "q_a_proj.bias", {a.qLoraRank});
        b.norm(s + "q_a_layernorm.weight", a.qLoraRank);
        b.linear(s + "q_b_proj.weight", a.numHeads * qk, a.qLoraRank);
      } else {
        b.linear(s + "q_proj.weight", a.numHeads * qk, H);
      }
      b.linear(s + "kv_a_proj_with_mqa.weight", a.kvLoraRank + a.qkRopeHeadDim,
               H);
      if (a.qkvBias)
        b.bias(s + "kv_a_proj_with_mqa.bias", {a.kvLoraRank + a.qkRopeHeadDim});
      b.norm(s + "kv_a_layernorm.weight", a.kvLoraRank);
      b.linear(s + "kv_b_proj.weight",
               a.numHeads * (a.qkNopeHeadDim + a.vHeadDim), a.kvLoraRank);
      b.linear(s + "o_proj.weight", H, a.numHeads * a.vHeadDim);
      if (a.outBias)
        b.bias(s + "o_proj.bias", {H});
      const IndexerSpec &ix = a.indexer;
      if (ix.sparse() && !ix.reusesPrevious) {
        // DeepSeek Sparse Attention's lightning indexer.
        check(a.qLoraRank > 0, "the DSA indexer's wq_b reads the q latent: "
                               "q_lora_rank must be positive");
        std::string x = s + "indexer.";
        b.linear(x + "wq_b.weight", ix.numHeads * ix.headDim, a.qLoraRank);
        b.linear(x + "wk.weight", ix.headDim, H);
        b.norm(x + "k_norm.weight", ix.headDim);
        b.bias(x + "k_norm.bias", {ix.headDim});
        b.linear(x + "weights_proj.weight", ix.numHeads, H);
      }
    } else {
      // Gated attention (Qwen3-Next): q_proj yields the query and the gate
      // of each head, [heads, 2 * head_dim].
      int64_t q = a.numHeads * a.headDim * (a.outputGate ? 2 : 1),
              kv = a.numKVHeads * a.headDim;
      b.linear(s + "q_proj.weight", q, H);
      b.linear(s + "k_proj.weight", kv, H);
      b.linear(s + "v_proj.weight", kv, H);
      b.linear(s + "o_proj.weight", H, a.numHeads * a.vHeadDim);
      if (a.qkvBias) {
        b.bias(s + "q_proj.bias", {q});
        b.bias(s + "k_proj.bias", {kv});
        b.bias(s + "v_proj.bias", {kv});
      }
      if (a.outBias)
        b.bias(s + "o_proj.bias", {H});
      if (a.qkNorm) {
        decoderNorm(s + "q_norm.weight", a.headDim);
        decoderNorm(s + "k_norm.weight", a.headDim);
      }
      if (a.sinks)
        b.specs.push_back({s + "sinks", {a.numHeads}, Init::Sink});
    }
    if (layer.isMTP) {
      b.specs.push_back({p + "embed_tokens.weight", {V, H}, Init::Embed, 1});
      b.norm(p + "enorm.weight", H);
      b.norm(p + "hnorm.weight", H);
      b.linear(p + "eh_proj.weight", H, 2 * H);
      b.norm(p + "shared_head.norm.weight", H);
      b.linear(p + "shared_head.head.weight", V, H);
    }
    if (!layer.isMoE) {
      b.mlp(p + "mlp.", H, layer.ffn.intermediate, layer.ffn.bias);
      continue;
    }
    const MoESpec &e = layer.moe;
    int64_t E = e.numExperts, I = e.expertIntermediate;
    if (type == "gpt_oss") {
      std::string x = p + "mlp.experts.";
      b.linear(p + "mlp.router.weight", E, H);
      b.bias(p + "mlp.router.bias", {E});
      b.specs.push_back({x + "gate_up_proj", {E, H, 2 * I}, Init::Linear, H});
      b.bias(x + "gate_up_proj_bias", {E, 2 * I});
      b.specs.push_back({x + "down_proj", {E, I, H}, Init::Linear, I});
      b.bias(x + "down_proj_bias", {E, H});
    } else if (type == "mixtral") {
      std::string x = p + "block_sparse_moe.";
      b.linear(x + "gate.weight", E, H);
      for (int64_t j = 0; j < E; ++j)
        b.mlp(x + "experts." + std::to_string(j) + ".", H, I, false, "w1", "w3",
              "w2");
    } else {
      b.linear(p + "mlp.gate.weight", E, H);
      bool deepseek = type == "deepseek_v2" || type == "deepseek_v3" ||
                      type == "deepseek_v32" || type == "glm_moe_dsa" ||
                      type == "kimi_k2";
      if (deepseek && topkMethod == "noaux_tc")
        b.specs.push_back(
            {p + "mlp.gate.e_score_correction_bias", {E}, Init::Correction});
      for (int64_t j = 0; j < E; ++j)
        b.mlp(p + "mlp.experts." + std::to_string(j) + ".", H, I, false);
      if (e.sharedExpertGate) {
        // Qwen3-Next: one shared expert (singular) and its sigmoid gate.
        b.mlp(p + "mlp.shared_expert.", H, e.sharedIntermediate, false);
        b.linear(p + "mlp.shared_expert_gate.weight", 1, H);
      } else if (e.numSharedExperts > 0) {
        b.mlp(p + "mlp.shared_experts.", H,
              e.sharedIntermediate * e.numSharedExperts, false);
      }
    }
  }
  decoderNorm("model.norm.weight", H);
  if (!m.tieWordEmbeddings)
    b.linear("lm_head.weight", V, H);
  return b.specs;
}

/// Box-Muller over mt19937_64, the same on every platform.
struct Normal {
  std::mt19937_64 rng;
  bool have = false;
  double spare = 0;
  explicit Normal(uint64_t seed) : rng(seed) {}
  double next() {
    if (have) {
      have = false;
      return spare;
    }
    double u1 = (static_cast<double>(rng() >> 11) + 1.0) * 0x1.0p-53;
    double u2 = static_cast<double>(rng() >> 11) * 0x1.0p-53;
    double r = std::sqrt(-2.0 * std::log(u1));
    spare = r * std::sin(2 * M_PI * u2);
    have = true;
    return r * std::cos(2 * M_PI * u2);
  }
};

/// --fast: a tensor's own counter-based stream (splitmix64 of the seed,
/// the tensor's index and the value's index), so that tensors are drawn on
/// every core in any order with the same result. Each value is the sum of
/// four uniform 16-bit draws, centred and scaled to unit variance (an
/// Irwin-Hall approximation of N(0, 1), bounded at +-3.46): a few
/// nanoseconds per value instead of Box-Muller's log, sqrt and sin/cos.
struct FastNormal {
  uint64_t key;
  uint64_t counter = 0;
  FastNormal(uint64_t seed, uint64_t tensor)
      : key(seed * 0x9e3779b97f4a7c15ull + tensor * 0xbf58476d1ce4e5b9ull +
            0x94d049bb133111ebull) {}
  double next() {
    uint64_t z = key + 0x9e3779b97f4a7c15ull * ++counter;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    double sum = static_cast<double>(z & 0xffff) +
                 static_cast<double>((z >> 16) & 0xffff) +
                 static_cast<double>((z >> 32) & 0xffff) +
                 static_cast<double>(z >> 48);
    // Each draw is uniform on [0, 65535]: mean 2 * 65535, variance
    // 4 * (65536^2 - 1) / 12.
    return (sum - 2.0 * 65535.0) * (1.7320508075688772 / 65536.0);
  }
};

template <class Generator>
HostTensor randomTensor(const Spec &s, Generator &n) {
  HostTensor t;
  t.shape = s.shape;
  int64_t count = 1;
  for (int64_t d : s.shape)
    count *= d;
  t.data.resize(count);
  for (float &v : t.data) {
    double z = n.next();
    switch (s.init) {
    case Init::Linear:
      v = static_cast<float>(z / std::sqrt(static_cast<double>(s.fanIn)));
      break;
    case Init::Embed: // fanIn 1, or 100 for tied embeddings (std 0.1)
      v = static_cast<float>(z / std::sqrt(static_cast<double>(s.fanIn)));
      break;
    case Init::Norm:
      v = static_cast<float>(1.0 + 0.1 * z);
      break;
    case Init::Bias:
      v = static_cast<float>(0.05 * z);
      break;
    case Init::Sink:
      v = static_cast<float>(0.5 * z);
      break;
    case Init::Correction:
      v = static_cast<float>(0.1 * z);
      break;
    case Init::ZeroNorm: // applied as 1 + w
      v = static_cast<float>(0.1 * z);
      break;
    }
  }
  return t;
}

bool startsWith(const std::string &s, const std::string &p) {
  return s.compare(0, p.size(), p) == 0;
}

bool endsWith(const std::string &s, const std::string &p) {
  return s.size() >= p.size() &&
         s.compare(s.size() - p.size(), p.size(), p) == 0;
}

/// The MoE routers and the small per-token gates read from the hidden
/// state (Qwen3-Next's shared_expert_gate, the DSA indexer's weights_proj):
/// Init::Linear like the projections, never quantized.
bool isRouter(const std::string &name) {
  return endsWith(name, ".mlp.gate.weight") ||
         endsWith(name, ".block_sparse_moe.gate.weight") ||
         name.find(".mlp.router.") != std::string::npos ||
         endsWith(name, ".mlp.shared_expert_gate.weight") ||
         endsWith(name, ".indexer.weights_proj.weight");
}

/// Whether `s` is stored quantized in `format`.
bool isQuantized(const Spec &s, CheckpointFormat format) {
  if (format == CheckpointFormat::BF16 || s.init != Init::Linear ||
      !startsWith(s.name, "model.layers."))
    return false;
  if (format == CheckpointFormat::MXFP4) // gpt-oss's fused experts
    return s.shape.size() == 3 &&
           (endsWith(s.name, ".mlp.experts.gate_up_proj") ||
            endsWith(s.name, ".mlp.experts.down_proj"));
  return s.shape.size() == 2 && endsWith(s.name, ".weight") &&
         !isRouter(s.name) && !endsWith(s.name, ".shared_head.head.weight");
}

/// "X.weight" -> "X." (the prefix of its scale tensors).
std::string scalePrefix(const std::string &name) {
  return name.substr(0, name.size() - std::string("weight").size());
}

/// The names of the tensors stored for `s`, the weight first.
std::vector<std::string> storedNames(const Spec &s, CheckpointFormat format) {
  if (!isQuantized(s, format))
    return {s.name};
  std::string p = scalePrefix(s.name);
  switch (format) {
  case CheckpointFormat::FP8Block:
    return {s.name, p + "weight_scale_inv"};
  case CheckpointFormat::FP8Tensor:
    return {s.name, p + "weight_scale", p + "input_scale"};
  case CheckpointFormat::NVFP4:
    return {s.name, p + "weight_scale", p + "weight_scale_2",
            p + "input_scale"};
  case CheckpointFormat::MXFP4:
    return {s.name + "_blocks", s.name + "_scales"};
  case CheckpointFormat::BF16:
    break;
  }
  return {s.name};
}

/// A one-line error when `s` cannot be stored in `format`.
void checkQuantizable(const Spec &s, CheckpointFormat format) {
  if (!isQuantized(s, format))
    return;
  // Input dimension: [N, K] linear weights; gpt-oss experts [E, K, N].
  int64_t K = s.shape[1];
  int64_t group = format == CheckpointFormat::NVFP4   ? 16
                  : format == CheckpointFormat::MXFP4 ? 32
                                                      : 1;
  check(K % group == 0,
        std::string("--format ") + checkpointFormatName(format) + ": " +
            s.name + " has an input dimension of " + std::to_string(K) +
            ", which is not a multiple of " + std::to_string(group) + " (" +
            checkpointFormatName(format) + " scales groups of " +
            std::to_string(group) + " values along it)");
}

RawTensor rawTensor(const std::string &name, const std::string &dtype,
                    std::vector<int64_t> shape, std::vector<uint8_t> bytes) {
  RawTensor r;
  r.name = name;
  r.dtype = dtype;
  r.shape = std::move(shape);
  r.bytes = std::move(bytes);
  return r;
}

RawTensor f32Scalar(const std::string &name, float v) {
  std::vector<uint8_t> b(4);
  std::memcpy(b.data(), &v, 4);
  return rawTensor(name, "F32", {}, std::move(b));
}

/// The tensors stored for `s` with values `t` (storedNames order).
std::vector<RawTensor> encode(const Spec &s, HostTensor t,
                              CheckpointFormat format,
                              const std::string &dtype) {
  if (!isQuantized(s, format))
    return {encodeFloats(s.name, t, dtype)};
  // The values of the bf16 checkpoint.
  for (float &v : t.data)
    v = bf16ToFloat(floatToBf16(v));
  std::vector<std::string> names = storedNames(s, format);
  auto sizeCheck = [&](const QuantHost &q, size_t data, size_t scales) {
    check(q.data.size() == data && q.scales.size() == scales,
          s.name + ": unexpected quantizer output size");
  };
  if (format == CheckpointFormat::MXFP4) {
    // [E, K, N] (in x out) -> per expert [N, K] (out x in).
    int64_t E = t.shape[0], K = t.shape[1], N = t.shape[2];
    HostTensor tr = transposeLast2(t); // [E, N, K]
    QuantHost q = quantizeMXFP4(tr, s.name);
    sizeCheck(q, static_cast<size_t>(E * N * K / 2),
              static_cast<size_t>(E * N * K / 32));
    return {rawTensor(names[0], "U8", {E, N, K / 32, 16}, std::move(q.data)),
            rawTensor(names[1], "U8", {E, N, K / 32}, std::move(q.scales))};
  }
  int64_t N = t.shape[0], K = t.shape[1];
  switch (format) {
  case CheckpointFormat::FP8Block: {
    QuantHost q = quantizeFP8Block(t, s.name, 128);
    int64_t gr = (N + 127) / 128, gc = (K + 127) / 128;
    sizeCheck(q, static_cast<size_t>(N * K), static_cast<size_t>(4 * gr * gc));
    return {rawTensor(names[0], "F8_E4M3", {N, K}, std::move(q.data)),
            rawTensor(names[1], "F32", {gr, gc}, std::move(q.scales))};
  }
  case CheckpointFormat::FP8Tensor: {
    QuantHost q = quantizeFP8Tensor(t, s.name);
    sizeCheck(q, static_cast<size_t>(N * K), 4);
    return {rawTensor(names[0], "F8_E4M3", {N, K}, std::move(q.data)),
            rawTensor(names[1], "F32", {}, std::move(q.scales)),
            f32Scalar(names[2], 1.0f)};
  }
  default: { // NVFP4
    QuantHost q = quantizeNVFP4(t, s.name);
    sizeCheck(q, static_cast<size_t>(N * K / 2),
              static_cast<size_t>(N * K / 16));
    check(q.globals.size() == 1, s.name + ": expected one weight_scale_2");
    return {rawTensor(names[0], "U8", {N, K / 2}, std::move(q.data)),
            rawTensor(names[1], "F8_E4M3", {N, K / 16}, std::move(q.scales)),
            f32Scalar(names[2], q.globals[0]), f32Scalar(names[3], 1.0f)};
  }
  }
}

/// config.json's quantization_config for `format` (null for bf16).
nlohmann::ordered_json quantizationConfig(CheckpointFormat format) {
  using oj = nlohmann::ordered_json;
  switch (format) {
  case CheckpointFormat::FP8Block:
    return oj{{"quant_method", "fp8"},
              {"fmt", "e4m3"},
              {"activation_scheme", "dynamic"},
              {"weight_block_size", oj::array({128, 128})}};
  case CheckpointFormat::FP8Tensor:
    return oj{{"quant_method", "modelopt"}, {"quant_algo", "FP8"}};
  case CheckpointFormat::NVFP4:
    return oj{{"quant_method", "modelopt"},
              {"quant_algo", "NVFP4"},
              {"group_size", 16}};
  case CheckpointFormat::MXFP4:
    return oj{
        {"quant_method", "mxfp4"},
        {"modules_to_not_convert",
         oj::array({"model.layers.*.self_attn", "model.layers.*.mlp.router",
                    "model.embed_tokens", "lm_head"})}};
  case CheckpointFormat::BF16:
    break;
  }
  return nullptr;
}

int usage(const char *msg) {
  if (msg)
    std::fprintf(stderr, "helix-make-checkpoint: error: %s\n", msg);
  std::fprintf(stderr, "usage: helix-make-checkpoint --config CONFIG -o DIR "
                       "[--seed S] [--shards N] [--dtype bf16|fp16|fp32] "
                       "[--format bf16|fp8-block|fp8-tensor|nvfp4|mxfp4] "
                       "[--drop NAME]... [--fast] [--config-only]\n");
  if (msg)
    return 1;
  std::fprintf(
      stderr,
      "\n"
      "Writes random weights named and shaped as the Hugging Face checkpoint\n"
      "of CONFIG's architecture, and CONFIG as DIR/config.json.\n"
      "\n"
      "  --seed S      random seed (default 0)\n"
      "  --shards N    N files and model.safetensors.index.json (default 1)\n"
      "  --dtype D     dtype of the unquantized checkpoint (default bf16);\n"
      "                quantized formats need bf16 (their other tensors are\n"
      "                BF16)\n"
      "  --format F    how the decoder layers' linear weights are stored\n"
      "                (docs/quantization.md); embeddings, LM head, norms,\n"
      "                biases, routers and sinks stay BF16:\n"
      "      bf16        unquantized (default)\n"
      "      fp8-block   F8_E4M3 + weight_scale_inv F32 per 128x128 block\n"
      "      fp8-tensor  F8_E4M3 + weight_scale F32 [] + input_scale F32 []\n"
      "                  (input_scale is a placeholder 1.0)\n"
      "      nvfp4       U8 [N, K/2] packed E2M1 + weight_scale F8_E4M3\n"
      "                  [N, K/16] + weight_scale_2 F32 [] + input_scale\n"
      "                  F32 [] (1.0); K a multiple of 16\n"
      "      mxfp4       gpt_oss only: the experts' gate_up_proj / down_proj\n"
      "                  as _blocks U8 [E, out, in/32, 16] + _scales U8\n"
      "                  (E8M0) [E, out, in/32]\n"
      "                The values are the bf16 checkpoint's of the same seed,\n"
      "                quantized with the runtime's quantizers; config.json\n"
      "                gets the format's quantization_config.\n"
      "  --drop NAME   leave out the stored tensor NAME (any the format\n"
      "                writes, scale tensors too)\n"
      "  --fast        each tensor from its own counter-based stream, on\n"
      "                every core (other values than the default stream's;\n"
      "                for multi-GB checkpoints)\n"
      "  --config-only write DIR/config.json alone, no weights\n");
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string config, outDir, dtype = "bf16", formatName = "bf16";
  uint64_t seed = 0;
  int64_t shards = 1;
  std::vector<std::string> drop;
  bool fast = false, configOnly = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help")
      return usage(nullptr);
    if (a == "--fast" || a == "--config-only") {
      (a == "--fast" ? fast : configOnly) = true;
      continue;
    }
    if (i + 1 >= argc)
      return usage((a + ": missing value").c_str());
    std::string v = argv[++i];
    try {
      if (a == "--config")
        config = v;
      else if (a == "-o" || a == "--output")
        outDir = v;
      else if (a == "--seed")
        seed = std::stoull(v);
      else if (a == "--shards")
        shards = std::stoll(v);
      else if (a == "--dtype")
        dtype = v;
      else if (a == "--format")
        formatName = v;
      else if (a == "--drop")
        drop.push_back(v);
      else
        return usage(("unknown option " + a).c_str());
    } catch (const std::exception &) {
      return usage((a + ": bad value \"" + v + "\"").c_str());
    }
  }
  if (config.empty() || outDir.empty())
    return usage("--config and -o are required");
  if (shards < 1)
    return usage("--shards: expected at least 1");
  std::string st = dtype == "bf16"   ? "BF16"
                   : dtype == "fp16" ? "F16"
                   : dtype == "fp32" ? "F32"
                                     : "";
  if (st.empty())
    return usage("--dtype: expected bf16, fp16 or fp32");
  CheckpointFormat format;
  if (!parseCheckpointFormat(formatName.c_str(), format))
    return usage(("--format: expected bf16, fp8-block, fp8-tensor, nvfp4 or "
                  "mxfp4, got \"" +
                  formatName + "\"")
                     .c_str());
  if (format != CheckpointFormat::BF16 && st != "BF16")
    return usage(("--dtype " + dtype + " cannot be combined with --format " +
                  formatName +
                  ": the unquantized tensors of quantized checkpoints are "
                  "BF16")
                     .c_str());

  ModelSpec m;
  std::string err;
  ImportOptions withMTP;
  withMTP.includeMTP = true; // the checkpoint holds the MTP layers too
  if (!importHFConfigFile(config, withMTP, m, err)) {
    std::fprintf(stderr, "helix-make-checkpoint: error: %s\n", err.c_str());
    return 1;
  }
  try {
    check(format != CheckpointFormat::MXFP4 || m.modelType == "gpt_oss",
          "--format mxfp4: mxfp4 is gpt-oss's format (its experts' "
          "gate_up_proj / down_proj as _blocks / _scales); model_type " +
              m.modelType + " has no such tensors");
    std::string text = readTextFile(config);
    json raw = json::parse(text);
    ::mkdir(outDir.c_str(), 0755);
    std::vector<Spec> specs = tensorsFor(m, raw);
    for (const Spec &s : specs)
      checkQuantizable(s, format);
    // --drop names stored tensors; a spec none of whose stored tensors
    // remain is not generated (no random draws), as before --format.
    std::set<std::string> dropped;
    std::vector<std::set<std::string>> kept;
    {
      std::set<std::string> all;
      for (const Spec &s : specs)
        for (const std::string &n : storedNames(s, format))
          all.insert(n);
      for (const std::string &d : drop) {
        check(all.count(d) != 0,
              "--drop: no tensor " + d + " in this model" +
                  (format == CheckpointFormat::BF16
                       ? std::string()
                       : std::string(" stored as ") + formatName));
        dropped.insert(d);
      }
      std::vector<Spec> remaining;
      for (const Spec &s : specs) {
        std::set<std::string> k;
        for (const std::string &n : storedNames(s, format))
          if (!dropped.count(n))
            k.insert(n);
        if (k.empty())
          continue;
        remaining.push_back(s);
        kept.push_back(std::move(k));
      }
      specs = std::move(remaining);
    }
    {
      std::ofstream c(outDir + "/config.json");
      if (format == CheckpointFormat::BF16) {
        c << text;
      } else {
        nlohmann::ordered_json oc = nlohmann::ordered_json::parse(text);
        oc["quantization_config"] = quantizationConfig(format);
        c << oc.dump(2) << "\n";
      }
      check(static_cast<bool>(c), outDir + "/config.json: cannot write");
    }
    if (configOnly) {
      std::printf("%s: config.json only (--config-only)\n", outDir.c_str());
      return 0;
    }
    // Each spec's stored tensors, in order, less the dropped ones.
    std::vector<std::vector<RawTensor>> groups(specs.size());
    auto keep = [&](size_t i, std::vector<RawTensor> encoded) {
      for (RawTensor &r : encoded)
        if (kept[i].count(r.name))
          groups[i].push_back(std::move(r));
    };
    if (fast) {
      // Tensors on every core, largest first; the first error wins.
      std::vector<size_t> order(specs.size());
      for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
      auto elements = [&](size_t i) {
        int64_t n = 1;
        for (int64_t d : specs[i].shape)
          n *= d;
        return n;
      };
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return elements(a) > elements(b);
      });
      std::atomic<size_t> nextSpec{0};
      std::string firstError;
      std::mutex errorLock;
      auto worker = [&] {
        for (size_t j; (j = nextSpec++) < order.size();) {
          size_t i = order[j];
          try {
            FastNormal normal(seed, i);
            keep(i,
                 encode(specs[i], randomTensor(specs[i], normal), format, st));
          } catch (const std::exception &e) {
            std::lock_guard<std::mutex> lock(errorLock);
            if (firstError.empty())
              firstError = e.what();
          }
        }
      };
      unsigned n = std::max(1u, std::thread::hardware_concurrency());
      std::vector<std::thread> pool;
      for (unsigned t = 1; t < n; ++t)
        pool.emplace_back(worker);
      worker();
      for (std::thread &t : pool)
        t.join();
      check(firstError.empty(), firstError);
    } else {
      Normal normal(seed * 0x9e3779b97f4a7c15ull + 12345);
      for (size_t i = 0; i < specs.size(); ++i)
        keep(i, encode(specs[i], randomTensor(specs[i], normal), format, st));
    }
    std::vector<uint64_t> groupBytes;
    uint64_t total = 0;
    size_t count = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
      const std::vector<RawTensor> &g = groups[i];
      uint64_t n = 0;
      for (const RawTensor &r : g)
        n += r.bytes.size();
      total += n;
      count += g.size();
      groupBytes.push_back(n);
    }
    // Contiguous groups of tensors of about total / shards bytes each; a
    // weight's scale tensors go with it.
    std::vector<std::vector<RawTensor>> files(shards);
    uint64_t acc = 0;
    for (size_t i = 0; i < groups.size(); ++i) {
      int64_t f = std::min<int64_t>(
          shards - 1, total ? static_cast<int64_t>(acc * shards / total) : 0);
      for (RawTensor &r : groups[i])
        files[f].push_back(std::move(r));
      acc += groupBytes[i];
    }
    std::map<std::string, std::string> meta = {{"format", "pt"}};
    if (shards == 1) {
      writeSafetensorsRaw(outDir + "/model.safetensors", files[0], meta);
    } else {
      json index = {{"metadata", {{"total_size", total}}},
                    {"weight_map", json::object()}};
      for (int64_t f = 0; f < shards; ++f) {
        char name[64];
        std::snprintf(name, sizeof(name), "model-%05lld-of-%05lld.safetensors",
                      static_cast<long long>(f + 1),
                      static_cast<long long>(shards));
        writeSafetensorsRaw(outDir + "/" + name, files[f], meta);
        for (const RawTensor &t : files[f])
          index["weight_map"][t.name] = name;
      }
      std::ofstream out(outDir + "/model.safetensors.index.json");
      out << index.dump(2) << "\n";
      check(static_cast<bool>(out), outDir + ": cannot write the index");
    }
    std::string what =
        format == CheckpointFormat::BF16 ? dtype : formatName + ", other bf16";
    std::printf("%s: %zu tensors, %llu bytes (%s) in %lld file(s)\n",
                outDir.c_str(), count, static_cast<unsigned long long>(total),
                what.c_str(), static_cast<long long>(shards));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "helix-make-checkpoint: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
