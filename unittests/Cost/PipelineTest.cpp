//===- PipelineTest.cpp - Pipeline-parallel baseline ----------------------===//

#include "helix/Cost/Evaluate.h"

#include "PaperModels.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

class PipelineTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error)) << error;
    model = paper::llama405B();
    model.layers.resize(8);
  }
  Evaluation run(int64_t pp, int64_t batch) {
    Config c;
    c.strategy = pp > 1 ? Strategy::TPPP : Strategy::TP;
    c.layout.tpa = c.layout.tpf = 8;
    c.layout.pp = pp;
    c.batch = batch;
    Evaluation ev = evaluate(model, hw, Workload(), c);
    EXPECT_TRUE(ev.valid()) << ev.error;
    return ev;
  }
  Hardware hw;
  ModelSpec model;
};

TEST_F(PipelineTest, StagesAndMicroBatches) {
  Evaluation ev = run(4, 10);
  EXPECT_EQ(ev.gpus, 32);
  EXPECT_EQ(ev.microBatches, 4);
  EXPECT_EQ(ev.microBatch, 3);
  for (size_t i = 0; i < ev.layers.size(); ++i)
    EXPECT_EQ(ev.layers[i].stage, int64_t(i / 2));
  // Fewer requests than stages: the pipeline cannot be filled.
  Evaluation small = run(4, 2);
  EXPECT_EQ(small.microBatches, 2);
  EXPECT_EQ(small.microBatch, 1);
}

TEST_F(PipelineTest, OneRequestWalksEveryStage) {
  // Batch 1: TTL is the sum of all stages plus pp - 1 transfers, so it is
  // slower than the same stage width without pipelining.
  Evaluation pp = run(4, 1);
  Evaluation flat = run(1, 1);
  EXPECT_GT(pp.ttlS, flat.ttlS);
  EXPECT_EQ(pp.breakdown.pipelineStall, 0.0);
  EXPECT_NEAR(pp.breakdown.total(), pp.ttlS, 1e-12);
}

TEST_F(PipelineTest, MicroBatchesQueueAtTheSlowestStage) {
  // Batch 2 on 2 stages runs two micro-batches of 1: the round is the
  // batch-1 round (sum of stages) or twice the slowest stage, if longer.
  Evaluation one = run(2, 1);
  Evaluation two = run(2, 2);
  EXPECT_EQ(two.microBatch, 1);
  EXPECT_NEAR(two.ttlS, one.ttlS + two.breakdown.pipelineStall, 1e-12);
  EXPECT_GE(two.breakdown.pipelineStall, 0.0);
  // Twice the tokens in (at most) a little more time.
  EXPECT_GT(two.tokensPerSecPerGPU, one.tokensPerSecPerGPU);
}

TEST_F(PipelineTest, MemoryIsPerStage) {
  Evaluation pp = run(4, 4);
  Evaluation flat = run(1, 4);
  EXPECT_LT(pp.memory.weights, flat.memory.weights);
  EXPECT_NEAR(pp.memory.kvCache, flat.memory.kvCache / 4, 1.0);
}

} // namespace
