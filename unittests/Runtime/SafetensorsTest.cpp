//===- SafetensorsTest.cpp - Reader, writer, index, bad files -------------===//

#include "helix/Runtime/Safetensors.h"
#include "helix/Runtime/Error.h"

#include "gtest/gtest.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace helix::rt;

namespace {

class Safetensors : public ::testing::Test {
protected:
  std::string dir;
  void SetUp() override {
    char tmpl[] = "/tmp/helix-st-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  void TearDown() override {
    std::string cmd = "rm -rf " + dir;
    (void)std::system(cmd.c_str());
  }
  static HostTensor iota(std::vector<int64_t> shape) {
    HostTensor t;
    t.shape = shape;
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    for (int64_t i = 0; i < n; ++i)
      t.data.push_back(static_cast<float>(i) * 0.5f - 3.0f);
    return t;
  }
  void writeRaw(const std::string &path, const std::string &header,
                size_t dataBytes) {
    std::ofstream f(path, std::ios::binary);
    uint64_t n = header.size();
    for (int i = 0; i < 8; ++i)
      f.put(static_cast<char>((n >> (8 * i)) & 0xff));
    f << header << std::string(dataBytes, '\0');
  }
  std::string errorOf(const std::function<void()> &f) {
    try {
      f();
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(Safetensors, RoundTripDtypes) {
  HostTensor a = iota({3, 4});
  for (const char *dt : {"F32", "BF16", "F16"}) {
    std::string p = dir + "/m-" + dt + ".safetensors";
    writeSafetensors(p, {{"a", a}, {"b", iota({5})}}, dt);
    SafetensorsCheckpoint c = SafetensorsCheckpoint::open(p);
    EXPECT_TRUE(c.has("a"));
    EXPECT_EQ(c.info("a").dtype, dt);
    HostTensor r = c.load("a", {3, 4});
    // Multiples of 0.5 in [-3, 3] are exact in all three formats.
    EXPECT_EQ(r.data, a.data);
    EXPECT_EQ(c.load("b", {5}).data.size(), 5u);
  }
}

TEST_F(Safetensors, Conversions) {
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.0f)), 1.0f);
  EXPECT_EQ(fp16ToFloat(floatToFp16(-2.5f)), -2.5f);
  EXPECT_EQ(fp16ToFloat(floatToFp16(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(fp16ToFloat(floatToFp16(1e6f))));
  EXPECT_NEAR(fp16ToFloat(floatToFp16(1e-6f)), 1e-6f, 1e-7f); // subnormal
  EXPECT_NEAR(bf16ToFloat(floatToBf16(3.14159f)), 3.14159f, 0.01f);
  // Round to nearest even: 1 + 2^-8 is halfway between bf16 1 and 1+2^-7.
  EXPECT_EQ(bf16ToFloat(floatToBf16(1.0f + 1.0f / 256)), 1.0f);
}

TEST_F(Safetensors, SlicesReadOnlyTheirBytes) {
  HostTensor a = iota({4, 6});
  std::string p = dir + "/model.safetensors";
  writeSafetensors(p, {{"w", a}}, "F32");
  SafetensorsCheckpoint c = SafetensorsCheckpoint::open(dir);
  HostTensor r = c.loadRows("w", {4, 6}, 1, 2);
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(r.data[0], a.data[6]);
  EXPECT_EQ(c.bytesRead(), 2u * 6 * 4);
  HostTensor col = c.loadColumns("w", {4, 6}, 4, 2);
  EXPECT_EQ(col.shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(col.data[1], a.data[5]);
  EXPECT_EQ(col.data[2], a.data[10]);
  // A box of a reinterpreted view: [4, 6] as [4, 3, 2], the odd elements of
  // columns 1..2 of rows 2..3 (how gpt-oss's interleaved gate/up are read).
  HostTensor v = c.loadSlice("w", {4, 6}, {{2, 2}, {1, 2}, {1, 1}}, {4, 3, 2});
  EXPECT_EQ(v.shape, (std::vector<int64_t>{2, 2, 1}));
  EXPECT_EQ(v.data, (std::vector<float>{a.data[15], a.data[17], a.data[21],
                                        a.data[23]}));
  EXPECT_NE(errorOf([&] { c.loadRows("w", {4, 6}, 3, 2); }), "");
  EXPECT_NE(errorOf([&] { c.loadSlice("w", {4, 6}, {}, {5, 5}); }), "");
}

TEST_F(Safetensors, ShardedIndex) {
  writeSafetensors(dir + "/model-00001-of-00002.safetensors",
                   {{"x", iota({2, 2})}}, "BF16");
  writeSafetensors(dir + "/model-00002-of-00002.safetensors",
                   {{"y", iota({3})}, {"stray", iota({1})}}, "F16");
  std::ofstream(dir + "/model.safetensors.index.json")
      << R"({"metadata": {"total_size": 14}, "weight_map": {
            "x": "model-00001-of-00002.safetensors",
            "y": "model-00002-of-00002.safetensors"}})";
  for (std::string path : {dir, dir + "/model.safetensors.index.json"}) {
    SafetensorsCheckpoint c = SafetensorsCheckpoint::open(path);
    EXPECT_EQ(c.names(), (std::vector<std::string>{"x", "y"}));
    EXPECT_EQ(c.load("y", {3}).data, iota({3}).data);
    EXPECT_EQ(c.load("x", {2, 2}).data, iota({2, 2}).data);
  }
}

TEST_F(Safetensors, IndexNamingAMissingShard) {
  std::ofstream(dir + "/model.safetensors.index.json")
      << R"({"weight_map": {"x": "model-00009-of-00009.safetensors"}})";
  EXPECT_NE(errorOf([&] { SafetensorsCheckpoint::open(dir); })
                .find("model-00009-of-00009.safetensors (holding x) does not "
                      "exist"),
            std::string::npos);
}

TEST_F(Safetensors, MissingTensorAndWrongShape) {
  writeSafetensors(dir + "/m.safetensors", {{"w", iota({2, 3})}}, "F32");
  SafetensorsCheckpoint c = SafetensorsCheckpoint::open(dir + "/m.safetensors");
  EXPECT_NE(errorOf([&] {
              c.load("v", {2, 3});
            }).find("missing tensor v"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              c.load("w", {3, 2});
            }).find("tensor w has shape [2, 3], expected [3, 2]"),
            std::string::npos);
}

TEST_F(Safetensors, QuantizedDtypesAreReadAsStoredBytes) {
  writeRaw(dir + "/q.safetensors",
           R"({"w":{"dtype":"F8_E4M3","shape":[2,2],"data_offsets":[0,4]}})",
           4);
  SafetensorsCheckpoint c = SafetensorsCheckpoint::open(dir + "/q.safetensors");
  // Not as floats: a quantized tensor is read with its scales.
  EXPECT_NE(errorOf([&] {
              c.load("w", {2, 2});
            }).find("a quantized format: it is read with its scales"),
            std::string::npos);
  RawTensor raw = c.loadRaw("w", "F8_E4M3", {2, 2}, {{1, 1}});
  EXPECT_EQ(raw.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(raw.bytes.size(), 2u);
  EXPECT_NE(errorOf([&] {
              c.loadRaw("w", "U8", {2, 2});
            }).find("has dtype F8_E4M3, expected U8"),
            std::string::npos);
  writeRaw(dir + "/i.safetensors",
           R"({"w":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", 8);
  SafetensorsCheckpoint i = SafetensorsCheckpoint::open(dir + "/i.safetensors");
  EXPECT_NE(errorOf([&] { i.load("w", {1}); }).find("unsupported dtype I64"),
            std::string::npos);
}

TEST_F(Safetensors, BadFiles) {
  auto openError = [&](const std::string &p) {
    return errorOf([&] { SafetensorsCheckpoint::open(p); });
  };
  std::ofstream(dir + "/short.safetensors") << "abc";
  EXPECT_NE(openError(dir + "/short.safetensors").find("not a safetensors"),
            std::string::npos);
  writeRaw(dir + "/json.safetensors", "{not json", 0);
  EXPECT_NE(openError(dir + "/json.safetensors").find("malformed"),
            std::string::npos);
  // Data offsets past the end of the file (truncated download).
  writeRaw(dir + "/trunc.safetensors",
           R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8);
  EXPECT_NE(openError(dir + "/trunc.safetensors").find("truncated"),
            std::string::npos);
  // Byte count disagreeing with the shape.
  writeRaw(dir + "/size.safetensors",
           R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8);
  EXPECT_NE(openError(dir + "/size.safetensors").find("expected 12"),
            std::string::npos);
  writeRaw(dir + "/entry.safetensors", R"({"w":{"dtype":"F32"}})", 0);
  EXPECT_NE(openError(dir + "/entry.safetensors").find("malformed entry"),
            std::string::npos);
  EXPECT_NE(openError(dir + "/nothing-here").find("no such file"),
            std::string::npos);
  EXPECT_NE(openError(dir).find("no model.safetensors"), std::string::npos);
}

// Found by fuzz/ (helix-fuzz-safetensors): headers and boxes whose sizes
// overflowed int64 (UBSan), and a sub-byte dtype read past its bytes.
TEST_F(Safetensors, HugeShapesBoxesAndSubByteDtypes) {
  auto openError = [&](const std::string &p) {
    return errorOf([&] { SafetensorsCheckpoint::open(p); });
  };
  // Dimensions past int64, and products past it (once wrapped to 0 bytes).
  writeRaw(dir + "/big.safetensors",
           R"({"w":{"dtype":"F32","shape":[9223372036854775808],)"
           R"("data_offsets":[0,0]}})",
           0);
  EXPECT_NE(openError(dir + "/big.safetensors").find("malformed shape"),
            std::string::npos);
  writeRaw(dir + "/wrap.safetensors",
           R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],)"
           R"("data_offsets":[0,0]}})",
           0);
  EXPECT_NE(openError(dir + "/wrap.safetensors").find("too many elements"),
            std::string::npos);
  writeRaw(dir + "/strides.safetensors",
           R"({"w":{"dtype":"F32","shape":[0,4294967296,4294967296],)"
           R"("data_offsets":[0,0]}})",
           0);
  EXPECT_NE(openError(dir + "/strides.safetensors").find("too many elements"),
            std::string::npos);

  writeSafetensors(dir + "/m.safetensors", {{"a", iota({2, 3})}}, "F32");
  SafetensorsCheckpoint c = SafetensorsCheckpoint::open(dir + "/m.safetensors");
  // Views whose sizes are negative or overflow.
  EXPECT_NE(errorOf([&] {
              c.loadSlice("a", {2, 3}, {}, {-2, -3});
            }).find("has a negative dimension"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              c.loadSlice("a", {2, 3}, {},
                          {INT64_C(3037000500), INT64_C(3037000500), 6});
            }).find("too many elements"),
            std::string::npos);
  // Ranges whose end overflows.
  int64_t big = INT64_C(6402105296169785560);
  EXPECT_EQ(errorOf([&] {
              c.loadSlice("a", {2, 3}, {{big, big}});
            }),
            "checkpoint " + dir +
                "/m.safetensors: tensor a: slice [6402105296169785560, "
                "6402105296169785560 + 6402105296169785560) of dimension 0 is "
                "outside its size 2");
  EXPECT_NE(errorOf([&] {
              c.loadRaw("a", "F32", {2, 3}, {{INT64_MIN, -1}});
            }).find("slice [-9223372036854775808, end) of dimension 0"),
            std::string::npos);

  // F4 packs two values per byte: the header check lets it through, and
  // reading it "raw" one byte per element ran past its 2 bytes.
  writeRaw(dir + "/f4.safetensors",
           R"({"w":{"dtype":"F4","shape":[1000000],"data_offsets":[0,2]}})", 2);
  SafetensorsCheckpoint f4 =
      SafetensorsCheckpoint::open(dir + "/f4.safetensors");
  EXPECT_NE(errorOf([&] {
              f4.loadRaw("w", "F4", {1000000});
            }).find("only whole-byte dtypes are read raw"),
            std::string::npos);
}

} // namespace
