//===- WriterTest.cpp - Calibrated hardware files load and price ----------===//

#include "helix/Calibrate/Writer.h"
#include "helix/Cost/Evaluate.h"

#include "PaperModels.h"
#include "Synthetic.h"

#include "gtest/gtest.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>

using namespace helix;
using namespace helix::calibrate;

namespace {

Hardware h100() {
  Hardware hw;
  std::string error;
  EXPECT_TRUE(loadHardware("h100", hw, error)) << error;
  return hw;
}

/// Every kind, each kernel costing `fixed` seconds plus its bytes at `eff`
/// of HBM peak; collectives `collective` seconds.
MeasurementSet synthetic(double fixed, double eff, double collective,
                         double noise = 0.01) {
  Hardware hw = h100();
  MeasurementSet set = test::namedSet();
  set.notMeasured = {"grouped_gemm (not timed)"};
  set.methods["gemm"] = "dequantize + SGEMM";
  set.methods["all_reduce"] = "ncclAllReduce";
  test::Noise n(noise, 99);
  auto a = [fixed](int64_t) { return fixed; };
  auto e = [eff](int64_t) { return eff; };
  std::vector<int64_t> ms = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  for (DType fmt : {DType::BF16, DType::FP8, DType::FP4}) {
    test::addGemm(set, fmt, ms, hw.hbmBandwidth, a, e, n);
    test::addGQA(set, fmt, hw.hbmBandwidth, a, e, n);
    test::addMLA(set, fmt, 128, hw.hbmBandwidth, a, e, n);
    test::addMLA(set, fmt, 16, hw.hbmBandwidth, a, e, n);
  }
  for (int64_t m : {1024, 2048, 4096}) {
    GemmSample s;
    s.m = m;
    s.n = s.k = 8192;
    s.seconds = gemmFlops(s) / (hw.peak(DType::BF16) * std::min(1.0, eff));
    set.gemm.push_back(s);
  }
  set.elementwise = {{"rmsNorm 8192 b=1", fixed, 9},
                     {"rope 64x128 b=1", fixed, 9}};
  for (int64_t gpus : {2, 8})
    for (double bytes = 1024; bytes <= 1 << 24; bytes *= 4)
      set.collectives.push_back(
          {CollectiveKind::AllReduce, gpus, bytes, collective, 5});
  return set;
}

std::string calibrated(const MeasurementSet &set, Calibration &c) {
  std::string error;
  EXPECT_TRUE(fitCalibration(set, h100(), c, error)) << error;
  return writeHardwareJSON(c, "h100");
}

TEST(CalibrateWriter, OutputLoadsAsAHardwareFileOnItsBase) {
  Calibration c;
  std::string text = calibrated(synthetic(15e-6, 0.15, 40e-6), c);
  Hardware hw;
  std::string error;
  ASSERT_TRUE(parseHardwareJSON(text, "calibrated.json", hw, error)) << error;
  EXPECT_EQ(hw.name, "h100-calibrated");
  // The base's figures stay; the measured curves replace its.
  Hardware base = h100();
  EXPECT_EQ(hw.hbmBandwidth, base.hbmBandwidth);
  EXPECT_EQ(hw.peak(DType::FP8), base.peak(DType::FP8));
  ASSERT_FALSE(base.kernels.groupedGemm[int(DType::BF16)].empty());
  EXPECT_EQ(hw.kernels.groupedGemm[int(DType::BF16)].points.size(),
            base.kernels.groupedGemm[int(DType::BF16)].points.size());
  for (DType fmt : {DType::BF16, DType::FP8, DType::FP4}) {
    const KernelCurve &g = hw.kernels.gemm[int(fmt)];
    ASSERT_EQ(g.points.size(), 9u);
    for (const KernelPoint &p : g.points) {
      EXPECT_NEAR(p.fixedS, 15e-6, 1.5e-6);
      EXPECT_NEAR(p.bandwidthEfficiency, 0.15, 0.005);
    }
    EXPECT_EQ(hw.kernels.attentionGQA[int(fmt)].points.size(), 9u);
    EXPECT_EQ(hw.kernels.attentionMLA[int(fmt)].points.size(), 7u);
    EXPECT_EQ(hw.kernels.attentionMLAFewHeads[int(fmt)].points.size(), 7u);
  }
  // The written figures are the fit's to 3 significant digits.
  const CurvePoint &first = c.gemm["bf16"][0];
  EXPECT_NEAR(hw.kernels.gemm[int(DType::BF16)].points[0].fixedS,
              first.fit.fixedS, 0.005 * first.fit.fixedS);
  ASSERT_EQ(hw.kernels.gemmMath[int(DType::BF16)].points.size(), 3u);
  EXPECT_NEAR(hw.kernels.gemmMath[int(DType::BF16)].points[0].mathEfficiency,
              0.15, 1e-3);
  EXPECT_NEAR(hw.kernels.elementwiseS, 15e-6, 1e-12);
  const CollectiveParams &ar = hw.collective(CollectiveKind::AllReduce);
  ASSERT_EQ(ar.measured.size(), 16u);
  EXPECT_EQ(ar.measured[0].gpus, 2);
  EXPECT_EQ(ar.measured[0].bytes, 1024);
  EXPECT_NEAR(ar.measured[0].seconds, 40e-6, 1e-12);
  // The base's alpha-beta figures stay beside the measured points.
  EXPECT_EQ(ar.alphaS, base.collective(CollectiveKind::AllReduce).alphaS);
}

TEST(CalibrateWriter, TheMeasuredGPUsSMCountReplacesTheBases) {
  // The split-K merge the cost model counts follows the SMs of the GPU that
  // was measured, not of the base preset it was written on.
  MeasurementSet set = synthetic(15e-6, 0.15, 40e-6);
  Calibration c;
  std::string error;
  Hardware hw;
  ASSERT_TRUE(parseHardwareJSON(calibrated(set, c), "c.json", hw, error))
      << error;
  EXPECT_EQ(hw.smCount, h100().smCount); // not recorded: the base's
  set.smCount = 114;                     // an H100 PCIe
  ASSERT_TRUE(parseHardwareJSON(calibrated(set, c), "c.json", hw, error))
      << error;
  EXPECT_EQ(hw.smCount, 114);
  nlohmann::json j = nlohmann::json::parse(calibrated(set, c));
  EXPECT_EQ(j["compute"]["sm_count"]["source"],
            "helix calibrate on Test GPU, driver 1.2.3, 2025-01-02; "
            "cudaDeviceProp::multiProcessorCount");
}

TEST(CalibrateWriter, EverySourceNamesTheGPUDriverDateAndFit) {
  Calibration c;
  std::string text = calibrated(synthetic(15e-6, 0.15, 40e-6), c);
  const std::string prefix =
      "helix calibrate on Test GPU, driver 1.2.3, 2025-01-02; ";
  nlohmann::json j = nlohmann::json::parse(text);
  int fits = 0, medians = 0;
  // Every point of every curve written, by its JSON path.
  std::function<void(const nlohmann::json &, const std::string &)> walk =
      [&](const nlohmann::json &node, const std::string &path) {
        if (node.is_array()) {
          for (size_t i = 0; i < node.size(); ++i)
            walk(node[i], path + "[" + std::to_string(i) + "]");
          return;
        }
        if (!node.is_object())
          return;
        if (node.contains("source")) {
          std::string source = node["source"];
          ASSERT_EQ(source.rfind(prefix, 0), 0u) << path << ": " << source;
          if (node.contains("fixed_us")) {
            EXPECT_NE(source.find("; fit of "), std::string::npos) << source;
            EXPECT_NE(source.find(" shapes, max rel err "), std::string::npos)
                << source;
            ++fits;
          } else {
            EXPECT_NE(source.find("median"), std::string::npos) << source;
            ++medians;
          }
          return;
        }
        for (auto it = node.begin(); it != node.end(); ++it)
          walk(it.value(), path.empty() ? it.key() : path + "." + it.key());
      };
  walk(j["kernels"], "kernels");
  walk(j["collectives"], "collectives");
  // 3 formats x (9 GEMM + 9 GQA + 7 + 7 MLA) fitted points; 3 math, one
  // elementwise and 16 collective points.
  EXPECT_EQ(fits, 3 * (9 + 9 + 7 + 7));
  EXPECT_EQ(medians, 3 + 1 + 16);
  // As loaded: the parser keeps each figure's source.
  Hardware hw;
  std::string error;
  ASSERT_TRUE(parseHardwareJSON(text, "calibrated.json", hw, error)) << error;
  auto sourceOf = [&](const std::string &path) {
    for (const auto &[p, s] : hw.sources)
      if (p == path)
        return s;
    return std::string();
  };
  EXPECT_EQ(sourceOf("kernels.gemm.bf16[0]"),
            j["kernels"]["gemm"]["bf16"][0]["source"]);
  EXPECT_EQ(sourceOf("kernels.elementwise_us"),
            j["kernels"]["elementwise_us"]["source"]);
  // The method of the kind is in its sources.
  std::string gemmSource = j["kernels"]["gemm"]["bf16"][0]["source"];
  EXPECT_EQ(gemmSource.rfind(prefix + "fit of 14 shapes, max rel err ", 0), 0u)
      << gemmSource;
  EXPECT_NE(gemmSource.find("bytes = n*k*2 + m*(n+k)*2"), std::string::npos);
  EXPECT_NE(gemmSource.find("; dequantize + SGEMM"), std::string::npos);
  std::string fp4Source = j["kernels"]["gemm"]["fp4"][0]["source"];
  EXPECT_NE(fp4Source.find("bytes = n*k*0.562 + m*(n+k)*2"), std::string::npos)
      << fp4Source;
  EXPECT_EQ(j["collectives"]["all_reduce"]["latency_us"][0]["source"],
            prefix + "median of 5 runs; ncclAllReduce");
  EXPECT_EQ(j["base"], "h100");
  EXPECT_TRUE(j["kernels"]["gemm"]["bf16"][0]["m"].is_number_integer());
}

TEST(CalibrateWriter, DescriptionSaysWhatWasAndWasNotMeasured) {
  Calibration c;
  calibrated(synthetic(15e-6, 0.15, 40e-6), c);
  std::string d = describeCalibration(c, "h100");
  EXPECT_EQ(d.rfind("helix calibrate on Test GPU, driver 1.2.3, 2025-01-02 "
                    "(synthetic). Timed: synthetic timings. Measured: gemm "
                    "bf16/fp4/fp8; gemm_math bf16; attention.gqa "
                    "bf16/fp4/fp8; attention.mla bf16/fp4/fp8; "
                    "attention.mla_few_heads bf16/fp4/fp8; elementwise_us; "
                    "collectives.all_reduce.latency_us (2, 8 GPUs). "
                    "Everything else is the h100 preset's; not measured: "
                    "grouped_gemm (not timed)",
                    0),
            0u)
      << d;
}

/// TTL of Llama-3.1-405B, TP 8, batch 4, 4096 tokens of context, BF16.
double ttl(const Hardware &hw) {
  Workload w;
  w.context = 4096;
  std::string error;
  EXPECT_TRUE(applyDTypeOptions({"bf16", "", "", ""}, "--", w.precision, error))
      << error;
  Config c;
  c.strategy = Strategy::TP;
  EXPECT_TRUE(parseLayout("tpa=8,tpf=8", c.layout, error)) << error;
  c.batch = 4;
  Evaluation ev = evaluate(paper::llama405B(), hw, w, c);
  EXPECT_TRUE(ev.valid()) << ev.error;
  return ev.ttlS;
}

TEST(CalibrateWriter, EvaluatePricesWithTheCalibratedCurves) {
  Hardware base = h100();
  double baseTTL = ttl(base);
  std::string error;

  // A runtime slower than the engines the preset describes (15 us per
  // kernel, 0.15 of HBM peak, 200 us collectives): a higher price.
  Calibration slow;
  Hardware slowHW;
  ASSERT_TRUE(
      parseHardwareJSON(calibrated(synthetic(15e-6, 0.15, 200e-6), slow),
                        "slow.json", slowHW, error))
      << error;
  double slowTTL = ttl(slowHW);
  EXPECT_GT(slowTTL, 2.0 * baseTTL);

  // One faster than them (0.2 us, the full HBM peak, 1 us collectives): a
  // lower price.
  Calibration fast;
  Hardware fastHW;
  ASSERT_TRUE(parseHardwareJSON(calibrated(synthetic(0.2e-6, 1.0, 1e-6), fast),
                                "fast.json", fastHW, error))
      << error;
  EXPECT_LT(ttl(fastHW), baseTTL);

  // Only the GEMM curves slower: between the two.
  MeasurementSet gemmOnly = test::namedSet();
  test::Noise n(0.0);
  auto a = [](int64_t) { return 15e-6; };
  auto e = [](int64_t) { return 0.15; };
  test::addGemm(gemmOnly, DType::BF16, {1, 2, 4, 8}, base.hbmBandwidth, a, e,
                n);
  Calibration g;
  Hardware gHW;
  ASSERT_TRUE(
      parseHardwareJSON(calibrated(gemmOnly, g), "gemm.json", gHW, error))
      << error;
  double gTTL = ttl(gHW);
  EXPECT_GT(gTTL, baseTTL);
  EXPECT_LT(gTTL, slowTTL);
}

TEST(CalibrateWriter, NameAndPresetForGPU) {
  Calibration c;
  MeasurementSet set = test::namedSet();
  set.elementwise = {{"rmsNorm b=1", 2e-6, 9}};
  std::string error;
  ASSERT_TRUE(fitCalibration(set, h100(), c, error)) << error;
  Hardware hw;
  ASSERT_TRUE(parseHardwareJSON(writeHardwareJSON(c, "h100", "my-h100"),
                                "mine.json", hw, error))
      << error;
  EXPECT_EQ(hw.name, "my-h100");
  EXPECT_NEAR(hw.kernels.elementwiseS, 2e-6, 1e-15);
  // Only elementwise: every other curve is the base's.
  Hardware base = h100();
  EXPECT_EQ(hw.kernels.gemm[int(DType::BF16)].points.size(),
            base.kernels.gemm[int(DType::BF16)].points.size());
}

} // namespace
