//===- MLATest.cpp - Absorbed MLA decode attention ------------------------===//

#include "helix/Cost/Evaluate.h"

#include "PaperModels.h"

#include "TestHardware.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

Hardware gb200() { return test::presetHardware("gb200-nvl72"); }

Evaluation helixR1(int64_t kvp, int64_t batch, const Hardware &hw) {
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.kvp = kvp;
  c.layout.ep = kvp;
  c.batch = batch;
  Evaluation ev = evaluate(paper::deepSeekR1(), hw, Workload(), c);
  EXPECT_TRUE(ev.valid()) << ev.error;
  return ev;
}

TEST(MLA, LatentKVBytesAndFlopsByHand) {
  Hardware hw = gb200();
  Evaluation ev = helixR1(64, 64, hw);
  const AttentionEvaluation &a = ev.layers.at(5).attention;
  // 64 requests x (512 + 64) latent values x 1M/64 tokens x 0.5 bytes.
  EXPECT_DOUBLE_EQ(a.kvBytesPerGPU, 64.0 * 576 * (1e6 / 64) * 0.5);
  // Absorbed projections (q_a, q_b, kv_a, W_UK/W_UV = kv_b) for 64 tokens,
  // attention over 128 heads: 2*(512+64) for q.k and 2*512 for p.v per
  // head per token, and the output projection's 1/64 shard.
  const double qkv = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 +
                     512 + 512.0 * 128 * (128 + 128);
  const double core = 64.0 * 128 * (1e6 / 64) * (2.0 * 576 + 2.0 * 512);
  const double oproj = 128.0 * 128 * 7168 / 64;
  EXPECT_NEAR(a.flopsPerGPU,
              2 * 64 * qkv + core + 2 * 64 * oproj + 3.0 * 64 * 128 * 128, 1.0);
  EXPECT_NEAR(a.weightBytesPerGPU, (qkv + oproj) * 0.5, 1e-6);
}

TEST(MLA, NearlyComputeBoundAtFP4OnBlackwell) {
  // Per token the kernel reads 576 values (288 B at FP4) and does
  // 128 * 2176 = 278,528 FLOPs: ~970 FLOP/B against a GB200 machine balance
  // of ~940 (10 PF * 0.68 / (8 TB/s * 0.9)). Neither term may dwarf the other.
  Hardware hw = gb200();
  Evaluation ev = helixR1(64, 64, hw);
  const AttentionEvaluation &a = ev.layers.at(5).attention;
  double ratio = a.coreComputeS / a.coreMemoryS;
  EXPECT_GT(ratio, 0.7);
  EXPECT_LT(ratio, 1.5);
  // In BF16 the same kernel is clearly compute-bound.
  Workload bf16;
  bf16.precision.compute = DType::BF16;
  Config c = ev.config;
  Evaluation evb = evaluate(paper::deepSeekR1(), hw, bf16, c);
  ASSERT_TRUE(evb.valid()) << evb.error;
  EXPECT_GT(evb.layers.at(5).attention.coreComputeS,
            2.0 * evb.layers.at(5).attention.coreMemoryS);
}

TEST(MLA, TensorParallelDuplicatesTheLatent) {
  // One latent head: any TP > 1 reads the whole latent on every GPU.
  Hardware hw = gb200();
  Config c;
  c.strategy = Strategy::TP;
  c.layout.tpa = 8;
  c.layout.ep = 8;
  c.batch = 4;
  Evaluation ev = evaluate(paper::deepSeekR1(), hw, Workload(), c);
  ASSERT_TRUE(ev.valid()) << ev.error;
  EXPECT_DOUBLE_EQ(ev.layers.at(5).attention.kvBytesPerGPU,
                   4.0 * 576 * 1e6 * 0.5);
  // Helix cannot split MLA heads: tpa must divide the one latent head.
  c.strategy = Strategy::Helix;
  std::string why = validateConfig(paper::deepSeekR1(), hw, Workload(), c);
  EXPECT_NE(why.find("one latent KV head"), std::string::npos) << why;
}

TEST(MLA, SlidingWindowReadsOnlyTheWindow) {
  ModelSpec m = paper::llama405B();
  m.layers.resize(2);
  m.layers[1].attention.slidingWindow = 4096;
  Hardware hw = gb200();
  Config c;
  c.strategy = Strategy::TP;
  c.layout.tpa = c.layout.tpf = 8;
  c.batch = 2;
  Evaluation ev = evaluate(m, hw, Workload(), c);
  ASSERT_TRUE(ev.valid()) << ev.error;
  EXPECT_DOUBLE_EQ(ev.layers[0].attention.kvBytesPerGPU,
                   2.0 * 2 * 128 * 1e6 * 0.5);
  EXPECT_DOUBLE_EQ(ev.layers[1].attention.kvBytesPerGPU,
                   2.0 * 2 * 128 * 4096 * 0.5);
}

} // namespace
