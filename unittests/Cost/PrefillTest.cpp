//===- PrefillTest.cpp - The prefill a served step absorbs, by hand -------===//

#include "helix/Cost/Prefill.h"

#include "helix/Cost/Evaluate.h"

#include "PaperModels.h"
#include "TestHardware.h"
#include "gtest/gtest.h"

#include <cmath>

using namespace helix;

namespace {

TEST(Prefill, CausalAttentionFlops) {
  ModelSpec m = paper::llama405B();
  const double t = 1000;
  // 126 layers of 128 query heads of 128 + 128 dims, T^2 / 2 causal pairs.
  EXPECT_NEAR(prefillAttentionFlops(m, 1000),
              126 * 2.0 * (t * t / 2) * 128 * (128 + 128), 1e3);
  EXPECT_EQ(prefillAttentionFlops(m, 0), 0.0);
  EXPECT_NEAR(prefillAttentionFlops(m, 2000),
              4 * prefillAttentionFlops(m, 1000), 1e3);
}

TEST(Prefill, SchedulingNames) {
  PrefillScheduling s;
  ASSERT_TRUE(parsePrefillScheduling("separate", s));
  EXPECT_EQ(s, PrefillScheduling::Separate);
  ASSERT_TRUE(parsePrefillScheduling("mixed", s));
  EXPECT_EQ(s, PrefillScheduling::Mixed);
  EXPECT_FALSE(parsePrefillScheduling("chunked", s));
  EXPECT_STREQ(stringifyPrefillScheduling(PrefillScheduling::Separate),
               "separate");
}

/// Llama-3.1-405B FP8 on 8 GPUs of the h200 preset, TP, `batch` requests.
struct Served {
  ModelSpec model = paper::llama405B();
  Hardware hw = test::presetHardware("h200");
  Workload w;
  Config c;
  explicit Served(int64_t batch) {
    w.context = 3000;
    w.precision.weights = w.precision.kvCache = w.precision.compute =
        DType::FP8;
    c.strategy = Strategy::TP;
    c.layout.tpa = c.layout.tpf = 8;
    c.batch = batch;
  }
  /// evaluate() at `batch` and a context of one token.
  double forward(int64_t batch) const {
    Workload one = w;
    one.context = 1;
    Config f = c;
    f.batch = batch;
    Evaluation ev = evaluate(model, hw, one, f);
    EXPECT_TRUE(ev.valid()) << ev.error;
    return ev.ttlS;
  }
  double causal(double prompts, int64_t tokens) const {
    const KernelCurve &math = hw.kernels.gemmMath[int(DType::FP8)];
    double rate = hw.peak(DType::FP8) * math.at(double(tokens)).mathEfficiency;
    return prompts * prefillAttentionFlops(model, tokens) / (8 * rate);
  }
};

TEST(Prefill, ArrivalsPerStepOfContinuousBatching) {
  Served s(64);
  ServedPrefill p = servedPrefill(s.model, s.hw, s.w, s.c, 2000, 500,
                                  PrefillScheduling::Mixed);
  ASSERT_TRUE(p.error.empty()) << p.error;
  // 63 other requests of 500 tokens: 63 / 500 arrivals a request sees per
  // step; Poisson: 1 - e^-a of the steps take prompts, a / (1 - e^-a) each.
  EXPECT_DOUBLE_EQ(p.arrivalsPerStep, 63.0 / 500);
  EXPECT_NEAR(p.stepsWithPrompts, 1 - std::exp(-63.0 / 500), 1e-15);
  EXPECT_NEAR(p.promptsPerStep * p.stepsWithPrompts, 63.0 / 500, 1e-15);
  EXPECT_NEAR(p.perStepS, p.stepsWithPrompts * p.promptStepS, 1e-15);
  // A request's own prefill is not in its time per output token.
  Served one(1);
  EXPECT_EQ(servedPrefill(one.model, one.hw, one.w, one.c, 2000, 500,
                          PrefillScheduling::Separate)
                .perStepS,
            0.0);
}

TEST(Prefill, SeparatePrefillIsAForwardOfItsOwn) {
  Served s(64);
  ServedPrefill p = servedPrefill(s.model, s.hw, s.w, s.c, 2000, 500,
                                  PrefillScheduling::Separate);
  ASSERT_TRUE(p.error.empty()) << p.error;
  // The whole forward over the prompts' tokens (every weight read again,
  // every kernel's fixed cost, the collectives), plus causal attention.
  double tokens = std::ceil(p.promptsPerStep * 2000);
  EXPECT_NEAR(p.promptStepS,
              s.forward(int64_t(tokens)) + s.causal(p.promptsPerStep, 2000),
              1e-9);
}

TEST(Prefill, MixedPrefillCostsWhatThePromptAddsToTheStep) {
  Served s(64);
  ServedPrefill mixed = servedPrefill(s.model, s.hw, s.w, s.c, 2000, 500,
                                      PrefillScheduling::Mixed);
  ServedPrefill separate = servedPrefill(s.model, s.hw, s.w, s.c, 2000, 500,
                                         PrefillScheduling::Separate);
  double tokens = std::ceil(64 + mixed.promptsPerStep * 2000);
  EXPECT_NEAR(mixed.promptStepS,
              s.forward(int64_t(tokens)) - s.forward(64) +
                  s.causal(mixed.promptsPerStep, 2000),
              1e-9);
  // The decode step reads the weights anyway: riding along is cheaper.
  EXPECT_LT(mixed.promptStepS, separate.promptStepS);
  // Longer prompts cost more, in both schedules.
  for (PrefillScheduling sch :
       {PrefillScheduling::Mixed, PrefillScheduling::Separate})
    EXPECT_GT(servedPrefill(s.model, s.hw, s.w, s.c, 8000, 500, sch).perStepS,
              servedPrefill(s.model, s.hw, s.w, s.c, 2000, 500, sch).perStepS);
}

TEST(Prefill, WithDPAttentionThePromptWaitsOnOneRank) {
  // DeepSeek-R1 with DP attention x EP on 8 GPUs: a prompt's attention runs
  // on one DP rank, and the step waits for it; spread over the ranks it
  // would cost less.
  ModelSpec m = paper::deepSeekR1();
  Hardware hw = test::presetHardware("b200");
  Workload w;
  w.context = 2000;
  Config c;
  c.strategy = Strategy::EP;
  c.layout.dp = 8;
  c.layout.ep = 8;
  c.batch = 512;
  ServedPrefill p =
      servedPrefill(m, hw, w, c, 1000, 1000, PrefillScheduling::Mixed);
  ASSERT_TRUE(p.error.empty()) << p.error;
  Workload one = w;
  one.context = 1;
  auto ttl = [&](int64_t batch) {
    Config f = c;
    f.batch = batch;
    return evaluate(m, hw, one, f).ttlS;
  };
  double spread =
      ttl(512 + int64_t(std::ceil(p.promptsPerStep * 1000))) - ttl(512);
  EXPECT_GT(p.promptStepS, spread);
}

} // namespace
