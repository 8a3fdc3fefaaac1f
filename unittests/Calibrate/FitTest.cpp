//===- FitTest.cpp - Curves recovered from synthetic measurements ---------===//

#include "helix/Calibrate/Fit.h"

#include "Synthetic.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace helix;
using namespace helix::calibrate;

namespace {

constexpr double kPeak = 3.35e12; // h100's HBM, bytes/s

/// (bytes, seconds) of t = a + bytes / (kPeak * e) at sizes 1 MB .. 1 GB.
std::vector<std::pair<double, double>> line(double a, double e,
                                            double noise = 0) {
  test::Noise n(noise);
  std::vector<std::pair<double, double>> xy;
  for (double bytes = 1e6; bytes <= 1.1e9; bytes *= 2)
    xy.emplace_back(bytes, (a + bytes / (kPeak * e)) * n());
  return xy;
}

Hardware h100() {
  Hardware hw;
  std::string error;
  EXPECT_TRUE(loadHardware("h100", hw, error)) << error;
  return hw;
}

TEST(CalibrateFit, ExactLineIsRecovered) {
  LineFit f;
  std::string error;
  ASSERT_TRUE(fitFixedPlusBandwidth(line(5e-6, 0.6), kPeak, f, error)) << error;
  EXPECT_NEAR(f.fixedS, 5e-6, 1e-12);
  EXPECT_NEAR(f.efficiency, 0.6, 1e-9);
  EXPECT_LT(f.maxRelError, 1e-9);
  EXPECT_EQ(f.samples, 11u);
  EXPECT_EQ(f.note, "");
}

TEST(CalibrateFit, NoisyLineIsRecoveredWithinTolerance) {
  LineFit f;
  std::string error;
  ASSERT_TRUE(fitFixedPlusBandwidth(line(8e-6, 0.35, 0.03), kPeak, f, error))
      << error;
  EXPECT_NEAR(f.fixedS, 8e-6, 0.1 * 8e-6);
  EXPECT_NEAR(f.efficiency, 0.35, 0.03 * 0.35);
  // The reported error is the residual's: about the noise, not more.
  EXPECT_GT(f.maxRelError, 0.005);
  EXPECT_LT(f.maxRelError, 0.06);
  EXPECT_LE(f.medianRelError, f.maxRelError);
}

TEST(CalibrateFit, FasterThanPeakIsRefittedAtEfficiencyOne) {
  LineFit f;
  std::string error;
  ASSERT_TRUE(fitFixedPlusBandwidth(line(4e-6, 1.3), kPeak, f, error)) << error;
  EXPECT_DOUBLE_EQ(f.efficiency, 1.0);
  EXPECT_GE(f.fixedS, 0.0);
  EXPECT_NE(f.note.find("unconstrained e=1.3"), std::string::npos) << f.note;
  EXPECT_NE(f.note.find("refit with e=1"), std::string::npos) << f.note;
  // The constrained line is worse than the data allow: it says how much.
  EXPECT_GT(f.maxRelError, 0.05);
}

TEST(CalibrateFit, NegativeFixedCostIsRefittedAtZero) {
  // t = bytes / (peak * 0.5) - 0.2 ms: positive times, negative intercept.
  std::vector<std::pair<double, double>> xy;
  for (double bytes = 1e9; bytes <= 1.7e10; bytes *= 2)
    xy.emplace_back(bytes, bytes / (kPeak * 0.5) - 2e-4);
  LineFit f;
  std::string error;
  ASSERT_TRUE(fitFixedPlusBandwidth(xy, kPeak, f, error)) << error;
  EXPECT_DOUBLE_EQ(f.fixedS, 0.0);
  EXPECT_GT(f.efficiency, 0.5);
  EXPECT_LE(f.efficiency, 1.0);
  EXPECT_NE(f.note.find("refit with a=0"), std::string::npos) << f.note;
}

TEST(CalibrateFit, BothBoundsActive) {
  std::vector<std::pair<double, double>> xy;
  for (double bytes = 1e9; bytes <= 1.7e10; bytes *= 2)
    xy.emplace_back(bytes, bytes / (kPeak * 1.5) - 1e-4);
  LineFit f;
  std::string error;
  ASSERT_TRUE(fitFixedPlusBandwidth(xy, kPeak, f, error)) << error;
  EXPECT_DOUBLE_EQ(f.fixedS, 0.0);
  EXPECT_DOUBLE_EQ(f.efficiency, 1.0);
  EXPECT_NE(f.note.find("refit with e=1, then a=0"), std::string::npos)
      << f.note;
}

TEST(CalibrateFit, BadSamplesAreClearErrors) {
  LineFit f;
  std::string error;
  EXPECT_FALSE(fitFixedPlusBandwidth({}, kPeak, f, error));
  EXPECT_EQ(error, "a fixed cost and a bandwidth need samples of at least 2 "
                   "different sizes, got 0 samples");
  EXPECT_FALSE(fitFixedPlusBandwidth({{1e6, 1e-5}}, kPeak, f, error));
  EXPECT_EQ(error, "a fixed cost and a bandwidth need samples of at least 2 "
                   "different sizes, got 1 sample");
  EXPECT_FALSE(
      fitFixedPlusBandwidth({{1e6, 1e-5}, {1e6, 2e-5}}, kPeak, f, error));
  EXPECT_EQ(error, "a fixed cost and a bandwidth need samples of at least 2 "
                   "different sizes, got 2 samples of one size");
  EXPECT_FALSE(
      fitFixedPlusBandwidth({{1e6, 1e-5}, {2e6, -1e-5}}, kPeak, f, error));
  EXPECT_EQ(error, "sample 1: seconds must be a positive finite number");
  EXPECT_FALSE(
      fitFixedPlusBandwidth({{1e6, 0.0}, {2e6, 1e-5}}, kPeak, f, error));
  EXPECT_EQ(error, "sample 0: seconds must be a positive finite number");
  EXPECT_FALSE(
      fitFixedPlusBandwidth({{1e6, NAN}, {2e6, 1e-5}}, kPeak, f, error));
  EXPECT_EQ(error, "sample 0: seconds must be a positive finite number");
  EXPECT_FALSE(
      fitFixedPlusBandwidth({{-1.0, 1e-5}, {2e6, 1e-5}}, kPeak, f, error));
  EXPECT_EQ(error, "sample 0: bytes must be a positive finite number");
  EXPECT_FALSE(fitFixedPlusBandwidth(line(1e-6, 0.5), 0.0, f, error));
  EXPECT_EQ(error, "the HBM peak must be a positive number of bytes/s");
}

/// The GEMM path's curve per m: a fixed cost growing with log2 m and an
/// efficiency rising with it, as a memory-bound kernel's do.
double fixedAt(int64_t m) { return (3.0 + 0.5 * std::log2(double(m))) * 1e-6; }
double effAt(int64_t m) { return 0.5 + 0.04 * std::log2(double(m)); }

TEST(CalibrateFit, GemmCurvePerMRecoveredFromNoisyShapes) {
  Hardware hw = h100();
  MeasurementSet set = test::namedSet();
  test::Noise noise(0.03, 7);
  std::vector<int64_t> ms = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  test::addGemm(set, DType::BF16, ms, hw.hbmBandwidth, fixedAt, effAt, noise);
  test::addGemm(set, DType::FP8, ms, hw.hbmBandwidth, fixedAt, effAt, noise);
  Calibration c;
  std::string error;
  ASSERT_TRUE(fitCalibration(set, hw, c, error)) << error;
  for (const char *fmt : {"bf16", "fp8"}) {
    ASSERT_EQ(c.gemm[fmt].size(), ms.size()) << fmt;
    for (size_t i = 0; i < ms.size(); ++i) {
      const CurvePoint &p = c.gemm[fmt][i];
      EXPECT_EQ(p.x, double(ms[i]));
      EXPECT_EQ(p.fit.samples, test::gemmShapes().size());
      EXPECT_NEAR(p.fit.fixedS, fixedAt(ms[i]), 0.15 * fixedAt(ms[i]))
          << fmt << " m=" << ms[i];
      EXPECT_NEAR(p.fit.efficiency, effAt(ms[i]), 0.04 * effAt(ms[i]))
          << fmt << " m=" << ms[i];
      EXPECT_LT(p.fit.maxRelError, 0.07);
      EXPECT_EQ(p.shapes, "14 (n, k) shapes, n*k 1048576..268435456");
    }
  }
  EXPECT_TRUE(c.skipped.empty());
  EXPECT_DOUBLE_EQ(c.hbmBytesPerS, hw.hbmBandwidth);
}

TEST(CalibrateFit, MathEfficiencyIsFlopsOverPeak) {
  Hardware hw = h100();
  MeasurementSet set = test::namedSet();
  for (DType fmt : {DType::BF16, DType::FP4})
    for (int64_t m : {1024, 2048, 4096})
      for (auto [n, k] : test::gemmShapes()) {
        GemmSample s;
        s.format = fmt;
        s.m = m;
        s.n = n;
        s.k = k;
        // 5% of bf16's dense peak; shapes below 4096 run at 1%.
        double eff = n >= 4096 && k >= 4096 ? 0.05 : 0.01;
        s.seconds = gemmFlops(s) / (hw.peak(DType::BF16) * eff);
        set.gemm.push_back(s);
      }
  Calibration c;
  std::string error;
  ASSERT_TRUE(fitCalibration(set, hw, c, error)) << error;
  ASSERT_EQ(c.gemmMath["bf16"].size(), 3u);
  for (const MathPoint &p : c.gemmMath["bf16"]) {
    EXPECT_NEAR(p.efficiency, 0.05, 1e-12);
    EXPECT_EQ(p.samples, 7u); // n, k >= 4096 only
  }
  // H100 has no fp4 peak: left out, and said so.
  EXPECT_EQ(c.gemmMath.count("fp4"), 0u);
  ASSERT_EQ(c.skipped.size(), 2u);
  EXPECT_EQ(c.skipped[0], "42 GEMM samples fit neither curve (m above 512 "
                          "and below 1024, or n or k below 4096)");
  EXPECT_EQ(c.skipped[1],
            "gemm_math.fp4: the base has no dense fp4 peak to divide by");
}

TEST(CalibrateFit, MathEfficiencyAboveOneNamesTheBase) {
  Hardware hw = h100();
  MeasurementSet set = test::namedSet();
  GemmSample s;
  s.m = 4096;
  s.n = s.k = 8192;
  s.seconds = gemmFlops(s) / (hw.peak(DType::BF16) * 2.0);
  set.gemm.push_back(s);
  Calibration c;
  std::string error;
  EXPECT_FALSE(fitCalibration(set, hw, c, error));
  EXPECT_EQ(error, "gemm_math bf16 m=4096: median math efficiency 2 is above "
                   "1 of the base's 0.989 PFLOP/s: is --base the GPU that "
                   "was measured?");
}

TEST(CalibrateFit, AttentionCurvesByKindRowsAndFormat) {
  Hardware hw = h100();
  MeasurementSet set = test::namedSet();
  test::Noise noise(0.02, 11);
  auto gqaFixed = [](int64_t rows) {
    return (20.0 - std::log2(double(rows))) * 1e-6;
  };
  auto gqaEff = [](int64_t rows) {
    return 0.05 + 0.02 * std::log2(double(rows));
  };
  auto mlaFixed = [](int64_t) { return 40e-6; };
  auto mlaEff = [](int64_t) { return 0.1; };
  auto fewEff = [](int64_t) { return 0.3; };
  test::addGQA(set, DType::FP8, hw.hbmBandwidth, gqaFixed, gqaEff, noise);
  test::addMLA(set, DType::BF16, 128, hw.hbmBandwidth, mlaFixed, mlaEff, noise);
  test::addMLA(set, DType::BF16, 16, hw.hbmBandwidth, mlaFixed, fewEff, noise);
  Calibration c;
  std::string error;
  ASSERT_TRUE(fitCalibration(set, hw, c, error)) << error;
  const std::vector<CurvePoint> &gqa = c.attention["gqa"]["fp8"];
  ASSERT_EQ(gqa.size(), 9u); // rows 1 .. 256
  for (const CurvePoint &p : gqa) {
    int64_t rows = int64_t(p.x);
    EXPECT_NEAR(p.fit.fixedS, gqaFixed(rows), 0.1 * gqaFixed(rows)) << rows;
    EXPECT_NEAR(p.fit.efficiency, gqaEff(rows), 0.03 * gqaEff(rows)) << rows;
    // Rows of 8 and more are measured as rows x 1 and rows / 8 x 8 heads.
    EXPECT_EQ(p.fit.samples, rows >= 8 ? 8u : 4u) << rows;
  }
  EXPECT_EQ(gqa[3].shapes, "kv_len 512..32768, (batch x kv_heads, q_heads, "
                           "head_dim) 1x8/64/128, 8x1/8/128");
  ASSERT_EQ(c.attention["mla"]["bf16"].size(), 7u);
  ASSERT_EQ(c.attention["mla_few_heads"]["bf16"].size(), 7u);
  EXPECT_NEAR(c.attention["mla"]["bf16"][0].fit.efficiency, 0.1, 0.003);
  EXPECT_NEAR(c.attention["mla_few_heads"]["bf16"][6].fit.efficiency, 0.3,
              0.009);
  EXPECT_NEAR(c.attention["mla"]["bf16"][6].fit.fixedS, 40e-6, 4e-6);
}

TEST(CalibrateFit, ElementwiseAndCollectivesAreMedians) {
  Hardware hw = h100();
  MeasurementSet set = test::namedSet();
  set.elementwise = {{"rmsNorm b=1", 3e-6, 9},
                     {"rope b=1", 2e-6, 9},
                     {"kvStore b=1", 5e-6, 9}};
  set.collectives = {{CollectiveKind::AllReduce, 2, 1024, 10e-6, 5},
                     {CollectiveKind::AllReduce, 2, 1024, 14e-6, 5},
                     {CollectiveKind::AllReduce, 2, 4096, 12e-6, 5},
                     {CollectiveKind::AllToAll, 4, 1024, 20e-6, 5}};
  Calibration c;
  std::string error;
  ASSERT_TRUE(fitCalibration(set, hw, c, error)) << error;
  EXPECT_TRUE(c.haveElementwise);
  EXPECT_DOUBLE_EQ(c.elementwiseS, 3e-6);
  ASSERT_EQ(c.collectives["all_reduce"].size(), 2u);
  EXPECT_DOUBLE_EQ(c.collectives["all_reduce"][0].seconds, 12e-6);
  EXPECT_EQ(c.collectives["all_reduce"][0].runs, 10);
  EXPECT_EQ(c.collectives["all_to_all"][0].gpus, 4);
}

TEST(CalibrateFit, APointWithOneShapeIsLeftOutAndSaidSo) {
  Hardware hw = h100();
  MeasurementSet set = test::namedSet();
  test::Noise noise(0.0);
  test::addGemm(set, DType::BF16, {1}, hw.hbmBandwidth, fixedAt, effAt, noise);
  GemmSample lone;
  lone.m = 2;
  lone.n = lone.k = 4096;
  lone.seconds = 1e-5;
  set.gemm.push_back(lone);
  Calibration c;
  std::string error;
  ASSERT_TRUE(fitCalibration(set, hw, c, error)) << error;
  EXPECT_EQ(c.gemm["bf16"].size(), 1u);
  ASSERT_EQ(c.skipped.size(), 1u);
  EXPECT_EQ(c.skipped[0], "gemm.bf16 m=2: a fixed cost and a bandwidth need "
                          "samples of at least 2 different sizes, got 1 "
                          "sample");
  // Nothing else to write: then it is an error.
  set.gemm = {lone};
  EXPECT_FALSE(fitCalibration(set, hw, c, error));
  EXPECT_EQ(error, "nothing could be fitted: " + c.skipped[0]);
}

TEST(CalibrateFit, BadMeasurementSetsAreClearErrors) {
  Hardware hw = h100();
  Calibration c;
  std::string error;
  EXPECT_FALSE(fitCalibration(test::namedSet(), hw, c, error));
  EXPECT_EQ(error, "no measurements: nothing to fit (no GEMM, attention, "
                   "elementwise or collective samples)");

  MeasurementSet set = test::namedSet();
  GemmSample g;
  g.m = 1;
  g.n = g.k = 4096;
  g.seconds = -1;
  set.gemm.push_back(g);
  EXPECT_FALSE(fitCalibration(set, hw, c, error));
  EXPECT_EQ(error, "gemm[0] (bf16 m=1 n=4096 k=4096): seconds must be a "
                   "positive finite number (below 1e6), got -1");
  set.gemm[0].seconds = 0;
  EXPECT_FALSE(fitCalibration(set, hw, c, error));
  EXPECT_EQ(error, "gemm[0] (bf16 m=1 n=4096 k=4096): seconds must be a "
                   "positive finite number (below 1e6), got 0");
  set.gemm[0].seconds = 1e-5;
  set.gemm[0].m = 0;
  EXPECT_FALSE(fitCalibration(set, hw, c, error));
  EXPECT_EQ(error, "gemm[0] (bf16 m=0 n=4096 k=4096): m, n and k must be "
                   "integers from 1 to 1e9");

  set = test::namedSet();
  AttentionSample a;
  a.kind = AttentionKind::MLA;
  a.batch = 1;
  a.kvHeads = 2;
  a.qHeads = 128;
  a.headDim = 576;
  a.kvLength = 1024;
  a.seconds = 1e-4;
  set.attention.push_back(a);
  EXPECT_FALSE(fitCalibration(set, hw, c, error));
  EXPECT_EQ(error, "attention[0] (mla bf16 batch=1 kv_heads=2 q_heads=128 "
                   "head_dim=576 kv_length=1024): MLA has one latent KV "
                   "head (kv_heads 1)");

  set = test::namedSet();
  set.collectives.push_back({CollectiveKind::AllGather, 1, 1024, 1e-5, 1});
  EXPECT_FALSE(fitCalibration(set, hw, c, error));
  EXPECT_EQ(error, "collectives[0] (all_gather gpus=1 bytes=1024): gpus must "
                   "be an integer from 2 to 4096");

  set = test::namedSet();
  set.elementwise.push_back({"", 1e-6, 1});
  EXPECT_FALSE(fitCalibration(set, hw, c, error));
  EXPECT_EQ(error, "elementwise[0] (unnamed): the kernel must be named");
}

} // namespace
