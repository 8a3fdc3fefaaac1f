//===- EngineConfigTest.cpp - Engine deployment configs -------------------===//
//
// The mapping rules of helix/Plan/EngineConfig.h: what each engine runs as
// planned, the nearest configuration where it cannot, and the fields of the
// files it writes.
//
//===----------------------------------------------------------------------===//

#include "helix/Plan/EngineConfig.h"
#include "helix/Import/HFConfig.h"

#include "PaperModels.h"

#include "gtest/gtest.h"

#include <fstream>
#include <sstream>

using namespace helix;

namespace {

class EngineConfigs : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::string error;
    ASSERT_TRUE(loadHardware("gb200-nvl72", gb200, error)) << error;
    ASSERT_TRUE(loadHardware("h200", h200, error)) << error;
    deepSeek = paper::deepSeekR1();
    llama = paper::llama405B();
    ASSERT_TRUE(importHFConfigFile(std::string(HELIX_SOURCE_DIR) +
                                       "/test/Inputs/models/Qwen3-8B.json",
                                   ImportOptions{}, qwen3, error))
        << error;
  }

  static Config config(Strategy s, const std::string &layout, int64_t batch) {
    Config c;
    c.strategy = s;
    std::string error;
    EXPECT_TRUE(parseLayout(layout, c.layout, error)) << error;
    c.batch = batch;
    return c;
  }

  /// Maps and checks that it succeeded.
  static EngineConfig make(Engine e, const ModelSpec &m, const Hardware &hw,
                           const Config &c, const Workload &w = Workload()) {
    EngineConfig out;
    std::string error;
    EXPECT_TRUE(makeEngineConfig(e, m, hw, w, c, out, error)) << error;
    return out;
  }

  /// FP4 weights with an FP8 KV cache, which every engine stores for MLA.
  static Workload fp8KV() {
    Workload w;
    w.precision.kvCache = DType::FP8;
    return w;
  }

  static bool contains(const std::string &text, const std::string &what) {
    return text.find(what) != std::string::npos;
  }
  /// The configuration after the comment header.
  static std::string body(const EngineConfig &ec) {
    return ec.text.substr(ec.text.find("\n\n") + 2);
  }

  static Hardware gb200, h200;
  static ModelSpec deepSeek, llama, qwen3;
};
Hardware EngineConfigs::gb200;
Hardware EngineConfigs::h200;
ModelSpec EngineConfigs::deepSeek;
ModelSpec EngineConfigs::llama;
ModelSpec EngineConfigs::qwen3;

TEST_F(EngineConfigs, EngineNames) {
  Engine e = Engine::TRTLLM;
  std::string error;
  for (Engine want : {Engine::TRTLLM, Engine::VLLM, Engine::SGLang}) {
    ASSERT_TRUE(parseEngine(engineName(want), e, error));
    EXPECT_EQ(e, want);
  }
  EXPECT_FALSE(parseEngine("tgi", e, error));
  EXPECT_EQ(error, "unknown engine 'tgi' (expected trtllm, vllm or sglang)");
  EXPECT_FALSE(parseEngine("TRTLLM", e, error)); // names are lower case
  EXPECT_STREQ(engineDisplayName(Engine::TRTLLM), "TensorRT-LLM");
}

// TensorRT-LLM runs Helix for MLA models on Blackwell: cp = KVP, tp = TPA,
// moe_tp x moe_ep = TPF x EP, both tokens_per_block = the KV block.
TEST_F(EngineConfigs, TRTLLMHelixForMLA) {
  Workload w;
  w.kvBlock = 32;
  Config c = config(Strategy::Helix, "kvp=32,tpa=1,tpf=8,ep=4", 16);
  EngineConfig ec = make(Engine::TRTLLM, deepSeek, gb200, c, w);
  EXPECT_TRUE(ec.exact());
  EXPECT_EQ(ec.emitted.layout, c.layout);
  const std::string &t = ec.text;
  EXPECT_TRUE(contains(t, "tensor_parallel_size: 1\n"));
  EXPECT_TRUE(contains(t, "context_parallel_size: 32\n"));
  EXPECT_TRUE(contains(t, "moe_tensor_parallel_size: 8\n"));
  EXPECT_TRUE(contains(t, "moe_expert_parallel_size: 4\n"));
  EXPECT_TRUE(contains(t, "enable_attention_dp: false\n"));
  EXPECT_TRUE(
      contains(t, "cp_config:\n  cp_type: HELIX\n  tokens_per_block: 32\n"));
  EXPECT_TRUE(contains(
      t, "kv_cache_config:\n  dtype: nvfp4\n  tokens_per_block: 32\n"));
  EXPECT_TRUE(contains(t, "max_batch_size: 16\n"));
  // The prediction is evaluate()'s.
  Evaluation ev = evaluate(deepSeek, gb200, w, c);
  EXPECT_DOUBLE_EQ(ec.emittedPrediction.ttlS, ev.ttlS);
  EXPECT_DOUBLE_EQ(ec.plannedPrediction.tokensPerSecPerGPU,
                   ev.tokensPerSecPerGPU);
  // Every header line is a YAML comment.
  std::string header = t.substr(0, t.find("\n\n"));
  for (size_t i = 0; i < header.size();) {
    EXPECT_EQ(header[i], '#') << header.substr(i, 40);
    i = header.find('\n', i);
    i = i == std::string::npos ? header.size() : i + 1;
  }
}

// Helix's GQA plan: TensorRT-LLM runs GQA Helix through its TRTLLM
// attention backend on SM100, wired per model class: Qwen3 (PR 11570), not
// Llama; with the Helix KV block of 32 tokens; the file says the Helix page
// documents MLA models.
TEST_F(EngineConfigs, TRTLLMHelixForGQA) {
  Config c = config(Strategy::Helix, "kvp=4,tpa=8,tpf=32,ep=1", 8);
  EXPECT_NE(engineCannotRun(Engine::TRTLLM, llama, gb200, Workload(), c)
                .find("(llama) has none"),
            std::string::npos);
  EXPECT_EQ(engineCannotRun(Engine::TRTLLM, qwen3, gb200, Workload(), c), "");
  EngineConfig ec = make(Engine::TRTLLM, qwen3, gb200, c);
  EXPECT_TRUE(ec.exact()) << (ec.changes.empty() ? "" : ec.changes[0]);
  EXPECT_TRUE(contains(body(ec), "context_parallel_size: 4\n"));
  EXPECT_TRUE(contains(body(ec), "cp_config:\n  cp_type: HELIX\n  "
                                 "tokens_per_block: 32\n"));
  EXPECT_TRUE(contains(body(ec), "kv_cache_config:\n  dtype: nvfp4\n  "
                                 "tokens_per_block: 32\n"));
  EXPECT_TRUE(contains(ec.text, "PR 11570"));
  EXPECT_FALSE(contains(body(ec), "moe_")); // dense model
}

// MTP with cp_type HELIX is not a TensorRT-LLM combination: the nearest
// configuration drops Helix attention and says why.
TEST_F(EngineConfigs, TRTLLMHelixWithMTPFallsBack) {
  Workload w;
  w.mtpTokens = 2;
  ModelSpec withMTP = deepSeek;
  withMTP.mtpLayers = 1;
  Config c = config(Strategy::Helix, "kvp=8,tpa=1,tpf=1,ep=8", 8);
  EXPECT_NE(engineCannotRun(Engine::TRTLLM, withMTP, gb200, w, c)
                .find("Eagle3 one-model only"),
            std::string::npos);
  EngineConfig ec = make(Engine::TRTLLM, withMTP, gb200, c, w);
  ASSERT_FALSE(ec.exact());
  EXPECT_EQ(ec.emitted.layout.kvp, 1);
  EXPECT_FALSE(contains(body(ec), "cp_type: HELIX"));
  EXPECT_TRUE(contains(body(ec), "decoding_type: MTP"));
}

// Hopper: TensorRT-LLM documents Helix on Blackwell only.
TEST_F(EngineConfigs, TRTLLMHelixNeedsBlackwell) {
  Config c = config(Strategy::Helix, "kvp=8,tpa=1,tpf=1,ep=8", 8);
  std::string why =
      engineCannotRun(Engine::TRTLLM, deepSeek, h200, Workload(), c);
  EXPECT_NE(why.find("Blackwell"), std::string::npos) << why;
  EXPECT_EQ(engineCannotRun(Engine::TRTLLM, deepSeek, gb200, Workload(), c),
            "");
}

// Attention DP: one replica per GPU, max_batch_size per rank.
TEST_F(EngineConfigs, TRTLLMAttentionDP) {
  Config c = config(Strategy::EP, "tpa=1,dp=8,tpf=1,ep=8", 100);
  EngineConfig ec = make(Engine::TRTLLM, deepSeek, gb200, c);
  EXPECT_TRUE(ec.exact());
  EXPECT_TRUE(contains(ec.text, "tensor_parallel_size: 8\n"));
  EXPECT_TRUE(contains(ec.text, "enable_attention_dp: true\n"));
  EXPECT_TRUE(contains(ec.text, "moe_expert_parallel_size: 8\n"));
  EXPECT_TRUE(contains(ec.text, "max_batch_size: 13\n")); // ceil(100 / 8)
  Config wide = config(Strategy::EP, "tpa=2,dp=4,tpf=1,ep=8", 100);
  EXPECT_NE(engineCannotRun(Engine::TRTLLM, deepSeek, gb200, Workload(), wide),
            "");
}

// vLLM: -tp N -dcp KVP, which needs TPA >= KV heads (dcp <= tp / H).
TEST_F(EngineConfigs, VLLMDecodeContextParallel) {
  Config c = config(Strategy::Helix, "kvp=4,tpa=8,tpf=32,ep=1", 8);
  EngineConfig ec = make(Engine::VLLM, llama, gb200, c);
  EXPECT_TRUE(ec.exact());
  EXPECT_TRUE(contains(ec.text, "--tensor-parallel-size 32 \\\n"));
  EXPECT_TRUE(contains(ec.text, "--decode-context-parallel-size 4 \\\n"));
  EXPECT_TRUE(contains(ec.text, "--cp-kv-cache-interleave-size 16 \\\n"));
  EXPECT_TRUE(contains(ec.text, "--max-num-seqs 8 \\\n"));
  EXPECT_FALSE(contains(body(ec), "--enable-expert-parallel"));
  EXPECT_EQ(ec.text.rfind("#!/bin/sh\n", 0), 0u);
  EXPECT_TRUE(contains(ec.text, "  \"$@\"\n"));

  // TPA 4 < 8 KV heads: the nearest runnable layout keeps KVP x TPA with
  // TPA = 8.
  Config narrow = config(Strategy::Helix, "kvp=8,tpa=4,tpf=32,ep=1", 8);
  EngineConfig near = make(Engine::VLLM, llama, gb200, narrow);
  ASSERT_FALSE(near.exact());
  EXPECT_EQ(near.emitted.strategy, Strategy::HelixNoHopB);
  EXPECT_EQ(near.emitted.layout.kvp, 4);
  EXPECT_EQ(near.emitted.layout.tpa, 8);
  EXPECT_TRUE(contains(near.changes[0], "TP / KV heads")) << near.changes[0];
}

// vLLM's MoE layers are all TP or all EP: a TPF x EP grid is not runnable.
TEST_F(EngineConfigs, VLLMMoEGrid) {
  Config c = config(Strategy::Helix, "kvp=64,tpa=1,tpf=8,ep=8", 4);
  EngineConfig ec = make(Engine::VLLM, deepSeek, gb200, c, fp8KV());
  ASSERT_FALSE(ec.exact());
  const Layout &l = ec.emitted.layout;
  EXPECT_EQ(l.kvp, 64);
  EXPECT_EQ(l.tpa, 1);
  EXPECT_TRUE((l.tpf == 64 && l.ep == 1) || (l.tpf == 1 && l.ep == 64))
      << l.str();
  EXPECT_TRUE(contains(ec.changes[0], "FFN TPF x EP = 8 x 8 -> "))
      << ec.changes[0];
  EXPECT_EQ(contains(body(ec), "--enable-expert-parallel"), l.ep == 64);

  Config allEP = config(Strategy::Helix, "kvp=64,tpa=1,tpf=1,ep=64", 4);
  EngineConfig ep = make(Engine::VLLM, deepSeek, gb200, allEP, fp8KV());
  EXPECT_TRUE(ep.exact());
  EXPECT_TRUE(contains(ep.text, "--enable-expert-parallel \\\n"));
}

// vLLM's data-parallel attention: --max-num-seqs per DP engine; a dense
// model's DP replicas share no FFN.
TEST_F(EngineConfigs, VLLMDataParallel) {
  Config c = config(Strategy::EP, "tpa=1,dp=8,tpf=1,ep=8", 20);
  EngineConfig ec = make(Engine::VLLM, deepSeek, gb200, c, fp8KV());
  EXPECT_TRUE(ec.exact());
  EXPECT_TRUE(contains(ec.text, "--tensor-parallel-size 1 \\\n"));
  EXPECT_TRUE(contains(ec.text, "--data-parallel-size 8 \\\n"));
  EXPECT_TRUE(contains(ec.text, "--enable-expert-parallel \\\n"));
  EXPECT_TRUE(contains(ec.text, "--max-num-seqs 3 \\\n")); // ceil(20 / 8)
  Config dense = config(Strategy::EP, "tpa=8,dp=8,tpf=64,ep=1", 8);
  EXPECT_NE(engineCannotRun(Engine::VLLM, llama, gb200, Workload(), dense), "");
}

// SGLang: --dcp-size for MLA only; any TPF x EP grid via --ep-size.
TEST_F(EngineConfigs, SGLang) {
  Config c = config(Strategy::Helix, "kvp=64,tpa=1,tpf=8,ep=8", 4);
  EngineConfig ec = make(Engine::SGLang, deepSeek, gb200, c, fp8KV());
  EXPECT_TRUE(ec.exact());
  EXPECT_TRUE(contains(ec.text, "--tp-size 64 \\\n"));
  EXPECT_TRUE(contains(ec.text, "--dcp-size 64 \\\n"));
  EXPECT_TRUE(contains(ec.text, "--ep-size 8 \\\n"));
  EXPECT_TRUE(contains(ec.text, "--kv-cache-dtype fp8_e4m3 \\\n"));
  EXPECT_TRUE(contains(ec.text, "--moe-a2a-backend none"));

  Config gqa = config(Strategy::Helix, "kvp=4,tpa=8,tpf=32,ep=1", 8);
  EngineConfig near = make(Engine::SGLang, llama, gb200, gqa);
  ASSERT_FALSE(near.exact());
  EXPECT_EQ(near.emitted.strategy, Strategy::TP);
  EXPECT_TRUE(contains(near.changes[0], "MLA")) << near.changes[0];

  Config dp = config(Strategy::EP, "tpa=2,dp=4,tpf=1,ep=8", 10);
  EngineConfig dpa = make(Engine::SGLang, deepSeek, gb200, dp, fp8KV());
  EXPECT_TRUE(dpa.exact());
  EXPECT_TRUE(contains(dpa.text, "--tp-size 8 \\\n"));
  EXPECT_TRUE(contains(dpa.text, "--dp-size 4 \\\n"));
  EXPECT_TRUE(contains(dpa.text, "--enable-dp-attention \\\n"));
  EXPECT_TRUE(contains(dpa.text, "--max-running-requests 12 \\\n"));
}

// No engine has Medha-style KVP: the nearest keeps KVP x TPA attention and
// runs the FFN over all GPUs (helix-no-hopb).
TEST_F(EngineConfigs, MedhaKVPIsNotRunnable) {
  Config c = config(Strategy::KVP, "kvp=16,tpa=1,tpf=1,ep=1", 2);
  for (Engine e : {Engine::TRTLLM, Engine::VLLM, Engine::SGLang}) {
    EXPECT_NE(engineCannotRun(e, deepSeek, gb200, Workload(), c), "")
        << engineName(e);
    EngineConfig ec = make(e, deepSeek, gb200, c);
    ASSERT_FALSE(ec.exact()) << engineName(e);
    EXPECT_EQ(ec.emitted.strategy, Strategy::HelixNoHopB) << engineName(e);
    EXPECT_EQ(ec.emitted.layout.kvp, 16) << engineName(e);
    EXPECT_EQ(ec.emitted.layout.gpus(), 16) << engineName(e);
    EXPECT_TRUE(contains(ec.changes.back(), "Medha")) << ec.changes.back();
  }
}

// HOP-B: no engine overlaps batch-wise. Where the plan used it (more than
// one slice), the emitted configuration turns it off and is re-priced.
TEST_F(EngineConfigs, HopBOff) {
  Workload w;
  w.context = 4096;
  w.precision.weights = w.precision.kvCache = w.precision.compute = DType::FP8;
  Config c = config(Strategy::Helix, "kvp=8,tpa=1,tpf=1,ep=8", 4096);
  ASSERT_TRUE(evaluate(deepSeek, h200, w, c).hopbUsed());
  EngineConfig ec = make(Engine::SGLang, deepSeek, h200, c, w);
  ASSERT_EQ(ec.changes.size(), 1u);
  EXPECT_EQ(ec.changes[0].rfind("HOP-B off: SGLang does not overlap", 0), 0u)
      << ec.changes[0];
  EXPECT_EQ(ec.emitted.strategy, Strategy::HelixNoHopB);
  EXPECT_EQ(ec.emitted.layout, c.layout);
  EXPECT_FALSE(ec.emitted.hopb);
  EXPECT_EQ(ec.emittedPrediction.hopbSlices, 1);
  EXPECT_GT(ec.plannedPrediction.hopbSlices, 1);
  EXPECT_GE(ec.emittedPrediction.ttlS, ec.plannedPrediction.ttlS);
  EXPECT_TRUE(contains(ec.text, "--kv-cache-dtype fp8_e4m3"));

  // One slice: HOP-B was not in effect, nothing changes.
  Config small = config(Strategy::Helix, "kvp=64,tpa=1,tpf=64,ep=1", 2);
  ASSERT_FALSE(evaluate(deepSeek, gb200, Workload(), small).hopbUsed());
  EngineConfig same = make(Engine::TRTLLM, deepSeek, gb200, small);
  EXPECT_TRUE(same.exact());
  EXPECT_EQ(same.emitted.strategy, Strategy::Helix);
}

// Pipeline stages and the TP baselines map one to one.
TEST_F(EngineConfigs, TPAndPipeline) {
  Config c = config(Strategy::TPPP, "tpa=8,pp=2,tpf=8,ep=1", 4);
  for (Engine e : {Engine::TRTLLM, Engine::VLLM, Engine::SGLang})
    EXPECT_TRUE(make(e, llama, gb200, c).exact()) << engineName(e);
  EXPECT_TRUE(contains(make(Engine::TRTLLM, llama, gb200, c).text,
                       "pipeline_parallel_size: 2\n"));
  EXPECT_TRUE(contains(make(Engine::VLLM, llama, gb200, c).text,
                       "--pipeline-parallel-size 2 \\\n"));
  EXPECT_TRUE(
      contains(make(Engine::SGLang, llama, gb200, c).text, "--pp-size 2 \\\n"));
}

TEST_F(EngineConfigs, InvalidConfigIsAnError) {
  Config c = config(Strategy::Helix, "kvp=2,tpa=16,tpf=32,ep=1", 1);
  EngineConfig out;
  std::string error;
  EXPECT_FALSE(
      makeEngineConfig(Engine::VLLM, llama, gb200, Workload(), c, out, error));
  EXPECT_NE(error.find("tpa"), std::string::npos) << error;
}

// The KV cache in a format the engine stores for the attention kind: no
// vLLM or SGLang MLA backend keeps NVFP4, so DeepSeek's FP4 KV is
// configured (and priced) as FP8 there; TensorRT-LLM keeps nvfp4, and GQA
// models keep it on all three.
TEST_F(EngineConfigs, KVCacheFormatPerEngineAndAttention) {
  Config mla = config(Strategy::Helix, "kvp=64,tpa=1,tpf=1,ep=64", 4);
  for (Engine e : {Engine::VLLM, Engine::SGLang}) {
    EngineConfig ec = make(e, deepSeek, gb200, mla);
    ASSERT_FALSE(ec.exact()) << engineName(e);
    EXPECT_TRUE(contains(ec.changes[0], "KV cache fp4 -> fp8 ("))
        << ec.changes[0];
    EXPECT_EQ(ec.kvCache, DType::FP8);
    EXPECT_TRUE(contains(body(ec), e == Engine::VLLM
                                       ? "--kv-cache-dtype fp8 \\\n"
                                       : "--kv-cache-dtype fp8_e4m3 \\\n"));
    // The emitted configuration is priced with the KV it configures.
    Workload w8;
    w8.precision.kvCache = DType::FP8;
    EXPECT_DOUBLE_EQ(ec.emittedPrediction.ttlS,
                     evaluate(deepSeek, gb200, w8, ec.emitted).ttlS);
    EXPECT_GT(ec.emittedPrediction.ttlS, ec.plannedPrediction.ttlS);
  }
  EngineConfig trt = make(Engine::TRTLLM, deepSeek, gb200, mla);
  EXPECT_EQ(trt.kvCache, DType::FP4);
  EXPECT_TRUE(contains(body(trt), "dtype: nvfp4\n"));

  Config gqa = config(Strategy::TP, "tpa=8,tpf=8", 4);
  EXPECT_TRUE(contains(body(make(Engine::SGLang, llama, gb200, gqa)),
                       "--kv-cache-dtype nvfp4 \\\n"));
  EXPECT_TRUE(contains(body(make(Engine::VLLM, llama, gb200, gqa)),
                       "--kv-cache-dtype nvfp4 \\\n"));
}

// vLLM's GQA decode context parallelism: -dcp divides the query heads per
// KV head (Llama-3.1-405B: 128 / 8 = 16), and no backend serves attention
// sinks under DCP.
TEST_F(EngineConfigs, VLLMDecodeContextParallelLimits) {
  Config wide = config(Strategy::Helix, "kvp=32,tpa=8,tpf=256,ep=1", 8);
  std::string why =
      engineCannotRun(Engine::VLLM, llama, gb200, Workload(), wide);
  EXPECT_TRUE(contains(why, "divide the query heads per KV head (128 / 8), "
                            "not -dcp 32"))
      << why;
  Config ok = config(Strategy::Helix, "kvp=16,tpa=8,tpf=128,ep=1", 8);
  EXPECT_EQ(engineCannotRun(Engine::VLLM, llama, gb200, Workload(), ok), "");

  ModelSpec sinks = llama;
  for (LayerSpec &l : sinks.layers)
    l.attention.sinks = true;
  EXPECT_TRUE(contains(
      engineCannotRun(Engine::VLLM, sinks, gb200, Workload(), ok), "sinks"));

  // With MTP, KV is dealt token by token (interleave 1).
  Workload mtp = fp8KV();
  mtp.mtpTokens = 1;
  ModelSpec withMTP = deepSeek;
  withMTP.mtpLayers = 1;
  EngineConfig ec =
      make(Engine::VLLM, withMTP, gb200,
           config(Strategy::Helix, "kvp=8,tpa=1,tpf=8,ep=1", 4), mtp);
  EXPECT_TRUE(contains(body(ec), "--cp-kv-cache-interleave-size 1 \\\n"));
}

// Every file sets the engine's maximum sequence length to the planned
// context, and says when the model's config does not reach it.
TEST_F(EngineConfigs, ContextLength) {
  Config c = config(Strategy::TP, "tpa=8,tpf=8", 4);
  Workload w = fp8KV();
  w.context = 1048576;
  const char *setting[] = {"max_seq_len: 1048576\n",
                           "--max-model-len 1048576 \\\n",
                           "--context-length 1048576 \\\n"};
  const char *overrideHint[] = {"rope_scaling", "VLLM_ALLOW_LONG_MAX_MODEL_LEN",
                                "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"};
  int i = 0;
  for (Engine e : {Engine::TRTLLM, Engine::VLLM, Engine::SGLang}) {
    EngineConfig ec = make(e, llama, gb200, c, w);
    EXPECT_TRUE(contains(body(ec), setting[i])) << engineName(e);
    // Llama-3.1-405B's config serves 131,072 positions.
    EXPECT_TRUE(contains(ec.text, "serves at most 131,072 positions"))
        << engineName(e);
    EXPECT_TRUE(contains(ec.text, overrideHint[i])) << engineName(e);
    ++i;
  }
  w.context = 65536;
  EngineConfig shortContext = make(Engine::VLLM, llama, gb200, c, w);
  EXPECT_TRUE(contains(body(shortContext), "--max-model-len 65536 \\\n"));
  EXPECT_FALSE(contains(shortContext.text, "serves at most"));
}

// Under a TTL budget the nearest runnable configuration meets it where one
// does (a smaller batch here: Llama's KV read grows with the batch), and
// the file warns where none does.
TEST_F(EngineConfigs, FallbackMeetsTheBudget) {
  // TPA 4 < 8 KV heads: not a vLLM DCP layout.
  Config c = config(Strategy::Helix, "kvp=8,tpa=4,tpf=32,ep=1", 8);
  EngineConfig free = make(Engine::VLLM, llama, gb200, c, fp8KV());
  ASSERT_FALSE(free.exact());
  EngineConfigOptions tight;
  tight.ttlBudgetMs = free.emittedPrediction.ttlS * 1e3 * 0.9;
  EngineConfig out;
  std::string error;
  ASSERT_TRUE(makeEngineConfig(Engine::VLLM, llama, gb200, fp8KV(), c, out,
                               error, tight))
      << error;
  EXPECT_TRUE(out.meetsBudget);
  EXPECT_LE(out.emittedPrediction.ttlS * 1e3, tight.ttlBudgetMs * 1.000001);
  EXPECT_LT(out.emitted.batch, c.batch);
  EXPECT_FALSE(contains(out.text, "WARNING"));

  EngineConfigOptions impossible;
  impossible.ttlBudgetMs = 1e-6;
  ASSERT_TRUE(makeEngineConfig(Engine::VLLM, llama, gb200, fp8KV(), c, out,
                               error, impossible))
      << error;
  EXPECT_FALSE(out.meetsBudget);
  EXPECT_TRUE(contains(out.text, "WARNING: the configuration here misses"));
  bool said = false;
  for (const std::string &line : out.changes)
    said |= contains(line, "meets the");
  EXPECT_TRUE(said);
}

// docs/engine-configs.md's table of what each engine runs as planned, per
// model family and strategy, is what engineCannotRun says (FP8 KV; the NVFP4
// KV row from engineKVCache). The test prints the table when they differ.
TEST_F(EngineConfigs, RunnableTableInTheDocsIsTheRules) {
  ModelSpec sinks = llama;
  for (LayerSpec &l : sinks.layers)
    l.attention.sinks = true;
  struct Family {
    const char *name;
    const ModelSpec *model;
    const char *helix, *tp, *tppp, *ep, *kvp;
  };
  const Family families[] = {
      {"MLA + MoE (DeepSeek-R1)", &deepSeek, "kvp=64,tpa=1,tpf=8,ep=8",
       "tpa=8,tpf=1,ep=8", "tpa=8,pp=2,tpf=1,ep=8", "tpa=1,dp=8,tpf=1,ep=8",
       "kvp=8,tpa=1,tpf=1,ep=1"},
      {"GQA dense (Llama-3.1-405B)", &llama, "kvp=8,tpa=8,tpf=64,ep=1",
       "tpa=8,tpf=8", "tpa=8,pp=2,tpf=8", "tpa=8,dp=8,tpf=64,ep=1",
       "kvp=8,tpa=8,tpf=8,ep=1"},
      {"GQA dense (Qwen3-8B)", &qwen3, "kvp=8,tpa=8,tpf=64,ep=1", "tpa=8,tpf=8",
       "tpa=8,pp=2,tpf=8", "tpa=8,dp=8,tpf=64,ep=1", "kvp=8,tpa=8,tpf=8,ep=1"},
      {"GQA with attention sinks (as gpt-oss)", &sinks,
       "kvp=8,tpa=8,tpf=64,ep=1", "tpa=8,tpf=8", "tpa=8,pp=2,tpf=8",
       "tpa=8,dp=8,tpf=64,ep=1", "kvp=8,tpa=8,tpf=8,ep=1"}};
  const Engine engines[] = {Engine::TRTLLM, Engine::VLLM, Engine::SGLang};
  std::string table = "| model family | strategy | TensorRT-LLM | vLLM | "
                      "SGLang |\n|---|---|---|---|---|\n";
  for (const Family &f : families) {
    const std::pair<Strategy, const char *> rows[] = {
        {Strategy::Helix, f.helix},
        {Strategy::TP, f.tp},
        {Strategy::TPPP, f.tppp},
        {Strategy::EP, f.ep},
        {Strategy::KVP, f.kvp}};
    for (auto [strategy, layout] : rows) {
      Config c = config(strategy, layout, 8);
      table += std::string("| ") + f.name + " | " +
               stringifyStrategy(strategy).str() + " " + layout + " |";
      for (Engine e : engines)
        table += engineCannotRun(e, *f.model, gb200, fp8KV(), c).empty()
                     ? " yes |"
                     : " no |";
      table += "\n";
    }
    table += std::string("| ") + f.name + " | NVFP4 KV cache |";
    for (Engine e : engines) {
      Workload fp4, out;
      std::string change;
      table += engineKVCache(e, *f.model, fp4, out, change) ? " no (fp8) |"
                                                            : " yes |";
    }
    table += "\n";
  }
  std::ifstream in(std::string(HELIX_SOURCE_DIR) + "/docs/engine-configs.md");
  ASSERT_TRUE(in.good());
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string begin = "<!-- runnable-table: begin -->\n";
  const std::string end = "<!-- runnable-table: end -->";
  size_t b = doc.str().find(begin), e = doc.str().find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  EXPECT_EQ(doc.str().substr(b + begin.size(), e - b - begin.size()), table)
      << "docs/engine-configs.md's runnable table should read:\n"
      << table;
}

} // namespace

namespace {

// The long-context models of 2026 (docs/long-context-architectures.md):
// TensorRT-LLM wires Helix for Kimi-K3 only (tp = 1 x cp = N, KDA TP over
// N, routed experts EP = N: PR 17796); no engine documents context
// parallelism for Gated DeltaNet, Mamba-2 or DeepSeek Sparse Attention.
ModelSpec longContextModel(const std::string &file) {
  ModelSpec m;
  std::string error;
  EXPECT_TRUE(importHFConfigFile(std::string(HELIX_SOURCE_DIR) +
                                     "/test/Inputs/models/" + file,
                                 ImportOptions{}, m, error))
      << error;
  return m;
}

Config layoutOf(const std::string &text, int64_t batch) {
  Config c;
  c.strategy = Strategy::Helix;
  std::string error;
  EXPECT_TRUE(parseLayout(text, c.layout, error)) << error;
  c.batch = batch;
  return c;
}

Hardware preset(const char *name) {
  Hardware hw;
  std::string error;
  EXPECT_TRUE(loadHardware(name, hw, error)) << error;
  return hw;
}

TEST(LongContextEngineConfigs, TensorRTLLMKimiK3Helix) {
  ModelSpec k3 = longContextModel("Kimi-K3.json");
  Hardware gb200 = preset("gb200-nvl72");
  Workload w;
  // PR 17796's layout runs; TP experts or a TPA group do not.
  EXPECT_EQ(engineCannotRun(Engine::TRTLLM, k3, gb200, w,
                            layoutOf("kvp=32,tpa=1,tpf=1,ep=32", 1)),
            "");
  EXPECT_NE(engineCannotRun(Engine::TRTLLM, k3, gb200, w,
                            layoutOf("kvp=32,tpa=1,tpf=32,ep=1", 1))
                .find("moe_tp_size > 1 is rejected"),
            std::string::npos);
  EXPECT_NE(engineCannotRun(Engine::TRTLLM, k3, gb200, w,
                            layoutOf("kvp=16,tpa=2,tpf=1,ep=32", 1))
                .find("tp = 1 x cp = N"),
            std::string::npos);
  // 64 does not divide the 96 heads.
  EXPECT_NE(engineCannotRun(Engine::TRTLLM, k3, gb200, w,
                            layoutOf("kvp=64,tpa=1,tpf=1,ep=64", 1))
                .find("to split over cp = 64"),
            std::string::npos);
  // The file says how TensorRT-LLM lays KDA out.
  EngineConfig ec;
  std::string error;
  ASSERT_TRUE(makeEngineConfig(Engine::TRTLLM, k3, gb200, w,
                               layoutOf("kvp=32,tpa=1,tpf=1,ep=32", 1), ec,
                               error))
      << error;
  EXPECT_TRUE(ec.exact());
  EXPECT_NE(ec.text.find("KDA layers and its dense and shared MLPs TP over "
                         "all 32 GPUs"),
            std::string::npos);
}

TEST(LongContextEngineConfigs, ContextParallelismOnlyWhereDocumented) {
  Hardware gb200 = preset("gb200-nvl72");
  Workload w;
  ModelSpec v32 = longContextModel("DeepSeek-V3.2.json");
  ModelSpec qwen = longContextModel("Qwen3.5-397B-A17B.json");
  ModelSpec nemotron = longContextModel("Nemotron-3-Super-120B-A12B-FP8.json");
  ModelSpec k3 = longContextModel("Kimi-K3.json");
  Config mla = layoutOf("kvp=8,tpa=1,tpf=8,ep=1", 1);
  // TensorRT-LLM registers DeepSeek-V3.2 in its DeepseekV3 class, which
  // has Helix (PR 11507); vLLM's and SGLang's DCP are not documented for
  // DSA.
  EXPECT_EQ(engineCannotRun(Engine::TRTLLM, v32, gb200, w,
                            layoutOf("kvp=8,tpa=1,tpf=8,ep=1", 1)),
            "");
  for (Engine e : {Engine::VLLM, Engine::SGLang})
    EXPECT_NE(engineCannotRun(e, v32, gb200, w, mla).find("documented"),
              std::string::npos)
        << engineName(e);
  EXPECT_NE(engineCannotRun(Engine::VLLM, qwen, gb200, w,
                            layoutOf("kvp=2,tpa=2,tpf=4,ep=1", 1))
                .find("recurrent (Gated DeltaNet or Mamba-2) layers"),
            std::string::npos);
  EXPECT_NE(engineCannotRun(Engine::TRTLLM, nemotron, gb200, w,
                            layoutOf("kvp=2,tpa=2,tpf=4,ep=1", 1))
                .find("(nemotron_h) has none"),
            std::string::npos);
  // vLLM runs Kimi-K3's MLA layers under DCP (PR 50484).
  EXPECT_EQ(engineCannotRun(Engine::VLLM, k3, gb200, w,
                            layoutOf("kvp=8,tpa=1,tpf=8,ep=1", 1)),
            "");
  // Without KV parallelism every engine runs them.
  for (Engine e : {Engine::TRTLLM, Engine::VLLM, Engine::SGLang})
    EXPECT_EQ(engineCannotRun(e, v32, gb200, w,
                              layoutOf("kvp=1,tpa=8,tpf=8,ep=1", 1)),
              "")
        << engineName(e);
}

} // namespace
