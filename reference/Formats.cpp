//===- Formats.cpp - The reference's own number-format codecs -------------===//

#include "Formats.h"

#include <algorithm>

#include "helix/Runtime/Error.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace helix {
namespace reference {

namespace {

const float kE2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

/// Round half to even, without depending on the floating-point environment.
double roundHalfEven(double v) {
  double f = std::floor(v), d = v - f;
  if (d > 0.5)
    return f + 1;
  if (d < 0.5)
    return f;
  return std::fmod(f, 2.0) == 0 ? f : f + 1;
}

} // namespace

float e4m3ToFloat(uint8_t code) {
  bool neg = code & 0x80;
  int e = (code >> 3) & 0xF, m = code & 0x7;
  if (e == 0xF && m == 0x7)
    return std::copysign(std::numeric_limits<float>::quiet_NaN(),
                         neg ? -1.0f : 1.0f);
  float mag = e == 0 ? std::ldexp(static_cast<float>(m), -9) // m/8 * 2^-6
                     : std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
  return neg ? -mag : mag;
}

float e2m1ToFloat(uint8_t code) {
  float mag = kE2m1[code & 0x7];
  return (code & 0x8) ? -mag : mag;
}

float e8m0ToFloat(uint8_t code) {
  if (code == 0xFF)
    return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(code) - 127);
}

uint8_t floatToE4m3(float x) {
  uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x))
    return sign | 0x7F;
  double a = std::fabs(static_cast<double>(x));
  if (a >= 448.0)
    return sign | 0x7E; // saturate (no infinities)
  if (a < std::ldexp(1.0, -6)) {
    // Subnormal: multiples of 2^-9; 8 * 2^-9 = 2^-6 is code 0x08, the
    // smallest normal, so the rounded multiple is the code itself.
    return sign | static_cast<uint8_t>(roundHalfEven(a * 512.0));
  }
  int e2;
  std::frexp(a, &e2); // a = f * 2^e2, f in [0.5, 1)
  int E = e2 - 1;     // a in [2^E, 2^(E+1)), E in [-6, 8]
  // Eight steps per binade; a mantissa rounding up to 16 carries into the
  // next exponent, which the code arithmetic does by itself.
  int m = static_cast<int>(roundHalfEven(std::ldexp(a, 3 - E)));
  int code = ((E + 7) << 3) + (m - 8);
  if (code > 0x7E) // cannot happen below 448, kept as a guard
    code = 0x7E;
  return sign | static_cast<uint8_t>(code);
}

uint8_t floatToE2m1(float x) {
  uint8_t sign = std::signbit(x) ? 0x8 : 0x0;
  float a = std::fabs(x);
  if (a >= 6.0f)
    return sign | 0x7;
  int i = 0;
  while (i < 6 && a >= kE2m1[i + 1])
    ++i;
  // kE2m1[i] <= a < kE2m1[i + 1]
  float mid = 0.5f * (kE2m1[i] + kE2m1[i + 1]); // exact
  int code = a < mid ? i : a > mid ? i + 1 : (i % 2 == 0 ? i : i + 1);
  return sign | static_cast<uint8_t>(code);
}

float roundBf16(float x) {
  if (std::isnan(x))
    return x;
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

bool parseKvDtype(const std::string &text, KvDtype &out) {
  if (text == "f32")
    out = KvDtype::F32;
  else if (text == "bf16")
    out = KvDtype::BF16;
  else if (text == "fp8")
    out = KvDtype::FP8;
  else if (text == "fp4")
    out = KvDtype::FP4;
  else
    return false;
  return true;
}

const char *kvDtypeName(KvDtype d) {
  switch (d) {
  case KvDtype::F32:
    return "f32";
  case KvDtype::BF16:
    return "bf16";
  case KvDtype::FP8:
    return "fp8";
  case KvDtype::FP4:
    return "fp4";
  }
  return "?";
}

void roundKv(KvDtype d, float *x, int64_t n, int64_t head) {
  switch (d) {
  case KvDtype::F32:
    return;
  case KvDtype::BF16:
    for (int64_t i = 0; i < n; ++i)
      x[i] = roundBf16(x[i]);
    return;
  case KvDtype::FP8:
    for (int64_t i = 0; i < n; ++i)
      x[i] = e4m3ToFloat(floatToE4m3(x[i]));
    return;
  case KvDtype::FP4:
    // NVFP4 blocks of 16 along each head of `head` values; a head whose
    // length is not a multiple of 16 ends in a shorter block.
    if (head <= 0 || n % head != 0)
      throw rt::Error("reference: --kv-dtype fp4: a vector of " +
                      std::to_string(n) + " values is not whole heads of " +
                      std::to_string(head));
    for (int64_t h0 = 0; h0 < n; h0 += head)
      for (int64_t b = h0; b < h0 + head; b += 16) {
        float *v = x + b;
        int64_t len = std::min<int64_t>(16, h0 + head - b);
        float amax = 0.0f;
        for (int64_t i = 0; i < len; ++i)
          if (std::fabs(v[i]) > amax) // NaN compares false: ignored here
            amax = std::fabs(v[i]);
        float s = e4m3ToFloat(floatToE4m3(amax / 6.0f));
        for (int64_t i = 0; i < len; ++i) {
          if (std::isnan(v[i]))
            continue; // NaN stays NaN
          v[i] = s == 0.0f ? 0.0f : e2m1ToFloat(floatToE2m1(v[i] / s)) * s;
        }
      }
    return;
  }
}

} // namespace reference
} // namespace helix
