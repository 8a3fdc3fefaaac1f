//===- QuantFormatsTest.cpp - Number formats, quantizers, quantized loads -===//
//
// NumberFormats.h (E4M3, E2M1, E8M0, BF16 codecs, decodeElement, the KV
// codecs, BlockScaleDesc), Quant.h (the conversion rules, element boxes,
// pack / permute / stack) and loading boxes of quantized checkpoint
// tensors, all against values computed by hand (docs/quantization.md).
//
//===----------------------------------------------------------------------===//

#include "helix/Runtime/Error.h"
#include "helix/Runtime/NumberFormats.h"
#include "helix/Runtime/Quant.h"
#include "helix/Runtime/Safetensors.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <unistd.h>
#include <vector>

using namespace helix::rt;
namespace hf = helix::rt::fmt;

namespace {

//===----------------------------------------------------------------------===//
// Reference decoders, written from the format definitions
//===----------------------------------------------------------------------===//

/// OCP E4M3 "fn": S.EEEE.MMM, bias 7, subnormals m/8 * 2^-6, S.1111.111 NaN.
double refE4m3(uint8_t c) {
  int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  if (e == 15 && m == 7)
    return std::numeric_limits<double>::quiet_NaN();
  double v = e == 0 ? (m / 8.0) * std::ldexp(1.0, -6)
                    : (1.0 + m / 8.0) * std::ldexp(1.0, e - 7);
  return s ? -v : v;
}

/// OCP E2M1: S.EE.M, bias 1; 0, 0.5, 1, 1.5, 2, 3, 4, 6.
double refE2m1(uint8_t c) {
  int s = (c >> 3) & 1, e = (c >> 1) & 3, m = c & 1;
  double v = e == 0 ? m * 0.5 : (1.0 + m / 2.0) * std::ldexp(1.0, e - 1);
  return s ? -v : v;
}

float f32(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::vector<uint8_t> floatBytes(const std::vector<float> &v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

float scaleF32(const std::vector<uint8_t> &scales, size_t i) {
  float f;
  std::memcpy(&f, scales.data() + 4 * i, 4);
  return f;
}

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_HAS(text, part)                                                 \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "\"" << (text) << "\" lacks \"" << (part) << "\""

HostTensor tensor(std::vector<int64_t> shape, std::vector<float> data) {
  HostTensor t;
  t.shape = std::move(shape);
  t.data = std::move(data);
  return t;
}

//===----------------------------------------------------------------------===//
// E4M3
//===----------------------------------------------------------------------===//

TEST(QuantFormats, E4m3DecodeTable) {
  EXPECT_EQ(hf::e4m3ToFloat(0x00), 0.0f);
  EXPECT_FALSE(std::signbit(hf::e4m3ToFloat(0x00)));
  EXPECT_EQ(hf::e4m3ToFloat(0x01), std::ldexp(1.0f, -9)); // smallest subnormal
  EXPECT_EQ(hf::e4m3ToFloat(0x02), std::ldexp(1.0f, -8));
  EXPECT_EQ(hf::e4m3ToFloat(0x07), 7.0f / 512.0f); // largest subnormal
  EXPECT_EQ(hf::e4m3ToFloat(0x08), 0.015625f);     // smallest normal 2^-6
  EXPECT_EQ(hf::e4m3ToFloat(0x09), 0.017578125f);  // 1.125 * 2^-6
  EXPECT_EQ(hf::e4m3ToFloat(0x28), 0.25f);
  EXPECT_EQ(hf::e4m3ToFloat(0x2A), 0.3125f);
  EXPECT_EQ(hf::e4m3ToFloat(0x30), 0.5f);
  EXPECT_EQ(hf::e4m3ToFloat(0x38), 1.0f);
  EXPECT_EQ(hf::e4m3ToFloat(0x39), 1.125f);
  EXPECT_EQ(hf::e4m3ToFloat(0x3A), 1.25f);
  EXPECT_EQ(hf::e4m3ToFloat(0x3C), 1.5f);
  EXPECT_EQ(hf::e4m3ToFloat(0x3F), 1.875f);
  EXPECT_EQ(hf::e4m3ToFloat(0x40), 2.0f);
  EXPECT_EQ(hf::e4m3ToFloat(0x44), 3.0f);
  EXPECT_EQ(hf::e4m3ToFloat(0x48), 4.0f);
  EXPECT_EQ(hf::e4m3ToFloat(0x4C), 6.0f);
  EXPECT_EQ(hf::e4m3ToFloat(0x78), 256.0f);
  EXPECT_EQ(hf::e4m3ToFloat(0x7D), 416.0f);
  EXPECT_EQ(hf::e4m3ToFloat(0x7E), 448.0f); // largest finite
  EXPECT_TRUE(std::isnan(hf::e4m3ToFloat(0x7F)));
  EXPECT_TRUE(std::isnan(hf::e4m3ToFloat(0xFF)));
  EXPECT_EQ(hf::e4m3ToFloat(0xB8), -1.0f);
  EXPECT_EQ(hf::e4m3ToFloat(0xCC), -6.0f);
  EXPECT_EQ(hf::e4m3ToFloat(0xFE), -448.0f);
  EXPECT_EQ(hf::e4m3ToFloat(0x81), -std::ldexp(1.0f, -9));
  // Negative zero.
  float nz = hf::e4m3ToFloat(0x80);
  EXPECT_EQ(nz, 0.0f);
  EXPECT_TRUE(std::signbit(nz));
  // S.1111.110 is finite in "fn" (no infinities): every other code with
  // exponent 15 is a number.
  for (int m = 0; m < 7; ++m)
    EXPECT_EQ(hf::e4m3ToFloat(static_cast<uint8_t>(0x78 | m)),
              (1.0f + m / 8.0f) * 256.0f);
}

TEST(QuantFormats, E4m3DecodeAllCodesMatchDefinition) {
  for (int c = 0; c < 256; ++c) {
    double want = refE4m3(static_cast<uint8_t>(c));
    float got = hf::e4m3ToFloat(static_cast<uint8_t>(c));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "code " << c;
      continue;
    }
    EXPECT_EQ(static_cast<double>(got), want) << "code " << c;
    EXPECT_EQ(std::signbit(got), (c & 0x80) != 0) << "code " << c;
  }
}

TEST(QuantFormats, E4m3EncodeRoundTripsEveryCode) {
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7f) == 0x7f)
      continue;
    EXPECT_EQ(hf::floatToE4m3(hf::e4m3ToFloat(static_cast<uint8_t>(c))), c)
        << "code " << c;
  }
}

TEST(QuantFormats, E4m3EncodeHandValues) {
  EXPECT_EQ(hf::floatToE4m3(0.0f), 0x00);
  EXPECT_EQ(hf::floatToE4m3(-0.0f), 0x80);
  EXPECT_EQ(hf::floatToE4m3(1.0f), 0x38);
  EXPECT_EQ(hf::floatToE4m3(-1.0f), 0xB8);
  // Ties to even in the normal range.
  EXPECT_EQ(hf::floatToE4m3(1.0625f), 0x38); // 1 | 1.125 -> 1 (m=0)
  EXPECT_EQ(hf::floatToE4m3(1.1875f), 0x3A); // 1.125 | 1.25 -> 1.25 (m=2)
  EXPECT_EQ(hf::floatToE4m3(-1.1875f), 0xBA);
  EXPECT_EQ(hf::floatToE4m3(1.9375f), 0x40); // 1.875 | 2 -> 2 (carry)
  EXPECT_EQ(hf::floatToE4m3(std::nextafter(1.0625f, 2.0f)), 0x39);
  EXPECT_EQ(hf::floatToE4m3(std::nextafter(1.1875f, 0.0f)), 0x39);
  EXPECT_EQ(hf::floatToE4m3(0.3f), 0x2A);   // nearest 0.3125
  EXPECT_EQ(hf::floatToE4m3(424.0f), 0x7D); // nearer 416
  EXPECT_EQ(hf::floatToE4m3(432.0f), 0x7E); // 416 | 448 -> 448 (m=6)
  EXPECT_EQ(hf::floatToE4m3(440.0f), 0x7E);
  // Saturation.
  EXPECT_EQ(hf::floatToE4m3(448.0f), 0x7E);
  EXPECT_EQ(hf::floatToE4m3(464.0f), 0x7E);
  EXPECT_EQ(hf::floatToE4m3(500.0f), 0x7E);
  EXPECT_EQ(hf::floatToE4m3(1e30f), 0x7E);
  EXPECT_EQ(hf::floatToE4m3(-1e9f), 0xFE);
  EXPECT_EQ(hf::floatToE4m3(std::numeric_limits<float>::infinity()), 0x7E);
  EXPECT_EQ(hf::floatToE4m3(-std::numeric_limits<float>::infinity()), 0xFE);
  EXPECT_EQ(hf::e4m3ToFloat(hf::floatToE4m3(500.0f)), 448.0f);
  EXPECT_EQ(hf::e4m3ToFloat(hf::floatToE4m3(-1e9f)), -448.0f);
  // NaN.
  EXPECT_EQ(hf::floatToE4m3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_TRUE(std::isnan(hf::e4m3ToFloat(
      hf::floatToE4m3(-std::numeric_limits<float>::quiet_NaN()))));
  // Subnormals: steps of 2^-9, ties to even.
  EXPECT_EQ(hf::floatToE4m3(std::ldexp(1.0f, -10)), 0x00); // 0 | 2^-9 -> 0
  EXPECT_EQ(hf::floatToE4m3(std::nextafter(std::ldexp(1.0f, -10), 1.0f)), 0x01);
  EXPECT_EQ(hf::floatToE4m3(3 * std::ldexp(1.0f, -10)), 0x02); // -> 2^-8
  EXPECT_EQ(hf::e4m3ToFloat(hf::floatToE4m3(3 * std::ldexp(1.0f, -10))),
            std::ldexp(1.0f, -8));
  EXPECT_EQ(hf::floatToE4m3(-3 * std::ldexp(1.0f, -10)), 0x82);
  EXPECT_EQ(hf::floatToE4m3(5 * std::ldexp(1.0f, -10)), 0x02); // 2.5 -> 2
  EXPECT_EQ(hf::floatToE4m3(std::ldexp(1.0f, -12)), 0x00);
  EXPECT_EQ(hf::floatToE4m3(-std::ldexp(1.0f, -12)), 0x80); // keeps sign
  EXPECT_EQ(hf::floatToE4m3(1e-30f), 0x00);
  // Subnormal -> normal boundary: 7.5 * 2^-9 ties to 8 * 2^-9 = 2^-6.
  EXPECT_EQ(hf::floatToE4m3(7.5f / 512.0f), 0x08);
  EXPECT_EQ(hf::floatToE4m3(std::nextafter(7.5f / 512.0f, 0.0f)), 0x07);
  // Smallest normal binade: 2^-6 * (1 + 1/16) ties to 2^-6.
  EXPECT_EQ(hf::floatToE4m3(0.015625f * 1.0625f), 0x08);
  EXPECT_EQ(hf::floatToE4m3(0.015625f * 1.1875f), 0x0A);
}

/// For every pair of neighbouring finite codes: the midpoint rounds to the
/// even code, values just either side of it to the nearer code.
TEST(QuantFormats, E4m3EncodeMidpointsSweep) {
  for (int c = 0; c < 0x7E; ++c) {
    float lo = hf::e4m3ToFloat(static_cast<uint8_t>(c));
    float hi = hf::e4m3ToFloat(static_cast<uint8_t>(c + 1));
    float mid = (lo + hi) / 2; // exact: few mantissa bits
    ASSERT_EQ(static_cast<double>(mid), (refE4m3(c) + refE4m3(c + 1)) / 2);
    int even = (c % 2 == 0) ? c : c + 1;
    EXPECT_EQ(hf::floatToE4m3(mid), even) << "mid of " << c;
    EXPECT_EQ(hf::floatToE4m3(-mid), 0x80 | even) << "mid of -" << c;
    EXPECT_EQ(hf::floatToE4m3(std::nextafter(mid, 0.0f)), c) << c;
    EXPECT_EQ(hf::floatToE4m3(std::nextafter(mid, 1000.0f)), c + 1) << c;
  }
}

//===----------------------------------------------------------------------===//
// E2M1, E8M0, BF16
//===----------------------------------------------------------------------===//

TEST(QuantFormats, E2m1Decode) {
  const float mags[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 16; ++c) {
    float got = hf::e2m1ToFloat(static_cast<uint8_t>(c));
    EXPECT_EQ(got, (c & 8) ? -mags[c & 7] : mags[c & 7]) << c;
    EXPECT_EQ(static_cast<double>(got), refE2m1(static_cast<uint8_t>(c))) << c;
  }
  EXPECT_TRUE(std::signbit(hf::e2m1ToFloat(0x8)));
  EXPECT_EQ(hf::e2m1ToFloat(0x8), 0.0f);
  // Only the low nibble counts.
  EXPECT_EQ(hf::e2m1ToFloat(0xF7), 6.0f);
  EXPECT_EQ(hf::e2m1ToFloat(0x7D), -3.0f);
  EXPECT_EQ(hf::e2m1ToFloat(0x75), 3.0f);
}

TEST(QuantFormats, E2m1Encode) {
  struct Case {
    float x;
    uint8_t code;
  };
  const Case cases[] = {
      {0.0f, 0},   {0.1f, 0},   {0.25f, 0},               // tie 0 | 0.5 -> 0
      {0.26f, 1},  {0.5f, 1},   {0.74f, 1},   {0.75f, 2}, // tie .5 | 1 -> 1
      {1.0f, 2},   {1.25f, 2},                            // tie 1 | 1.5 -> 1
      {1.26f, 3},  {1.5f, 3},   {1.74f, 3},   {1.75f, 4}, // tie 1.5 | 2 -> 2
      {2.0f, 4},   {2.5f, 4},                             // tie 2 | 3 -> 2
      {2.51f, 5},  {3.0f, 5},   {3.49f, 5},   {3.5f, 6},  // tie 3 | 4 -> 4
      {4.0f, 6},   {5.0f, 6},                             // tie 4 | 6 -> 4
      {5.01f, 7},  {6.0f, 7},   {7.0f, 7},    {1e9f, 7},  // saturate to 6
      {-0.0f, 8},  {-0.1f, 8},  {-0.75f, 10}, {-1.25f, 10}, {-1.75f, 12},
      {-2.5f, 12}, {-3.5f, 14}, {-5.0f, 14},  {-6.0f, 15},  {-100.0f, 15},
  };
  for (const Case &c : cases)
    EXPECT_EQ(hf::floatToE2m1(c.x), c.code) << "x = " << c.x;
  EXPECT_EQ(hf::floatToE2m1(std::numeric_limits<float>::infinity()), 7);
  EXPECT_EQ(hf::floatToE2m1(-std::numeric_limits<float>::infinity()), 15);
  EXPECT_EQ(hf::floatToE2m1(std::numeric_limits<float>::quiet_NaN()), 0);
  // Every code round trips.
  for (int c = 0; c < 16; ++c)
    EXPECT_EQ(hf::floatToE2m1(hf::e2m1ToFloat(static_cast<uint8_t>(c))), c);
  // Just either side of each midpoint: the nearer code.
  for (int c = 0; c < 7; ++c) {
    float mid = (hf::e2m1ToFloat(c) + hf::e2m1ToFloat(c + 1)) / 2;
    EXPECT_EQ(hf::floatToE2m1(std::nextafter(mid, 0.0f)), c) << c;
    EXPECT_EQ(hf::floatToE2m1(std::nextafter(mid, 10.0f)), c + 1) << c;
  }
}

TEST(QuantFormats, E8m0) {
  EXPECT_EQ(hf::e8m0ToFloat(127), 1.0f);
  EXPECT_EQ(hf::e8m0ToFloat(128), 2.0f);
  EXPECT_EQ(hf::e8m0ToFloat(126), 0.5f);
  EXPECT_EQ(hf::e8m0ToFloat(124), 0.125f);
  EXPECT_EQ(hf::e8m0ToFloat(0), std::ldexp(1.0f, -127));
  EXPECT_GT(hf::e8m0ToFloat(0), 0.0f);
  EXPECT_EQ(hf::e8m0ToFloat(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isfinite(hf::e8m0ToFloat(254)));
  EXPECT_TRUE(std::isnan(hf::e8m0ToFloat(255)));
  for (int e = 0; e < 255; ++e)
    EXPECT_EQ(static_cast<double>(hf::e8m0ToFloat(static_cast<uint8_t>(e))),
              std::ldexp(1.0, e - 127))
        << e;
}

TEST(QuantFormats, Bf16) {
  EXPECT_EQ(hf::floatToBf16(1.0f), 0x3F80);
  EXPECT_EQ(hf::floatToBf16(-2.0f), 0xC000);
  EXPECT_EQ(hf::floatToBf16(0.0f), 0x0000);
  EXPECT_EQ(hf::floatToBf16(-0.0f), 0x8000);
  EXPECT_EQ(hf::bf16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(hf::bf16ToFloat(0x4049), 3.140625f);
  EXPECT_TRUE(std::signbit(hf::bf16ToFloat(0x8000)));
  // Round to nearest, ties to even (bf16 has 7 mantissa bits).
  const float ulp = std::ldexp(1.0f, -7);
  EXPECT_EQ(hf::floatToBf16(1.0f + ulp / 2), 0x3F80);     // tie -> even
  EXPECT_EQ(hf::floatToBf16(1.0f + 3 * ulp / 2), 0x3F82); // tie -> even
  EXPECT_EQ(hf::floatToBf16(std::nextafter(1.0f + ulp / 2, 2.0f)), 0x3F81);
  EXPECT_EQ(hf::floatToBf16(std::nextafter(1.0f + ulp / 2, 0.0f)), 0x3F80);
  EXPECT_EQ(hf::floatToBf16(-(1.0f + 3 * ulp / 2)), 0xBF82);
  EXPECT_EQ(hf::floatToBf16(3.14159265f), 0x4049);
  // Carry into the exponent; overflow to infinity.
  EXPECT_EQ(hf::floatToBf16(f32(0x3FFFFFFF)), 0x4000);
  EXPECT_EQ(hf::floatToBf16(f32(0x7F7FFFFF)), 0x7F80);
  EXPECT_EQ(hf::floatToBf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(hf::floatToBf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  // NaN stays NaN, including a NaN whose payload lies in the low half.
  EXPECT_TRUE(std::isnan(hf::bf16ToFloat(
      hf::floatToBf16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(hf::bf16ToFloat(hf::floatToBf16(f32(0x7F800001)))));
  EXPECT_TRUE(std::isnan(hf::bf16ToFloat(hf::floatToBf16(f32(0xFF800001)))));
  // Every non-NaN bf16 value round trips.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = hf::bf16ToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(hf::floatToBf16(f), h) << std::hex << h;
  }
}

//===----------------------------------------------------------------------===//
// DTypes, decodeElement, scaleToFloat
//===----------------------------------------------------------------------===//

TEST(QuantFormats, DTypeSizes) {
  EXPECT_EQ(dtypeBits(DType::F32), 32u);
  EXPECT_EQ(dtypeBits(DType::I32), 32u);
  EXPECT_EQ(dtypeBits(DType::BF16), 16u);
  EXPECT_EQ(dtypeBits(DType::F8E4M3), 8u);
  EXPECT_EQ(dtypeBits(DType::U8), 8u);
  EXPECT_EQ(dtypeBits(DType::F4E2M1), 4u);
  EXPECT_EQ(dtypeBytes(DType::F4E2M1, 5), 3u);
  EXPECT_EQ(dtypeBytes(DType::F4E2M1, 32), 16u);
  EXPECT_EQ(dtypeBytes(DType::F32, 3), 12u);
  EXPECT_EQ(dtypeBytes(DType::BF16, 3), 6u);
  EXPECT_EQ(dtypeBytes(DType::F8E4M3, 7), 7u);
  EXPECT_STREQ(dtypeName(DType::F8E4M3), "f8E4M3");
  EXPECT_STREQ(dtypeName(DType::F4E2M1), "f4E2M1");
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
}

TEST(QuantFormats, DecodeElementEveryDType) {
  std::vector<float> f = {1.5f, -0.25f, 3e7f};
  EXPECT_EQ(hf::decodeElement(DType::F32, f.data(), 0), 1.5f);
  EXPECT_EQ(hf::decodeElement(DType::F32, f.data(), 2), 3e7f);

  std::vector<int32_t> i = {-7, 123456};
  EXPECT_EQ(hf::decodeElement(DType::I32, i.data(), 0), -7.0f);
  EXPECT_EQ(hf::decodeElement(DType::I32, i.data(), 1), 123456.0f);

  std::vector<uint16_t> h = {0x3F80, 0xC040, 0x4049};
  EXPECT_EQ(hf::decodeElement(DType::BF16, h.data(), 0), 1.0f);
  EXPECT_EQ(hf::decodeElement(DType::BF16, h.data(), 1), -3.0f);
  EXPECT_EQ(hf::decodeElement(DType::BF16, h.data(), 2), 3.140625f);

  std::vector<uint8_t> e4 = {0x38, 0xFE, 0x01, 0x7F};
  EXPECT_EQ(hf::decodeElement(DType::F8E4M3, e4.data(), 0), 1.0f);
  EXPECT_EQ(hf::decodeElement(DType::F8E4M3, e4.data(), 1), -448.0f);
  EXPECT_EQ(hf::decodeElement(DType::F8E4M3, e4.data(), 2),
            std::ldexp(1.0f, -9));
  EXPECT_TRUE(std::isnan(hf::decodeElement(DType::F8E4M3, e4.data(), 3)));

  // Packed FP4: element 2i in the low nibble, 2i+1 in the high nibble.
  std::vector<uint8_t> e2 = {0x9A, 0x71, 0x0F};
  const float want[6] = {-1.0f, -0.5f, 0.5f, 6.0f, -6.0f, 0.0f};
  for (int k = 0; k < 6; ++k)
    EXPECT_EQ(hf::decodeElement(DType::F4E2M1, e2.data(), k), want[k]) << k;

  std::vector<uint8_t> u = {0, 200, 255};
  EXPECT_EQ(hf::decodeElement(DType::U8, u.data(), 1), 200.0f);
  EXPECT_EQ(hf::decodeElement(DType::U8, u.data(), 2), 255.0f);
}

TEST(QuantFormats, ScaleToFloat) {
  std::vector<uint8_t> f = floatBytes({0.75f, -2.0f});
  EXPECT_EQ(hf::scaleToFloat(ScaleType::F32, f.data(), 1), -2.0f);
  std::vector<uint8_t> c = {0x38, 0x3C, 127, 130};
  EXPECT_EQ(hf::scaleToFloat(ScaleType::E4M3, c.data(), 1), 1.5f);
  EXPECT_EQ(hf::scaleToFloat(ScaleType::E8M0, c.data(), 2), 1.0f);
  EXPECT_EQ(hf::scaleToFloat(ScaleType::E8M0, c.data(), 3), 8.0f);
}

//===----------------------------------------------------------------------===//
// KV cache codecs
//===----------------------------------------------------------------------===//

TEST(QuantFormats, KVEncodeF8E4M3) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {
      1.0625f, 500.0f, -1e9f, 0.3f, nan, std::ldexp(1.0f, -10), -1.1875f};
  std::vector<uint8_t> buf(x.size() + 2, 0xAA);
  hf::encodeKV(DType::F8E4M3, x.data(), static_cast<int64_t>(x.size()),
               buf.data(), nullptr);
  const uint8_t want[] = {0x38, 0x7E, 0xFE, 0x2A, 0x7F, 0x00, 0xBA};
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(buf[i], want[i]) << i;
  EXPECT_EQ(buf[x.size()], 0xAA); // nothing written past the head
  const float dec[] = {1.0f, 448.0f, -448.0f, 0.3125f, nan, 0.0f, -1.25f};
  for (size_t i = 0; i < x.size(); ++i) {
    float v = hf::decodeKV(DType::F8E4M3, buf.data(), nullptr,
                           static_cast<int64_t>(i));
    if (std::isnan(dec[i]))
      EXPECT_TRUE(std::isnan(v));
    else
      EXPECT_EQ(v, dec[i]) << i;
  }
}

TEST(QuantFormats, KVEncodeF32AndBF16) {
  std::vector<float> x = {1.0f + std::ldexp(1.0f, -8), -3.0f, 0.1f};
  std::vector<float> f(3);
  hf::encodeKV(DType::F32, x.data(), 3, f.data(), nullptr);
  EXPECT_EQ(f, x);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(hf::decodeKV(DType::F32, f.data(), nullptr, i), x[i]);
  std::vector<uint16_t> h(3);
  hf::encodeKV(DType::BF16, x.data(), 3, h.data(), nullptr);
  EXPECT_EQ(h[0], 0x3F80); // the tie rounds to even
  EXPECT_EQ(h[1], 0xC040);
  EXPECT_EQ(hf::decodeKV(DType::BF16, h.data(), nullptr, 0), 1.0f);
  EXPECT_EQ(hf::decodeKV(DType::BF16, h.data(), nullptr, 1), -3.0f);
  EXPECT_EQ(hf::decodeKV(DType::BF16, h.data(), nullptr, 2),
            hf::bf16ToFloat(hf::floatToBf16(0.1f)));
}

TEST(QuantFormats, KVEncodeNVFP4) {
  // Four groups of 16 (a head of 64 values).
  std::vector<float> x;
  // Group 0: amax 6 -> s = e4m3(1) = 1: the values are the E2M1 grid.
  const float g0[16] = {0,    .5f, 1,     1.5f, 2,  3,  4,  6,
                        -.5f, -1,  -1.5f, -2,   -3, -4, -6, .25f};
  x.insert(x.end(), g0, g0 + 16);
  // Group 1: amax 3 -> s = e4m3(0.5) = 0.5; q = e2m1(x / 0.5).
  const float g1[16] = {3,    -3,   0.75f, 0.7f, 0.625f, 1.25f, -2.2f, 0,
                        0.1f, 0.2f, 0.3f,  1.0f, 1.75f,  2.75f, -0.9f, 0.5f};
  x.insert(x.end(), g1, g1 + 16);
  // Group 2: amax 1e-4: amax / 6 rounds to E4M3 0, so s = 0 and q = 0.
  for (int i = 0; i < 16; ++i)
    x.push_back(i % 2 ? 1e-4f : -1e-4f);
  // Group 3: amax 6.375 -> s = e4m3(1.0625) = 1 (tie to even); 6.375
  // saturates to 6.
  for (int i = 0; i < 16; ++i)
    x.push_back(i == 3 ? 6.375f : i == 4 ? -6.375f : i == 5 ? 0.75f : 0.0f);

  std::vector<uint8_t> data(32 + 4, 0xAA), scales(4 + 2, 0xAA);
  hf::encodeKV(DType::F4E2M1, x.data(), 64, data.data(), scales.data());
  EXPECT_EQ(scales[0], 0x38);
  EXPECT_EQ(scales[1], 0x30);
  EXPECT_EQ(scales[2], 0x00);
  EXPECT_EQ(scales[3], 0x38);
  EXPECT_EQ(scales[4], 0xAA); // one scale per 16 values, nothing more
  EXPECT_EQ(data[32], 0xAA);  // n / 2 bytes
  // Group 0 packed by hand: codes 0..7, 9..15, 0; even element low.
  const uint8_t bytes0[8] = {0x10, 0x32, 0x54, 0x76, 0xA9, 0xCB, 0xED, 0x0F};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(data[i], bytes0[i]) << i;
  // Group 1 codes: 6->7, -6->15, 1.5->3, 1.4->3, 1.25->2, 2.5->4,
  // -4.4->14, 0, 0.2->0, 0.4->1, 0.6->1, 2->4, 3.5->6, 5.5->7, -1.8->12,
  // 1->2.
  const uint8_t codes1[16] = {7, 15, 3, 3, 2, 4, 14, 0,
                              0, 1,  1, 4, 6, 7, 12, 2};
  for (int i = 0; i < 16; i += 2)
    EXPECT_EQ(data[8 + i / 2], codes1[i] | (codes1[i + 1] << 4)) << i;
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(data[16 + i], 0) << i;
  const float dec1[16] = {3,    -3,    0.75f, 0.75f, 0.5f, 1.0f, -2.0f, 0,
                          0.0f, 0.25f, 0.25f, 1.0f,  2.0f, 3.0f, -1.0f, 0.5f};
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(hf::decodeKV(DType::F4E2M1, data.data(), scales.data(), i),
              g0[i] == 0.25f ? 0.0f : g0[i])
        << i;
    EXPECT_EQ(hf::decodeKV(DType::F4E2M1, data.data(), scales.data(), 16 + i),
              dec1[i])
        << i;
    EXPECT_EQ(hf::decodeKV(DType::F4E2M1, data.data(), scales.data(), 32 + i),
              0.0f)
        << i;
  }
  EXPECT_EQ(hf::decodeKV(DType::F4E2M1, data.data(), scales.data(), 48 + 3),
            6.0f);
  EXPECT_EQ(hf::decodeKV(DType::F4E2M1, data.data(), scales.data(), 48 + 4),
            -6.0f);
  EXPECT_EQ(hf::decodeKV(DType::F4E2M1, data.data(), scales.data(), 48 + 5),
            1.0f); // 0.75 ties to 1
}

//===----------------------------------------------------------------------===//
// BlockScaleDesc
//===----------------------------------------------------------------------===//

TEST(QuantFormats, ScaleOfWithOriginsMatricesAndGlobals) {
  // Two matrices of 3 x 5; blocks of 2 x 4; element (0, 0) lies at (1, 3)
  // of the block grid, so each matrix touches 2 x 2 blocks:
  //   block row (r + 1) / 2: r = 0 -> 0, r = 1, 2 -> 1
  //   block col (c + 3) / 4: c = 0 -> 0, c = 1..4 -> 1
  std::vector<uint8_t> scales = floatBytes({1, 2, 3, 4, 5, 6, 7, 8});
  std::vector<float> globals = {2.0f, 10.0f};
  BlockScaleDesc d;
  d.type = ScaleType::F32;
  d.rows = 3;
  d.cols = 5;
  d.blockRows = 2;
  d.blockCols = 4;
  d.rowOrigin = 1;
  d.colOrigin = 3;
  d.gridRows = 2;
  d.gridCols = 2;
  d.scales = scales.data();
  d.globals = globals.data();
  auto at = [&](int m, int r, int c) { return d.scaleOf(m * 15 + r * 5 + c); };
  EXPECT_EQ(at(0, 0, 0), 1 * 2.0f);
  EXPECT_EQ(at(0, 0, 1), 2 * 2.0f);
  EXPECT_EQ(at(0, 0, 4), 2 * 2.0f);
  EXPECT_EQ(at(0, 1, 0), 3 * 2.0f);
  EXPECT_EQ(at(0, 2, 0), 3 * 2.0f);
  EXPECT_EQ(at(0, 2, 3), 4 * 2.0f);
  EXPECT_EQ(at(1, 0, 0), 5 * 10.0f);
  EXPECT_EQ(at(1, 0, 2), 6 * 10.0f);
  EXPECT_EQ(at(1, 1, 0), 7 * 10.0f);
  EXPECT_EQ(at(1, 2, 4), 8 * 10.0f);
  // Every element, from the grid formula.
  for (int m = 0; m < 2; ++m)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 5; ++c) {
        int g = (m * 2 + (r + 1) / 2) * 2 + (c + 3) / 4;
        EXPECT_EQ(at(m, r, c), (g + 1) * globals[m]) << m << r << c;
      }
  // Without globals.
  d.globals = nullptr;
  EXPECT_EQ(at(1, 2, 4), 8.0f);
  EXPECT_EQ(at(0, 0, 0), 1.0f);
}

TEST(QuantFormats, ScaleOfE4M3AndE8M0) {
  // NVFP4-like: 2 rows of 24, blocks of 1 x 16, the slice starting at
  // column 8 of its first block.
  std::vector<uint8_t> e4 = {0x38, 0x40, 0x30, 0x7E};
  BlockScaleDesc d;
  d.type = ScaleType::E4M3;
  d.rows = 2;
  d.cols = 24;
  d.blockRows = 1;
  d.blockCols = 16;
  d.colOrigin = 8;
  d.gridRows = 2;
  d.gridCols = 2;
  d.scales = e4.data();
  EXPECT_EQ(d.scaleOf(0), 1.0f);
  EXPECT_EQ(d.scaleOf(7), 1.0f);
  EXPECT_EQ(d.scaleOf(8), 2.0f);
  EXPECT_EQ(d.scaleOf(23), 2.0f);
  EXPECT_EQ(d.scaleOf(24 + 7), 0.5f);
  EXPECT_EQ(d.scaleOf(24 + 8), 448.0f);
  // MXFP4-like, transposed: blocks of 32 rows x 1 column, rowOrigin 30.
  std::vector<uint8_t> e8 = {127, 130, 126, 120};
  BlockScaleDesc m;
  m.type = ScaleType::E8M0;
  m.rows = 4;
  m.cols = 2;
  m.blockRows = 32;
  m.blockCols = 1;
  m.rowOrigin = 30;
  m.gridRows = 2;
  m.gridCols = 2;
  m.scales = e8.data();
  EXPECT_EQ(m.scaleOf(0), 1.0f);                         // (0, 0): block (0, 0)
  EXPECT_EQ(m.scaleOf(1), 8.0f);                         // (0, 1): block (0, 1)
  EXPECT_EQ(m.scaleOf(2 * 2 + 0), 0.5f);                 // (2, 0): block (1, 0)
  EXPECT_EQ(m.scaleOf(3 * 2 + 1), std::ldexp(1.0f, -7)); // (3, 1)
}

//===----------------------------------------------------------------------===//
// Quantizers
//===----------------------------------------------------------------------===//

TEST(QuantFormats, QuantizeFP8BlockHandValues) {
  // [3, 5] with 2 x 2 blocks -> a 2 x 3 grid. Each block's values are E4M3
  // codes times the block's scale with one of them 448 * scale, so they
  // round trip exactly (the last block, a single 5.0, is rounded).
  const float t10 = std::ldexp(1.0f, -10);
  HostTensor t = tensor({3, 5}, {224, -0.5f, 0, 0, 1344,     //
                                 0.0078125f, t10, 0, 0, -18, //
                                 3.5f, -3.5f, -560, 0.390625f, 5.0f});
  QuantHost q = quantizeFP8Block(t, "w", 2);
  EXPECT_EQ(q.dtype, DType::F8E4M3);
  EXPECT_EQ(q.shape, t.shape);
  ASSERT_TRUE(q.scaled);
  EXPECT_EQ(q.desc.type, ScaleType::F32);
  EXPECT_EQ(q.desc.rows, 3);
  EXPECT_EQ(q.desc.cols, 5);
  EXPECT_EQ(q.desc.blockRows, 2);
  EXPECT_EQ(q.desc.blockCols, 2);
  EXPECT_EQ(q.desc.rowOrigin, 0);
  EXPECT_EQ(q.desc.colOrigin, 0);
  EXPECT_EQ(q.desc.gridRows, 2);
  EXPECT_EQ(q.desc.gridCols, 3);
  EXPECT_TRUE(q.globals.empty());
  ASSERT_EQ(q.scales.size(), 6u * 4);
  EXPECT_EQ(scaleF32(q.scales, 0), 0.5f);
  EXPECT_EQ(scaleF32(q.scales, 1), 1.0f); // zero block
  EXPECT_EQ(scaleF32(q.scales, 2), 3.0f);
  EXPECT_EQ(scaleF32(q.scales, 3), 0.0078125f);
  EXPECT_EQ(scaleF32(q.scales, 4), 1.25f);
  EXPECT_EQ(scaleF32(q.scales, 5), 5.0f / 448.0f);
  const uint8_t codes[15] = {0x7E, 0xB8, 0,    0,    0x7E, //
                             0x08, 0x01, 0,    0,    0xCC, //
                             0x7E, 0xFE, 0xFE, 0x2A, 0x7E};
  ASSERT_EQ(q.data.size(), 15u);
  for (int i = 0; i < 15; ++i)
    EXPECT_EQ(q.data[i], codes[i]) << i;
  HostTensor d = dequantize(q);
  EXPECT_EQ(d.shape, t.shape);
  for (int i = 0; i < 14; ++i)
    EXPECT_EQ(d.data[i], t.data[i]) << i;
  EXPECT_FLOAT_EQ(d.data[14], 5.0f);
  for (int i = 0; i < 15; ++i)
    EXPECT_EQ(q.value(i), d.data[i]);
  EXPECT_EQ(q.numel(), 15);
  EXPECT_EQ(q.matrices(), 1);
  EXPECT_EQ(q.scaleBytes(), 24u);
}

TEST(QuantFormats, QuantizeFP8BlockRounds) {
  // amax 448 -> scale 1; the other values round to E4M3.
  HostTensor t = tensor({1, 4}, {448, 1.0625f, 1.1875f, -0.3f});
  QuantHost q = quantizeFP8Block(t, "w");
  EXPECT_EQ(q.desc.blockRows, 1); // the default 128 clamped to the matrix
  EXPECT_EQ(q.desc.blockCols, 4);
  EXPECT_EQ(q.desc.gridRows, 1);
  EXPECT_EQ(q.desc.gridCols, 1);
  EXPECT_EQ(scaleF32(q.scales, 0), 1.0f);
  EXPECT_EQ(q.data, (std::vector<uint8_t>{0x7E, 0x38, 0x3A, 0xAA}));
  EXPECT_EQ(dequantize(q).data,
            (std::vector<float>{448, 1.0f, 1.25f, -0.3125f}));
}

TEST(QuantFormats, QuantizeFP8BlockDefaultGridAndMatrices) {
  // [2, 130, 3]: default 128 x 128 blocks -> per matrix a 2 x 1 grid.
  HostTensor t;
  t.shape = {2, 130, 3};
  t.data.assign(2 * 130 * 3, 0.0f);
  t.data[0] = 448 * 0.5f;               // matrix 0, block (0, 0)
  t.data[129 * 3 + 2] = -448 * 2.0f;    // matrix 0, block (1, 0)
  t.data[390 + 5 * 3 + 1] = 448 * 4.0f; // matrix 1, block (0, 0)
  t.data[390 + 1] = 3 * 4.0f;
  QuantHost q = quantizeFP8Block(t, "w");
  EXPECT_EQ(q.desc.blockRows, 128);
  EXPECT_EQ(q.desc.blockCols, 3);
  EXPECT_EQ(q.desc.gridRows, 2);
  EXPECT_EQ(q.desc.gridCols, 1);
  EXPECT_EQ(q.matrices(), 2);
  ASSERT_EQ(q.scales.size(), 4u * 4);
  EXPECT_EQ(scaleF32(q.scales, 0), 0.5f);
  EXPECT_EQ(scaleF32(q.scales, 1), 2.0f);
  EXPECT_EQ(scaleF32(q.scales, 2), 4.0f);
  EXPECT_EQ(scaleF32(q.scales, 3), 1.0f); // matrix 1's second block: zero
  EXPECT_EQ(dequantize(q).data, t.data);
  EXPECT_EQ(q.data[390 + 1], 0x44); // 3.0
}

TEST(QuantFormats, QuantizeFP8Tensor) {
  HostTensor t = tensor({2, 2, 3}, {448, 1, -2, 0.5f, 0, 3, //
                                    -896, 2, 1, 0, 0, 0.5f});
  QuantHost q = quantizeFP8Tensor(t, "w");
  EXPECT_EQ(q.dtype, DType::F8E4M3);
  EXPECT_EQ(q.desc.type, ScaleType::F32);
  EXPECT_EQ(q.desc.blockRows, 2);
  EXPECT_EQ(q.desc.blockCols, 3);
  EXPECT_EQ(q.desc.gridRows, 1);
  EXPECT_EQ(q.desc.gridCols, 1);
  ASSERT_EQ(q.scales.size(), 8u);
  EXPECT_EQ(scaleF32(q.scales, 0), 1.0f);
  EXPECT_EQ(scaleF32(q.scales, 1), 2.0f);
  EXPECT_EQ(q.data, (std::vector<uint8_t>{0x7E, 0x38, 0xC0, 0x30, 0, 0x44, 0xFE,
                                          0x38, 0x30, 0, 0, 0x28}));
  EXPECT_EQ(dequantize(q).data, t.data);
}

TEST(QuantFormats, QuantizeNVFP4HandValues) {
  // [2, 32]: amax 1344 -> s2 = 1344 / (6 * 448) = 0.5.
  std::vector<float> x(64, 0.0f);
  // Row 0, cols 0..15: amax 3 -> s = e4m3(3 / (6 * 0.5)) = 1; x / 0.5 is
  // the E2M1 grid (0.1 / 0.5 = 0.2 -> 0).
  const float b00[16] = {0,     .25f, .5f,   .75f,  1,     1.5f, 2,  3,
                         -.25f, -.5f, -.75f, -1.0f, -1.5f, -2,   -3, 0.1f};
  std::copy(b00, b00 + 16, x.begin());
  // Row 0, cols 16..31: amax 1344 -> s = e4m3(448) = 448, denominator 224.
  x[16] = 1344; // 6
  x[17] = -672; // -3
  x[18] = 112;  // 0.5
  x[19] = 336;  // 1.5
  x[20] = 150;  // 0.67 -> 0.5: 112
  // Row 1, cols 0..15: all zero -> scale code 0.
  // Row 1, cols 16..31: amax 4.5 -> s = e4m3(1.5), denominator 0.75.
  x[48] = 4.5f;     // 6
  x[49] = -0.9375f; // -1.25 -> -1: -0.75
  x[50] = 1.875f;   // 2.5 -> 2: 1.5
  x[51] = 0.375f;   // 0.5
  x[52] = 0.05f;    // 0.067 -> 0
  HostTensor t = tensor({2, 32}, x);
  QuantHost q = quantizeNVFP4(t, "w");
  EXPECT_EQ(q.dtype, DType::F4E2M1);
  ASSERT_TRUE(q.scaled);
  EXPECT_EQ(q.desc.type, ScaleType::E4M3);
  EXPECT_EQ(q.desc.blockRows, 1);
  EXPECT_EQ(q.desc.blockCols, 16);
  EXPECT_EQ(q.desc.gridRows, 2);
  EXPECT_EQ(q.desc.gridCols, 2);
  EXPECT_EQ(q.globals, std::vector<float>{0.5f});
  EXPECT_EQ(q.scales, (std::vector<uint8_t>{0x38, 0x7E, 0x00, 0x3C}));
  ASSERT_EQ(q.data.size(), 32u);
  // x / 0.5 = 0 .5 1 1.5 2 3 4 6 -.5 -1 -1.5 -2 -3 -4 -6 .2 -> codes
  // 0 1 2 3 4 5 6 7 9 10 11 12 13 14 15 0, even element low.
  const uint8_t want0[8] = {0x10, 0x32, 0x54, 0x76, 0xA9, 0xCB, 0xED, 0x0F};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(q.data[i], want0[i]) << i;
  EXPECT_EQ(q.data[8], 7 | (13 << 4)); // 6, -3
  EXPECT_EQ(q.data[9], 1 | (3 << 4));  // 0.5, 1.5
  EXPECT_EQ(q.data[10], 1);            // 0.5, 0
  for (int i = 16; i < 24; ++i)
    EXPECT_EQ(q.data[i], 0) << i;
  EXPECT_EQ(q.data[24], 7 | (10 << 4)); // 6, -1
  EXPECT_EQ(q.data[25], 4 | (1 << 4));  // 2, 0.5
  EXPECT_EQ(q.data[26], 0);
  std::vector<float> want = x;
  want[15] = 0.0f;
  want[20] = 112.0f;
  want[49] = -0.75f;
  want[50] = 1.5f;
  want[52] = 0.0f;
  EXPECT_EQ(dequantize(q).data, want);
}

TEST(QuantFormats, QuantizeNVFP4BlockScaleRoundsAndPerMatrixGlobals) {
  // [3, 1, 16]: three matrices with their own s2.
  std::vector<float> x(48, 0.0f);
  // Matrix 0: amax 2688 -> s2 = 1; block amax 2688 -> s = e4m3(448) = 448;
  // 1 / 448 -> 0.
  x[0] = 2688;
  x[1] = 1;
  // Matrix 1: all zero -> s2 = 1, scale code 0.
  // Matrix 2: s2 = 3.2 / 2688; the block scale 3.2 / (6 s2) = 448 is
  // exact only up to rounding, so check it through the codes.
  x[32] = 3.2f;
  x[33] = -1.6f;
  HostTensor t = tensor({3, 1, 16}, x);
  QuantHost q = quantizeNVFP4(t, "w");
  ASSERT_EQ(q.globals.size(), 3u);
  EXPECT_EQ(q.globals[0], 1.0f);
  EXPECT_EQ(q.globals[1], 1.0f);
  EXPECT_FLOAT_EQ(q.globals[2], 3.2f / 2688.0f);
  EXPECT_EQ(q.matrices(), 3);
  ASSERT_EQ(q.scales.size(), 3u);
  EXPECT_EQ(q.scales[0], 0x7E);
  EXPECT_EQ(q.scales[1], 0x00);
  EXPECT_EQ(q.scales[2], 0x7E);
  HostTensor d = dequantize(q);
  EXPECT_EQ(d.data[0], 2688.0f);
  EXPECT_EQ(d.data[1], 0.0f);
  for (int i = 16; i < 32; ++i)
    EXPECT_EQ(d.data[i], 0.0f);
  EXPECT_FLOAT_EQ(d.data[32], 3.2f);
  EXPECT_FLOAT_EQ(d.data[33], -1.6f); // -3 * 448 * s2 = -1.6
  // A block scale that E4M3 rounds: [1, 16] with amax 3.2 in a tensor of
  // amax 6 * 448 * 0.5: s2 = 0.5, s = e4m3(3.2 / 3) = e4m3(1.0667) = 1.125,
  // 3.2 / 0.5625 = 5.69 -> 6 -> 3.375.
  HostTensor t2 = tensor({1, 32}, std::vector<float>(32, 0.0f));
  t2.data[0] = 3.2f;
  t2.data[16] = 1344;
  QuantHost q2 = quantizeNVFP4(t2, "w");
  EXPECT_EQ(q2.globals, std::vector<float>{0.5f});
  EXPECT_EQ(q2.scales, (std::vector<uint8_t>{0x39, 0x7E}));
  EXPECT_EQ(dequantize(q2).data[0], 3.375f);
}

TEST(QuantFormats, QuantizeMXFP4HandValues) {
  // [1, 160]: five blocks of 32.
  std::vector<float> x(160, 0.0f);
  // Block 0: amax 6 -> 2^(2 - 2) = 1 (code 127): the E2M1 grid.
  const float grid[16] = {0,    .5f, 1,     1.5f, 2,  3,  4,  6,
                          -.5f, -1,  -1.5f, -2,   -3, -4, -6, 0.25f};
  for (int i = 0; i < 32; ++i)
    x[i] = grid[i % 16];
  // Block 1: amax 0.75 -> floor(log2) = -1 -> 2^-3 (code 124).
  x[32] = 0.75f;    // 6
  x[33] = -0.75f;   // -6
  x[34] = 0.0625f;  // 0.5
  x[35] = 0.03125f; // 0.25 -> 0
  x[36] = 0.2f;     // 1.6 -> 1.5: 0.1875
  // Block 2: amax 8 -> 2^(3 - 2) = 2 (code 128).
  x[64] = 8;  // 4
  x[65] = 7;  // 3.5 -> 4: 8
  x[66] = -5; // -2.5 -> -2: -4
  x[67] = 1;  // 0.5
  // Block 3: amax 7 -> 2^(2 - 2) = 1: 7 saturates to 6.
  x[96] = 7;
  x[97] = -7;
  x[98] = 4; // exact
  // Block 4: zero -> code 0.
  HostTensor t = tensor({1, 160}, x);
  QuantHost q = quantizeMXFP4(t, "w");
  EXPECT_EQ(q.dtype, DType::F4E2M1);
  EXPECT_EQ(q.desc.type, ScaleType::E8M0);
  EXPECT_EQ(q.desc.blockRows, 1);
  EXPECT_EQ(q.desc.blockCols, 32);
  EXPECT_EQ(q.desc.gridRows, 1);
  EXPECT_EQ(q.desc.gridCols, 5);
  EXPECT_TRUE(q.globals.empty());
  EXPECT_EQ(q.scales, (std::vector<uint8_t>{127, 124, 128, 127, 0}));
  ASSERT_EQ(q.data.size(), 80u);
  EXPECT_EQ(q.data[0], 0x10);
  EXPECT_EQ(q.data[7], 0x0F); // -6, 0.25 -> 0
  EXPECT_EQ(q.data[16], 7 | (15 << 4));
  EXPECT_EQ(q.data[17], 1 | (0 << 4));
  EXPECT_EQ(q.data[18], 3);
  EXPECT_EQ(q.data[32], 6 | (6 << 4));
  EXPECT_EQ(q.data[33], 12 | (1 << 4));
  EXPECT_EQ(q.data[48], 7 | (15 << 4));
  EXPECT_EQ(q.data[49], 6);
  std::vector<float> want = x;
  for (int i = 0; i < 32; ++i)
    if (grid[i % 16] == 0.25f)
      want[i] = 0.0f;
  want[35] = 0.0f;
  want[36] = 0.1875f;
  want[65] = 8.0f;
  want[66] = -4.0f;
  want[96] = 6.0f;
  want[97] = -6.0f;
  EXPECT_EQ(dequantize(q).data, want);
}

TEST(QuantFormats, QuantizeMXFP4PowerOfTwoAmax) {
  // amax exactly 4 -> floor(log2 4) = 2 -> scale 1; amax 2^-3 -> 2^-5.
  HostTensor t = tensor({2, 32}, std::vector<float>(64, 0.0f));
  t.data[5] = -4;
  t.data[6] = 1.1f; // 1.1 -> 1
  t.data[32] = 0.125f;
  t.data[33] = 0.0625f;
  QuantHost q = quantizeMXFP4(t, "w");
  EXPECT_EQ(q.scales, (std::vector<uint8_t>{127, 122}));
  HostTensor d = dequantize(q);
  EXPECT_EQ(d.data[5], -4.0f);
  EXPECT_EQ(d.data[6], 1.0f);
  EXPECT_EQ(d.data[32], 0.125f);
  EXPECT_EQ(d.data[33], 0.0625f);
}

TEST(QuantFormats, QuantizeNVFP4OddColumnsAndOneDim) {
  // [3, 5]: rows of 5 (one block per row, blockCols clamped to 5); the
  // packed elements run on across rows (row 1 starts in a high nibble).
  // amax 2688 -> s2 = 1; row amax 6 * 448 * 2^-k -> s = 448 * 2^-k.
  HostTensor t = tensor({3, 5}, {2688, 1344, -672, 0, 448, //
                                 -6, 3, 1.5f, 0.5f, 0,     //
                                 0.75f, 0, 0, -0.75f, 0.25f});
  QuantHost q = quantizeNVFP4(t, "w");
  EXPECT_EQ(q.desc.blockCols, 5);
  EXPECT_EQ(q.desc.gridRows, 3);
  EXPECT_EQ(q.desc.gridCols, 1);
  EXPECT_EQ(q.globals, std::vector<float>{1.0f});
  // Row scales: e4m3(2688 / 6) = 448, e4m3(1) = 1, e4m3(0.125) = 0x20.
  EXPECT_EQ(q.scales, (std::vector<uint8_t>{0x7E, 0x38, 0x20}));
  ASSERT_EQ(q.data.size(), 8u);
  // codes: 7 5 11 0 2 | 15 5 3 1 0 | 7 0 0 15 4 -> bytes (even low)
  EXPECT_EQ(q.data, (std::vector<uint8_t>{0x57, 0x0B, 0xF2, 0x35, 0x01, 0x07,
                                          0xF0, 0x04}));
  std::vector<float> want = t.data;
  want[14] = 0.25f; // 2 * 0.125 exactly
  EXPECT_EQ(dequantize(q).data, want);
  // 1-D: one row.
  HostTensor v = tensor({4}, {6, -3, 1, 0});
  QuantHost q1 = quantizeNVFP4(v, "v");
  EXPECT_EQ(q1.desc.rows, 1);
  EXPECT_EQ(q1.desc.cols, 4);
  EXPECT_EQ(q1.matrices(), 1);
  EXPECT_FLOAT_EQ(q1.globals[0], 6.0f / 2688.0f);
  for (int i = 0; i < 4; ++i)
    EXPECT_FLOAT_EQ(q1.value(i), v.data[i]) << i;
  QuantHost q8 = quantizeFP8Block(v, "v");
  EXPECT_EQ(dequantize(q8).data[1], -3.0f);
  EXPECT_EQ(scaleF32(q8.scales, 0), 6.0f / 448.0f);
}

TEST(QuantFormats, QuantizersRejectNonFinite) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  HostTensor a = tensor({2, 16}, std::vector<float>(32, 1.0f));
  a.data[3] = nan;
  HostTensor b = tensor({2, 16}, std::vector<float>(32, 1.0f));
  b.data[17] = -inf;
  std::string e = errorOf([&] { quantizeFP8Block(a, "layers.0.q.weight"); });
  EXPECT_HAS(e, "layers.0.q.weight");
  EXPECT_HAS(e, "element 3");
  EXPECT_HAS(e, "not finite");
  e = errorOf([&] { quantizeFP8Tensor(b, "wt"); });
  EXPECT_HAS(e, "wt");
  EXPECT_HAS(e, "element 17");
  e = errorOf([&] { quantizeNVFP4(a, "wn"); });
  EXPECT_HAS(e, "wn");
  EXPECT_HAS(e, "element 3");
  e = errorOf([&] { quantizeMXFP4(b, "wm"); });
  EXPECT_HAS(e, "wm");
  EXPECT_HAS(e, "element 17");
}

TEST(QuantFormats, ToF32ToBF16AndDescribe) {
  HostTensor t =
      tensor({2, 2}, {1.0f, -2.5f, 1.0f + std::ldexp(1.0f, -8), 0.1f});
  QuantHost f = toF32(t);
  EXPECT_EQ(f.dtype, DType::F32);
  EXPECT_FALSE(f.scaled);
  EXPECT_EQ(dequantize(f).data, t.data);
  EXPECT_EQ(f.describe(), "f32");
  EXPECT_EQ(f.scaleBytes(), 0u);
  QuantHost h = toBF16(t);
  EXPECT_EQ(h.dtype, DType::BF16);
  ASSERT_EQ(h.data.size(), 8u);
  EXPECT_EQ(h.data[0], 0x80); // little-endian 0x3F80
  EXPECT_EQ(h.data[1], 0x3F);
  HostTensor hd = dequantize(h);
  EXPECT_EQ(hd.data[0], 1.0f);
  EXPECT_EQ(hd.data[1], -2.5f);
  EXPECT_EQ(hd.data[2], 1.0f); // tie to even
  EXPECT_EQ(hd.data[3], hf::bf16ToFloat(hf::floatToBf16(0.1f)));
  EXPECT_EQ(h.describe(), "bf16");

  HostTensor w = tensor({256, 256}, std::vector<float>(256 * 256, 0.5f));
  std::string d8 = quantizeFP8Block(w, "w").describe();
  EXPECT_HAS(d8, dtypeName(DType::F8E4M3));
  EXPECT_HAS(d8, "128x128");
  EXPECT_HAS(d8, "f32");
  EXPECT_EQ(d8.find("per matrix"), std::string::npos);
  std::string d4 = quantizeNVFP4(w, "w").describe();
  EXPECT_HAS(d4, dtypeName(DType::F4E2M1));
  EXPECT_HAS(d4, "1x16");
  EXPECT_HAS(d4, "e4m3");
  EXPECT_HAS(d4, "per matrix");
  std::string dm = quantizeMXFP4(w, "w").describe();
  EXPECT_HAS(dm, "1x32");
  EXPECT_HAS(dm, "e8m0");
  EXPECT_EQ(dm.find("per matrix"), std::string::npos);
}

TEST(QuantFormats, DequantizeHandBuiltQuantHost) {
  // FP4 [2, 3] with E4M3 scales in blocks of 1 x 2 starting at column 1,
  // and a global per matrix (one matrix).
  QuantHost q;
  q.dtype = DType::F4E2M1;
  q.shape = {2, 3};
  // codes row-major: 1 2 15 | 7 9 4 -> bytes (even low).
  q.data = {0x21, 0x7F, 0x49};
  q.scaled = true;
  q.desc.type = ScaleType::E4M3;
  q.desc.rows = 2;
  q.desc.cols = 3;
  q.desc.blockRows = 1;
  q.desc.blockCols = 2;
  q.desc.colOrigin = 1;
  q.desc.gridRows = 2;
  q.desc.gridCols = 2;                 // (3 + 1 + 1) / 2
  q.scales = {0x38, 0x40, 0x30, 0x48}; // 1 2 | 0.5 4
  q.globals = {0.25f};
  // (0,0): 0.5 * 1; (0,1): 1 * 2; (0,2): -6 * 2; (1,0): 6 * 0.5;
  // (1,1): -0.5 * 4; (1,2): 2 * 4; all times 0.25.
  EXPECT_EQ(dequantize(q).data,
            (std::vector<float>{0.125f, 0.5f, -3.0f, 0.75f, -0.5f, 2.0f}));
  EXPECT_EQ(q.scaleBytes(), 4u + 4u);
  EXPECT_EQ(q.matrices(), 1);
}

//===----------------------------------------------------------------------===//
// Element boxes: pack, permute, stack
//===----------------------------------------------------------------------===//

/// An FP8 box of `rows` x `cols` with codes 0x30 + i and F32 scale
/// `scale(r, c)`.
ElementBox fp8Box(int64_t rows, int64_t cols,
                  const std::function<float(int64_t, int64_t)> &scale) {
  ElementBox b;
  b.dtype = DType::F8E4M3;
  b.scaleType = ScaleType::F32;
  b.shape = {rows, cols};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      b.codes.push_back(static_cast<uint8_t>(0x30 + r * cols + c));
      b.scales.push_back(bits(scale(r, c)));
    }
  return b;
}

void expectSameValues(const QuantHost &q, const ElementBox &b) {
  ASSERT_EQ(q.numel(), b.numel());
  for (int64_t i = 0; i < b.numel(); ++i) {
    float want = static_cast<float>(refE4m3(b.codes[i]) *
                                    static_cast<double>(f32(b.scales[i])));
    if (b.dtype == DType::F8E4M3 && b.scaleType == ScaleType::F32 &&
        b.globals.empty()) {
      EXPECT_EQ(b.value(i), want) << i;
    }
    EXPECT_EQ(q.value(i), b.value(i)) << i;
  }
  EXPECT_EQ(dequantize(q).data, dequantize(b).data);
}

TEST(QuantFormats, PackRegularGridWithOrigins) {
  // [3, 4], blocks 2 x 2, element (0, 0) at (1, 1) of the grid: the grid
  // is 2 x 3 with scale S[(r + 1) / 2][(c + 1) / 2] = 1 + 3 br + bc.
  ElementBox b = fp8Box(3, 4, [](int64_t r, int64_t c) {
    return static_cast<float>(1 + 3 * ((r + 1) / 2) + (c + 1) / 2);
  });
  b.blockRows = 2;
  b.blockCols = 2;
  b.rowOrigin = 1;
  b.colOrigin = 1;
  QuantHost q = pack(b);
  EXPECT_EQ(q.dtype, DType::F8E4M3);
  EXPECT_EQ(q.shape, b.shape);
  EXPECT_EQ(q.data, b.codes);
  ASSERT_TRUE(q.scaled);
  EXPECT_EQ(q.desc.type, ScaleType::F32);
  EXPECT_EQ(q.desc.rows, 3);
  EXPECT_EQ(q.desc.cols, 4);
  EXPECT_EQ(q.desc.blockRows, 2);
  EXPECT_EQ(q.desc.blockCols, 2);
  EXPECT_EQ(q.desc.rowOrigin, 1);
  EXPECT_EQ(q.desc.colOrigin, 1);
  EXPECT_EQ(q.desc.gridRows, 2);
  EXPECT_EQ(q.desc.gridCols, 3);
  ASSERT_EQ(q.scales.size(), 6u * 4);
  for (int g = 0; g < 6; ++g)
    EXPECT_EQ(scaleF32(q.scales, g), 1.0f + g) << g;
  EXPECT_TRUE(q.globals.empty());
  expectSameValues(q, b);
}

TEST(QuantFormats, PackTransposedGrid) {
  // Geometry says 1 x 2 blocks from column 1, but the scales run in blocks
  // of 2 rows x 1 column from row 1 (a transposed read).
  ElementBox b = fp8Box(4, 3, [](int64_t r, int64_t c) {
    return static_cast<float>(1 + 3 * ((r + 1) / 2) + c);
  });
  b.blockRows = 1;
  b.blockCols = 2;
  b.rowOrigin = 0;
  b.colOrigin = 1;
  QuantHost q = pack(b);
  EXPECT_EQ(q.desc.blockRows, 2);
  EXPECT_EQ(q.desc.blockCols, 1);
  EXPECT_EQ(q.desc.rowOrigin, 1);
  EXPECT_EQ(q.desc.colOrigin, 0);
  EXPECT_EQ(q.desc.gridRows, 3);
  EXPECT_EQ(q.desc.gridCols, 3);
  for (int g = 0; g < 9; ++g)
    EXPECT_EQ(scaleF32(q.scales, g), 1.0f + g) << g;
  expectSameValues(q, b);
}

TEST(QuantFormats, PackRowsRearranged) {
  // 2 x 2 blocks claimed, but every row has its own scales per column
  // pair: one scale per row and column block.
  ElementBox b = fp8Box(3, 4, [](int64_t r, int64_t c) {
    return static_cast<float>(1 + 2 * r + c / 2);
  });
  b.blockRows = 2;
  b.blockCols = 2;
  QuantHost q = pack(b);
  EXPECT_EQ(q.desc.blockRows, 1);
  EXPECT_EQ(q.desc.blockCols, 2);
  EXPECT_EQ(q.desc.rowOrigin, 0);
  EXPECT_EQ(q.desc.colOrigin, 0);
  EXPECT_EQ(q.desc.gridRows, 3);
  EXPECT_EQ(q.desc.gridCols, 2);
  for (int g = 0; g < 6; ++g)
    EXPECT_EQ(scaleF32(q.scales, g), 1.0f + g) << g;
  expectSameValues(q, b);
}

TEST(QuantFormats, PackRowsRearrangedTransposed) {
  // Geometry 2 x 3 from (1, 0); the scales depend on (r, (c + 1) / 2): only
  // the fourth candidate (1 x blockRows from column rowOrigin) tiles them.
  ElementBox b = fp8Box(3, 4, [](int64_t r, int64_t c) {
    return static_cast<float>(1 + 3 * r + (c + 1) / 2);
  });
  b.blockRows = 2;
  b.blockCols = 3;
  b.rowOrigin = 1;
  b.colOrigin = 0;
  QuantHost q = pack(b);
  EXPECT_EQ(q.desc.blockRows, 1);
  EXPECT_EQ(q.desc.blockCols, 2);
  EXPECT_EQ(q.desc.colOrigin, 1);
  EXPECT_EQ(q.desc.gridRows, 3);
  EXPECT_EQ(q.desc.gridCols, 3);
  for (int g = 0; g < 9; ++g)
    EXPECT_EQ(scaleF32(q.scales, g), 1.0f + g) << g;
  expectSameValues(q, b);
}

TEST(QuantFormats, PackFallsBackToOneScalePerElement) {
  ElementBox b = fp8Box(3, 4, [](int64_t r, int64_t c) {
    return static_cast<float>(1 + 4 * r + c);
  });
  b.blockRows = 2;
  b.blockCols = 2;
  QuantHost q = pack(b);
  EXPECT_EQ(q.desc.blockRows, 1);
  EXPECT_EQ(q.desc.blockCols, 1);
  EXPECT_EQ(q.desc.gridRows, 3);
  EXPECT_EQ(q.desc.gridCols, 4);
  for (int g = 0; g < 12; ++g)
    EXPECT_EQ(scaleF32(q.scales, g), 1.0f + g) << g;
  expectSameValues(q, b);
}

TEST(QuantFormats, PackRejectsGlobalsVaryingInAMatrix) {
  ElementBox b = fp8Box(2, 2, [](int64_t, int64_t) { return 1.0f; });
  b.globals = {1.0f, 1.0f, 2.0f, 1.0f};
  EXPECT_HAS(errorOf([&] { pack(b); }), "inconsistent per-matrix scales");
}

TEST(QuantFormats, PackFP4WithGlobals) {
  ElementBox b;
  b.dtype = DType::F4E2M1;
  b.scaleType = ScaleType::E4M3;
  b.shape = {1, 5};
  b.codes = {1, 2, 15, 7, 9};
  b.scales = {0x38, 0x38, 0x40, 0x40, 0x40}; // 1 1 | 2 2 2
  b.globals.assign(5, 0.5f);
  b.blockRows = 1;
  b.blockCols = 16;
  b.colOrigin = 14; // the box starts two before a block boundary
  EXPECT_EQ(b.value(2), -6.0f * 2 * 0.5f);
  QuantHost q = pack(b);
  EXPECT_EQ(q.dtype, DType::F4E2M1);
  EXPECT_EQ(q.data, (std::vector<uint8_t>{0x21, 0x7F, 0x09}));
  EXPECT_EQ(q.desc.type, ScaleType::E4M3);
  EXPECT_EQ(q.desc.blockRows, 1);
  EXPECT_EQ(q.desc.blockCols, 16);
  EXPECT_EQ(q.desc.colOrigin, 14);
  EXPECT_EQ(q.desc.gridCols, 2);
  EXPECT_EQ(q.scales, (std::vector<uint8_t>{0x38, 0x40}));
  EXPECT_EQ(q.globals, std::vector<float>{0.5f});
  EXPECT_EQ(dequantize(q).data,
            (std::vector<float>{0.25f, 0.5f, -6.0f, 6.0f, -0.5f}));
  EXPECT_EQ(dequantize(b).data, dequantize(q).data);
}

TEST(QuantFormats, StackAndPackPerMatrixGlobals) {
  ElementBox a;
  a.dtype = DType::F4E2M1;
  a.scaleType = ScaleType::E4M3;
  a.shape = {2, 2};
  a.codes = {2, 3, 4, 5};
  a.scales = {0x38, 0x38, 0x40, 0x40};
  a.globals.assign(4, 0.5f);
  a.blockCols = 16;
  ElementBox c = a;
  c.codes = {7, 15, 1, 9};
  c.globals.assign(4, 2.0f);
  ElementBox s = stack({a, c});
  EXPECT_EQ(s.shape, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(s.codes, (std::vector<uint8_t>{2, 3, 4, 5, 7, 15, 1, 9}));
  EXPECT_EQ(s.scales.size(), 8u);
  EXPECT_EQ(s.globals.size(), 8u);
  EXPECT_EQ(dequantize(s).data,
            (std::vector<float>{0.5f, 0.75f, 2.0f, 3.0f, //
                                12.0f, -12.0f, 2.0f, -2.0f}));
  QuantHost q = pack(s);
  EXPECT_EQ(q.globals, (std::vector<float>{0.5f, 2.0f}));
  EXPECT_EQ(q.matrices(), 2);
  EXPECT_EQ(q.desc.blockRows, 1);
  EXPECT_EQ(q.desc.gridRows, 2);
  EXPECT_EQ(q.desc.gridCols, 1);
  EXPECT_EQ(q.scales, (std::vector<uint8_t>{0x38, 0x40, 0x38, 0x40}));
  EXPECT_EQ(dequantize(q).data, dequantize(s).data);
  // Parts of different shapes or formats.
  ElementBox d = a;
  d.shape = {1, 4};
  EXPECT_HAS(errorOf([&] { stack({a, d}); }), "stack");
  ElementBox e = a;
  e.globals.clear();
  EXPECT_HAS(errorOf([&] { stack({a, e}); }), "stack");
  EXPECT_HAS(errorOf([&] { stack({}); }), "stack");
}

TEST(QuantFormats, PermuteTransposes) {
  // [2, 3] -> its transpose [3, 2]: out (r, c) = in (c, r).
  ElementBox b = fp8Box(2, 3, [](int64_t r, int64_t c) {
    return static_cast<float>(1 + 3 * r + c);
  });
  b.globals = {1, 2, 3, 4, 5, 6};
  ElementBox t = permute(b, {0, 3, 1, 4, 2, 5}, {3, 2});
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t.codes,
            (std::vector<uint8_t>{0x30, 0x33, 0x31, 0x34, 0x32, 0x35}));
  EXPECT_EQ(t.globals, (std::vector<float>{1, 4, 2, 5, 3, 6}));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(t.scales[r * 2 + c], b.scales[c * 3 + r]);
      EXPECT_EQ(t.value(r * 2 + c), b.value(c * 3 + r));
    }
  EXPECT_HAS(errorOf([&] { permute(b, {0, 1}, {3, 2}); }), "permute");
  EXPECT_HAS(errorOf([&] {
               permute(b, {0, 3, 1, 4, 2, 5}, {4, 2});
             }),
             "permute");
  // Packing the transpose of a blocked box keeps every value.
  ElementBox g = fp8Box(4, 4, [](int64_t r, int64_t c) {
    return static_cast<float>(1 + 2 * (r / 2) + c / 2);
  });
  g.blockRows = g.blockCols = 2;
  std::vector<int64_t> perm;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c)
      perm.push_back(c * 4 + r);
  ElementBox gt = permute(g, perm, {4, 4});
  QuantHost q = pack(gt);
  EXPECT_EQ(dequantize(q).data, dequantize(gt).data);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c)
      EXPECT_EQ(q.value(r * 4 + c), g.value(c * 4 + r));
}

//===----------------------------------------------------------------------===//
// Quantized checkpoints
//===----------------------------------------------------------------------===//

class QuantCheckpoint : public ::testing::Test {
protected:
  std::string dir;
  void SetUp() override {
    char tmpl[] = "/tmp/helix-quant-XXXXXX";
    char *d = ::mkdtemp(tmpl);
    ASSERT_NE(d, nullptr);
    dir = d;
  }
  void TearDown() override {
    std::string cmd = "rm -rf " + dir;
    (void)std::system(cmd.c_str());
  }

  // FP8 block weight [130, 260] + weight_scale_inv [2, 3].
  static constexpr int64_t N8 = 130, K8 = 260;
  static uint8_t fp8Code(int64_t r, int64_t c) {
    uint8_t v = static_cast<uint8_t>((r * 31 + c * 7 + (r * c) % 5) & 0xff);
    return (v & 0x7f) == 0x7f ? static_cast<uint8_t>(v ^ 1) : v; // no NaN
  }
  static float fp8Scale(int64_t gr, int64_t gc) {
    const float s[2][3] = {{0.5f, 0.25f, 2.0f}, {3.0f, 0.125f, 1.5f}};
    return s[gr][gc];
  }
  static double fp8Value(int64_t r, int64_t c) {
    return refE4m3(fp8Code(r, c)) * fp8Scale(r / 128, c / 128);
  }
  const std::string fp8Name = "model.layers.0.self_attn.q_proj.weight";
  const std::string fp8Prefix = "model.layers.0.self_attn.q_proj.";

  // NVFP4 weight, logical [4, 32]: U8 [4, 16], weight_scale [4, 2].
  static uint8_t fp4Code(int64_t r, int64_t c) {
    return static_cast<uint8_t>((r * 5 + c * 3 + c / 7) & 0xf);
  }
  static uint8_t fp4ScaleCode(int64_t r, int64_t g) {
    const uint8_t s[4][2] = {
        {0x38, 0x40}, {0x30, 0x7E}, {0x3C, 0x28}, {0x08, 0x01}};
    return s[r][g];
  }
  static constexpr float fp4Global = 0.5f;
  static double fp4Value(int64_t r, int64_t c) {
    return refE2m1(fp4Code(r, c)) * refE4m3(fp4ScaleCode(r, c / 16)) *
           fp4Global;
  }
  const std::string fp4Name = "model.layers.0.mlp.down_proj.weight";
  const std::string fp4Prefix = "model.layers.0.mlp.down_proj.";

  RawTensor fp8Weight(std::vector<int64_t> shape = {N8, K8}) const {
    RawTensor t{fp8Name, "F8_E4M3", shape, {}};
    for (int64_t r = 0; r < shape[0]; ++r)
      for (int64_t c = 0; c < shape[1]; ++c)
        t.bytes.push_back(fp8Code(r, c));
    return t;
  }
  RawTensor fp8Scales(std::vector<int64_t> shape = {2, 3}) const {
    std::vector<float> s;
    for (int64_t r = 0; r < shape[0]; ++r)
      for (int64_t c = 0; c < shape[1]; ++c)
        s.push_back(fp8Scale(r % 2, c % 3));
    return RawTensor{fp8Prefix + "weight_scale_inv", "F32", shape,
                     floatBytes(s)};
  }
  RawTensor fp4Weight(std::vector<int64_t> shape = {4, 16}) const {
    RawTensor t{fp4Name, "U8", shape, {}};
    for (int64_t r = 0; r < shape[0]; ++r)
      for (int64_t j = 0; j < shape[1]; ++j)
        t.bytes.push_back(static_cast<uint8_t>(fp4Code(r, 2 * j) |
                                               (fp4Code(r, 2 * j + 1) << 4)));
    return t;
  }
  RawTensor fp4Scales(std::string dtype = "F8_E4M3") const {
    RawTensor t{fp4Prefix + "weight_scale", dtype, {4, 2}, {}};
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t g = 0; g < 2; ++g)
        t.bytes.push_back(fp4ScaleCode(r, g));
    if (dtype == "F32") {
      std::vector<float> f;
      for (uint8_t c : t.bytes)
        f.push_back(hf::e4m3ToFloat(c));
      t.bytes = floatBytes(f);
    }
    return t;
  }
  RawTensor scalarF32(const std::string &name, float v,
                      std::vector<int64_t> shape = {}) const {
    std::vector<float> f(shape.empty() ? 1 : shape[0], v);
    return RawTensor{name, "F32", shape, floatBytes(f)};
  }
  std::vector<RawTensor> goodTensors() const {
    return {fp8Weight(),
            fp8Scales(),
            fp4Weight(),
            fp4Scales(),
            scalarF32(fp4Prefix + "weight_scale_2", fp4Global),
            scalarF32(fp4Prefix + "input_scale", 1.0f)};
  }
  SafetensorsCheckpoint write(const std::vector<RawTensor> &tensors,
                              const std::string &file = "model") {
    std::string p = dir + "/" + file + ".safetensors";
    writeSafetensorsRaw(p, tensors);
    return SafetensorsCheckpoint::open(p);
  }
};

TEST_F(QuantCheckpoint, StoredFormats) {
  RawTensor bf =
      encodeFloats("model.norm.weight", tensor({4}, {1, 2, 3, 4}), "BF16");
  std::vector<RawTensor> ts = goodTensors();
  ts.push_back(bf);
  ts.push_back(fp8Weight({2, 2}));
  ts.back().name = "x.fp8t.weight";
  ts.push_back(scalarF32("x.fp8t.weight_scale", 2.0f));
  SafetensorsCheckpoint c = write(ts);
  EXPECT_EQ(storedFormatOf(c, fp8Name), CheckpointFormat::FP8Block);
  EXPECT_EQ(storedFormatOf(c, fp4Name), CheckpointFormat::NVFP4);
  EXPECT_EQ(storedFormatOf(c, "model.norm.weight"), CheckpointFormat::BF16);
  EXPECT_EQ(storedFormatOf(c, "x.fp8t.weight"), CheckpointFormat::FP8Tensor);
  EXPECT_HAS(errorOf([&] { storedFormatOf(c, "no.such.weight"); }),
             "no.such.weight");
  EXPECT_HAS(errorOf([&] {
               loadStoredBox(c, CheckpointFormat::BF16, "model.norm.weight",
                             {4}, {}, {});
             }),
             "not quantized");
}

TEST_F(QuantCheckpoint, FP8BlockBoxCuttingScaleBlocks) {
  SafetensorsCheckpoint c = write(goodTensors());
  uint64_t before = c.bytesRead();
  // Rows 100..129, columns 120..249: four scale blocks, each cut.
  ElementBox b = loadStoredBox(c, CheckpointFormat::FP8Block, fp8Name, {N8, K8},
                               {{100, 30}, {120, 130}}, {});
  // Only the box and its scales are read.
  EXPECT_LE(c.bytesRead() - before, 30u * 130u + 4u * 4u);
  EXPECT_EQ(b.dtype, DType::F8E4M3);
  EXPECT_EQ(b.scaleType, ScaleType::F32);
  EXPECT_EQ(b.shape, (std::vector<int64_t>{30, 130}));
  EXPECT_EQ(b.blockRows, 128);
  EXPECT_EQ(b.blockCols, 128);
  EXPECT_EQ(b.rowOrigin, 100);
  EXPECT_EQ(b.colOrigin, 120);
  EXPECT_TRUE(b.globals.empty());
  ASSERT_EQ(b.numel(), 30 * 130);
  ASSERT_EQ(b.scales.size(), static_cast<size_t>(30 * 130));
  HostTensor d = dequantize(b);
  for (int64_t r = 0; r < 30; ++r)
    for (int64_t c2 = 0; c2 < 130; ++c2) {
      int64_t i = r * 130 + c2, R = 100 + r, C = 120 + c2;
      ASSERT_EQ(b.codes[i], fp8Code(R, C)) << R << "," << C;
      ASSERT_EQ(f32(b.scales[i]), fp8Scale(R / 128, C / 128)) << R << "," << C;
      ASSERT_EQ(static_cast<double>(d.data[i]), fp8Value(R, C))
          << R << "," << C;
    }
  // Spot checks by hand: (100, 120) lies in block (0, 0): scale 0.5;
  // (129, 249) in block (1, 1): 0.125; (127, 128) in (0, 1): 0.25.
  EXPECT_EQ(f32(b.scales[0]), 0.5f);
  EXPECT_EQ(f32(b.scales[29 * 130 + 129]), 0.125f);
  EXPECT_EQ(f32(b.scales[27 * 130 + 8]), 0.25f);
  EXPECT_EQ(f32(b.scales[28 * 130 + 7]), 3.0f);
  // Packed: the stored grid from (100, 120), 2 x 2 blocks.
  QuantHost q = pack(b);
  EXPECT_EQ(q.desc.blockRows, 128);
  EXPECT_EQ(q.desc.blockCols, 128);
  EXPECT_EQ(q.desc.rowOrigin, 100);
  EXPECT_EQ(q.desc.colOrigin, 120);
  EXPECT_EQ(q.desc.gridRows, 2);
  EXPECT_EQ(q.desc.gridCols, 2);
  ASSERT_EQ(q.scales.size(), 4u * 4);
  EXPECT_EQ(scaleF32(q.scales, 0), 0.5f);
  EXPECT_EQ(scaleF32(q.scales, 1), 0.25f);
  EXPECT_EQ(scaleF32(q.scales, 2), 3.0f);
  EXPECT_EQ(scaleF32(q.scales, 3), 0.125f);
  EXPECT_EQ(dequantize(q).data, d.data);
}

TEST_F(QuantCheckpoint, FP8BlockWholeTensorAndView) {
  SafetensorsCheckpoint c = write(goodTensors());
  ElementBox all =
      loadStoredBox(c, CheckpointFormat::FP8Block, fp8Name, {N8, K8}, {}, {});
  ASSERT_EQ(all.shape, (std::vector<int64_t>{N8, K8}));
  HostTensor d = dequantize(all);
  for (int64_t r = 0; r < N8; ++r)
    for (int64_t k = 0; k < K8; ++k)
      ASSERT_EQ(static_cast<double>(d.data[r * K8 + k]), fp8Value(r, k));
  EXPECT_EQ(dequantize(pack(all)).data, d.data);
  // A view [2, 65, 260] (say, two halves stacked): rows 55..64 of each
  // half, columns 100..149; the second half crosses stored row 128.
  ElementBox v = loadStoredBox(c, CheckpointFormat::FP8Block, fp8Name, {N8, K8},
                               {{0, 2}, {55, 10}, {100, 50}}, {2, 65, K8});
  ASSERT_EQ(v.shape, (std::vector<int64_t>{2, 10, 50}));
  HostTensor dv = dequantize(v);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t r = 0; r < 10; ++r)
      for (int64_t k = 0; k < 50; ++k)
        ASSERT_EQ(static_cast<double>(dv.data[(h * 10 + r) * 50 + k]),
                  fp8Value(65 * h + 55 + r, 100 + k))
            << h << " " << r << " " << k;
  EXPECT_EQ(dequantize(pack(v)).data, dv.data);
}

TEST_F(QuantCheckpoint, NVFP4Box) {
  SafetensorsCheckpoint c = write(goodTensors());
  // Rows 1..3, columns 5..27: starts on an odd element (high nibble) and
  // crosses the 16-column scale boundary.
  ElementBox b = loadStoredBox(c, CheckpointFormat::NVFP4, fp4Name, {4, 32},
                               {{1, 3}, {5, 23}}, {});
  EXPECT_EQ(b.dtype, DType::F4E2M1);
  EXPECT_EQ(b.scaleType, ScaleType::E4M3);
  EXPECT_EQ(b.shape, (std::vector<int64_t>{3, 23}));
  EXPECT_EQ(b.blockRows, 1);
  EXPECT_EQ(b.blockCols, 16);
  EXPECT_EQ(b.colOrigin, 5);
  ASSERT_EQ(b.numel(), 3 * 23);
  ASSERT_EQ(b.globals.size(), static_cast<size_t>(3 * 23));
  HostTensor d = dequantize(b);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t k = 0; k < 23; ++k) {
      int64_t i = r * 23 + k, R = 1 + r, C = 5 + k;
      ASSERT_EQ(b.codes[i], fp4Code(R, C)) << R << "," << C;
      ASSERT_EQ(b.scales[i], fp4ScaleCode(R, C / 16)) << R << "," << C;
      ASSERT_EQ(b.globals[i], fp4Global);
      ASSERT_EQ(static_cast<double>(d.data[i]), fp4Value(R, C))
          << R << "," << C;
    }
  // By hand: (1, 5): code (5 + 15 + 0) & 15 = 4 -> 2.0, scale 0x30 = 0.5,
  // times 0.5 -> 0.5. (3, 27): code (15 + 81 + 3) & 15 = 3 -> 1.5, scale
  // 0x01 = 2^-9 -> 1.5 * 2^-10.
  EXPECT_EQ(d.data[0], 0.5f);
  EXPECT_EQ(d.data[2 * 23 + 22], 1.5f * std::ldexp(1.0f, -10));
  QuantHost q = pack(b);
  EXPECT_EQ(q.desc.blockRows, 1);
  EXPECT_EQ(q.desc.blockCols, 16);
  EXPECT_EQ(q.desc.colOrigin, 5);
  EXPECT_EQ(q.desc.gridRows, 3);
  EXPECT_EQ(q.desc.gridCols, 2);
  EXPECT_EQ(q.scales,
            (std::vector<uint8_t>{0x30, 0x7E, 0x3C, 0x28, 0x08, 0x01}));
  EXPECT_EQ(q.globals, std::vector<float>{fp4Global});
  EXPECT_EQ(dequantize(q).data, d.data);
  // The whole tensor.
  ElementBox all =
      loadStoredBox(c, CheckpointFormat::NVFP4, fp4Name, {4, 32}, {}, {});
  HostTensor da = dequantize(all);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t k = 0; k < 32; ++k)
      ASSERT_EQ(static_cast<double>(da.data[r * 32 + k]), fp4Value(r, k));
  QuantHost qa = pack(all);
  EXPECT_EQ(qa.data, fp4Weight().bytes); // the stored bytes as they are
  EXPECT_EQ(dequantize(qa).data, da.data);
}

TEST_F(QuantCheckpoint, ShortBoxesViewsAndSingleColumns) {
  SafetensorsCheckpoint c = write(goodTensors());
  // Rows 128.. to the end, every column (box ranges left out or -1).
  ElementBox b = loadStoredBox(c, CheckpointFormat::FP8Block, fp8Name, {N8, K8},
                               {{128, -1}}, {});
  ASSERT_EQ(b.shape, (std::vector<int64_t>{2, K8}));
  EXPECT_EQ(b.rowOrigin, 0);
  EXPECT_EQ(b.colOrigin, 0);
  HostTensor d = dequantize(b);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t k = 0; k < K8; ++k)
      ASSERT_EQ(static_cast<double>(d.data[r * K8 + k]), fp8Value(128 + r, k));
  QuantHost q = pack(b);
  EXPECT_EQ(q.desc.gridRows, 1);
  EXPECT_EQ(q.desc.gridCols, 3);
  EXPECT_EQ(scaleF32(q.scales, 2), 1.5f);
  EXPECT_EQ(dequantize(q).data, d.data);
  // NVFP4 through a view [2, 2, 32]: rows 2 and 3, one odd column (19).
  ElementBox v = loadStoredBox(c, CheckpointFormat::NVFP4, fp4Name, {4, 32},
                               {{1, 1}, {0, 2}, {19, 1}}, {2, 2, 32});
  ASSERT_EQ(v.shape, (std::vector<int64_t>{1, 2, 1}));
  HostTensor dv = dequantize(v);
  EXPECT_EQ(static_cast<double>(dv.data[0]), fp4Value(2, 19));
  EXPECT_EQ(static_cast<double>(dv.data[1]), fp4Value(3, 19));
  EXPECT_EQ(dequantize(pack(v)).data, dv.data);
  // One even column.
  ElementBox e = loadStoredBox(c, CheckpointFormat::NVFP4, fp4Name, {4, 32},
                               {{0, 4}, {16, 1}}, {});
  ASSERT_EQ(e.shape, (std::vector<int64_t>{4, 1}));
  HostTensor de = dequantize(e);
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(static_cast<double>(de.data[r]), fp4Value(r, 16)) << r;
  // A view that splits the rows of the stored matrix is refused.
  EXPECT_HAS(errorOf([&] {
               loadStoredBox(c, CheckpointFormat::NVFP4, fp4Name, {4, 32}, {},
                             {8, 16});
             }),
             "view");
}

TEST_F(QuantCheckpoint, FP8TensorBox) {
  RawTensor w = fp8Weight({3, 4});
  w.name = "t.weight";
  SafetensorsCheckpoint c = write({w, scalarF32("t.weight_scale", 0.25f, {1}),
                                   scalarF32("t.input_scale", 1.0f)});
  ASSERT_EQ(storedFormatOf(c, "t.weight"), CheckpointFormat::FP8Tensor);
  ElementBox b = loadStoredBox(c, CheckpointFormat::FP8Tensor, "t.weight",
                               {3, 4}, {{1, 2}, {1, 2}}, {});
  ASSERT_EQ(b.shape, (std::vector<int64_t>{2, 2}));
  HostTensor d = dequantize(b);
  for (int r = 0; r < 2; ++r)
    for (int k = 0; k < 2; ++k)
      EXPECT_EQ(static_cast<double>(d.data[r * 2 + k]),
                refE4m3(fp8Code(1 + r, 1 + k)) * 0.25);
  EXPECT_EQ(dequantize(pack(b)).data, d.data);
}

TEST_F(QuantCheckpoint, MXFP4Box) {
  // gpt-oss experts: E = 1, N (out) = 2, K (in) = 64 -> blocks U8
  // [1, 2, 2, 16], scales U8 [1, 2, 2]; read as [E, in, out] = [1, 64, 2].
  auto code = [](int64_t n, int64_t k) {
    return static_cast<uint8_t>((n * 7 + k * 5 + k / 3) & 0xf);
  };
  const uint8_t sc[2][2] = {{127, 130}, {120, 128}};
  RawTensor blocks{"m.experts.down_proj_blocks", "U8", {1, 2, 2, 16}, {}};
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t j = 0; j < 32; ++j)
      blocks.bytes.push_back(
          static_cast<uint8_t>(code(n, 2 * j) | (code(n, 2 * j + 1) << 4)));
  RawTensor scales{"m.experts.down_proj_scales",
                   "U8",
                   {1, 2, 2},
                   {sc[0][0], sc[0][1], sc[1][0], sc[1][1]}};
  SafetensorsCheckpoint c = write({blocks, scales});
  ASSERT_EQ(storedFormatOf(c, "m.experts.down_proj"), CheckpointFormat::MXFP4);
  // In-rows 20..49 (crossing the 32 boundary), both outputs.
  ElementBox b =
      loadStoredBox(c, CheckpointFormat::MXFP4, "m.experts.down_proj",
                    {1, 64, 2}, {{0, 1}, {20, 30}, {0, 2}}, {});
  ASSERT_EQ(b.shape, (std::vector<int64_t>{1, 30, 2}));
  EXPECT_EQ(b.scaleType, ScaleType::E8M0);
  HostTensor d = dequantize(b);
  for (int64_t k = 0; k < 30; ++k)
    for (int64_t n = 0; n < 2; ++n)
      ASSERT_EQ(static_cast<double>(d.data[k * 2 + n]),
                refE2m1(code(n, 20 + k)) *
                    std::ldexp(1.0, sc[n][(20 + k) / 32] - 127))
          << k << " " << n;
  QuantHost q = pack(b);
  EXPECT_EQ(q.desc.blockRows, 32);
  EXPECT_EQ(q.desc.blockCols, 1);
  EXPECT_EQ(q.desc.rowOrigin, 20);
  EXPECT_EQ(dequantize(q).data, d.data);
}

TEST_F(QuantCheckpoint, MXFP4BoxOfExpertsAndOutputs) {
  // E = 3, N = 3, K = 64; read experts 1..2, in-rows 21..54 (odd start),
  // output 1 only.
  auto code = [](int64_t e, int64_t n, int64_t k) {
    return static_cast<uint8_t>((e * 11 + n * 7 + k * 5 + k / 3) & 0xf);
  };
  auto sc = [](int64_t e, int64_t n, int64_t kb) {
    return static_cast<uint8_t>(120 + e * 4 + n * 2 + kb);
  };
  RawTensor blocks{"x.gate_up_proj_blocks", "U8", {3, 3, 2, 16}, {}};
  RawTensor scales{"x.gate_up_proj_scales", "U8", {3, 3, 2}, {}};
  for (int64_t e = 0; e < 3; ++e)
    for (int64_t n = 0; n < 3; ++n) {
      for (int64_t j = 0; j < 32; ++j)
        blocks.bytes.push_back(static_cast<uint8_t>(
            code(e, n, 2 * j) | (code(e, n, 2 * j + 1) << 4)));
      for (int64_t kb = 0; kb < 2; ++kb)
        scales.bytes.push_back(sc(e, n, kb));
    }
  SafetensorsCheckpoint c = write({blocks, scales});
  ElementBox b = loadStoredBox(c, CheckpointFormat::MXFP4, "x.gate_up_proj",
                               {3, 64, 3}, {{1, 2}, {21, 34}, {1, 1}}, {});
  ASSERT_EQ(b.shape, (std::vector<int64_t>{2, 34, 1}));
  HostTensor d = dequantize(b);
  for (int64_t e = 0; e < 2; ++e)
    for (int64_t k = 0; k < 34; ++k)
      ASSERT_EQ(static_cast<double>(d.data[e * 34 + k]),
                refE2m1(code(1 + e, 1, 21 + k)) *
                    std::ldexp(1.0, sc(1 + e, 1, (21 + k) / 32) - 127))
          << e << " " << k;
  EXPECT_EQ(dequantize(pack(b)).data, d.data);
  // Blocks of the wrong shape.
  RawTensor bad = blocks;
  bad.shape = {3, 3, 16, 2};
  SafetensorsCheckpoint c2 = write({bad, scales}, "bad");
  std::string e = errorOf([&] {
    loadStoredBox(c2, CheckpointFormat::MXFP4, "x.gate_up_proj", {3, 64, 3}, {},
                  {});
  });
  EXPECT_HAS(e, "x.gate_up_proj_blocks");
  EXPECT_HAS(e, "expected U8 [3, 3, 2, 16]");
  // Scales missing.
  SafetensorsCheckpoint c3 = write({blocks}, "noscales");
  e = errorOf([&] {
    loadStoredBox(c3, CheckpointFormat::MXFP4, "x.gate_up_proj", {3, 64, 3}, {},
                  {});
  });
  EXPECT_HAS(e, "x.gate_up_proj_scales");
  EXPECT_HAS(e, "missing");
}

TEST_F(QuantCheckpoint, MissingScaleTensors) {
  // FP8 weight without weight_scale_inv.
  SafetensorsCheckpoint c8 = write({fp8Weight()}, "fp8");
  std::string e = errorOf([&] { storedFormatOf(c8, fp8Name); });
  EXPECT_HAS(e, fp8Name);
  EXPECT_HAS(e, fp8Prefix + "weight_scale_inv");
  EXPECT_HAS(e, fp8Prefix + "weight_scale");
  e = errorOf([&] {
    loadStoredBox(c8, CheckpointFormat::FP8Block, fp8Name, {N8, K8},
                  {{100, 30}, {120, 130}}, {});
  });
  EXPECT_HAS(e, c8.path());
  EXPECT_HAS(e, fp8Name);
  EXPECT_HAS(e, fp8Prefix + "weight_scale_inv");
  EXPECT_HAS(e, "missing");
  e = errorOf([&] {
    loadStoredBox(c8, CheckpointFormat::FP8Tensor, fp8Name, {N8, K8}, {}, {});
  });
  EXPECT_HAS(e, fp8Prefix + "weight_scale");
  EXPECT_HAS(e, "missing");

  // NVFP4 without weight_scale.
  SafetensorsCheckpoint c4 = write({fp4Weight()}, "fp4");
  e = errorOf([&] { storedFormatOf(c4, fp4Name); });
  EXPECT_HAS(e, fp4Name);
  EXPECT_HAS(e, fp4Prefix + "weight_scale");
  e = errorOf([&] {
    loadStoredBox(c4, CheckpointFormat::NVFP4, fp4Name, {4, 32}, {}, {});
  });
  EXPECT_HAS(e, fp4Name);
  EXPECT_HAS(e, fp4Prefix + "weight_scale");
  EXPECT_HAS(e, "missing");

  // NVFP4 without weight_scale_2, then without input_scale.
  SafetensorsCheckpoint c42 = write({fp4Weight(), fp4Scales()}, "fp4b");
  e = errorOf([&] {
    loadStoredBox(c42, CheckpointFormat::NVFP4, fp4Name, {4, 32}, {}, {});
  });
  EXPECT_HAS(e, fp4Name);
  EXPECT_HAS(e, fp4Prefix + "weight_scale_2");
  EXPECT_HAS(e, "missing");
  SafetensorsCheckpoint c43 = write(
      {fp4Weight(), fp4Scales(), scalarF32(fp4Prefix + "weight_scale_2", 0.5f)},
      "fp4c");
  e = errorOf([&] {
    loadStoredBox(c43, CheckpointFormat::NVFP4, fp4Name, {4, 32}, {}, {});
  });
  EXPECT_HAS(e, fp4Name);
  EXPECT_HAS(e, fp4Prefix + "input_scale");
  EXPECT_HAS(e, "missing");
}

TEST_F(QuantCheckpoint, ScaleOfTheWrongShapeOrDtype) {
  SafetensorsCheckpoint c = write({fp8Weight(), fp8Scales({2, 2})});
  std::string e = errorOf([&] {
    loadStoredBox(c, CheckpointFormat::FP8Block, fp8Name, {N8, K8},
                  {{100, 30}, {120, 130}}, {});
  });
  EXPECT_HAS(e, fp8Prefix + "weight_scale_inv");
  EXPECT_HAS(e, "[2, 2]");
  EXPECT_HAS(e, "expected F32 [2, 3]");
  EXPECT_HAS(e, "128x128");
  EXPECT_HAS(e, "[130, 260]");

  std::vector<RawTensor> ts = goodTensors();
  ts[3] = fp4Scales("F32");
  SafetensorsCheckpoint c2 = write(ts, "fp4-f32-scale");
  e = errorOf([&] {
    loadStoredBox(c2, CheckpointFormat::NVFP4, fp4Name, {4, 32}, {}, {});
  });
  EXPECT_HAS(e, fp4Prefix + "weight_scale");
  EXPECT_HAS(e, "F32");
  EXPECT_HAS(e, "expected F8_E4M3 [4, 2]");

  ts = goodTensors();
  ts[4] = scalarF32(fp4Prefix + "weight_scale_2", 0.5f, {2});
  SafetensorsCheckpoint c3 = write(ts, "fp4-vector-global");
  e = errorOf([&] {
    loadStoredBox(c3, CheckpointFormat::NVFP4, fp4Name, {4, 32}, {}, {});
  });
  EXPECT_HAS(e, fp4Prefix + "weight_scale_2");
  EXPECT_HAS(e, "[2]");
  EXPECT_HAS(e, "scalar");
}

TEST_F(QuantCheckpoint, PackedTensorOfTheWrongSize) {
  std::vector<RawTensor> ts = goodTensors();
  ts[2] = fp4Weight({4, 8}); // [4, 8] bytes hold [4, 16], not [4, 32]
  SafetensorsCheckpoint c = write(ts);
  std::string e = errorOf([&] {
    loadStoredBox(c, CheckpointFormat::NVFP4, fp4Name, {4, 32}, {}, {});
  });
  EXPECT_HAS(e, c.path());
  EXPECT_HAS(e, fp4Name);
  EXPECT_HAS(e, "[4, 8]");
  EXPECT_HAS(e, "expected U8 [4, 16]");
  EXPECT_HAS(e, "[4, 32]");
  // A logical shape whose rows do not match.
  SafetensorsCheckpoint c2 = write(goodTensors(), "good");
  e = errorOf([&] {
    loadStoredBox(c2, CheckpointFormat::NVFP4, fp4Name, {8, 32}, {}, {});
  });
  EXPECT_HAS(e, fp4Name);
  EXPECT_HAS(e, "expected U8 [8, 16]");
  // An FP8 weight read with the wrong logical shape.
  e = errorOf([&] {
    loadStoredBox(c2, CheckpointFormat::FP8Block, fp8Name, {N8, 256}, {}, {});
  });
  EXPECT_HAS(e, fp8Name);
  EXPECT_HAS(e, "[130, 260]");
}

// Boxes far outside the weight are refused before any arithmetic on them
// (found by fuzz/, helix-fuzz-safetensors: "count to the end" of a begin of
// INT64_MIN, and begin + count of an MXFP4 box, overflowed int64).
TEST_F(QuantCheckpoint, BoxesOutsideTheWeight) {
  SafetensorsCheckpoint c = write(goodTensors());
  std::string e = errorOf([&] {
    loadStoredBox(c, CheckpointFormat::FP8Block, fp8Name, {N8, K8},
                  {{INT64_MIN, -1}}, {});
  });
  EXPECT_HAS(e, fp8Name);
  EXPECT_HAS(e, "slice of the rest from -9223372036854775808 of dimension 0 "
                "is outside its size 130");
  e = errorOf([&] {
    loadStoredBox(c, CheckpointFormat::NVFP4, fp4Name, {4, 32},
                  {{0, 4}, {1, INT64_MAX}}, {});
  });
  EXPECT_HAS(e, "slice of 9223372036854775807 elements from 1 of dimension 1 "
                "is outside its size 32");
  RawTensor blocks{"m.p_blocks", "U8", {1, 2, 1, 16}, {}};
  blocks.bytes.assign(32, 0x21);
  RawTensor scales{"m.p_scales", "U8", {1, 2, 1}, {127, 127}};
  SafetensorsCheckpoint mx = write({blocks, scales}, "mx");
  int64_t big = INT64_C(8716990826988239096);
  e = errorOf([&] {
    loadStoredBox(mx, CheckpointFormat::MXFP4, "m.p", {1, 32, 2},
                  {{0, 1}, {big, big}}, {});
  });
  EXPECT_HAS(e, "from 8716990826988239096 of dimension 1 is outside its "
                "size 32");
  e = errorOf([&] {
    loadStoredBox(mx, CheckpointFormat::MXFP4, "m.p", {1, 32, 2},
                  {{0, 1}, {0, 32}, {0, 2}, {0, 1}}, {});
  });
  EXPECT_HAS(e, "slice has more ranges than dimensions");
}

} // namespace
