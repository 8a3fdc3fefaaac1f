//===- PaperModelsTest.cpp - Hand-built specs against the importer --------===//
//
// The benchmarks and these tests build the paper's models by hand; the
// importer reads the published configs. Both must price identically.
//
//===----------------------------------------------------------------------===//

#include "helix/Cost/Evaluate.h"
#include "helix/Import/HFConfig.h"

#include "PaperModels.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

void expectSamePrice(const char *file, const ModelSpec &hand, Config c) {
  ModelSpec imported;
  std::string error;
  ASSERT_TRUE(importHFConfigFile(std::string(HELIX_SOURCE_DIR) +
                                     "/test/Inputs/models/" + file,
                                 ImportOptions{}, imported, error))
      << error;
  EXPECT_EQ(imported.parameterCount(), hand.parameterCount());
  EXPECT_EQ(imported.activeParameterCount(), hand.activeParameterCount());
  Hardware hw;
  ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error)) << error;
  Evaluation a = evaluate(imported, hw, Workload(), c);
  Evaluation b = evaluate(hand, hw, Workload(), c);
  ASSERT_TRUE(a.valid()) << a.error;
  ASSERT_TRUE(b.valid()) << b.error;
  EXPECT_DOUBLE_EQ(a.ttlS, b.ttlS);
  EXPECT_DOUBLE_EQ(a.memoryPerGPUBytes, b.memoryPerGPUBytes);
}

TEST(PaperModels, DeepSeekR1MatchesImporter) {
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.kvp = 32;
  c.layout.tpf = 4;
  c.layout.ep = 8;
  c.batch = 16;
  expectSamePrice("DeepSeek-R1.json", paper::deepSeekR1(), c);
}

TEST(PaperModels, Llama405BMatchesImporter) {
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.kvp = 4;
  c.layout.tpa = 8;
  c.layout.tpf = 32;
  c.batch = 16;
  expectSamePrice("Llama-3.1-405B.json", paper::llama405B(), c);
}

} // namespace
