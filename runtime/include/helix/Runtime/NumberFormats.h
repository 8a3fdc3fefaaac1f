//===- NumberFormats.h - FP8, FP4 and block-scale codecs --------*- C++ -*-===//
//
// The element and scale formats of quantized checkpoints, weights and KV
// caches, as inline functions that compile for the host and, under nvcc,
// for the device: the CPU backend, the CUDA kernels and the loaders decode
// and encode with this one source.
//
//   E4M3 (OCP FP8 "fn"): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no
//     infinities, S.1111.111 is NaN, largest finite 448, subnormals
//     m/8 * 2^-6.
//   E2M1 (OCP FP4): 1 sign, 2 exponent (bias 1), 1 mantissa bit; values
//     0, 0.5, 1, 1.5, 2, 3, 4, 6; no infinities or NaN. Two values per
//     byte, the element with the even index in the low nibble.
//   E8M0 (OCP MX scale): 2^(e - 127); 0xFF is NaN.
//   BF16: the high half of an IEEE f32.
//
// Encoders round to nearest, ties to even, and saturate to the largest
// finite value (OCP "satfinite"); NaN encodes as E4M3 NaN and as E2M1 0
// (E2M1 has no NaN; quantizers reject non-finite weights before encoding).
//
// A BlockScaleDesc describes how a quantized tensor's values are scaled:
// over the last two dimensions (`rows` x `cols` per matrix, `matrices` of
// them), blocks of blockRows x blockCols share one scale; element (r, c) of
// the tensor lies at (r + rowOrigin, c + colOrigin) of the block grid (a
// slice that starts inside a block). value = decode(code) * scale(block) *
// global(matrix).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_NUMBERFORMATS_H
#define HELIX_RUNTIME_NUMBERFORMATS_H

#include "helix/Common/ElementType.h" // HELIX_HD

#include <cmath>
#include <cstdint>
#include <cstring>

namespace helix {
namespace rt {

/// Element formats of tensors (`Tensor::dtype`): the one enum the compiler
/// and the runtime share (helix/Common/ElementType.h).
using DType = ::helix::ElementType;
using ::helix::dtypeBits;
using ::helix::dtypeBytes;
using ::helix::dtypeName;

/// Formats of block scales.
enum class ScaleType : uint8_t { F32, E4M3, E8M0 };

namespace fmt {

HELIX_HD inline float bitsToFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
HELIX_HD inline uint32_t floatToBits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

HELIX_HD inline float bf16ToFloat(uint16_t v) {
  return bitsToFloat(static_cast<uint32_t>(v) << 16);
}
HELIX_HD inline uint16_t floatToBf16(float f) {
  uint32_t u = floatToBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

/// The f32 bits built directly: a normal 2^(e-7) (1 + m/8) has f32
/// exponent e + 120 and mantissa m in its top 3 bits; a subnormal is
/// m 2^-9 (exact).
HELIX_HD inline float e4m3ToFloat(uint8_t b) {
  uint32_t e = (b >> 3) & 0xf, m = b & 7;
  if (e == 0xf && m == 7)
    return NAN;
  uint32_t sign = static_cast<uint32_t>(b & 0x80) << 24;
  uint32_t mag = e == 0 ? floatToBits(static_cast<float>(m) * 0.001953125f)
                        : ((e + 120u) << 23) | (m << 20);
  return bitsToFloat(sign | mag);
}

HELIX_HD inline uint8_t floatToE4m3(float x) {
  if (x != x)
    return 0x7f;
  uint8_t sign = (floatToBits(x) >> 31) ? 0x80 : 0;
  float a = fabsf(x);
  if (a >= 448.0f)
    return sign | 0x7e;
  if (a < 0.015625f) // below 2^-6: subnormal steps of 2^-9
    return sign | static_cast<uint8_t>(rintf(a * 512.0f));
  int e;
  float mant = frexpf(a, &e); // a = mant * 2^e, mant in [0.5, 1)
  int m = static_cast<int>(rintf((mant * 2.0f - 1.0f) * 8.0f));
  int exp = e - 1 + 7;
  if (m == 8) {
    m = 0;
    ++exp;
  }
  int code = (exp << 3) | m;
  return sign | static_cast<uint8_t>(code > 0x7e ? 0x7e : code);
}

/// The f32 bits built directly (no table: a table indexed at run time
/// lands in a kernel's local memory): exponent e = bits 2..1, mantissa m =
/// bit 0; e > 0 is 2^(e-1) * (1 + m/2), e = 0 the subnormal m/2.
HELIX_HD inline float e2m1ToFloat(uint8_t nibble) {
  uint32_t e = (nibble >> 1) & 3u, m = nibble & 1u;
  uint32_t bits = e ? ((e + 126u) << 23) | (m << 22) : (m ? 0x3f000000u : 0u);
  return bitsToFloat(bits | (static_cast<uint32_t>(nibble & 8u) << 28));
}

HELIX_HD inline uint8_t floatToE2m1(float x) {
  if (x != x)
    return 0;
  uint8_t sign = (floatToBits(x) >> 31) ? 8 : 0;
  float a = fabsf(x);
  // Round to nearest on the grid 0 .5 1 1.5 2 3 4 6, ties to the even code.
  uint8_t c = a <= 0.25f   ? 0
              : a < 0.75f  ? 1
              : a <= 1.25f ? 2
              : a < 1.75f  ? 3
              : a <= 2.5f  ? 4
              : a < 3.5f   ? 5
              : a <= 5.0f  ? 6
                           : 7;
  return sign | c;
}

HELIX_HD inline float e8m0ToFloat(uint8_t e) {
  if (e == 0xff)
    return NAN;
  return ldexpf(1.0f, static_cast<int>(e) - 127);
}

HELIX_HD inline float scaleToFloat(ScaleType t, const uint8_t *scales,
                                   int64_t i) {
  switch (t) {
  case ScaleType::F32: {
    float f;
    memcpy(&f, scales + 4 * i, sizeof f);
    return f;
  }
  case ScaleType::E4M3:
    return e4m3ToFloat(scales[i]);
  case ScaleType::E8M0:
    return e8m0ToFloat(scales[i]);
  }
  return NAN;
}

/// Element `i` of a tensor of `dtype` stored at `data` (no scale applied).
HELIX_HD inline float decodeElement(DType dtype, const void *data, int64_t i) {
  const uint8_t *p = static_cast<const uint8_t *>(data);
  switch (dtype) {
  case DType::F32: {
    float f;
    memcpy(&f, p + 4 * i, sizeof f);
    return f;
  }
  case DType::BF16: {
    uint16_t v;
    memcpy(&v, p + 2 * i, sizeof v);
    return bf16ToFloat(v);
  }
  case DType::F8E4M3:
    return e4m3ToFloat(p[i]);
  case DType::F4E2M1:
    return e2m1ToFloat((i & 1) ? (p[i >> 1] >> 4) : (p[i >> 1] & 0xf));
  case DType::U8:
    return static_cast<float>(p[i]);
  case DType::I32: {
    int32_t v;
    memcpy(&v, p + 4 * i, sizeof v);
    return static_cast<float>(v);
  }
  }
  return NAN;
}

/// Stores `n` values of one KV head at `dst` in `dtype`
/// (docs/quantization.md): F32, BF16, F8E4M3 (scale 1, saturating) or
/// F4E2M1 (NVFP4: per 16 values s = e4m3(amax / 6) in `scales`, the
/// head's first scale; q = e2m1(x / s); a last block of n % 16 values has
/// its own scale). `dst` is the head's first element (byte aligned: n even
/// for F4E2M1).
HELIX_HD inline void encodeKV(DType dtype, const float *x, int64_t n, void *dst,
                              uint8_t *scales) {
  uint8_t *p = static_cast<uint8_t *>(dst);
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
    case DType::F32:
      memcpy(p + 4 * i, &x[i], 4);
      break;
    case DType::BF16: {
      uint16_t h = floatToBf16(x[i]);
      memcpy(p + 2 * i, &h, 2);
      break;
    }
    case DType::F8E4M3:
      p[i] = floatToE4m3(x[i]);
      break;
    default:
      break;
    }
  }
  if (dtype != DType::F4E2M1)
    return;
  for (int64_t b = 0; 16 * b < n; ++b) {
    int64_t end = 16 * b + 16 < n ? 16 * b + 16 : n;
    float amax = 0;
    for (int64_t i = 16 * b; i < end; ++i)
      amax = fmaxf(amax, fabsf(x[i]));
    scales[b] = floatToE4m3(amax / 6.0f);
    float s = e4m3ToFloat(scales[b]);
    for (int64_t i = 16 * b; i < end; i += 2) {
      uint8_t lo = s > 0 ? floatToE2m1(x[i] / s) : 0;
      uint8_t hi = s > 0 && i + 1 < end ? floatToE2m1(x[i + 1] / s) : 0;
      p[i / 2] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

/// Scales of one KV head of `dim` values (F4E2M1: one per 16, the last
/// block may be shorter).
HELIX_HD inline int64_t kvScalesPerHead(int64_t dim) { return (dim + 15) / 16; }

/// Value `i` of a KV head stored by encodeKV.
HELIX_HD inline float decodeKV(DType dtype, const void *src,
                               const uint8_t *scales, int64_t i) {
  float v = decodeElement(dtype, src, i);
  return dtype == DType::F4E2M1 ? v * e4m3ToFloat(scales[i / 16]) : v;
}

} // namespace fmt

/// How the values of a quantized tensor are scaled (see the file comment).
/// Plain data: kernels take it by value.
struct BlockScaleDesc {
  ScaleType type = ScaleType::F32;
  int64_t rows = 1, cols = 1;           // each matrix (last two dims)
  int64_t blockRows = 1, blockCols = 1; // elements sharing a scale
  int64_t rowOrigin = 0, colOrigin = 0; // element (0, 0)'s place in its block
  int64_t gridRows = 1, gridCols = 1; // scales per matrix: gridRows x gridCols
  const uint8_t *scales = nullptr;    // [matrices, gridRows, gridCols]
  const float *globals = nullptr;     // [matrices] or null (1)

  /// The decoded value `v` of element `i` (row-major over [matrices,
  /// rows, cols]) scaled: (v * block scale) * global, in that order.
  HELIX_HD float apply(float v, int64_t i) const {
    int64_t per = rows * cols;
    int64_t m = i / per, rc = i - m * per;
    int64_t r = rc / cols, c = rc - r * cols;
    int64_t g = (m * gridRows + (r + rowOrigin) / blockRows) * gridCols +
                (c + colOrigin) / blockCols;
    float x = v * fmt::scaleToFloat(type, scales, g);
    return globals ? x * globals[m] : x;
  }
  /// The scale of element `i` (block scale times global).
  HELIX_HD float scaleOf(int64_t i) const { return apply(1.0f, i); }
};

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_NUMBERFORMATS_H
