//===- RealConfigTest.cpp - Published config.json files, when present -----===//
//
// Imports the real Hugging Face configs committed in test/Inputs/models
// (or those of $HELIX_HF_MODELS_DIR, another folder of real configs) and
// checks the published sizes of the ones it knows.
//
//===----------------------------------------------------------------------===//

#include "ImportTestUtil.h"

#include <cstdlib>
#include <filesystem>

namespace helix {
namespace {

using testing::near;

struct Published {
  const char *file;
  int64_t layers, moeLayers;
  double total, totalTol;   // parameters, relative tolerance
  double active, activeTol; // 0: not checked
};

const Published kPublished[] = {
    // (Names as committed in test/Inputs/models, and as the upstream
    // repositories name them.)
    {"DeepSeek-R1.json", 61, 58, 671e9, 0.01, 37e9, 0.05},
    {"Kimi-K2.json", 61, 60, 1.03e12, 0.02, 32e9, 0.05},
    {"Llama-3.1-405B.json", 126, 0, 405.8e9, 0.003, 0, 0},
    {"Llama-3.1-70B.json", 80, 0, 70.6e9, 0.01, 0, 0},
    {"Llama-3.1-8B.json", 32, 0, 8.03e9, 0.01, 0, 0},
    {"Mixtral-8x7B.json", 32, 32, 46.7e9, 0.01, 12.9e9, 0.01},
    {"DeepSeek-V3.json", 61, 58, 671e9, 0.01, 37e9, 0.05},
    {"DeepSeek-V2-Lite.json", 27, 26, 15.7e9, 0.01, 0, 0},
    {"Kimi-K2-Instruct.json", 61, 60, 1.03e12, 0.02, 32e9, 0.05},
    {"Meta-Llama-3.1-405B.json", 126, 0, 405.8e9, 0.003, 0, 0},
    {"Meta-Llama-3.1-70B.json", 80, 0, 70.6e9, 0.01, 0, 0},
    {"Meta-Llama-3.1-8B.json", 32, 0, 8.03e9, 0.01, 0, 0},
    {"Mixtral-8x22B-v0.1.json", 56, 56, 141e9, 0.01, 39e9, 0.015},
    {"Mixtral-8x7B-v0.1.json", 32, 32, 46.7e9, 0.01, 12.9e9, 0.01},
    {"Qwen2.5-72B.json", 80, 0, 72.7e9, 0.01, 0, 0},
    {"Qwen3-235B-A22B.json", 94, 94, 235e9, 0.01, 22e9, 0.02},
    {"gpt-oss-120b.json", 36, 36, 116.8e9, 0.01, 0, 0},
    {"TinyLlama-1.1B-Chat-v1.0.json", 22, 0, 1.1e9, 0.01, 0, 0},
    // The long-context models of 2026, as their model cards quote them
    // (DeepSeek-V3.2's 685B and Qwen3.5's 397B count the MTP module and,
    // for Qwen3.5, the vision encoder; helix counts the language model).
    {"DeepSeek-V3.2.json", 61, 58, 671e9, 0.01, 37e9, 0.05},
    {"GLM-5-NVFP4.json", 78, 75, 744e9, 0.01, 40e9, 0.05},
    {"Qwen3.5-397B-A17B.json", 60, 60, 397e9, 0.01, 17e9, 0.03},
    {"Kimi-K3.json", 93, 92, 2.78e12, 0.01, 0, 0},
    {"Nemotron-3-Super-120B-A12B-FP8.json", 88, 40, 120e9, 0.01, 12e9, 0.07},
};

std::string modelsDir() {
  const char *env = std::getenv("HELIX_HF_MODELS_DIR");
  return env && *env ? env : HELIX_SOURCE_DIR "/test/Inputs/models";
}

TEST(RealConfigs, PublishedSizes) {
  namespace fs = std::filesystem;
  std::string dir = modelsDir();
  if (!fs::is_directory(dir))
    GTEST_SKIP() << dir << " does not exist";
  int checked = 0;
  for (const Published &p : kPublished) {
    std::string path = dir + "/" + p.file;
    if (!fs::exists(path))
      continue;
    ++checked;
    SCOPED_TRACE(p.file);
    ModelSpec m;
    std::string error;
    ASSERT_TRUE(importHFConfigFile(path, ImportOptions(), m, error)) << error;
    EXPECT_EQ(m.numLayers(), p.layers);
    EXPECT_EQ(m.numMoELayers(), p.moeLayers);
    EXPECT_TRUE(near(m.parameterCount(), p.total, p.totalTol));
    if (p.active > 0) {
      EXPECT_TRUE(near(m.activeParameterCount(), p.active, p.activeTol));
    }
  }
  EXPECT_GT(checked, 0) << "no config of known size in " << dir;
}

TEST(RealConfigs, AllImport) {
  namespace fs = std::filesystem;
  std::string dir = modelsDir();
  if (!fs::is_directory(dir))
    GTEST_SKIP() << dir << " does not exist";
  int count = 0;
  for (const fs::directory_entry &e : fs::directory_iterator(dir)) {
    // ModelOpt's hf_quant_config.json files sit beside their configs.
    if (e.path().extension() != ".json" ||
        e.path().string().find("hf_quant_config") != std::string::npos)
      continue;
    ++count;
    ModelSpec m;
    std::string error;
    EXPECT_TRUE(
        importHFConfigFile(e.path().string(), ImportOptions(), m, error))
        << error;
  }
  EXPECT_GT(count, 0);
}

TEST(RealConfigs, GptOssLayerTypesAlternate) {
  std::string path = modelsDir() + "/gpt-oss-120b.json";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " does not exist";
  ModelSpec m;
  std::string error;
  ASSERT_TRUE(importHFConfigFile(path, ImportOptions(), m, error)) << error;
  for (const LayerSpec &l : m.layers)
    EXPECT_EQ(l.attention.slidingWindow, l.index % 2 == 0 ? 128 : 0);
}

} // namespace
} // namespace helix
