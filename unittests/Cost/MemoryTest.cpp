//===- MemoryTest.cpp - Resident memory per GPU against HBM ---------------===//

#include "helix/Cost/Evaluate.h"
#include "helix/Cost/Search.h"

#include "PaperModels.h"
#include "TestHardware.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

Evaluation run(const Hardware &hw, Strategy s, int64_t kvp, int64_t tpa,
               int64_t batch, int64_t context) {
  Config c;
  c.strategy = s;
  c.layout.kvp = kvp;
  c.layout.tpa = tpa;
  c.layout.tpf = kvp * tpa;
  c.batch = batch;
  Workload w;
  w.context = context;
  Evaluation ev = evaluate(paper::figure1Model(1), hw, w, c);
  EXPECT_TRUE(ev.valid()) << ev.error;
  return ev;
}

TEST(Memory, WeightsAndKVByHand) {
  Hardware hw = test::appendixAHardware();
  Evaluation ev = run(hw, Strategy::TP, 1, 1, 2, 1000);
  const double h = 16384, vocab = 128256;
  // Linear weights of the layers in FP4; embedding, LM head and norms
  // stay BF16 (docs/quantization.md).
  double linear = h * (128 * 128 + 2 * 8 * 128) // QKV
                  + 128.0 * 128 * h             // output projection
                  + 3 * h * 65536;              // SwiGLU FFN
  double plain = 2 * h                          // two RMSNorms
                 + 2 * vocab * h                // embedding, LM head
                 + h;                           // final norm
  EXPECT_DOUBLE_EQ(ev.memory.weights, linear * 0.5 + plain * 2.0);
  // 2 requests x 2*8*128 values x 1008 slots (1000 tokens in whole
  // 16-token blocks) x 0.5 bytes.
  EXPECT_DOUBLE_EQ(ev.memory.kvCache, 2.0 * 2048 * 1008 * 0.5);
  EXPECT_GT(ev.memory.activations, 0.0);
  EXPECT_DOUBLE_EQ(ev.memoryPerGPUBytes, ev.memory.total());
}

TEST(Memory, DuplicationAndKVSharding) {
  Hardware hw = test::appendixAHardware();
  // TP=16 > K=8: each GPU holds one whole KV head, 1000 tokens in 63
  // blocks of 16 slots.
  Evaluation tp = run(hw, Strategy::TP, 1, 16, 1, 1000);
  EXPECT_DOUBLE_EQ(tp.memory.kvCache, 2.0 * 128 * 1008 * 0.5);
  // Helix KVP=4 x TPA=8: one head; 1001 tokens are 63 blocks, dealt round
  // robin: ceil(63 / 4) = 16 blocks = 256 slots on the fullest rank.
  Evaluation hx = run(hw, Strategy::Helix, 4, 8, 1, 1001);
  EXPECT_DOUBLE_EQ(hx.memory.kvCache, 2.0 * 128 * 256 * 0.5);
}

TEST(Memory, InfeasibleIsReportedNotHidden) {
  Hardware hw = test::appendixAHardware();
  Evaluation ev = run(hw, Strategy::TP, 1, 8, 4, 1000000);
  hw.hbmCapacityBytes = ev.memoryPerGPUBytes - 1;
  Evaluation tight = run(hw, Strategy::TP, 1, 8, 4, 1000000);
  EXPECT_TRUE(tight.valid());
  EXPECT_FALSE(tight.fits);
  hw.hbmCapacityBytes = ev.memoryPerGPUBytes;
  EXPECT_TRUE(run(hw, Strategy::TP, 1, 8, 4, 1000000).fits);
}

TEST(Memory, SearchKeepsOnlyFittingPoints) {
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware("h100", hw, error)) << error;
  Workload w;
  w.precision.compute = DType::FP8;
  SearchOptions o;
  o.maxGPUs = 16;
  PlanResult r = search(paper::llama405B(), hw, w, o);
  for (const auto &entry : r.frontiers)
    for (const PlanPoint &p : entry.second.points) {
      EXPECT_LE(p.memoryPerGPUBytes, hw.hbmCapacityBytes);
      Evaluation ev = evaluate(paper::llama405B(), hw, w, p.config);
      EXPECT_TRUE(ev.fits);
      EXPECT_DOUBLE_EQ(ev.ttlS, p.ttlS);
    }
  // 405B at FP4 (~203 GB) cannot fit on one 80 GB GPU.
  for (const auto &entry : r.frontiers)
    for (const PlanPoint &p : entry.second.points)
      EXPECT_GT(p.gpus, 2);
}

} // namespace
