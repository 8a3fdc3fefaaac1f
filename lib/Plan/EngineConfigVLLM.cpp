//===- EngineConfigVLLM.cpp - vllm serve command line ---------------------===//
//
// Follows vLLM's documentation at docs.vllm.ai/en/latest and its config
// classes on main (docs/engine-configs.md):
//   - serving/context_parallel_deployment: decode context parallelism
//     (-dcp) reuses the TP ranks and lies in [1, tp / KV heads]; MLA and GQA.
//     So helix's KVP x TPA = k x t is -tp k*t -dcp k with t >= KV heads,
//     and the output projection and FFN run TP over all k*t GPUs, as in
//     Helix.
//   - vllm/config/parallel.py: tp % dcp == 0; cp_kv_cache_interleave_size
//     (tokens per DCP rank at a time, a divisor of the KV block size).
//   - serving/data_parallel_deployment, expert_parallel_deployment: MoE
//     layers run TP over DP x TP ranks, or EP with --enable-expert-parallel
//     (no TPF x EP grid); data-parallel attention replicas of a dense model
//     are independent engines.
//   - vllm/config/model.py (verify_with_parallel_config): for GQA, tp >
//     KV heads, dcp <= tp / KV heads and dcp divides the query heads per
//     KV head; MLA only needs tp % dcp.
//   - vllm/config/cache.py: --kv-cache-dtype auto | fp8 | nvfp4 | ...;
//     the FlashInfer and TRTLLM (GQA) backends list nvfp4, the dense MLA
//     backends (FLASHINFER_MLA, ...) auto / bf16 / fp8 only.
//   - vllm/utils/flashinfer.py: TRTLLM attention is off under DCP (it
//     returns no LSE), and FlashInfer refuses attention sinks without it:
//     gpt-oss's sink layers get no DCP backend.
//   - vllm/v1/worker/cp_utils.py: with speculative decoding, an
//     interleave size above 1 needs a backend that declares it
//     (supports_mtp_with_cp_non_trivial_interleave_size, false by default).
//   - vllm/config/model.py (_get_and_verify_max_len): --max-model-len past
//     the derived length fails unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 or a
//     RoPE override (--hf-overrides rope_parameters) lengthens it.
//
//===----------------------------------------------------------------------===//

#include "EngineConfigRules.h"

namespace helix {
namespace engine {

namespace {

std::string s(int64_t v) { return std::to_string(v); }

class VLLMRules final : public Rules {
public:
  Engine engine() const override { return Engine::VLLM; }

  /// MoE layers over `width` GPUs: all TP or all EP.
  static std::string moeGrid(const ModelFacts &m, const Layout &l,
                             int64_t width) {
    if (!m.moe || (l.tpf == width && l.ep == 1) ||
        (l.tpf == 1 && l.ep == width))
      return "";
    return "vLLM runs MoE layers with TP or EP (--enable-expert-parallel) "
           "over all " +
           s(width) + " GPUs, not a TPF x EP = " + s(l.tpf) + " x " + s(l.ep) +
           " grid";
  }

  std::string cannotRun(const ModelFacts &m, const Hardware &, const Workload &,
                        const Config &c) const override {
    const Layout &l = c.layout;
    switch (c.strategy) {
    case Strategy::KVP:
      return "vLLM has no Medha-style KVP (output projection and FFN tied to "
             "the TPA group, replicated over KVP)";
    case Strategy::Helix:
    case Strategy::HelixNoHopB:
      // Decode context parallelism's limits are data/engines/vllm.json's
      // rules, checked on the file this configuration writes.
      return moeGrid(m, l, l.gpus());
    case Strategy::TP:
      return moeGrid(m, l, l.gpus());
    case Strategy::TPPP:
      return moeGrid(m, l, l.tpa);
    case Strategy::EP:
      // A dense model's DP replicas: data/engines/vllm.json's rules.
      return moeGrid(m, l, l.gpus());
    }
    return "";
  }

  std::string kvDTypeName(DType kv) const override {
    return kv == DType::FP4 ? "nvfp4" : kv == DType::FP8 ? "fp8" : "auto";
  }

  std::string contextSetting(int64_t tokens) const override {
    return "--max-model-len " + s(tokens);
  }

  std::string longContextOverride() const override {
    return "refuses a longer --max-model-len at start-up unless "
           "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set or --hf-overrides "
           "'{\"rope_parameters\": {\"rope_type\": \"yarn\", ...}}' "
           "lengthens the model's RoPE";
  }

  const char *kvExchange() const override {
    return "the decode-context-parallel attention exchange";
  }

  std::vector<std::string> usage(const ModelFacts &m) const override {
    return {"MODEL=<" + m.name +
            " checkpoint> sh THIS_FILE [more vllm serve flags]"};
  }

  void addNotes(const ModelFacts &m, const Workload &w, const Config &c,
                std::vector<std::string> &notes) const override {
    const Layout &l = c.layout;
    if (kvSharded(c.strategy) && l.kvp > 1) {
      notes.push_back(
          "vLLM's DCP combines partial attention outputs with all-gather + "
          "reduce-scatter by default (--dcp-comm-backend ag_rs; a2a is the "
          "all-to-all helix prices)");
      const std::string flag = fieldName(Engine::VLLM, m, "interleave", "");
      if (flag.empty())
        notes.push_back("vLLM " + m.version +
                        " has no interleave option: it deals KV to the DCP "
                        "ranks token by token; helix priced blocks of " +
                        s(w.kvBlock) + " tokens (the same bytes per rank)");
      else if (w.mtpTokens > 0)
        notes.push_back(
            flag +
            " 1: with MTP, vLLM's attention "
            "backends take no larger interleave by default, so KV is dealt "
            "to the DCP ranks token by token; helix priced blocks of " +
            s(w.kvBlock) + " tokens (the same bytes per rank)");
      else
        notes.push_back(
            flag + " " + s(w.kvBlock) +
            " deals KV to the DCP ranks in helix's blocks of " + s(w.kvBlock) +
            " tokens; the KV block size must be a multiple of it (releases "
            "before the rename: --dcp-kv-cache-interleave-size)");
    }
    if (c.strategy == Strategy::EP) {
      notes.push_back("--max-num-seqs is per data-parallel engine: " +
                      s(c.batch) + " requests over " + s(l.dp) + " engines");
      if (m.denseLayers > 0)
        notes.push_back("vLLM runs the " + s(m.denseLayers) +
                        " dense FFN layers TP = " + s(l.tpa) +
                        " inside each data-parallel replica; helix prices "
                        "them TP = " +
                        s(l.gpus()));
    }
    if (w.precision.kvCache == DType::FP4)
      notes.push_back("--kv-cache-dtype nvfp4 needs vLLM 0.21 or later");
    if (w.precision.kvCache == DType::BF16)
      notes.push_back("--kv-cache-dtype auto keeps the checkpoint's KV "
                      "dtype: bf16 for a BF16 checkpoint");
    if (w.mtpTokens > 0)
      notes.push_back("--speculative-config: the deepseek_mtp method with " +
                      s(w.mtpTokens) +
                      " speculative tokens (https://docs.vllm.ai/en/v0.11.0/"
                      "api/vllm/config/speculative.html)");
  }

  std::vector<std::string> sources() const override {
    return {"https://docs.vllm.ai/en/latest/serving/"
            "context_parallel_deployment.html (-dcp in [1, tp / KV heads])",
            "https://docs.vllm.ai/en/latest/serving/"
            "data_parallel_deployment.html (DP attention, MoE TP or EP)",
            "https://docs.vllm.ai/en/latest/cli/serve/ (flags, "
            "--kv-cache-dtype)"};
  }

  const char *firstLine() const override { return "#!/bin/sh"; }

  void writeBody(std::ostream &os, const ModelFacts &m, const Workload &w,
                 const Config &c) const override {
    const Layout &l = c.layout;
    std::vector<std::string> flags;
    int64_t maxSeqs = c.batch;
    switch (c.strategy) {
    case Strategy::Helix:
    case Strategy::HelixNoHopB:
    case Strategy::KVP:
      flags.push_back("--tensor-parallel-size " + s(l.gpus()));
      if (l.kvp > 1) {
        flags.push_back(fieldName(Engine::VLLM, m, "dcp",
                                  "--decode-context-parallel-size") +
                        " " + s(l.kvp));
        // Releases before the interleave option deal KV token by token.
        std::string interleave = fieldName(Engine::VLLM, m, "interleave", "");
        if (!interleave.empty())
          flags.push_back(interleave + " " +
                          s(w.mtpTokens > 0 ? 1 : w.kvBlock));
      }
      break;
    case Strategy::TP:
      flags.push_back("--tensor-parallel-size " + s(l.tpa));
      break;
    case Strategy::TPPP:
      flags.push_back("--tensor-parallel-size " + s(l.tpa));
      flags.push_back("--pipeline-parallel-size " + s(l.pp));
      break;
    case Strategy::EP:
      flags.push_back("--tensor-parallel-size " + s(l.tpa));
      flags.push_back("--data-parallel-size " + s(l.dp));
      maxSeqs = ceilDiv(c.batch, l.dp);
      break;
    }
    if (m.moe && l.ep > 1)
      flags.push_back("--enable-expert-parallel");
    flags.push_back("--kv-cache-dtype " + kvDTypeName(w.precision.kvCache));
    flags.push_back(contextSetting(w.context));
    flags.push_back("--max-num-seqs " + s(maxSeqs));
    if (w.mtpTokens > 0) // the model's MTP layer drafts K tokens per step
      flags.push_back("--speculative-config '{\"method\": \"deepseek_mtp\", "
                      "\"num_speculative_tokens\": " +
                      s(w.mtpTokens) + "}'");
    writeShellCommand(os, m, "vllm serve \"$MODEL\"", flags);
  }
};

} // namespace

const Rules &vllmRules() {
  static const VLLMRules rules;
  return rules;
}

} // namespace engine
} // namespace helix
