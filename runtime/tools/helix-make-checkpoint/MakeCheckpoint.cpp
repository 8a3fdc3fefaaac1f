//===- MakeCheckpoint.cpp - Random safetensors checkpoints for tests ------===//
//
//   helix-make-checkpoint --config CONFIG -o DIR [--seed S] [--shards N]
//                         [--dtype bf16|fp16|fp32] [--drop NAME]...
//
// Writes random weights with exactly the tensor names and shapes of the
// Hugging Face checkpoints of the config's architecture (llama, mistral,
// qwen2, qwen3, mixtral, qwen3_moe, deepseek_v2/v3, kimi_k2, gpt_oss):
// DIR/model.safetensors, or N shards plus model.safetensors.index.json; and
// a copy of the config as DIR/config.json. --drop leaves a tensor out (to
// test how programs report incomplete checkpoints). Scales keep activations
// O(1): linear weights ~ N(0, 1/in), norms ~ 1 + N(0, 0.1^2), biases small.
//
//===----------------------------------------------------------------------===//

#include "helix/Import/HFConfig.h"
#include "helix/Runtime/DecodeIO.h"
#include "helix/Runtime/Error.h"
#include "helix/Runtime/Safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sys/stat.h>

using namespace helix;
using namespace helix::rt;
using nlohmann::json;

namespace {

enum class Init { Linear, Embed, Norm, Bias, Sink, Correction };

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
  for (const LayerSpec &layer : m.layers) {
    std::string p = "model.layers." + std::to_string(layer.index) + ".";
    const AttentionSpec &a = layer.attention;
    b.norm(p + "input_layernorm.weight", H);
    b.norm(p + "post_attention_layernorm.weight", H);
    std::string s = p + "self_attn.";
    if (a.kind == AttentionKind::MLA) {
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
    } else {
      int64_t q = a.numHeads * a.headDim, kv = a.numKVHeads * a.headDim;
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
        b.norm(s + "q_norm.weight", a.headDim);
        b.norm(s + "k_norm.weight", a.headDim);
      }
      if (a.sinks)
        b.specs.push_back({s + "sinks", {a.numHeads}, Init::Sink});
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
      bool deepseek =
          type == "deepseek_v2" || type == "deepseek_v3" || type == "kimi_k2";
      if (deepseek && topkMethod == "noaux_tc")
        b.specs.push_back(
            {p + "mlp.gate.e_score_correction_bias", {E}, Init::Correction});
      for (int64_t j = 0; j < E; ++j)
        b.mlp(p + "mlp.experts." + std::to_string(j) + ".", H, I, false);
      if (e.numSharedExperts > 0)
        b.mlp(p + "mlp.shared_experts.", H,
              e.sharedIntermediate * e.numSharedExperts, false);
    }
  }
  b.norm("model.norm.weight", H);
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

HostTensor randomTensor(const Spec &s, Normal &n) {
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
    }
  }
  return t;
}

int usage(const char *msg) {
  if (msg)
    std::fprintf(stderr, "helix-make-checkpoint: error: %s\n", msg);
  std::fprintf(stderr, "usage: helix-make-checkpoint --config CONFIG -o DIR "
                       "[--seed S] [--shards N] [--dtype bf16|fp16|fp32] "
                       "[--drop NAME]...\n");
  return msg ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string config, outDir, dtype = "bf16";
  uint64_t seed = 0;
  int64_t shards = 1;
  std::vector<std::string> drop;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help")
      return usage(nullptr);
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

  ModelSpec m;
  std::string err;
  if (!importHFConfigFile(config, ImportOptions(), m, err)) {
    std::fprintf(stderr, "helix-make-checkpoint: error: %s\n", err.c_str());
    return 1;
  }
  try {
    std::string text = readTextFile(config);
    json raw = json::parse(text);
    ::mkdir(outDir.c_str(), 0755);
    std::vector<Spec> specs = tensorsFor(m, raw);
    for (const std::string &d : drop) {
      auto it = std::find_if(specs.begin(), specs.end(),
                             [&](const Spec &s) { return s.name == d; });
      check(it != specs.end(), "--drop: no tensor " + d + " in this model");
      specs.erase(it);
    }
    {
      std::ofstream c(outDir + "/config.json");
      c << text;
      check(static_cast<bool>(c), outDir + "/config.json: cannot write");
    }
    Normal normal(seed * 0x9e3779b97f4a7c15ull + 12345);
    size_t es = st == "F32" ? 4 : 2;
    uint64_t total = 0;
    for (const Spec &s : specs) {
      uint64_t n = es;
      for (int64_t d : s.shape)
        n *= d;
      total += n;
    }
    // Contiguous groups of tensors of about total / shards bytes each.
    std::vector<std::vector<NamedHostTensor>> files(shards);
    uint64_t acc = 0;
    for (const Spec &s : specs) {
      uint64_t n = es;
      for (int64_t d : s.shape)
        n *= d;
      int64_t f = std::min<int64_t>(shards - 1,
                                    static_cast<int64_t>(acc * shards / total));
      files[f].push_back({s.name, randomTensor(s, normal)});
      acc += n;
    }
    std::map<std::string, std::string> meta = {{"format", "pt"}};
    if (shards == 1) {
      writeSafetensors(outDir + "/model.safetensors", files[0], st, meta);
    } else {
      json index = {{"metadata", {{"total_size", total}}},
                    {"weight_map", json::object()}};
      for (int64_t f = 0; f < shards; ++f) {
        char name[64];
        std::snprintf(name, sizeof(name), "model-%05lld-of-%05lld.safetensors",
                      static_cast<long long>(f + 1),
                      static_cast<long long>(shards));
        writeSafetensors(outDir + "/" + name, files[f], st, meta);
        for (const NamedHostTensor &t : files[f])
          index["weight_map"][t.name] = name;
      }
      std::ofstream out(outDir + "/model.safetensors.index.json");
      out << index.dump(2) << "\n";
      check(static_cast<bool>(out), outDir + ": cannot write the index");
    }
    std::printf("%s: %zu tensors, %llu bytes (%s) in %lld file(s)\n",
                outDir.c_str(), specs.size(),
                static_cast<unsigned long long>(total), dtype.c_str(),
                static_cast<long long>(shards));
  } catch (const std::exception &e) {
    std::fprintf(stderr, "helix-make-checkpoint: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
