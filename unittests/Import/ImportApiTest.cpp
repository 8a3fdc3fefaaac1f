//===- ImportApiTest.cpp - Options, defaults and robustness of the API ----===//

#include "ImportTestUtil.h"

#include <fstream>
#include <random>
#include <sstream>

namespace helix {
namespace {

using testing::inputPath;

const char *const kTinyLlama = R"({
  "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
  "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 256,
  "max_position_embeddings": 128
})";

/// kTinyLlama with `extra` fields added (a JSON fragment, no braces).
std::string tinyLlamaWith(const std::string &extra,
                          const char *type = "llama") {
  std::string s = kTinyLlama;
  s.replace(s.find("\"llama\""), 7, std::string("\"") + type + "\"");
  return s.substr(0, s.rfind('}')) + ", " + extra + "}";
}

bool importText(const std::string &text, ModelSpec &m, std::string &error,
                const ImportOptions &opts = ImportOptions()) {
  return importHFConfigString(text, "cfg/Test-Model.json", opts, m, error);
}

ModelSpec mustImport(const std::string &text) {
  ModelSpec m;
  std::string error;
  EXPECT_TRUE(importText(text, m, error)) << error;
  return m;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ImportApi, SupportedModelTypes) {
  const std::vector<std::string> &types = supportedModelTypes();
  EXPECT_EQ(types, (std::vector<std::string>{
                       "llama",       "mistral",      "qwen2",
                       "qwen3",       "qwen3_moe",    "mixtral",
                       "deepseek_v2", "deepseek_v3",  "kimi_k2",
                       "gpt_oss",     "deepseek_v32", "glm_moe_dsa",
                       "qwen3_next",  "qwen3_5_text", "qwen3_5_moe_text",
                       "kimi_linear", "nemotron_h",   "qwen3_5",
                       "qwen3_5_moe", "kimi_k3",      "kimi_k25"}));
}

TEST(ImportApi, NameFromSourceOrOption) {
  ModelSpec m = mustImport(kTinyLlama);
  EXPECT_EQ(m.name, "Test-Model");
  ImportOptions opts;
  opts.name = "mine";
  std::string error;
  ASSERT_TRUE(importText(kTinyLlama, m, error, opts)) << error;
  EXPECT_EQ(m.name, "mine");
  ASSERT_TRUE(importHFConfigString(kTinyLlama, "", ImportOptions(), m, error));
  EXPECT_EQ(m.name, "llama");
}

TEST(ImportApi, ErrorsNameTheSource) {
  ModelSpec m;
  std::string error;
  EXPECT_FALSE(importText("{}", m, error));
  EXPECT_EQ(error.rfind("cfg/Test-Model.json: model_type: ", 0), 0u) << error;
  EXPECT_FALSE(importHFConfigString("[]", "", ImportOptions(), m, error));
  EXPECT_EQ(error.rfind("<input>: <json>: ", 0), 0u) << error;
}

TEST(ImportApi, StringAndFileAgree) {
  std::string path = inputPath("models/Qwen3-235B-A22B.json");
  ModelSpec fromFile, fromString;
  std::string error;
  ASSERT_TRUE(importHFConfigFile(path, ImportOptions(), fromFile, error));
  ASSERT_TRUE(importHFConfigString(readFile(path), path, ImportOptions(),
                                   fromString, error));
  EXPECT_EQ(fromFile.name, fromString.name);
  EXPECT_EQ(fromFile.parameterCount(), fromString.parameterCount());
}

TEST(ImportApi, Defaults) {
  ModelSpec m = mustImport(kTinyLlama);
  const AttentionSpec &a = m.layers[0].attention;
  EXPECT_EQ(a.numKVHeads, 4); // absent: = num_attention_heads
  EXPECT_EQ(a.kind, AttentionKind::MHA);
  EXPECT_EQ(a.headDim, 16);
  EXPECT_EQ(a.rope.theta, 10000.0);
  EXPECT_EQ(a.rope.scaling, "");
  EXPECT_FALSE(m.tieWordEmbeddings);
  EXPECT_EQ(m.checkpointDType, "bfloat16");
  EXPECT_EQ(m.quantMethod, "");
  EXPECT_EQ(m.layers[0].ffn.activation, "silu");
}

TEST(ImportApi, NullMeansAbsent) {
  ModelSpec m = mustImport(tinyLlamaWith(
      R"("num_key_value_heads": null, "head_dim": null, "rope_scaling": null,
         "quantization_config": null, "torch_dtype": null)"));
  EXPECT_EQ(m.layers[0].attention.numKVHeads, 4);
  EXPECT_EQ(m.layers[0].attention.headDim, 16);
}

TEST(ImportApi, DTypeAndQuantization) {
  ModelSpec m = mustImport(tinyLlamaWith(
      R"("dtype": "float16", "torch_dtype": "float32",
         "quantization_config": {"quant_method": "awq", "bits": 4})"));
  EXPECT_EQ(m.checkpointDType, "float16"); // "dtype" wins
  EXPECT_EQ(m.quantMethod, "awq");
}

TEST(ImportApi, RopeVariants) {
  ModelSpec m = mustImport(
      tinyLlamaWith(R"("rope_scaling": {"type": "linear", "factor": 4.0})"));
  EXPECT_EQ(m.layers[0].attention.rope.scaling, "linear");
  EXPECT_EQ(m.layers[0].attention.rope.factor, 4.0);
  m = mustImport(tinyLlamaWith(R"("rope_scaling": {"rope_type": "default"})"));
  EXPECT_EQ(m.layers[0].attention.rope.scaling, "");
  m = mustImport(tinyLlamaWith(R"("rope_scaling": {"rope_type": "dynamic",
      "factor": 2}, "rope_theta": 1e6)"));
  EXPECT_EQ(m.layers[0].attention.rope.scaling, "dynamic");
  EXPECT_EQ(m.layers[0].attention.rope.theta, 1e6);
  m = mustImport(tinyLlamaWith(R"("rope_scaling": {"rope_type": "yarn",
      "factor": 4})"));
  const RopeSpec &yarn = m.layers[0].attention.rope;
  EXPECT_EQ(yarn.betaFast, 32.0); // Hugging Face defaults
  EXPECT_EQ(yarn.betaSlow, 1.0);
  EXPECT_EQ(yarn.originalMaxPosition, 128);
  m = mustImport(tinyLlamaWith(R"("rope_scaling": {"rope_type": "longrope",
      "long_factor": [1.0], "short_factor": [1.0]})"));
  EXPECT_EQ(m.layers[0].attention.rope.scaling, "longrope");
  // transformers >= 5 spelling.
  m = mustImport(tinyLlamaWith(R"("rope_parameters": {"rope_type": "linear",
      "factor": 2.0, "rope_theta": 5e5})"));
  EXPECT_EQ(m.layers[0].attention.rope.scaling, "linear");
  EXPECT_EQ(m.layers[0].attention.rope.theta, 5e5);
}

TEST(ImportApi, QwenLayerTypesOverrideMaxWindowLayers) {
  ModelSpec m = mustImport(tinyLlamaWith(
      R"("use_sliding_window": true, "sliding_window": 8,
         "max_window_layers": 0,
         "layer_types": ["sliding_attention", "full_attention"])",
      "qwen3"));
  EXPECT_EQ(m.layers[0].attention.slidingWindow, 8);
  EXPECT_EQ(m.layers[1].attention.slidingWindow, 0);
  // Without use_sliding_window the window is ignored (Hugging Face).
  m = mustImport(tinyLlamaWith(
      R"("sliding_window": 8, "layer_types": ["sliding_attention",
         "sliding_attention"])",
      "qwen2"));
  EXPECT_EQ(m.layers[0].attention.slidingWindow, 0);
}

TEST(ImportApi, MistralWithoutWindowIsFull) {
  ModelSpec m = mustImport(tinyLlamaWith(R"("head_dim": 8)", "mistral"));
  EXPECT_EQ(m.layers[0].attention.slidingWindow, 0);
  EXPECT_EQ(m.layers[0].attention.headDim, 8);
}

TEST(ImportApi, DeepNestingInsideStringsIsFine) {
  std::string deep(200, '[');
  ModelSpec m = mustImport(tinyLlamaWith("\"note\": \"" + deep + "\""));
  EXPECT_EQ(m.numLayers(), 2);
}

/// Every prefix and many random byte edits of the test configs either import
/// or fail with one line naming the source; nothing crashes or throws.
TEST(ImportApi, CorruptedInputsNeverCrash) {
  std::mt19937 rng(1234);
  const char *const files[] = {"tiny-deepseek.json", "tiny-gpt-oss.json",
                               "tiny-qwen3-moe.json", "tiny-qwen2-swa.json"};
  const char kBytes[] = "{}[]\",:0123456789-.e nulltruefalse\n\xff\\";
  int failures = 0;
  for (const char *file : files) {
    std::string text = readFile(inputPath(std::string("models/") + file));
    ASSERT_FALSE(text.empty());
    std::vector<std::string> variants;
    for (size_t n = 0; n < text.size(); ++n)
      variants.push_back(text.substr(0, n));
    for (int i = 0; i < 1500; ++i) {
      std::string v = text;
      for (int edits = 1 + rng() % 3; edits > 0; --edits)
        v[rng() % v.size()] = kBytes[rng() % (sizeof(kBytes) - 1)];
      variants.push_back(v);
    }
    for (const std::string &v : variants) {
      ModelSpec m;
      std::string error;
      bool ok = importHFConfigString(v, "fuzz.json", ImportOptions(), m, error);
      if (ok) {
        EXPECT_EQ(error, "");
        EXPECT_GT(m.numLayers(), 0);
        continue;
      }
      ++failures;
      EXPECT_EQ(error.rfind("fuzz.json: ", 0), 0u) << error;
      EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    }
  }
  EXPECT_GT(failures, 0);
}

} // namespace
} // namespace helix
