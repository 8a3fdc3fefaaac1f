//===- MakeCheckpointFormatsTest.cpp - helix-make-checkpoint --format -----===//
//
// Runs helix-make-checkpoint (HELIX_MAKE_CHECKPOINT) on the tiny configs
// and checks each --format against docs/quantization.md: which tensors are
// quantized, the names, dtypes and shapes of weights and scales, that the
// stored bytes are the runtime's quantizers applied to the bf16 checkpoint
// of the same seed, that the loaders (loadStoredBox) read them back, that
// shards keep a weight with its scales, config.json's quantization_config,
// --drop of a scale tensor, and the one-line errors.
//
//===----------------------------------------------------------------------===//

#include "helix/Runtime/Error.h"
#include "helix/Runtime/Quant.h"
#include "helix/Runtime/Safetensors.h"

#include "gtest/gtest.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#ifndef HELIX_MAKE_CHECKPOINT
#error "HELIX_MAKE_CHECKPOINT must name the helix-make-checkpoint binary"
#endif
#ifndef HELIX_SOURCE_DIR
#error "HELIX_SOURCE_DIR must name the source tree"
#endif

using namespace helix;
using namespace helix::rt;
using nlohmann::json;

namespace {

const std::string kModels =
    std::string(HELIX_SOURCE_DIR) + "/test/Inputs/models/";
const std::string kDeepSeek = kModels + "tiny-deepseek.json";
const std::string kGptOss = kModels + "tiny-gpt-oss.json";
const std::string kLlama = std::string(HELIX_SOURCE_DIR) +
                           "/test/Runtime/Inputs/tiny-llama3-rope.json";

struct ToolRun {
  int status = -1;
  std::string output; // stdout and stderr
};

class MakeCheckpoint : public ::testing::Test {
protected:
  std::string dir;
  void SetUp() override {
    char tmpl[] = "/tmp/helix-mkckpt-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir + "'";
    (void)std::system(cmd.c_str());
  }

  ToolRun make(const std::string &config, const std::string &out,
               const std::string &args) {
    std::string cmd = std::string("'") + HELIX_MAKE_CHECKPOINT +
                      "' --config '" + config + "' -o '" + dir + "/" + out +
                      "' " + args + " 2>&1";
    ToolRun r;
    FILE *p = ::popen(cmd.c_str(), "r");
    if (!p)
      return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
      r.output.append(buf.data(), n);
    int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
  }
  /// Writes `config` and the bf16 checkpoint `out`-bf16 next to `out`.
  void makeBoth(const std::string &config, const std::string &out,
                const std::string &format, const std::string &extra = "") {
    ToolRun b = make(config, out + "-bf16", "--seed 3 " + extra);
    ASSERT_EQ(b.status, 0) << b.output;
    ToolRun q = make(config, out, "--seed 3 --format " + format + " " + extra);
    ASSERT_EQ(q.status, 0) << q.output;
  }
  json configOf(const std::string &out) {
    std::ifstream f(dir + "/" + out + "/config.json");
    std::stringstream s;
    s << f.rdbuf();
    return json::parse(s.str());
  }
};

bool isRouter(const std::string &n) {
  auto ends = [&](const std::string &s) {
    return n.size() >= s.size() &&
           n.compare(n.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".mlp.gate.weight") || ends(".block_sparse_moe.gate.weight") ||
         n.find(".mlp.router.") != std::string::npos;
}

/// Whether the bf16 tensor `name` [shape] is a quantized linear weight in
/// fp8-* / nvfp4 (docs/quantization.md).
bool quantizedLinear(const std::string &name,
                     const std::vector<int64_t> &shape) {
  return name.rfind("model.layers.", 0) == 0 && shape.size() == 2 &&
         name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0 &&
         name.find("norm") == std::string::npos && !isRouter(name);
}

std::vector<uint8_t> bytesOf(const SafetensorsCheckpoint &c,
                             const std::string &name, const std::string &dtype,
                             const std::vector<int64_t> &shape) {
  return c.loadRaw(name, dtype, shape).bytes;
}

std::vector<uint8_t> f32Bytes(float v) {
  std::vector<uint8_t> b(4);
  std::memcpy(b.data(), &v, 4);
  return b;
}

/// Checks every tensor of `q` (format `format`) against the bf16
/// checkpoint `b` of the same seed; returns how many were quantized.
int checkAgainstBF16(const SafetensorsCheckpoint &b,
                     const SafetensorsCheckpoint &q, CheckpointFormat format) {
  int quantized = 0;
  size_t expectedTensors = 0;
  for (const std::string &name : b.names()) {
    const TensorInfo &bi = b.info(name);
    HostTensor t = b.load(name, bi.shape); // the bf16 values, in f32
    std::string what = checkpointFormatName(format) + std::string(" ") + name;
    if (format == CheckpointFormat::MXFP4 && bi.shape.size() == 3 &&
        (name.find(".mlp.experts.gate_up_proj") != std::string::npos ||
         name.find(".mlp.experts.down_proj") != std::string::npos) &&
        name.find("_bias") == std::string::npos) {
      ++quantized;
      expectedTensors += 2;
      int64_t E = bi.shape[0], K = bi.shape[1], N = bi.shape[2];
      EXPECT_FALSE(q.has(name)) << what;
      EXPECT_EQ(storedFormatOf(q, name), CheckpointFormat::MXFP4) << what;
      HostTensor tr = transposeLast2(t); // [E, N, K]
      QuantHost want = quantizeMXFP4(tr, name);
      EXPECT_EQ(bytesOf(q, name + "_blocks", "U8", {E, N, K / 32, 16}),
                want.data)
          << what;
      EXPECT_EQ(bytesOf(q, name + "_scales", "U8", {E, N, K / 32}), want.scales)
          << what;
      // The loader reads them back in the bf16 layout [E, in, out].
      HostTensor got = dequantize(
          loadStoredBox(q, CheckpointFormat::MXFP4, name, bi.shape, {}, {}));
      HostTensor d = dequantize(want);
      EXPECT_EQ(got.shape, bi.shape) << what;
      bool same = got.data.size() == d.data.size();
      for (int64_t e = 0; e < E && same; ++e)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t n = 0; n < N; ++n)
            same &=
                got.data[(e * K + k) * N + n] == d.data[(e * N + n) * K + k];
      EXPECT_TRUE(same) << what << ": loadStoredBox differs from the quantizer";
      continue;
    }
    if (format == CheckpointFormat::MXFP4 || !quantizedLinear(name, bi.shape)) {
      ++expectedTensors;
      if (!q.has(name)) {
        ADD_FAILURE() << what << " is missing";
        continue;
      }
      EXPECT_EQ(q.info(name).dtype, "BF16") << what;
      EXPECT_EQ(bytesOf(q, name, "BF16", bi.shape),
                bytesOf(b, name, "BF16", bi.shape))
          << what;
      continue;
    }
    ++quantized;
    int64_t N = bi.shape[0], K = bi.shape[1];
    std::string p = name.substr(0, name.size() - 6); // "X."
    EXPECT_EQ(storedFormatOf(q, name), format) << what;
    QuantHost want;
    switch (format) {
    case CheckpointFormat::FP8Block:
      expectedTensors += 2;
      want = quantizeFP8Block(t, name, 128);
      EXPECT_EQ(bytesOf(q, name, "F8_E4M3", {N, K}), want.data) << what;
      EXPECT_EQ(bytesOf(q, p + "weight_scale_inv", "F32",
                        {(N + 127) / 128, (K + 127) / 128}),
                want.scales)
          << what;
      break;
    case CheckpointFormat::FP8Tensor:
      expectedTensors += 3;
      want = quantizeFP8Tensor(t, name);
      EXPECT_EQ(bytesOf(q, name, "F8_E4M3", {N, K}), want.data) << what;
      EXPECT_EQ(bytesOf(q, p + "weight_scale", "F32", {}), want.scales) << what;
      EXPECT_EQ(bytesOf(q, p + "input_scale", "F32", {}), f32Bytes(1.0f))
          << what;
      break;
    default: // NVFP4
      expectedTensors += 4;
      want = quantizeNVFP4(t, name);
      EXPECT_EQ(bytesOf(q, name, "U8", {N, K / 2}), want.data) << what;
      EXPECT_EQ(bytesOf(q, p + "weight_scale", "F8_E4M3", {N, K / 16}),
                want.scales)
          << what;
      EXPECT_EQ(bytesOf(q, p + "weight_scale_2", "F32", {}),
                f32Bytes(want.globals.at(0)))
          << what;
      EXPECT_EQ(bytesOf(q, p + "input_scale", "F32", {}), f32Bytes(1.0f))
          << what;
      break;
    }
    // The loader reads back the quantizer's codes and scales (its
    // dequantized values may differ in the last bit: it multiplies the
    // NVFP4 scales in another order).
    ElementBox box = loadStoredBox(q, format, name, {N, K}, {}, {});
    QuantHost packed = pack(box);
    EXPECT_EQ(packed.data, want.data) << what;
    EXPECT_EQ(packed.scales, want.scales) << what;
    EXPECT_EQ(packed.globals, want.globals) << what;
    HostTensor got = dequantize(box);
    HostTensor d = dequantize(want);
    EXPECT_EQ(got.data.size(), d.data.size()) << what;
    for (size_t i = 0; i < got.data.size() && i < d.data.size(); ++i)
      if (std::fabs(got.data[i] - d.data[i]) > 1e-6f * std::fabs(d.data[i])) {
        ADD_FAILURE() << what << " element " << i << ": loaded " << got.data[i]
                      << ", quantized " << d.data[i];
        break;
      }
    // Close to the bf16 values: within 1/8 (fp8) / the block's amax (fp4).
    float amax = 0;
    for (float v : t.data)
      amax = std::max(amax, std::fabs(v));
    for (size_t i = 0; i < t.data.size() && i < got.data.size(); ++i) {
      float bound = format == CheckpointFormat::NVFP4
                        ? 0.25f * amax
                        : std::fabs(t.data[i]) / 16 + amax / 448 / 512;
      if (std::fabs(got.data[i] - t.data[i]) > bound) {
        ADD_FAILURE() << what << " element " << i << ": " << got.data[i]
                      << " for " << t.data[i];
        break;
      }
    }
  }
  EXPECT_EQ(q.names().size(), expectedTensors);
  return quantized;
}

TEST_F(MakeCheckpoint, DeepSeekFormats) {
  for (const char *f : {"fp8-block", "fp8-tensor", "nvfp4"}) {
    SCOPED_TRACE(f);
    makeBoth(kDeepSeek, std::string("ds-") + f, f);
    CheckpointFormat format;
    ASSERT_TRUE(parseCheckpointFormat(f, format));
    SafetensorsCheckpoint b =
        SafetensorsCheckpoint::open(dir + "/ds-" + f + "-bf16");
    SafetensorsCheckpoint q = SafetensorsCheckpoint::open(dir + "/ds-" + f);
    // 5 layers of MLA (q_a, q_b, kv_a, kv_b, o); 3 dense MLPs (layers 0,
    // 1, 3); 2 MoE layers (2, 4) of 8 routed experts and a shared one.
    EXPECT_EQ(checkAgainstBF16(b, q, format), 5 * 5 + 3 * 3 + 2 * 9 * 3);
    // Never quantized.
    for (const char *n : {"model.embed_tokens.weight", "lm_head.weight",
                          "model.layers.2.mlp.gate.weight",
                          "model.layers.2.mlp.gate.e_score_correction_bias",
                          "model.layers.0.self_attn.kv_a_layernorm.weight"})
      EXPECT_EQ(q.info(n).dtype, "BF16") << n;
  }
  json fp8 = configOf("ds-fp8-block")["quantization_config"];
  EXPECT_EQ(fp8, json::parse(R"({"quant_method": "fp8", "fmt": "e4m3",
      "activation_scheme": "dynamic", "weight_block_size": [128, 128]})"));
  EXPECT_EQ(
      configOf("ds-fp8-tensor")["quantization_config"],
      json::parse(R"({"quant_method": "modelopt", "quant_algo": "FP8"})"));
  EXPECT_EQ(configOf("ds-nvfp4")["quantization_config"],
            json::parse(R"({"quant_method": "modelopt", "quant_algo": "NVFP4",
                            "group_size": 16})"));
  json c = configOf("ds-nvfp4");
  c.erase("quantization_config");
  EXPECT_EQ(c, configOf("ds-nvfp4-bf16"));
  EXPECT_FALSE(configOf("ds-nvfp4-bf16").contains("quantization_config"));
}

TEST_F(MakeCheckpoint, LlamaShardedFormats) {
  for (const char *f : {"fp8-block", "fp8-tensor", "nvfp4"}) {
    SCOPED_TRACE(f);
    std::string out = std::string("ll-") + f;
    makeBoth(kLlama, out, f, "--shards 3");
    CheckpointFormat format;
    ASSERT_TRUE(parseCheckpointFormat(f, format));
    SafetensorsCheckpoint b =
        SafetensorsCheckpoint::open(dir + "/" + out + "-bf16");
    SafetensorsCheckpoint q = SafetensorsCheckpoint::open(dir + "/" + out);
    EXPECT_EQ(checkAgainstBF16(b, q, format), 2 * 7);
    // Scale tensors lie in their weight's shard.
    std::ifstream f2(dir + "/" + out + "/model.safetensors.index.json");
    json index = json::parse(f2);
    std::set<std::string> files;
    for (auto &[name, file] : index["weight_map"].items()) {
      files.insert(file.get<std::string>());
      for (const char *s : {".weight_scale_inv", ".weight_scale_2",
                            ".weight_scale", ".input_scale"}) {
        size_t at = name.rfind(s);
        if (at != std::string::npos && at + std::strlen(s) == name.size()) {
          EXPECT_EQ(file, index["weight_map"][name.substr(0, at) + ".weight"])
              << name;
          break;
        }
      }
    }
    EXPECT_EQ(files.size(), 3u);
  }
}

TEST_F(MakeCheckpoint, GptOssMXFP4) {
  makeBoth(kGptOss, "go", "mxfp4", "--shards 2");
  SafetensorsCheckpoint b = SafetensorsCheckpoint::open(dir + "/go-bf16");
  SafetensorsCheckpoint q = SafetensorsCheckpoint::open(dir + "/go");
  EXPECT_EQ(checkAgainstBF16(b, q, CheckpointFormat::MXFP4), 4 * 2);
  EXPECT_EQ(q.info("model.layers.0.mlp.experts.gate_up_proj_blocks").shape,
            (std::vector<int64_t>{4, 128, 4, 16}));
  EXPECT_EQ(q.info("model.layers.0.mlp.experts.down_proj_scales").shape,
            (std::vector<int64_t>{4, 128, 2}));
  EXPECT_EQ(configOf("go")["quantization_config"],
            json::parse(R"({"quant_method": "mxfp4", "modules_to_not_convert":
              ["model.layers.*.self_attn", "model.layers.*.mlp.router",
               "model.embed_tokens", "lm_head"]})"));
}

TEST_F(MakeCheckpoint, DefaultIsBF16) {
  ToolRun a = make(kLlama, "a", "--seed 9 --shards 2");
  ToolRun b = make(kLlama, "b", "--seed 9 --shards 2 --format bf16");
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  for (const char *f : {"/model-00001-of-00002.safetensors",
                        "/model-00002-of-00002.safetensors",
                        "/model.safetensors.index.json", "/config.json"}) {
    std::ifstream x(dir + "/a" + f, std::ios::binary),
        y(dir + "/b" + f, std::ios::binary);
    std::stringstream sx, sy;
    sx << x.rdbuf();
    sy << y.rdbuf();
    EXPECT_FALSE(sx.str().empty()) << f;
    EXPECT_EQ(sx.str(), sy.str()) << f;
  }
}

TEST_F(MakeCheckpoint, DropScale) {
  std::string s = "model.layers.0.self_attn.q_a_proj.weight_scale_inv";
  ToolRun r = make(kDeepSeek, "d", "--format fp8-block --drop " + s);
  ASSERT_EQ(r.status, 0) << r.output;
  SafetensorsCheckpoint q = SafetensorsCheckpoint::open(dir + "/d");
  EXPECT_FALSE(q.has(s));
  EXPECT_TRUE(q.has("model.layers.0.self_attn.q_a_proj.weight"));
  try {
    (void)storedFormatOf(q, "model.layers.0.self_attn.q_a_proj.weight");
    FAIL() << "a missing scale was not reported";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("weight_scale_inv"), std::string::npos)
        << e.what();
  }
  ToolRun bad = make(kDeepSeek, "e", "--drop " + s); // bf16 has no scales
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.output.find("--drop: no tensor " + s), std::string::npos)
      << bad.output;
}

TEST_F(MakeCheckpoint, Errors) {
  ToolRun r = make(kLlama, "x", "--format mxfp4");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("mxfp4 is gpt-oss's format"), std::string::npos)
      << r.output;
  r = make(kLlama, "x", "--format fp4");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--format: expected"), std::string::npos) << r.output;
  r = make(kLlama, "x", "--format fp8-block --dtype fp32");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("--dtype fp32 cannot be combined"), std::string::npos)
      << r.output;
  // An input dimension that is not a multiple of 16 / 32.
  json c = json::parse(std::ifstream(kLlama));
  c["intermediate_size"] = 72;
  std::ofstream(dir + "/odd.json") << c.dump();
  r = make(dir + "/odd.json", "x", "--format nvfp4");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("model.layers.0.mlp.down_proj.weight has an input "
                          "dimension of 72, which is not a multiple of 16"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(make(dir + "/odd.json", "y", "--format fp8-block").status, 0);
  json g = json::parse(std::ifstream(kGptOss));
  g["intermediate_size"] = 48;
  std::ofstream(dir + "/odd-oss.json") << g.dump();
  r = make(dir + "/odd-oss.json", "x", "--format mxfp4");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("model.layers.0.mlp.experts.down_proj has an input "
                          "dimension of 48, which is not a multiple of 32"),
            std::string::npos)
      << r.output;
}

} // namespace
