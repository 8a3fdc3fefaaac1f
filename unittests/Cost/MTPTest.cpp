//===- MTPTest.cpp - Speculative decode steps with the MTP layer ----------===//
//
// docs/cost-model.md, "Speculative decoding": a verify step over K + 1
// query tokens per request, K draft passes of the MTP layer, the time per
// accepted token.
//
//===----------------------------------------------------------------------===//

#include "helix/Common/Speculative.h"
#include "helix/Cost/Evaluate.h"
#include "helix/Import/HFConfig.h"

#include "TestHardware.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

Hardware gb200() { return test::presetHardware("gb200-nvl72"); }
ModelSpec importModel(const std::string &file) {
  return test::importTestModel(file);
}

Config deepSeekConfig(int64_t batch) {
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.kvp = 64;
  c.layout.tpf = 8;
  c.layout.ep = 8;
  c.batch = batch;
  return c;
}

Evaluation priced(const ModelSpec &m, int64_t drafts, double acceptance,
                  int64_t batch = 16) {
  Workload w;
  w.mtpTokens = drafts;
  w.mtpAcceptance = acceptance;
  Evaluation ev = evaluate(m, gb200(), w, deepSeekConfig(batch));
  EXPECT_TRUE(ev.valid()) << ev.error;
  return ev;
}

TEST(MTP, ExpectedAcceptedTokensIsTheChainSum) {
  EXPECT_DOUBLE_EQ(expectedAcceptedTokens(0, 0.85), 1.0);
  EXPECT_DOUBLE_EQ(expectedAcceptedTokens(1, 0.85), 1.85);
  EXPECT_DOUBLE_EQ(expectedAcceptedTokens(3, 0.5), 1.875);
  EXPECT_DOUBLE_EQ(expectedAcceptedTokens(4, 1.0), 5.0);
}

// The verify step reads every weight and each request's KV once, however
// many query tokens it checks; its FLOPs grow with them.
TEST(MTP, VerifyStepReadsWeightsAndKVOnce) {
  ModelSpec m = importModel("DeepSeek-R1.json");
  Evaluation plain = priced(m, 0, 0.85), spec = priced(m, 3, 0.85);
  ASSERT_EQ(plain.layers.size(), spec.layers.size());
  for (size_t i = 0; i < plain.layers.size(); ++i) {
    const LayerEvaluation &a = plain.layers[i], &b = spec.layers[i];
    EXPECT_EQ(a.attention.kvBytesPerGPU, b.attention.kvBytesPerGPU) << i;
    EXPECT_EQ(a.attention.weightBytesPerGPU, b.attention.weightBytesPerGPU);
    // Attention FLOPs: per query token, exactly.
    EXPECT_DOUBLE_EQ(b.attention.flopsPerGPU, 4.0 * a.attention.flopsPerGPU);
  }
  // The first layers have dense FFNs: their weights are read once too, and
  // their FLOPs are per token.
  EXPECT_EQ(plain.layers[0].ffn.weightBytesPerGPU,
            spec.layers[0].ffn.weightBytesPerGPU);
  EXPECT_DOUBLE_EQ(spec.layers[0].ffn.flopsPerGPU,
                   4.0 * plain.layers[0].ffn.flopsPerGPU);
  // The verify step costs more than a plain step, far less than 4 of them.
  EXPECT_GT(spec.mtp.verifyStepS, plain.ttlS);
  EXPECT_LT(spec.mtp.verifyStepS, 2.0 * plain.ttlS);
}

// TTL is the time per accepted token: (verify + drafts) / expected tokens.
TEST(MTP, TimePerAcceptedToken) {
  ModelSpec m = importModel("DeepSeek-R1.json");
  for (int64_t k : {1, 2, 4})
    for (double a : {0.5, 0.85, 1.0}) {
      Evaluation ev = priced(m, k, a);
      EXPECT_EQ(ev.mtp.draftTokens, k);
      EXPECT_DOUBLE_EQ(ev.mtp.expectedTokens, expectedAcceptedTokens(k, a));
      EXPECT_NEAR(ev.ttlS * ev.mtp.expectedTokens,
                  ev.mtp.verifyStepS + ev.mtp.draftS, 1e-12);
      EXPECT_NEAR(ev.tokensPerSecPerUser, 1.0 / ev.ttlS, 1e-9);
      // K passes of one MTP layer: each costs more than nothing and less
      // than the whole verify step.
      EXPECT_GT(ev.mtp.draftS, 0);
      EXPECT_LT(ev.mtp.draftS / double(k), ev.mtp.verifyStepS);
    }
  // Drafts that are never right only cost time.
  Evaluation plain = priced(m, 0, 0.85), useless = priced(m, 2, 1e-9);
  EXPECT_GT(useless.ttlS, plain.ttlS);
  // The breakdown still sums to the TTL.
  Evaluation ev = priced(m, 2, 0.85);
  const TimeBreakdown &t = ev.breakdown;
  EXPECT_NEAR(t.kvRead + t.weightRead + t.compute + t.overhead + t.exposedComm +
                  t.pipelineStall,
              ev.ttlS, 1e-9 * ev.ttlS);
}

// The MTP layer and its KV cache are resident.
TEST(MTP, MemoryHoldsTheMTPLayer) {
  ModelSpec m = importModel("DeepSeek-R1.json");
  Evaluation plain = priced(m, 0, 0.85), spec = priced(m, 1, 0.85);
  EXPECT_GT(spec.memory.weights, plain.memory.weights);
  // One more layer's KV: 1/61 of the layers' (all MLA, the same shape).
  EXPECT_NEAR(spec.memory.kvCache / plain.memory.kvCache, 62.0 / 61.0, 1e-9);
}

TEST(MTP, ModelsWithoutAnMTPLayerAreRefused) {
  ModelSpec m = importModel("Llama-3.1-405B.json");
  Workload w;
  w.mtpTokens = 1;
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.kvp = 8;
  c.layout.tpf = 8;
  c.batch = 1;
  Evaluation ev = evaluate(m, gb200(), w, c);
  ASSERT_FALSE(ev.valid());
  EXPECT_NE(ev.error.find("num_nextn_predict_layers"), std::string::npos)
      << ev.error;
  w.mtpTokens = 0;
  w.mtpAcceptance = 0;
  EXPECT_TRUE(evaluate(m, gb200(), w, c).valid()) << "unused without --mtp";
  ModelSpec d = importModel("DeepSeek-R1.json");
  w.mtpTokens = 1;
  for (double bad : {0.0, -0.5, 1.5}) {
    w.mtpAcceptance = bad;
    EXPECT_FALSE(evaluate(d, gb200(), w, deepSeekConfig(1)).valid()) << bad;
  }
}

} // namespace
