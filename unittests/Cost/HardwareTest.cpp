//===- HardwareTest.cpp - Presets and hardware JSON loading ---------------===//

#include "helix/Cost/Hardware.h"
#include "helix/Cost/Evaluate.h"

#include "PaperModels.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <fstream>

using namespace helix;

namespace {

std::string writeTemp(const std::string &name, const std::string &text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Hardware, PresetsAreListedAndLoad) {
  std::vector<std::string> names = listHardwarePresets();
  for (const char *want :
       {"b200", "gb200-nvl72", "gb300-nvl72", "h100", "h200"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  EXPECT_STREQ(defaultHardwareName(), "gb200-nvl72");
  for (const std::string &n : names) {
    Hardware hw;
    std::string error;
    EXPECT_TRUE(loadHardware(n, hw, error)) << error;
    EXPECT_EQ(hw.name, n);
    EXPECT_FALSE(hw.sources.empty());
    for (const auto &s : hw.sources)
      EXPECT_FALSE(s.second.empty()) << s.first;
  }
}

TEST(Hardware, GB200Figures) {
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error)) << error;
  EXPECT_DOUBLE_EQ(hw.peak(DType::FP4), 10e15);
  EXPECT_DOUBLE_EQ(hw.peak(DType::FP8), 5e15);
  EXPECT_DOUBLE_EQ(hw.peak(DType::BF16), 2.5e15);
  EXPECT_DOUBLE_EQ(hw.hbmCapacityBytes, 186e9);
  EXPECT_DOUBLE_EQ(hw.hbmBandwidth, 8e12);
  EXPECT_DOUBLE_EQ(hw.nvlinkBandwidth, 900e9);
  EXPECT_EQ(hw.nvlinkDomain, 72);
  EXPECT_DOUBLE_EQ(hw.scaleOutBandwidth, 50e9);
  // All-reduce alpha: measured at 2 and 4 GPUs, extended in log2(n).
  const CollectiveParams &ar = hw.collective(CollectiveKind::AllReduce);
  EXPECT_NEAR(ar.alpha(2), 3.8e-6, 1e-12);
  EXPECT_NEAR(ar.alpha(4), 4.7e-6, 1e-12);
  EXPECT_NEAR(ar.alpha(8), 5.6e-6, 1e-12);
  EXPECT_NEAR(ar.alpha(64), 8.3e-6, 1e-12);
  EXPECT_NEAR(ar.alpha(1), 3.8e-6, 1e-12);
  // One measured point: constant.
  const CollectiveParams &a2a = hw.collective(CollectiveKind::AllToAll);
  EXPECT_NEAR(a2a.alpha(2), 10.7e-6, 1e-12);
  EXPECT_NEAR(a2a.alpha(64), 10.7e-6, 1e-12);
}

TEST(Hardware, HopperHasNoFP4Arithmetic) {
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware("h100", hw, error)) << error;
  EXPECT_FALSE(hw.supports(DType::FP4));
  EXPECT_TRUE(hw.supports(DType::FP8));
  ModelSpec model = paper::llama405B();
  Workload w; // FP4 arithmetic
  Config c;
  c.strategy = Strategy::TP;
  c.layout.tpa = c.layout.tpf = 8;
  std::string why = validateConfig(model, hw, w, c);
  EXPECT_NE(why.find("no fp4 arithmetic"), std::string::npos) << why;
  // FP4 storage with FP8 arithmetic is fine.
  w.precision.compute = DType::FP8;
  EXPECT_EQ(validateConfig(model, hw, w, c), "");
}

TEST(Hardware, UnknownNameListsPresets) {
  Hardware hw;
  std::string error;
  EXPECT_FALSE(loadHardware("gb9000", hw, error));
  EXPECT_NE(error.find("unknown hardware 'gb9000'"), std::string::npos);
  EXPECT_NE(error.find("gb200-nvl72"), std::string::npos);
}

TEST(Hardware, MalformedJSONNamesFile) {
  std::string path = writeTemp("bad.json", "{ \"name\": ");
  Hardware hw;
  std::string error;
  EXPECT_FALSE(loadHardware(path, hw, error));
  EXPECT_EQ(error.find(path), 0u) << error;
  EXPECT_NE(error.find("not valid JSON"), std::string::npos) << error;
}

TEST(Hardware, MissingFieldNamesFileAndField) {
  std::string text = hardwarePresetJSON("gb200-nvl72");
  size_t at = text.find("\"hbm_bandwidth_tb_per_s\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 24, "\"hbm_bandwidth_typo\"");
  std::string path = writeTemp("missing.json", text);
  Hardware hw;
  std::string error;
  EXPECT_FALSE(loadHardware(path, hw, error));
  EXPECT_EQ(error, path + ": field 'memory.hbm_bandwidth_tb_per_s' is missing");
}

TEST(Hardware, FigureWithoutSourceIsRejected) {
  std::string text = hardwarePresetJSON("gb200-nvl72");
  size_t at = text.find("\"hbm_capacity_gb\"");
  ASSERT_NE(at, std::string::npos);
  size_t end = text.find('}', at);
  text.replace(at, end - at + 1, "\"hbm_capacity_gb\": {\"value\": 186}");
  Hardware hw;
  std::string error;
  EXPECT_FALSE(parseHardwareJSON(text, "mine.json", hw, error));
  EXPECT_EQ(error, "mine.json: field 'memory.hbm_capacity_gb' must be an "
                   "object {\"value\": ..., \"source\": ...}");
}

TEST(Hardware, BadValueNamesField) {
  std::string text = hardwarePresetJSON("gb200-nvl72");
  size_t at = text.find("\"value\": 186.0");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 14, "\"value\": \"lots\"");
  Hardware hw;
  std::string error;
  EXPECT_FALSE(parseHardwareJSON(text, "x.json", hw, error));
  EXPECT_EQ(error, "x.json: field 'memory.hbm_capacity_gb.value' must be a "
                   "number");
}

TEST(Hardware, ScaleOutFiguresComeTogether) {
  // A crossing latency without the NIC's achieved share (or the reverse)
  // is refused, naming the missing field; a share above 1 too.
  std::string text = hardwarePresetJSON("h100");
  size_t at = text.find("\"scale_out_efficiency\"");
  ASSERT_NE(at, std::string::npos);
  std::string without = text;
  without.replace(at, std::string("\"scale_out_efficiency\"").size(),
                  "\"scale_out_efficiency_x\"");
  Hardware hw;
  std::string error;
  // An unknown key is ignored, so the efficiency is now missing.
  EXPECT_FALSE(parseHardwareJSON(without, "x.json", hw, error));
  EXPECT_EQ(error, "x.json: field 'interconnect.scale_out_efficiency' is "
                   "missing: scale_out_latency_us and scale_out_efficiency "
                   "are given together (or neither)");
  std::string above = text;
  size_t v = above.find("\"value\": 0.86", at);
  ASSERT_NE(v, std::string::npos);
  above.replace(v, 13, "\"value\": 1.5");
  EXPECT_FALSE(parseHardwareJSON(above, "x.json", hw, error));
  EXPECT_EQ(error, "x.json: field 'interconnect.scale_out_efficiency.value' "
                   "must be a fraction in (0, 1]");
  std::string badRound = text;
  size_t d = badRound.find("{\"domains\": 2");
  ASSERT_NE(d, std::string::npos);
  badRound.replace(d, 13, "{\"domains\": 0");
  EXPECT_FALSE(parseHardwareJSON(badRound, "x.json", hw, error));
  EXPECT_NE(error.find("x.json: field "
                       "'interconnect.scale_out_latency_us[0].domains' must "
                       "be an integer"),
            std::string::npos)
      << error;
  ASSERT_TRUE(parseHardwareJSON(text, "h100.json", hw, error)) << error;
  EXPECT_EQ(hw.scaleOutLatencyS.size(), 3u);
  EXPECT_DOUBLE_EQ(hw.scaleOutEfficiency, 0.86);
}

TEST(Hardware, ErrorsQuotingTheFileStayOneLine) {
  // Found by fuzz/ (helix-fuzz-hardware): a key or a base name with a
  // newline split the error message.
  Hardware hw;
  std::string error;
  EXPECT_FALSE(
      parseHardwareJSON(R"({"base": "gb\n200"})", "x.json", hw, error));
  EXPECT_EQ(error, "x.json: field 'base' names no preset ('gb\\n200')");
  EXPECT_FALSE(
      parseHardwareJSON(R"({"base": "gb200-nvl72", "memo\nry": {"v": 1e999}})",
                        "x.json", hw, error));
  EXPECT_EQ(error, "x.json: field 'memo\\nry.v': number 1e999 is outside "
                   "the range of a double (about 1.8e308)");
}

TEST(Hardware, UserFileOverridesBasePreset) {
  std::string path = writeTemp("mine.json",
                               R"({"base": "gb200-nvl72", "name": "gb200-slow",
          "memory": {"hbm_bandwidth_tb_per_s":
                     {"value": 4.0, "source": "what-if"}}})");
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware(path, hw, error)) << error;
  EXPECT_EQ(hw.name, "gb200-slow");
  EXPECT_DOUBLE_EQ(hw.hbmBandwidth, 4e12);
  EXPECT_DOUBLE_EQ(hw.hbmCapacityBytes, 186e9);
  bool found = false;
  for (const auto &s : hw.sources)
    found |=
        s.first == "memory.hbm_bandwidth_tb_per_s" && s.second == "what-if";
  EXPECT_TRUE(found);
}

} // namespace
