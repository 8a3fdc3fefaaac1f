//===- KernelCurvesTest.cpp - Kernel curves: parsing and pricing ----------===//

#include "helix/Cost/Hardware.h"
#include "helix/Cost/Roofline.h"

#include "TestHardware.h"
#include "gtest/gtest.h"

#include <cmath>

using namespace helix;

namespace {

/// A user file on the h100 preset whose bf16 GEMM curve has two points.
const char *kTwoPointGemm = R"({"base": "h100", "kernels": {"gemm": {"bf16": [
  {"m": 1, "fixed_us": 4, "bandwidth_efficiency": 0.5, "source": "s1"},
  {"m": 16, "fixed_us": 8, "bandwidth_efficiency": 0.9, "source": "s2"}]}}})";

TEST(KernelCurves, InterpolateInLog2AndHoldTheEnds) {
  Hardware hw;
  std::string error;
  ASSERT_TRUE(parseHardwareJSON(kTwoPointGemm, "mine.json", hw, error))
      << error;
  const KernelCurve &c = hw.kernels.gemm[int(DType::BF16)];
  ASSERT_EQ(c.points.size(), 2u);
  // m = 4 is half way between 1 and 16 in log2.
  KernelPoint p = c.at(4);
  EXPECT_NEAR(p.fixedS, 6e-6, 1e-15);
  EXPECT_NEAR(p.bandwidthEfficiency, 0.7, 1e-12);
  EXPECT_NEAR(c.at(0.5).fixedS, 4e-6, 1e-15);
  EXPECT_NEAR(c.at(1e6).bandwidthEfficiency, 0.9, 1e-12);
  // The base preset's other curves are replaced only where given.
  EXPECT_FALSE(hw.kernels.gemm[int(DType::FP8)].empty());
}

TEST(KernelCurves, GemmOpIsFixedCostPlusBytesAtTheCurvesEfficiency) {
  Hardware hw = test::appendixAHardware();
  hw.kernelOverheadS = 2e-6;
  hw.memoryEfficiency = 0.8;
  hw.kernels.gemm[int(DType::BF16)].points = {{1, 5e-6, 0.5, 0}};
  KernelMix mix;
  mix.counts = {{KernelKind::Gemm, 2}, {KernelKind::Norm, 1}};
  mix.format = DType::BF16;
  OpCost c = kernelCost(hw, DType::BF16, 0, 1e9, 0, 0, mix);
  // Two GEMMs at 5 us, one elementwise kernel at the flat 2 us.
  EXPECT_NEAR(c.overheadS, 12e-6, 1e-15);
  EXPECT_NEAR(c.memoryS, 1e9 / (8000e9 * 0.5), 1e-15);
  EXPECT_NEAR(c.timeS, c.memoryS + 12e-6, 1e-15);
  // Without the curve: the flat figures (2 us per kernel, 0.8).
  hw.kernels.gemm[int(DType::BF16)].points.clear();
  OpCost flat = kernelCost(hw, DType::BF16, 0, 1e9, 0, 0, mix);
  EXPECT_NEAR(flat.overheadS, 6e-6, 1e-15);
  EXPECT_NEAR(flat.memoryS, 1e9 / (8000e9 * 0.8), 1e-15);
  EXPECT_NEAR(
      flat.timeS,
      roofline(hw, DType::BF16, 0, 1e9, 0, 0, {{KernelKind::Norm, 3}}).timeS,
      1e-15);
}

TEST(KernelCurves, MathEfficiencyFromGemmMath) {
  Hardware hw = test::appendixAHardware();
  for (double &p : hw.peakFlops)
    p = 1e15;
  hw.gemmEfficiency = 0.68;
  hw.kernels.gemmMath[int(DType::FP8)].points = {{1024, 0, 1, 0.5}};
  KernelMix mix;
  mix.counts = {{KernelKind::Gemm, 1}};
  mix.format = DType::FP8;
  mix.m = 4096;
  OpCost c = kernelCost(hw, DType::FP8, 1e12, 1, 0, 0, mix);
  EXPECT_NEAR(c.computeS, 1e12 / (1e15 * 0.5), 1e-12);
  // An attention op keeps gemm_efficiency for its FLOPs.
  mix.counts.add(KernelKind::Attention);
  OpCost a = kernelCost(hw, DType::FP8, 1e12, 1, 0, 0, mix);
  EXPECT_NEAR(a.computeS, 1e12 / (1e15 * 0.68), 1e-12);
}

TEST(KernelCurves, AttentionCurveByRowsAndKVFormatWithFallback) {
  Hardware hw = test::appendixAHardware();
  hw.kernels.attentionGQA[int(DType::BF16)].points = {{1, 10e-6, 0.5, 0},
                                                      {8, 10e-6, 1.0, 0}};
  hw.kernels.attentionGQA[int(DType::FP8)].points = {{1, 20e-6, 0.25, 0}};
  KernelMix mix;
  mix.counts = {{KernelKind::Attention, 1}};
  mix.rows = 8;
  mix.kvFormat = DType::BF16;
  OpCost c = kernelCost(hw, DType::BF16, 0, 0, 8e9, 0, mix);
  EXPECT_NEAR(c.timeS, 10e-6 + 8e9 / 8000e9, 1e-12);
  // FP8 KV reads its own curve; FP4 KV has none and takes FP8's.
  mix.kvFormat = DType::FP8;
  EXPECT_NEAR(kernelCost(hw, DType::BF16, 0, 0, 8e9, 0, mix).timeS,
              20e-6 + 8e9 / (8000e9 * 0.25), 1e-12);
  mix.kvFormat = DType::FP4;
  EXPECT_NEAR(kernelCost(hw, DType::BF16, 0, 0, 8e9, 0, mix).timeS,
              20e-6 + 8e9 / (8000e9 * 0.25), 1e-12);
  // A BF16 KV cache never borrows a narrower format's curve.
  hw.kernels.attentionGQA[int(DType::BF16)].points.clear();
  mix.kvFormat = DType::BF16;
  EXPECT_TRUE(hw.kernels.attention(false, 8, DType::BF16).empty());
}

TEST(KernelCurves, PresetsCarryCurvesWithSources) {
  for (const std::string &name : listHardwarePresets()) {
    Hardware hw;
    std::string error;
    ASSERT_TRUE(loadHardware(name, hw, error)) << error;
    EXPECT_FALSE(hw.kernels.gemm[int(DType::BF16)].empty()) << name;
    EXPECT_FALSE(hw.kernels.attentionGQA[int(DType::BF16)].empty()) << name;
    EXPECT_FALSE(hw.collective(CollectiveKind::AllReduce).measured.empty())
        << name;
    bool sourced = false;
    for (const auto &s : hw.sources)
      sourced = sourced || s.first.rfind("kernels.gemm.bf16[0]", 0) == 0;
    EXPECT_TRUE(sourced) << name;
  }
}

TEST(KernelCurves, AShorterUserListLeavesNoStaleSources) {
  // h100's all-reduce has 30 measured points; a file giving one keeps one
  // source for the list.
  Hardware hw;
  std::string error;
  ASSERT_TRUE(parseHardwareJSON(R"({"base": "h100", "collectives": {
    "all_reduce": {"latency_us": [{"gpus": 8, "bytes": 1024, "value": 5,
                                   "source": "mine"}]}}})",
                                "mine.json", hw, error))
      << error;
  int listed = 0;
  for (const auto &s : hw.sources)
    if (s.first.rfind("collectives.all_reduce.latency_us[", 0) == 0) {
      ++listed;
      EXPECT_EQ(s.second, "mine");
    }
  EXPECT_EQ(listed, 1);
  EXPECT_EQ(hw.collective(CollectiveKind::AllReduce).measured.size(), 1u);
}

struct BadCurve {
  const char *json;
  const char *field;
};

class BadKernelCurve : public ::testing::TestWithParam<BadCurve> {};

TEST_P(BadKernelCurve, NamesTheField) {
  Hardware hw;
  std::string error;
  EXPECT_FALSE(parseHardwareJSON(GetParam().json, "mine.json", hw, error));
  EXPECT_NE(error.find("mine.json"), std::string::npos) << error;
  EXPECT_NE(error.find(GetParam().field), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, BadKernelCurve,
    ::testing::Values(
        BadCurve{R"({"base": "h100", "kernels": {"gemm": {"bf16": {}}}})",
                 "'kernels.gemm.bf16'"},
        BadCurve{R"({"base": "h100", "kernels": {"gemm": {"bf16": [
          {"m": 1, "fixed_us": 4, "bandwidth_efficiency": 1.5,
           "source": "s"}]}}})",
                 "kernels.gemm.bf16[0].bandwidth_efficiency"},
        BadCurve{R"({"base": "h100", "kernels": {"gemm": {"bf16": [
          {"m": 0, "fixed_us": 4, "bandwidth_efficiency": 0.5,
           "source": "s"}]}}})",
                 "kernels.gemm.bf16[0].m"},
        BadCurve{R"({"base": "h100", "kernels": {"gemm": {"bf16": [
          {"m": 1, "fixed_us": -1, "bandwidth_efficiency": 0.5,
           "source": "s"}]}}})",
                 "kernels.gemm.bf16[0].fixed_us"},
        BadCurve{R"({"base": "h100", "kernels": {"gemm": {"bf16": [
          {"m": 1, "fixed_us": 1, "bandwidth_efficiency": 0.5}]}}})",
                 "kernels.gemm.bf16[0]"},
        BadCurve{R"({"base": "h100", "kernels": {"gemm": {"bf16": [
          {"m": 2, "fixed_us": 1, "bandwidth_efficiency": 0.5, "source": "a"},
          {"m": 2, "fixed_us": 1, "bandwidth_efficiency": 0.5,
           "source": "b"}]}}})",
                 "twice"},
        BadCurve{R"({"base": "h100", "kernels": {"attention": {"gqa": {"fp8": [
          {"m": 1, "fixed_us": 1, "bandwidth_efficiency": 0.5,
           "source": "a"}]}}}})",
                 "kernels.attention.gqa.fp8[0]"},
        BadCurve{R"({"base": "h100", "kernels": {"gemm_math": {"bf16": [
          {"m": 1024, "math_efficiency": 0, "source": "a"}]}}})",
                 "kernels.gemm_math.bf16[0].math_efficiency"},
        BadCurve{R"({"base": "h100", "collectives": {"all_reduce": {
          "latency_us": [{"gpus": 1, "bytes": 1024, "value": 3,
                          "source": "a"}]}}})",
                 "collectives.all_reduce.latency_us[0].gpus"},
        BadCurve{R"({"base": "h100", "collectives": {"all_reduce": {
          "latency_us": [{"gpus": 8, "bytes": 1024, "value": 1e999,
                          "source": "a"}]}}})",
                 "mine.json"},
        BadCurve{R"({"base": "h100", "collectives": {"all_to_all": {
          "latency_us": [{"gpus": 8, "bytes": -5, "value": 3,
                          "source": "a"}]}}})",
                 "collectives.all_to_all.latency_us[0].bytes"}));

} // namespace

// NVFP4 experts with two measured MoE kernels (CUTLASS grouped GEMM and
// trtllm-gen) take the faster at each op; MXFP4 and FP8 experts, and
// hardware with one curve, are unaffected.
TEST(KernelCurves, NVFP4ExpertsTakeTheFasterOfTwoMoEKernels) {
  Hardware hw = test::appendixAHardware();
  const int fp4 = int(DType::FP4);
  // CUTLASS: 40 us fixed, 0.8 of HBM; trtllm-gen: 20 us fixed, 0.5 of HBM.
  hw.kernels.groupedGemm[fp4].points = {{1, 40e-6, 0.8, 0}};
  KernelMix mix;
  mix.counts = {{KernelKind::Experts, 1}};
  mix.format = DType::FP4;
  mix.m = 4;
  auto cost = [&](double bytes, const KernelMix &m) {
    return kernelCost(hw, DType::FP4, 0, bytes, 0, 0, m).timeS;
  };
  double small = 8e6, large = 8e9; // 1 ms and 1 s at 8000 GB/s
  double cutlassSmall = cost(small, mix), cutlassLarge = cost(large, mix);
  EXPECT_NEAR(cutlassSmall, 40e-6 + small / (8000e9 * 0.8), 1e-12);
  hw.kernels.groupedGemmFP4TrtllmGen.points = {{1, 20e-6, 0.5, 0}};
  // Small op: trtllm-gen's lower fixed cost wins; large op: CUTLASS's
  // bandwidth.
  EXPECT_NEAR(cost(small, mix), 20e-6 + small / (8000e9 * 0.5), 1e-12);
  EXPECT_LT(cost(small, mix), cutlassSmall);
  EXPECT_NEAR(cost(large, mix), cutlassLarge, 1e-12);
  // Either kernel on request.
  KernelMix trt = mix;
  trt.fp4MoE = KernelMix::FP4MoEKernel::TrtllmGen;
  EXPECT_NEAR(cost(large, trt), 20e-6 + large / (8000e9 * 0.5), 1e-9);
  KernelMix cut = mix;
  cut.fp4MoE = KernelMix::FP4MoEKernel::GroupedGemm;
  EXPECT_NEAR(cost(small, cut), cutlassSmall, 1e-12);
  // MXFP4 experts read their own curve; FP8 experts theirs.
  hw.kernels.groupedGemmMXFP4.points = {{1, 30e-6, 0.7, 0}};
  KernelMix mx = mix;
  mx.mxfp4 = true;
  EXPECT_NEAR(cost(small, mx), 30e-6 + small / (8000e9 * 0.7), 1e-12);
  hw.kernels.groupedGemm[int(DType::FP8)].points = {{1, 35e-6, 0.9, 0}};
  KernelMix f8 = mix;
  f8.format = DType::FP8;
  EXPECT_NEAR(kernelCost(hw, DType::FP8, 0, small, 0, 0, f8).timeS,
              35e-6 + small / (8000e9 * 0.9), 1e-12);
}

TEST(KernelCurves, BlackwellPresetsCarryTheTrtllmGenMoECurve) {
  // aiconfigurator measures trtllm-gen's NVFP4 MoE on B200 and GB200 (its
  // min-latency grid), not on GB300 or Hopper.
  for (const char *p : {"b200", "gb200-nvl72"}) {
    Hardware hw = test::presetHardware(p);
    EXPECT_FALSE(hw.kernels.groupedGemmFP4TrtllmGen.empty()) << p;
    bool sourced = false;
    for (const auto &[path, source] : hw.sources)
      if (path.rfind("kernels.grouped_gemm.fp4_trtllm_gen", 0) == 0)
        sourced |=
            source.find("moe_torch_flow_min_latency") != std::string::npos;
    EXPECT_TRUE(sourced) << p;
  }
  for (const char *p : {"gb300-nvl72", "h100", "h200"})
    EXPECT_TRUE(test::presetHardware(p).kernels.groupedGemmFP4TrtllmGen.empty())
        << p;
}
