//===- BadInputTest.cpp - Every test/Inputs/bad file fails clearly --------===//
//
// The table mirrors test/Inputs/bad/README.md: each file must fail with one
// line that starts with its path and contains the expected fragment.
//
//===----------------------------------------------------------------------===//

#include "ImportTestUtil.h"

#include <filesystem>
#include <set>

namespace helix {
namespace {

using testing::inputPath;

struct BadCase {
  const char *file;
  const char *fragment;
};

const BadCase kBadCases[] = {
    // The file itself.
    {"does-not-exist.json", "<file>: no such file"},
    {"directory.json", "<file>: is a directory"},
    {"empty.json", "<json>: the file is empty"},
    {"whitespace-only.json", "<json>: the file is empty"},
    {"malformed-json.json", "<json>: malformed JSON at line 3, column 21"},
    {"truncated-json.json", "<json>: malformed JSON at line 5"},
    {"trailing-garbage.json", "expected end of input"},
    {"invalid-utf8.json", "ill-formed UTF-8"},
    {"deep-nesting.json", "<json>: nested deeper than 64 levels"},
    {"top-level-array.json", "<json>: expected a JSON object at the top level, "
                             "got an array"},
    {"top-level-string.json", "at the top level, got string \"llama\""},
    // model_type.
    {"missing-model-type.json",
     "model_type: missing required field, expected one of: llama,"},
    {"model-type-not-string.json",
     "model_type: expected a non-empty string, got 7"},
    {"unknown-model-type.json",
     "model_type: unsupported model type \"gemma2\", expected one of: llama, "
     "mistral, qwen2, qwen3, qwen3_moe, mixtral, deepseek_v2, deepseek_v3, "
     "kimi_k2, gpt_oss, deepseek_v32, glm_moe_dsa, qwen3_next, qwen3_5_text, "
     "qwen3_5_moe_text, kimi_linear, nemotron_h, qwen3_5, qwen3_5_moe, "
     "kimi_k3, kimi_k25"},
    // Types and ranges of single fields.
    {"missing-hidden-size.json", "hidden_size: missing required field"},
    {"null-hidden-size.json", "hidden_size: expected a positive integer, got "
                              "null"},
    {"string-for-integer.json",
     "hidden_size: expected a positive integer, got string \"4096\""},
    {"float-for-integer.json",
     "hidden_size: expected a positive integer, got 4096.5"},
    {"bool-for-integer.json",
     "num_hidden_layers: expected a positive integer, got true"},
    {"huge-integer.json", "hidden_size: expected a positive integer, got 9."},
    {"number-overflow.json", "<json>: field 'hidden_size': number 1e999 is "
                             "outside the range of a double"},
    {"zero-layers.json", "num_hidden_layers: expected a positive integer, got "
                         "0"},
    {"negative-heads.json",
     "num_attention_heads: expected a positive integer, got -8"},
    {"too-many-layers.json", "num_hidden_layers: expected at most 65536"},
    {"unreasonable-vocab.json", "vocab_size: unreasonably large value "
                                "2199023255552 (the limit is 2^40)"},
    {"zero-head-dim.json", "head_dim: expected a positive integer, got 0"},
    {"wrong-type-bool.json",
     "tie_word_embeddings: expected true or false, got string \"yes\""},
    {"dtype-not-string.json", "torch_dtype: expected a non-empty string"},
    {"quantization-config-not-object.json",
     "quantization_config: expected an object or null, got string"},
    {"quantization-fp8-block-size-64.json",
     "quantization_config.weight_block_size: expected [128, 128]"},
    {"quantization-fp8-fmt-e5m2.json",
     "quantization_config.fmt: expected \"e4m3\", got \"e5m2\""},
    {"quantization-modelopt-unknown-algo.json",
     "quantization_config.quant_algo: unknown \"W4A8_AWQ\" (expected FP8 or "
     "NVFP4)"},
    {"quantization-quant-method-missing.json",
     "quantization_config.quant_method: missing required field"},
    {"negative-rope-theta.json", "rope_theta: expected a positive number, got "
                                 "-1"},
    {"dense-missing-intermediate.json",
     "intermediate_size: missing required field"},
    // Attention shape.
    {"kv-heads-not-dividing.json",
     "num_key_value_heads: 6 does not divide num_attention_heads = 32"},
    {"kv-heads-exceed-heads.json",
     "num_key_value_heads: 8 exceeds num_attention_heads = 4"},
    {"head-dim-not-derivable.json",
     "num_attention_heads: hidden_size = 100 is not divisible by 3 heads"},
    // RoPE.
    {"rope-scaling-not-object.json",
     "rope_scaling: expected an object or null, got 8.0"},
    {"rope-scaling-unknown-type.json",
     "rope_scaling.rope_type: unknown RoPE scaling type \"ntk\""},
    {"rope-scaling-missing-type.json",
     "rope_scaling.rope_type: missing required field"},
    {"llama3-rope-missing-factor.json",
     "rope_scaling.factor: missing required field"},
    // MoE.
    {"topk-exceeds-experts.json",
     "num_experts_per_tok: top-k 9 exceeds the number of experts "
     "(num_local_experts = 8)"},
    {"zero-experts.json", "num_local_experts: expected a positive integer"},
    {"topk-group-exceeds-n-group.json", "topk_group: 5 exceeds n_group = 4"},
    {"experts-not-divisible-by-groups.json",
     "n_routed_experts: 10 is not divisible by n_group = 4"},
    {"topk-exceeds-group-limit.json",
     "num_experts_per_tok: top-k 16 exceeds the 8 experts in topk_group = 1"},
    {"unknown-scoring-func.json",
     "scoring_func: unknown scoring function \"relu\""},
    {"moe-missing-intermediate.json",
     "moe_intermediate_size: missing required field"},
    {"negative-first-k-dense.json",
     "first_k_dense_replace: expected a non-negative integer, got -1"},
    {"negative-mtp-layers.json",
     "num_nextn_predict_layers: expected a non-negative integer, got -1"},
    {"gpt-oss-negative-swiglu-limit.json",
     "swiglu_limit: expected a positive number, got -7"},
    {"gpt-oss-swiglu-limit-not-7.json",
     "swiglu_limit: helix models gpt-oss's SwiGLU clamped at 7 (the released "
     "models' value), got 10"},
    // Layer patterns.
    {"layer-types-wrong-length.json",
     "layer_types: has 3 entries, expected num_hidden_layers = 4"},
    {"unknown-layer-type.json",
     "layer_types[1]: unknown layer type \"chunked_attention\""},
    {"layer-types-not-strings.json", "layer_types[0]: expected a string, got "
                                     "1"},
    {"sliding-window-missing.json",
     "sliding_window: missing, but layer_types has \"sliding_attention\""},
    {"qwen-sliding-window-missing.json",
     "sliding_window: missing, but use_sliding_window is true"},
    {"mlp-only-layers-out-of-range.json",
     "mlp_only_layers[0]: layer index 7 is out of range, expected 0..3"},
    {"mlp-only-layers-not-array.json",
     "mlp_only_layers: expected an array of integers, got 3"},
    // Long-context models (sparse attention, linear attention, Mamba-2).
    {"dsa-missing-index-topk.json", "index_topk: missing required field"},
    {"qwen35-missing-text-config.json",
     "text_config: missing, expected the language model's config inside "
     "this qwen3_5_moe config"},
    {"qwen35-unknown-layer-type.json",
     "text_config.layer_types[1]: unknown layer type \"mamba\", expected "
     "\"linear_attention\" or \"full_attention\""},
    {"gdn-missing-linear-key-heads.json",
     "linear_num_key_heads: missing required field"},
    {"partial-rotary-not-whole-pairs.json",
     "partial_rotary_factor: rotates 9.6 of head_dim = 32 values, expected "
     "an even whole number"},
    {"kimi-layer-listed-twice.json",
     "linear_attn_config.kda_layers: layer 3 is listed twice"},
    {"nemotron-unknown-pattern-letter.json",
     "hybrid_override_pattern: letter 6 is 'X', expected M (Mamba-2), * "
     "(attention), E (MoE) or - (MLP)"},
    {"nemotron-pattern-length.json",
     "hybrid_override_pattern: has 5 letters, expected num_hidden_layers = "
     "8"},
    {"nemotron-time-step-limit-nan.json",
     "time_step_limit[1]: expected a number, got string \"NaN\""},
    // The model as a whole.
    {"implausible-model-size.json", "<model>: implausibly large model"},
};

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, FailsWithOneClearLine) {
  const BadCase &c = GetParam();
  std::string path = inputPath(std::string("bad/") + c.file);
  ModelSpec m;
  std::string error;
  EXPECT_FALSE(importHFConfigFile(path, ImportOptions(), m, error));
  EXPECT_EQ(error.rfind(path + ": ", 0), 0u) << error;
  EXPECT_NE(error.find(c.fragment), std::string::npos)
      << "error: " << error << "\nexpected fragment: " << c.fragment;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase> &info) {
                           std::string name = info.param.file;
                           name = name.substr(0, name.rfind('.'));
                           for (char &ch : name)
                             if (!isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           return name;
                         });

/// Every file of test/Inputs/bad is in the table, and every table entry but
/// the missing file exists.
TEST(BadInputCorpus, TableCoversDirectory) {
  namespace fs = std::filesystem;
  std::set<std::string> inTable, onDisk;
  for (const BadCase &c : kBadCases)
    inTable.insert(c.file);
  for (const fs::directory_entry &e : fs::directory_iterator(inputPath("bad")))
    if (e.path().filename() != "README.md")
      onDisk.insert(e.path().filename().string());
  inTable.erase("does-not-exist.json");
  EXPECT_EQ(inTable, onDisk);
  EXPECT_GE(onDisk.size(), 20u);
}

} // namespace
} // namespace helix
