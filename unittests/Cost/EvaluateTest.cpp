//===- EvaluateTest.cpp - Validation and the shape of an evaluation -------===//

#include "helix/Cost/Evaluate.h"
#include "helix/Common/AttentionSplits.h"

#include "PaperModels.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

class EvaluateTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error)) << error;
  }
  std::string check(const ModelSpec &m, Strategy s, const char *layout,
                    int64_t gpus = 0) {
    Config c;
    c.strategy = s;
    std::string error;
    EXPECT_TRUE(parseLayout(layout, c.layout, error)) << error;
    c.gpus = gpus;
    return validateConfig(m, hw, Workload(), c);
  }
  Hardware hw;
  ModelSpec r1 = paper::deepSeekR1();
  ModelSpec llama = paper::llama405B();
};

TEST_F(EvaluateTest, ValidLayouts) {
  EXPECT_EQ(check(llama, Strategy::Helix, "kvp=8,tpa=8,tpf=64,ep=1"), "");
  EXPECT_EQ(check(r1, Strategy::Helix, "kvp=64,tpa=1,tpf=4,ep=16"), "");
  EXPECT_EQ(check(llama, Strategy::TP, "tpa=64,tpf=64"), "");
  EXPECT_EQ(check(llama, Strategy::TPPP, "tpa=8,tpf=8,pp=4"), "");
  EXPECT_EQ(check(r1, Strategy::EP, "tpa=1,dp=32,tpf=1,ep=32"), "");
  EXPECT_EQ(check(llama, Strategy::EP, "tpa=8,dp=4,tpf=32"), "");
  EXPECT_EQ(check(llama, Strategy::KVP, "kvp=4,tpa=16,tpf=16"), "");
}

TEST_F(EvaluateTest, ClearErrors) {
  EXPECT_EQ(check(llama, Strategy::Helix, "kvp=4,tpa=8,tpf=32", 64),
            "layout kvp=4,tpa=8,tpf=32,ep=1 uses 32 GPUs (pp x kvp x tpa x "
            "dp), but 64 were requested");
  EXPECT_EQ(check(llama, Strategy::Helix, "kvp=4,tpa=16,tpf=64"),
            "helix needs tpa to divide the 8 KV heads but tpa=16; put the "
            "other GPUs in kvp");
  EXPECT_EQ(check(llama, Strategy::Helix, "kvp=4,tpa=8,tpf=16"),
            "tpf x ep = 16 x 1 = 16 must equal the 32 GPUs of the attention "
            "layout (kvp x tpa)");
  EXPECT_EQ(check(r1, Strategy::Helix, "kvp=3,tpa=1,tpf=1,ep=3"),
            "ep=3 does not divide the 256 experts");
  EXPECT_EQ(check(llama, Strategy::TP, "tpa=8,tpf=4,ep=2"),
            "ep=2 but Llama-3.1-405B has no experts");
  EXPECT_EQ(check(llama, Strategy::TP, "tpa=3,tpf=3"),
            "tpa=3 does not divide the 128 query heads");
  EXPECT_EQ(check(llama, Strategy::TP, "kvp=2,tpa=8,tpf=16"),
            "tp does not shard the KV cache (kvp=2); use helix or kvp");
  EXPECT_EQ(check(llama, Strategy::TP, "tpa=8,tpf=8,pp=2"),
            "tp has no pipeline stages (pp=2); use tp-pp");
  EXPECT_EQ(check(llama, Strategy::KVP, "kvp=2,tpa=8,tpf=16"),
            "kvp ties the FFN to the attention TP group: tpf x ep = 16 x 1 "
            "must equal tpa=8");
  EXPECT_EQ(check(r1, Strategy::EP, "tpa=1,dp=8,tpf=2,ep=4"),
            "ep spreads the experts over all 8 GPUs of the stage: need tpf=1, "
            "ep=8 (got tpf x ep = 2 x 4)");
  EXPECT_EQ(check(llama, Strategy::TPPP, "tpa=1,tpf=1,pp=200"),
            "pp=200 exceeds the 126 layers");
  Config c;
  c.batch = 0;
  EXPECT_EQ(validateConfig(llama, hw, Workload(), c),
            "batch: expected an integer from 1 to 1048576, got '0'");
  // Sizes past the limits are refused before any arithmetic overflows.
  c.batch = 5181704642924972962;
  EXPECT_EQ(validateConfig(llama, hw, Workload(), c),
            "batch: expected an integer from 1 to 1048576, got "
            "'5181704642924972962'");
  c.batch = 1;
  Workload huge;
  huge.context = INT64_MAX;
  EXPECT_EQ(validateConfig(llama, hw, huge, c),
            "context: expected an integer from 1 to 1099511627776, got "
            "'9223372036854775807'");
  // The KV block divides the context (found by fuzz/, helix-fuzz-cost: a
  // negative block priced zero bytes of memory, 0 divided by zero).
  Workload block;
  block.kvBlock = -9223372036854745493;
  EXPECT_EQ(validateConfig(llama, hw, block, c),
            "kv block: expected an integer from 1 to 1099511627776, got "
            "'-9223372036854745493'");
  block.kvBlock = 0;
  EXPECT_EQ(validateConfig(llama, hw, block, c),
            "kv block: expected an integer from 1 to 1099511627776, got '0'");
  c.layout.kvp = INT64_MAX;
  EXPECT_EQ(validateConfig(llama, hw, Workload(), c),
            "layout width: expected an integer from 1 to 4096, got "
            "'9223372036854775807' (kvp=9223372036854775807,tpa=1,tpf=1,"
            "ep=1)");
}

TEST_F(EvaluateTest, ShardedMatricesMustSplitEvenly) {
  // 48 GPUs cannot each hold 1/48 of the 128 x 128 output-projection rows.
  EXPECT_EQ(check(r1, Strategy::Helix, "kvp=48,tpa=1,tpf=3,ep=16"),
            "the output projection's 16384 input rows (heads x v_head_dim) "
            "do not split over 48 GPUs");
  // Experts 2000 wide do not split 32 ways.
  ModelSpec odd = r1;
  for (LayerSpec &l : odd.layers)
    l.moe.expertIntermediate = 2000;
  EXPECT_EQ(check(odd, Strategy::Helix, "kvp=32,tpa=1,tpf=32,ep=1"),
            "tpf=32 does not divide the expert intermediate size 2000");
  EXPECT_EQ(check(odd, Strategy::Helix, "kvp=32,tpa=1,tpf=16,ep=2"), "");
  EXPECT_EQ(check(llama, Strategy::Helix, "kvp=5,tpa=8,tpf=40"),
            "the output projection's 16384 input rows (heads x v_head_dim) "
            "do not split over 40 GPUs");
  // Dense FFN of a MoE model: TPF = N over 18432.
  EXPECT_EQ(check(r1, Strategy::TPPP, "tpa=1,tpf=1,ep=1,pp=2"), "");
}

TEST_F(EvaluateTest, IsValidConfigAgreesWithValidateConfig) {
  // The search checks candidates with isValidConfig, which builds no
  // message; it must accept exactly what validateConfig accepts. Every
  // width grid on 1..48 GPUs, valid and invalid, for each strategy.
  int64_t valid = 0, invalid = 0;
  for (const ModelSpec *m : {&r1, &llama})
    for (Strategy s : allStrategies())
      for (int64_t kvp : {1, 2, 3, 4, 8})
        for (int64_t tpa : {1, 2, 3, 4, 8, 16})
          for (int64_t ffn : {1, 2, 4, 8, 16, 32, 48})
            for (int64_t pp : {1, 2}) {
              Config c;
              c.strategy = s;
              c.layout.kvp = kvp;
              c.layout.tpa = tpa;
              c.layout.tpf = ffn;
              c.layout.ep = ffn / std::min<int64_t>(ffn, kvp * tpa) > 1 ? 2 : 1;
              c.layout.pp = pp;
              std::string why = validateConfig(*m, hw, Workload(), c);
              EXPECT_EQ(isValidConfig(*m, hw, Workload(), c), why.empty())
                  << m->name << " " << stringifyStrategy(s).str() << " "
                  << c.layout.str() << ": " << why;
              ++(why.empty() ? valid : invalid);
            }
  EXPECT_GT(valid, 20);
  EXPECT_GT(invalid, 20);
}

TEST_F(EvaluateTest, InvalidConfigComesBackWithError) {
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.tpa = 16;
  c.layout.tpf = 16;
  Evaluation ev = evaluate(llama, hw, Workload(), c);
  EXPECT_FALSE(ev.valid());
  EXPECT_TRUE(ev.layers.empty());
}

TEST_F(EvaluateTest, TotalsAreConsistent) {
  Config c;
  c.strategy = Strategy::Helix;
  std::string error;
  ASSERT_TRUE(parseLayout("kvp=8,tpa=8,tpf=64", c.layout, error));
  c.batch = 16;
  Evaluation ev = evaluate(llama, hw, Workload(), c);
  ASSERT_TRUE(ev.valid()) << ev.error;
  EXPECT_EQ(ev.gpus, 64);
  EXPECT_EQ(ev.layers.size(), 126u);
  EXPECT_DOUBLE_EQ(ev.tokensPerSecPerUser, 1.0 / ev.ttlS);
  EXPECT_DOUBLE_EQ(ev.tokensPerSecPerGPU, 16.0 / (ev.ttlS * 64));
  // The breakdown accounts for every second of the TTL.
  EXPECT_NEAR(ev.breakdown.total(), ev.ttlS, 1e-12);
  double layers = 0;
  for (const LayerEvaluation &l : ev.layers) {
    layers += l.timeS;
    EXPECT_NEAR(l.timeS, l.attention.timeS + l.ffn.timeS + l.comm.exposedS,
                1e-15);
    EXPECT_LE(l.comm.exposedS, l.comm.timeS + 1e-15);
  }
  EXPECT_NEAR(ev.ttlS, layers + ev.step.computeS + ev.step.exposedS, 1e-12);
  EXPECT_TRUE(ev.fits);
}

TEST_F(EvaluateTest, HelixBeatsTPOnLongContextKV) {
  // 1M tokens of Llama-405B KV: TP=64 duplicates the 8 KV heads 8 times,
  // Helix KVP=8 x TPA=8 does not.
  Config helix;
  helix.strategy = Strategy::Helix;
  helix.layout.kvp = 8;
  helix.layout.tpa = 8;
  helix.layout.tpf = 64;
  helix.batch = 8;
  Config tp = helix;
  tp.strategy = Strategy::TP;
  tp.layout.kvp = 1;
  tp.layout.tpa = 64;
  Evaluation h = evaluate(llama, hw, Workload(), helix);
  Evaluation t = evaluate(llama, hw, Workload(), tp);
  ASSERT_TRUE(h.valid() && t.valid());
  EXPECT_DOUBLE_EQ(t.layers[0].attention.kvBytesPerGPU,
                   8 * h.layers[0].attention.kvBytesPerGPU);
  EXPECT_LT(h.ttlS, t.ttlS);
  EXPECT_LT(h.memory.kvCache, t.memory.kvCache);
}

TEST_F(EvaluateTest, HelixAllToAllIsIndependentOfContext) {
  Config c;
  c.strategy = Strategy::HelixNoHopB;
  c.layout.kvp = 8;
  c.layout.tpa = 8;
  c.layout.tpf = 64;
  c.batch = 8;
  Workload shortCtx, longCtx;
  shortCtx.context = 4096;
  longCtx.context = 4000000;
  Evaluation a = evaluate(llama, hw, shortCtx, c);
  Evaluation b = evaluate(llama, hw, longCtx, c);
  ASSERT_TRUE(a.valid() && b.valid());
  EXPECT_DOUBLE_EQ(a.layers[0].comm.timeS, b.layers[0].comm.timeS);
  EXPECT_LT(a.layers[0].attention.kvBytesPerGPU,
            b.layers[0].attention.kvBytesPerGPU);
}

TEST_F(EvaluateTest, KernelsPerLayerFollowTheTable) {
  // docs/cost-model.md §3, the kernels the generated program launches: GQA
  // attention = norm, QKV GEMM, RoPE (3); KV append, decode attention (2),
  // plus the merge of its split-K parts where the runtime's rule splits
  // (helix/Common/AttentionSplits.h); the KVP combine (1); the output
  // projection (1). Dense FFN: norm, gate-up, activation, down (4). Step:
  // embedding (1); final norm, LM head, sampling (3).
  // Llama-3.1-405B at tpa = 8: 16 query heads a GPU; 16 requests are 256
  // blocks, under eight per SM of GB200's 148, over 1M / 8 keys: 5 splits.
  ASSERT_EQ(hw.smCount, 148);
  ASSERT_EQ(helix::attentionSplits(16 * 16, 1000000 / 8, 148), 5);
  Config c;
  c.strategy = Strategy::HelixNoHopB;
  c.layout.kvp = 8;
  c.layout.tpa = 8;
  c.layout.tpf = 64;
  c.batch = 16;
  Evaluation ev = evaluate(llama, hw, Workload(), c);
  ASSERT_TRUE(ev.valid()) << ev.error;
  EXPECT_EQ(ev.layers[0].attention.kernels, 3 + (2 + 1) + 1 + 1);
  EXPECT_EQ(ev.layers[0].ffn.kernels, 4);
  EXPECT_EQ(ev.step.kernels, 4);
  // 80 requests fill the device (1280 blocks, over 8 x 148): no split, no
  // merge kernel.
  c.batch = 80;
  Evaluation wide = evaluate(llama, hw, Workload(), c);
  ASSERT_TRUE(wide.valid()) << wide.error;
  EXPECT_EQ(wide.layers[0].attention.kernels, 3 + 2 + 1 + 1);
  // Without the GPU's SM count the merge is always counted.
  Hardware unknown = hw;
  unknown.smCount = 0;
  Evaluation guess = evaluate(llama, unknown, Workload(), c);
  ASSERT_TRUE(guess.valid()) << guess.error;
  EXPECT_EQ(guess.layers[0].attention.kernels, 3 + (2 + 1) + 1 + 1);
  // HOP-B launches the KV append and the attention kernels once per slice
  // (4, as a compiled program fixes them), and combines each slice's
  // partials as they arrive: a combine kernel per slice, each paying its
  // fixed cost.
  c.batch = 16;
  c.strategy = Strategy::Helix;
  c.hopbSlices = 4;
  Evaluation hop = evaluate(llama, hw, Workload(), c);
  ASSERT_TRUE(hop.valid()) << hop.error;
  ASSERT_EQ(hop.hopbSlices, 4);
  EXPECT_EQ(hop.layers[0].attention.kernels, 3 + (2 + 1) * 4 + 1 * 4 + 1);
  // By kind (helix/Common/KernelTable.h): the same kernels, named.
  const KernelCounts &k = hop.layers[0].attention.kernelsByKind;
  EXPECT_EQ(k.total(), hop.layers[0].attention.kernels);
  EXPECT_EQ(k.of(KernelKind::KVAppend), 4);
  EXPECT_EQ(k.of(KernelKind::Attention), 4);
  EXPECT_EQ(k.of(KernelKind::SplitMerge), 4);
  EXPECT_EQ(k.of(KernelKind::Combine), 4);
  EXPECT_EQ(k.of(KernelKind::Gemm), 2);
  // A request per slice at a large batch: counts past 16 bits stay exact
  // (70,000 slices of KV append, attention and combine).
  c.batch = 70000;
  c.hopbSlices = 70000;
  Evaluation wideHop = evaluate(llama, hw, Workload(), c);
  ASSERT_TRUE(wideHop.valid()) << wideHop.error;
  ASSERT_EQ(wideHop.hopbSlices, 70000);
  const KernelCounts &w = wideHop.layers[0].attention.kernelsByKind;
  EXPECT_EQ(w.of(KernelKind::KVAppend), 70000);
  EXPECT_EQ(w.of(KernelKind::Combine), 70000);
  EXPECT_EQ(w.total(), wideHop.layers[0].attention.kernels);
  // MLA + MoE (DeepSeek-R1): norm, q_a+kv_a GEMM, latent norms, q_b GEMM,
  // W_UK BMM + RoPE (5); KV append, attention, W_UV BMM (3: 10 requests x
  // 128 heads, 1280 blocks, fill the device, no split); combine (1); output
  // projection (1). MoE: norm, router GEMM, top-k (3); the routed-expert block
  // (1); shared gate-up, activation, down (3); the weighted sum (1). The first
  // three layers are dense.
  Config r;
  r.strategy = Strategy::HelixNoHopB;
  r.layout.kvp = 8;
  r.layout.tpa = 1;
  r.layout.tpf = 1;
  r.layout.ep = 8;
  r.batch = 10;
  Evaluation m = evaluate(r1, hw, Workload(), r);
  ASSERT_TRUE(m.valid()) << m.error;
  EXPECT_EQ(m.layers[0].attention.kernels, 5 + 3 + 1 + 1);
  EXPECT_EQ(m.layers[0].ffn.kernels, 4);
  EXPECT_EQ(m.layers[5].ffn.kernels, 3 + 1 + 3 + 1);
}

} // namespace
