//===- EngineProfileTest.cpp - Per-engine kernel curves over a preset -----===//

#include "helix/Cost/EngineProfile.h"
#include "helix/Cost/Evaluate.h"
#include "helix/Cost/Hardware.h"

#include "PaperModels.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace helix;

namespace {

double fp4MoEFixedUs(const Hardware &hw) {
  return hw.kernels.gemmFor(DType::FP4, /*grouped=*/true).at(1).fixedS * 1e6;
}

TEST(EngineProfile, EnginesAndTheirPresets) {
  const std::vector<std::string> &engines = listEngineProfiles();
  EXPECT_EQ(engines, (std::vector<std::string>{"trtllm", "vllm", "sglang"}));
  // The profiles cover the GPUs whose kernel tables the engines publish.
  for (const char *e : {"vllm", "sglang"})
    EXPECT_EQ(engineProfilePresets(e),
              (std::vector<std::string>{"b200", "h100", "h200"}))
        << e;
  EXPECT_TRUE(engineProfilePresets("trtllm").empty());
}

TEST(EngineProfile, ReplacesTheCurvesItMeasuresAndKeepsTheRest) {
  Hardware neutral, sglang;
  std::string error, note;
  ASSERT_TRUE(loadHardware("b200", neutral, error)) << error;
  ASSERT_TRUE(loadHardware("b200", sglang, error)) << error;
  ASSERT_TRUE(applyEngineProfile("sglang", sglang, note, error)) << error;
  EXPECT_EQ(sglang.engineProfile, "sglang");
  EXPECT_EQ(sglang.name, neutral.name + " (sglang profile)");
  EXPECT_NE(note.find("sglang-b200.json"), std::string::npos) << note;
  // SGLang's NVFP4 MoE (FlashInfer's trtllm-gen kernel) is measured
  // faster at one token than TensorRT-LLM's CUTLASS one the preset holds.
  EXPECT_LT(fp4MoEFixedUs(sglang), fp4MoEFixedUs(neutral));
  // Its all-reduce is its own.
  const auto &ar = sglang.collective(CollectiveKind::AllReduce).measured;
  const auto &arNeutral =
      neutral.collective(CollectiveKind::AllReduce).measured;
  ASSERT_FALSE(ar.empty());
  ASSERT_FALSE(arNeutral.empty());
  EXPECT_NE(ar.front().seconds, arNeutral.front().seconds);
  // What profiles do not hold stays: the GPU's figures and NCCL's
  // collectives.
  EXPECT_EQ(sglang.hbmBandwidth, neutral.hbmBandwidth);
  EXPECT_EQ(sglang.nvlinkBandwidth, neutral.nvlinkBandwidth);
  EXPECT_EQ(sglang.collective(CollectiveKind::AllToAll).measured.size(),
            neutral.collective(CollectiveKind::AllToAll).measured.size());
  // And every replaced figure carries its source.
  bool sourced = false;
  for (const auto &[path, source] : sglang.sources)
    if (path.rfind("kernels.grouped_gemm.fp4", 0) == 0)
      sourced |= source.find("moe/sglang/") != std::string::npos;
  EXPECT_TRUE(sourced);
}

TEST(EngineProfile, PresetSpecWithEngine) {
  Hardware viaSpec, applied;
  std::string error, note;
  ASSERT_TRUE(loadHardware("h200+vllm", viaSpec, error)) << error;
  ASSERT_TRUE(loadHardware("h200", applied, error)) << error;
  ASSERT_TRUE(applyEngineProfile("vllm", applied, note, error)) << error;
  EXPECT_EQ(viaSpec.engineProfile, "vllm");
  EXPECT_EQ(viaSpec.name, applied.name);
  // The same model priced both ways agrees exactly.
  ModelSpec model = paper::llama405B();
  Workload w;
  w.context = 65536;
  w.precision = {DType::FP8, DType::FP8, DType::FP8};
  Config c;
  c.strategy = Strategy::TP;
  c.gpus = 8;
  c.batch = 8;
  c.layout = {1, 8, 8, 1};
  Evaluation a = evaluate(model, viaSpec, w, c);
  Evaluation b = evaluate(model, applied, w, c);
  ASSERT_TRUE(a.valid()) << a.error;
  EXPECT_EQ(a.ttlS, b.ttlS);
  Hardware neutral;
  ASSERT_TRUE(loadHardware("h200", neutral, error));
  EXPECT_NE(a.ttlS, evaluate(model, neutral, w, c).ttlS);
  // trtllm: the presets' own curves.
  Hardware trt;
  ASSERT_TRUE(loadHardware("h200+trtllm", trt, error)) << error;
  EXPECT_EQ(trt.engineProfile, "trtllm");
  EXPECT_EQ(evaluate(model, trt, w, c).ttlS,
            evaluate(model, neutral, w, c).ttlS);
}

TEST(EngineProfile, RefusesWhatItCannotApply) {
  Hardware hw;
  std::string error, note;
  // A preset the profile has no tables for is an error through the spec,
  // and a note (the preset's curves stay) through the function.
  EXPECT_FALSE(loadHardware("gb200-nvl72+vllm", hw, error));
  EXPECT_NE(error.find("the vllm profile has no curves for gb200-nvl72 (it "
                       "covers b200, h100, h200)"),
            std::string::npos)
      << error;
  error.clear();
  ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error)) << error;
  ASSERT_TRUE(applyEngineProfile("vllm", hw, note, error)) << error;
  EXPECT_TRUE(hw.engineProfile.empty());
  EXPECT_NE(note.find("the preset's curves stay"), std::string::npos);
  // An unknown engine.
  error.clear();
  EXPECT_FALSE(applyEngineProfile("tgi", hw, note, error));
  EXPECT_NE(error.find("unknown engine 'tgi'"), std::string::npos) << error;
  // An unknown engine suffix is no spec: the name is looked up whole.
  error.clear();
  EXPECT_FALSE(loadHardware("b200+tgi", hw, error));
  EXPECT_NE(error.find("unknown hardware 'b200+tgi'"), std::string::npos)
      << error;
}

} // namespace
