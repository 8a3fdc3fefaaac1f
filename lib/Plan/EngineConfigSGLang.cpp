//===- EngineConfigSGLang.cpp - sglang.launch_server command line ---------===//
//
// Follows SGLang's documentation at docs.sglang.io (docs/engine-configs.md):
//   - advanced_features/dcp: decode context parallelism (--dcp-size)
//     stripes an MLA KV cache over ranks of the TP group (MLA only) and
//     merges partial outputs with one all-to-all.
//   - advanced_features/server_arguments: --tp-size, --pp-size, --dp-size,
//     --enable-dp-attention (attention TP = tp / dp), --ep-size (MoE TP =
//     tp / ep), --kv-cache-dtype (auto, fp8_e4m3, fp8_e5m2, bf16; nvfp4
//     since sgl-project/sglang PRs 21601 and 36340, for MHA / GQA),
//     --context-length, --max-running-requests (total over DP ranks).
//   - srt/configs/model_config.py: a --context-length past the model's
//     derived length needs SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1, or
//     a RoPE override (--json-model-override-args rope_scaling).
//   - advanced_features/expert_parallelism: EP < TP needs
//     --moe-a2a-backend none (the default).
//
//===----------------------------------------------------------------------===//

#include "EngineConfigRules.h"

namespace helix {
namespace engine {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

class SGLangRules final : public Rules {
public:
  Engine engine() const override { return Engine::SGLang; }

  std::string cannotRun(const ModelFacts &m, const Hardware &, const Workload &,
                        const Config &c) const override {
    const Layout &l = c.layout;
    switch (c.strategy) {
    case Strategy::KVP:
      return "SGLang has no Medha-style KVP (output projection and FFN tied "
             "to the TPA group, replicated over KVP)";
    case Strategy::Helix:
    case Strategy::HelixNoHopB:
      if (l.kvp > 1 && !m.mla)
        return "SGLang's decode context parallelism (--dcp-size) is for MLA "
               "models only; " +
               m.name + " does not use MLA";
      if (l.kvp > 1 && !m.newLayers().empty())
        return "SGLang's decode context parallelism (--dcp-size) is "
               "documented for dense MLA models, not for " +
               m.name + "'s " + m.newLayers() + " layers (" + m.modelType + ")";
      return "";
    case Strategy::EP:
      if (!m.moe)
        return "SGLang's DP attention (--enable-dp-attention) is for MoE "
               "models only";
      return "";
    case Strategy::TP:
    case Strategy::TPPP:
      return "";
    }
    return "";
  }

  std::string kvDTypeName(DType kv) const override {
    return kv == DType::FP4 ? "nvfp4" : kv == DType::FP8 ? "fp8_e4m3" : "auto";
  }

  std::string contextSetting(int64_t tokens) const override {
    return "--context-length " + s(tokens);
  }

  std::string longContextOverride() const override {
    return "refuses a longer --context-length at start-up unless "
           "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 is set or "
           "--json-model-override-args '{\"rope_scaling\": {\"rope_type\": "
           "\"yarn\", ...}}' lengthens the model's RoPE";
  }

  const char *kvExchange() const override {
    return "the decode-context-parallel attention all-to-all";
  }

  std::vector<std::string> usage(const ModelFacts &m) const override {
    return {"MODEL=<" + m.name +
            " checkpoint> sh THIS_FILE [more sglang.launch_server flags]"};
  }

  void addNotes(const ModelFacts &m, const Workload &w, const Config &c,
                std::vector<std::string> &notes) const override {
    const Layout &l = c.layout;
    if (kvSharded(c.strategy) && l.kvp > 1)
      notes.push_back("SGLang stripes the KV cache over the DCP ranks token "
                      "by token (position mod " +
                      s(l.kvp) + "); helix prices blocks of " + s(w.kvBlock) +
                      " tokens per rank");
    int64_t width = c.strategy == Strategy::TPPP ? l.tpa : l.gpus();
    if (m.moe && l.ep > 1 && l.ep < width)
      notes.push_back("SGLang runs EP < TP (TPF x EP = " + s(l.tpf) + " x " +
                      s(l.ep) +
                      ") only with --moe-a2a-backend none (the default)");
    if (c.strategy == Strategy::EP)
      notes.push_back("--max-running-requests is the total over the " +
                      s(l.dp) + " DP ranks (a multiple of " + s(l.dp) + ")");
    if (w.precision.kvCache == DType::FP4)
      notes.push_back("--kv-cache-dtype nvfp4 (E4M3 scale per 16 values, "
                      "what helix prices) needs a recent SGLang (SM100: PR "
                      "36340); fp4_e2m1 is the older MXFP4 cache, which "
                      "current releases reject");
    if (kvSharded(c.strategy) && l.kvp > 1)
      notes.push_back("--dcp-size needs a recent SGLang (decode context "
                      "parallelism for MLA: PRs 14194 and 33926, 2026); "
                      "older releases reject the flag");
    if (w.precision.kvCache == DType::BF16)
      notes.push_back("--kv-cache-dtype auto keeps the checkpoint's KV "
                      "dtype: bf16 for a BF16 checkpoint");
    if (w.mtpTokens > 0)
      notes.push_back(
          "--speculative-algorithm EAGLE runs DeepSeek's MTP layer (NEXTN "
          "is an alias) as a chain of " +
          s(w.mtpTokens) +
          " drafts, top-1 each (https://docs.sglang.io/docs/"
          "advanced_features/speculative_decoding.md, Multi Token "
          "Prediction)");
  }

  std::vector<std::string> sources() const override {
    return {"https://docs.sglang.io/docs/advanced_features/dcp.md "
            "(--dcp-size, MLA only)",
            "https://docs.sglang.io/advanced_features/server_arguments.html "
            "(--tp-size, --dp-size, --enable-dp-attention, --ep-size, "
            "--kv-cache-dtype, --max-running-requests)",
            "https://docs.sglang.io/advanced_features/"
            "expert_parallelism.html (EP < TP)"};
  }

  const char *firstLine() const override { return "#!/bin/sh"; }

  void writeBody(std::ostream &os, const ModelFacts &m, const Workload &w,
                 const Config &c) const override {
    const Layout &l = c.layout;
    std::vector<std::string> flags;
    int64_t maxRunning = c.batch;
    switch (c.strategy) {
    case Strategy::Helix:
    case Strategy::HelixNoHopB:
    case Strategy::KVP:
      flags.push_back("--tp-size " + s(l.gpus()));
      if (l.kvp > 1)
        flags.push_back(fieldName(Engine::SGLang, m, "dcp", "--dcp-size") +
                        " " + s(l.kvp));
      break;
    case Strategy::TP:
      flags.push_back("--tp-size " + s(l.tpa));
      break;
    case Strategy::TPPP:
      flags.push_back("--tp-size " + s(l.tpa));
      flags.push_back("--pp-size " + s(l.pp));
      break;
    case Strategy::EP:
      flags.push_back("--tp-size " + s(l.gpus()));
      flags.push_back("--dp-size " + s(l.dp));
      flags.push_back("--enable-dp-attention");
      maxRunning = ceilDiv(c.batch, l.dp) * l.dp;
      break;
    }
    if (m.moe && l.ep > 1)
      flags.push_back("--ep-size " + s(l.ep));
    flags.push_back("--kv-cache-dtype " + kvDTypeName(w.precision.kvCache));
    flags.push_back(contextSetting(w.context));
    flags.push_back("--max-running-requests " + s(maxRunning));
    if (w.mtpTokens > 0) {
      // The MTP layer as a chain of K drafts (top-1 each): what helix
      // prices.
      flags.push_back("--speculative-algorithm EAGLE");
      flags.push_back("--speculative-num-steps " + s(w.mtpTokens));
      flags.push_back("--speculative-eagle-topk 1");
      flags.push_back("--speculative-num-draft-tokens " + s(w.mtpTokens + 1));
    }
    writeShellCommand(os, m,
                      "python -m sglang.launch_server --model-path "
                      "\"$MODEL\"",
                      flags);
  }
};

} // namespace

const Rules &sglangRules() {
  static const SGLangRules rules;
  return rules;
}

} // namespace engine
} // namespace helix
