//===- PrefillTest.cpp - First-order prefill estimate, by hand ------------===//

#include "helix/Cost/Prefill.h"

#include "PaperModels.h"
#include "TestHardware.h"
#include "gtest/gtest.h"

using namespace helix;

namespace {

TEST(Prefill, FlopsAreWeightsPlusCausalAttention) {
  ModelSpec m = paper::llama405B();
  const double t = 1000;
  double params = double(m.activeParameterCount()) -
                  double(m.vocabSize) * double(m.hiddenSize);
  // 126 layers of 128 query heads of 128 + 128 dims, T^2 / 2 causal pairs.
  double attention = 126 * 2.0 * (t * t / 2) * 128 * (128 + 128);
  EXPECT_NEAR(prefillFlops(m, 1000), 2 * t * params + attention, 1e3);
  EXPECT_EQ(prefillFlops(m, 0), 0.0);
  // Attention grows with the square of the prompt, the weights linearly.
  EXPECT_GT(prefillFlops(m, 2000), 2 * prefillFlops(m, 1000));
}

TEST(Prefill, SecondsAtTheMathEfficiency) {
  ModelSpec m = paper::llama405B();
  Hardware hw = test::appendixAHardware();
  for (double &p : hw.peakFlops)
    p = 1e15;
  hw.gemmEfficiency = 0.5;
  Precision bf16;
  bf16.weights = bf16.kvCache = bf16.compute = DType::BF16;
  EXPECT_NEAR(prefillSeconds(m, hw, bf16, 8, 1000),
              prefillFlops(m, 1000) / (8 * 1e15 * 0.5), 1e-12);
  // A gemm_math curve of the weights' format replaces gemm_efficiency.
  hw.kernels.gemmMath[int(DType::BF16)].points = {{1, 0, 1, 0.25}};
  EXPECT_NEAR(prefillSeconds(m, hw, bf16, 8, 1000),
              prefillFlops(m, 1000) / (8 * 1e15 * 0.25), 1e-12);
}

TEST(Prefill, PerStepShareOfContinuousBatching) {
  ModelSpec m = paper::llama405B();
  Hardware hw = test::appendixAHardware();
  for (double &p : hw.peakFlops)
    p = 1e15;
  hw.gemmEfficiency = 0.5;
  Precision p;
  double one = prefillSeconds(m, hw, p, 8, 4000);
  // 64 requests of 500 output tokens: 63 other prompts per 500 steps.
  EXPECT_NEAR(prefillPerStepSeconds(m, hw, p, 8, 64, 4000, 500),
              63.0 / 500 * one, 1e-15);
  EXPECT_EQ(prefillPerStepSeconds(m, hw, p, 8, 1, 4000, 500), 0.0);
}

} // namespace
