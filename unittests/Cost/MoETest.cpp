//===- MoETest.cpp - Expected distinct experts of a batch -----------------===//

#include "helix/Cost/MoE.h"
#include "helix/Cost/Evaluate.h"

#include "PaperModels.h"
#include "TestHardware.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace helix;

namespace {

TEST(MoE, ExpectedDistinctExpertsByHand) {
  // One token, top-8 of 256: each of 32 local experts is hit with p = 1/32.
  EXPECT_DOUBLE_EQ(expectedDistinctExperts(32, 256, 8, 1), 1.0);
  // Two tokens: 32 * (1 - (31/32)^2) = 1.96875 (not 2: overlaps).
  EXPECT_DOUBLE_EQ(expectedDistinctExperts(32, 256, 8, 2), 1.96875);
  // 64 tokens over 4 local experts: 4 * (1 - (31/32)^64).
  EXPECT_NEAR(expectedDistinctExperts(4, 256, 8, 64),
              4 * (1 - std::pow(31.0 / 32, 64)), 1e-12);
  // Saturates at the local expert count.
  EXPECT_NEAR(expectedDistinctExperts(256, 256, 8, 4096), 256, 1e-9);
  EXPECT_EQ(expectedDistinctExperts(32, 256, 8, 0), 0.0);
}

TEST(MoE, ExpectedDistinctRanks) {
  EXPECT_DOUBLE_EQ(expectedDistinctRanks(1, 8), 1.0);
  EXPECT_NEAR(expectedDistinctRanks(8, 8), 8 * (1 - std::pow(7.0 / 8, 8)),
              1e-12);
}

TEST(MoE, FFNWeightBytesOfDeepSeekLayer) {
  // Helix on 64 GPUs, TPF=1 x EP=64, batch 1: each GPU holds 4 experts and
  // reads 4 * 8/256 = 0.125 of one on average, plus a 1/64 shard of the
  // shared expert (FP4) and the whole router (BF16).
  ModelSpec model = paper::deepSeekR1();
  Hardware hw = test::appendixAHardware();
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.kvp = 64;
  c.layout.ep = 64;
  c.batch = 1;
  Evaluation ev = evaluate(model, hw, Workload(), c);
  ASSERT_TRUE(ev.valid()) << ev.error;
  const double expert = 3.0 * 7168 * 2048;
  const double want = (0.125 * expert + expert / 64) * 0.5 + 7168.0 * 256 * 2.0;
  const LayerEvaluation &moe = ev.layers.at(10);
  EXPECT_NEAR(moe.ffn.weightBytesPerGPU, want, 1e-6);
  EXPECT_DOUBLE_EQ(moe.ffn.activeExperts, 0.125);
  // The first three layers are dense: 3 * 7168 * 18432 / 64 values.
  EXPECT_NEAR(ev.layers.at(0).ffn.weightBytesPerGPU,
              3.0 * 7168 * 18432 / 64 * 0.5, 1e-6);
  // FLOPs: 8/64 token-expert pairs per GPU, the shared-expert shard, router.
  const double flops =
      2.0 * (8.0 / 64) * expert + 2.0 * expert / 64 + 2.0 * 7168 * 256;
  EXPECT_NEAR(moe.ffn.flopsPerGPU, flops, 1e-3);
}

TEST(MoE, MoreTokensActivateMoreExperts) {
  ModelSpec model = paper::deepSeekR1();
  Hardware hw = test::appendixAHardware();
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.kvp = 8;
  c.layout.ep = 8;
  double last = 0;
  for (int64_t b : {1, 4, 16, 64, 256}) {
    c.batch = b;
    Evaluation ev = evaluate(model, hw, Workload(), c);
    ASSERT_TRUE(ev.valid()) << ev.error;
    double w = ev.layers.at(10).ffn.weightBytesPerGPU;
    EXPECT_GT(w, last);
    last = w;
    EXPECT_NEAR(ev.layers.at(10).ffn.activeExperts,
                expectedDistinctExperts(32, 256, 8, double(b)), 1e-12);
  }
}

} // namespace
