//===- Formats.h - The reference's own number-format codecs -----*- C++ -*-===//
//
// Element and scale formats of quantized checkpoints and KV caches, written
// from the published definitions (OCP FP8 / MX specifications, NVIDIA's
// NVFP4) independently of the runtime's codecs, so that the reference and
// the runtime are two implementations of the same formats:
//
//   E4M3 (the "fn" variant): sign, 4 exponent bits (bias 7), 3 mantissa
//     bits; exponent 0 is subnormal (m/8 * 2^-6); S.1111.111 is NaN; no
//     infinities; largest finite 448.
//   E2M1 (FP4): sign bit 3, magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 for codes
//     0..7 (code 8 is -0.0).
//   E8M0 (MX scale): 2^(e - 127); 0xFF is NaN.
//   BF16: the top 16 bits of an f32.
//
// Encoders round to nearest even and saturate (E4M3 to +-448, E2M1 to +-6);
// NaN stays NaN where the format has one.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_REFERENCE_FORMATS_H
#define HELIX_REFERENCE_FORMATS_H

#include <cstdint>
#include <string>

namespace helix {
namespace reference {

float e4m3ToFloat(uint8_t code);
float e2m1ToFloat(uint8_t code); // low 4 bits
float e8m0ToFloat(uint8_t code);

/// Round to nearest even, saturating to +-448 (NaN -> NaN).
uint8_t floatToE4m3(float x);
/// Round to nearest even on 0, .5, 1, 1.5, 2, 3, 4, 6 (ties to the even
/// code), saturating to +-6; NaN has no code and is not accepted here.
uint8_t floatToE2m1(float x);
/// x rounded to bf16 (nearest even) and back to f32.
float roundBf16(float x);

/// The KV-cache formats of `--kv-dtype`.
enum class KvDtype { F32, BF16, FP8, FP4 };

/// "f32", "bf16", "fp8" or "fp4"; false for anything else.
bool parseKvDtype(const std::string &text, KvDtype &out);
const char *kvDtypeName(KvDtype d);

/// Rounds `n` consecutive cached values in place as `--kv-dtype d` stores
/// them and reads them back:
///   f32:  unchanged;
///   bf16: round to nearest even;
///   fp8:  E4M3 with per-tensor scale 1.0 (saturating, NaN stays NaN);
///   fp4:  NVFP4 blocks of 16 consecutive values: s = e4m3(amax / 6),
///         q = e2m1(x / e4m3ToFloat(s)), value = e2m1ToFloat(q) * s
///         (0 where s decodes to 0; NaN stays NaN). `n` must be a multiple
///         of 16 and the caller makes the blocks fall within one head.
void roundKv(KvDtype d, float *x, int64_t n, int64_t head);

} // namespace reference
} // namespace helix

#endif // HELIX_REFERENCE_FORMATS_H
