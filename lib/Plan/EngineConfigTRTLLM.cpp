//===- EngineConfigTRTLLM.cpp - TensorRT-LLM LLM-API options --------------===//
//
// Follows TensorRT-LLM 1.3.0rc26/rc27 (docs/engine-configs.md):
//   - features/helix.html: context_parallel_size >= 2 with
//     cp_config {cp_type: HELIX, tokens_per_block: 32} equal to
//     kv_cache_config.tokens_per_block; MLA models on Blackwell (GQA
//     through trtllm-gen on SM100 since NVIDIA/TensorRT-LLM PR 11570);
//     speculative decoding with Helix: Eagle3 one-model only (MTP with
//     Helix is PR 16003, not merged); generation servers of a
//     disaggregated deployment.
//   - max_seq_len: the LLM-API's longest sequence.
//   - features/disagg-serving.html: context and generation servers each
//     take cache_transceiver_config {backend, max_tokens_in_buffer (at
//     least the longest input)}; context servers also
//     disable_overlap_scheduler; `trtllm-serve disaggregated -c FILE` reads
//     hostname, port, backend and context_servers / generation_servers
//     {num_instances, urls}.
//   - tensorrt_llm/mapping.py: world = tp x pp x cp; under HELIX attention
//     is cp x tp (attn_cp x attn_tp) and MoE runs moe_tp x moe_ep = tp x cp;
//     otherwise moe_tp x moe_ep = tp.
//   - enable_attention_dp: one attention replica per rank (attention TP 1).
//   - KvCacheConfig.dtype: auto | fp8 | nvfp4.
//
//===----------------------------------------------------------------------===//

#include "EngineConfigRules.h"

#include <sstream>

namespace helix {
namespace engine {

namespace {

/// The KV block of TensorRT-LLM's Helix kernels: every Helix example and
/// test in the engine's documentation uses 32 (features/helix.html), with
/// kv_cache_config.tokens_per_block equal.
constexpr int64_t kHelixTokensPerBlock = 32;

class TRTLLMRules final : public Rules {
public:
  Engine engine() const override { return Engine::TRTLLM; }

  std::string cannotRun(const ModelFacts &m, const Hardware &hw,
                        const Workload &w, const Config &c) const override {
    const Layout &l = c.layout;
    switch (c.strategy) {
    case Strategy::KVP:
      return "TensorRT-LLM has no Medha-style KVP (output projection and FFN "
             "tied to the TPA group, replicated over KVP)";
    case Strategy::Helix:
    case Strategy::HelixNoHopB:
      if (l.kvp == 1)
        return ""; // plain attention TP
      if (!hw.supports(DType::FP4))
        return "TensorRT-LLM documents Helix (cp_type HELIX) on Blackwell "
               "GPUs only; " +
               hw.name + " has no FP4 arithmetic";
      // MTP with Helix, Kimi-K3's tp = 1 x cp = N and the layers Helix is
      // not documented for: data/engines/trtllm.json's rules.
      return "";
    case Strategy::EP:
      if (l.tpa != 1)
        return "TensorRT-LLM's attention DP (enable_attention_dp) runs one "
               "attention replica per GPU, not DP x TPA = " +
               std::to_string(l.dp) + " x " + std::to_string(l.tpa);
      return "";
    case Strategy::TP:
    case Strategy::TPPP:
      return "";
    }
    return "";
  }

  std::string kvDTypeName(DType kv) const override { return kvDType(kv); }

  std::string contextSetting(int64_t tokens) const override {
    return "max_seq_len: " + std::to_string(tokens);
  }

  std::string longContextOverride() const override {
    return "reads the RoPE scaling from the checkpoint's config.json "
           "(rope_scaling): lengthen it there";
  }

  const char *kvExchange() const override {
    return "Helix's attention all-to-all";
  }

  std::vector<std::string> usage(const ModelFacts &m) const override {
    return {"trtllm-serve <" + m.name +
            " checkpoint> --extra_llm_api_options THIS_FILE"};
  }

  void addNotes(const ModelFacts &m, const Workload &w, const Config &c,
                std::vector<std::string> &notes) const override {
    const Layout &l = c.layout;
    if (kvSharded(c.strategy) && l.kvp > 1 && !m.mla)
      notes.push_back("GQA Helix runs through TensorRT-LLM's TRTLLM attention "
                      "backend on SM100, wired per model class (Qwen3: "
                      "NVIDIA/TensorRT-LLM PR 11570); the Helix page still "
                      "documents MLA models");
    if (kvSharded(c.strategy) && l.kvp > 1 && m.kda)
      notes.push_back("TensorRT-LLM runs " + m.name +
                      "'s KDA layers and its dense and shared MLPs TP over "
                      "all " +
                      std::to_string(l.gpus()) +
                      " GPUs (CP ranks repurposed as TP, PR 17796), which "
                      "helix's per-layer plan prices (linear_attention tpa=" +
                      std::to_string(l.gpus()) +
                      "); its uniform figures above keep KDA on the "
                      "attention's TP group");
    if (kvSharded(c.strategy) && l.kvp > 1) {
      notes.push_back("TensorRT-LLM runs Helix on the generation (decode) "
                      "servers of a disaggregated prefill/decode deployment: "
                      "this file is for those servers");
      notes.push_back(
          "cp_config.tokens_per_block = kv_cache_config.tokens_per_block = " +
          std::to_string(kHelixTokensPerBlock) +
          ": the block TensorRT-LLM's Helix kernels take (the two must "
          "match); helix priced blocks of " +
          std::to_string(w.kvBlock) +
          " tokens per KVP rank (the same bytes per rank)");
    }
    if (c.strategy == Strategy::EP)
      notes.push_back("max_batch_size is per attention-DP rank: " +
                      std::to_string(c.batch) + " requests over " +
                      std::to_string(l.dp) + " ranks");
    if (w.precision.kvCache == DType::FP4)
      notes.push_back("kv_cache_config.dtype nvfp4 needs a checkpoint with an "
                      "NVFP4 KV cache from ModelOpt");
    if (w.precision.kvCache == DType::BF16)
      notes.push_back("kv_cache_config.dtype auto keeps the checkpoint's KV "
                      "dtype: bf16 for a BF16 checkpoint");
    if (w.mtpTokens > 0)
      notes.push_back(
          "speculative_config: MTPDecodingConfig, decoding_type MTP with "
          "num_nextn_predict_layers = " +
          std::to_string(w.mtpTokens) +
          " draft tokens per step (https://nvidia.github.io/TensorRT-LLM/"
          "1.3.0rc27/llm-api/reference/MTPDecodingConfig.html)");
    (void)m;
  }

  /// The parallel layout both servers share (FFN as planned), the KV cache
  /// and its transfer, and the sequence length.
  static void writeCommon(std::ostream &os, const ModelFacts &m,
                          const Workload &w, const Layout &l) {
    if (m.moe) {
      os << "moe_tensor_parallel_size: " << l.tpf << "\n";
      os << "moe_expert_parallel_size: " << l.ep << "\n";
    }
    (void)w;
  }

  static const char *kvDType(DType kv) {
    return kv == DType::FP4 ? "nvfp4" : kv == DType::FP8 ? "fp8" : "auto";
  }
  static const char *kvDType(const Workload &w) {
    return kvDType(w.precision.kvCache);
  }

  static void writeTransceiver(std::ostream &os, const Workload &w) {
    os << "cache_transceiver_config:\n  backend: DEFAULT\n"
          "  max_tokens_in_buffer: "
       << w.context << "\n";
  }

  void addFiles(const ModelFacts &m, const Workload &w, const Config &c,
                const std::string &mainPath, std::vector<EngineFile> &files,
                std::vector<std::string> &notes) const override {
    const Layout &l = c.layout;
    if (!kvSharded(c.strategy) || l.kvp == 1)
      return;
    if (mainPath.empty()) {
      notes.push_back("with -o FILE helix also writes the context server's "
                      "configuration, the trtllm-serve disaggregated "
                      "configuration and a launch script beside FILE");
      return;
    }
    std::string stem = mainPath;
    size_t slash = stem.rfind('/');
    size_t dot = stem.rfind('.');
    if (dot != std::string::npos &&
        (slash == std::string::npos || dot > slash + 1))
      stem.erase(dot);
    auto base = [](const std::string &path) {
      size_t at = path.rfind('/');
      return at == std::string::npos ? path : path.substr(at + 1);
    };
    const std::string ctxPath = stem + ".context.yaml";
    const std::string disaggPath = stem + ".disagg.yaml";
    const std::string launchPath = stem + ".launch.sh";
    const int64_t gpus = l.gpus();

    std::ostringstream ctx;
    ctx << "# TensorRT-LLM context (prefill) server for " << m.name
        << ": the partner of the Helix generation servers of " << base(mainPath)
        << " in a disaggregated deployment (" << base(launchPath) << ")\n"
        << "# Prefill is not what helix plans: this server runs attention "
           "TP over the same "
        << gpus << " GPUs, the FFN as planned, and one request at a time.\n\n";
    ctx << "tensor_parallel_size: " << gpus << "\n";
    ctx << "pipeline_parallel_size: 1\n";
    ctx << "context_parallel_size: 1\n";
    writeCommon(ctx, m, w, l);
    ctx << "enable_attention_dp: false\n";
    ctx << "disable_overlap_scheduler: true\n";
    ctx << "kv_cache_config:\n  dtype: " << kvDType(w)
        << "\n  tokens_per_block: " << kHelixTokensPerBlock << "\n";
    writeTransceiver(ctx, w);
    ctx << "max_batch_size: 1\n";
    ctx << contextSetting(w.context) << "\n";
    files.push_back({ctxPath, ctx.str(), false});

    std::ostringstream dis;
    dis << "# trtllm-serve disaggregated -c " << base(disaggPath)
        << ": the front end of the Helix deployment of " << m.name << " ("
        << base(launchPath) << " starts the servers)\n\n"
        << "hostname: localhost\nport: 8000\nbackend: pytorch\n"
        << "context_servers:\n  num_instances: 1\n  urls:\n"
           "    - \"localhost:8001\"\n"
        << "generation_servers:\n  num_instances: 1\n  urls:\n"
           "    - \"localhost:8002\"\n";
    files.push_back({disaggPath, dis.str(), false});

    std::ostringstream sh;
    sh << "#!/bin/sh\n"
       << "# The disaggregated TensorRT-LLM deployment of " << m.name
       << " that helix planned: a context (prefill) server (" << base(ctxPath)
       << ", port 8001), a generation server running Helix (" << base(mainPath)
       << ", port 8002) and the front end (" << base(disaggPath)
       << ", port 8000).\n"
       << "# Use: MODEL=<" << m.name << " checkpoint> sh " << base(launchPath)
       << "\n"
       << "# Each server spans " << gpus
       << " GPUs: on one host give each its own CUDA_VISIBLE_DEVICES; across "
          "hosts start each under MPI or SLURM as TensorRT-LLM's "
          "examples/disaggregated/slurm do.\n"
       << "set -e\n"
       << "MODEL=${MODEL:?set MODEL to the " << m.name << " checkpoint}\n"
       << "dir=$(dirname \"$0\")\n"
       << "trtllm-serve \"$MODEL\" --host localhost --port 8001 --backend "
          "pytorch --extra_llm_api_options \"$dir/"
       << base(ctxPath) << "\" &\n"
       << "trtllm-serve \"$MODEL\" --host localhost --port 8002 --backend "
          "pytorch --extra_llm_api_options \"$dir/"
       << base(mainPath) << "\" &\n"
       << "exec trtllm-serve disaggregated -c \"$dir/" << base(disaggPath)
       << "\"\n";
    files.push_back({launchPath, sh.str(), true});
    notes.push_back("the deployment: " + base(ctxPath) + " (context server), " +
                    base(disaggPath) + " (trtllm-serve disaggregated) and " +
                    base(launchPath) + " (starts all three), beside this file");
  }

  std::vector<std::string> sources() const override {
    return {"https://nvidia.github.io/TensorRT-LLM/1.3.0rc26/features/helix."
            "html (Helix: context_parallel_size, cp_config)",
            "https://github.com/NVIDIA/TensorRT-LLM/blob/main/tensorrt_llm/"
            "mapping.py (tp, cp, moe_tp x moe_ep)",
            "https://nvidia.github.io/TensorRT-LLM/1.3.0rc27/llm-api/"
            "reference/KvCacheConfig.html (kv_cache_config)",
            "https://nvidia.github.io/TensorRT-LLM/latest/features/"
            "disagg-serving.html (cache_transceiver_config, trtllm-serve "
            "disaggregated)"};
  }

  void writeBody(std::ostream &os, const ModelFacts &m, const Workload &w,
                 const Config &c) const override {
    const Layout &l = c.layout;
    int64_t tp = l.tpa, cp = 1, pp = 1, batch = c.batch;
    bool attentionDP = false;
    switch (c.strategy) {
    case Strategy::Helix:
    case Strategy::HelixNoHopB:
    case Strategy::KVP:
      cp = l.kvp;
      break;
    case Strategy::TP:
      break;
    case Strategy::TPPP:
      pp = l.pp;
      break;
    case Strategy::EP:
      tp = l.gpus();
      attentionDP = true;
      batch = ceilDiv(c.batch, l.dp);
      break;
    }
    os << "tensor_parallel_size: " << tp << "\n";
    os << "pipeline_parallel_size: " << pp << "\n";
    os << "context_parallel_size: " << cp << "\n";
    writeCommon(os, m, w, l);
    os << "enable_attention_dp: " << (attentionDP ? "true" : "false") << "\n";
    const int64_t block = cp > 1 ? kHelixTokensPerBlock : w.kvBlock;
    if (cp > 1)
      os << "cp_config:\n  cp_type: HELIX\n  tokens_per_block: " << block
         << "\n";
    os << "kv_cache_config:\n  dtype: " << kvDType(w)
       << "\n  tokens_per_block: " << block << "\n";
    if (cp > 1) // the generation servers of a disaggregated deployment
      writeTransceiver(os, w);
    os << "max_batch_size: " << batch << "\n";
    os << contextSetting(w.context) << "\n";
    if (w.mtpTokens > 0) // the model's MTP layer drafts K tokens per step
      os << "speculative_config:\n  decoding_type: MTP\n"
            "  num_nextn_predict_layers: "
         << w.mtpTokens << "\n";
  }
};

} // namespace

const Rules &trtllmRules() {
  static const TRTLLMRules rules;
  return rules;
}

} // namespace engine
} // namespace helix
