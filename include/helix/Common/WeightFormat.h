//===- WeightFormat.h - Resident and checkpoint weight formats --*- C++ -*-===//
//
// The number formats a program keeps a weight in and the formats
// checkpoints store quantized weights in (docs/quantization.md), shared by
// the EmitC lowering (which writes them into the generated load calls) and
// the runtime (which loads and converts accordingly). Header-only and
// dependency-free.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_WEIGHTFORMAT_H
#define HELIX_COMMON_WEIGHTFORMAT_H

#include <string>
#include <vector>

namespace helix {

/// What a weight is kept as in the program: the element type of its
/// helix.weight in rank IR. FP4 is NVFP4, or MXFP4 as an MXFP4 checkpoint
/// stores it. The values are what generated code passes.
enum class ResidentFormat : int { F32 = 0, BF16 = 1, FP8 = 2, FP4 = 3 };

inline const char *residentFormatName(ResidentFormat f) {
  switch (f) {
  case ResidentFormat::F32:
    return "f32";
  case ResidentFormat::BF16:
    return "bf16";
  case ResidentFormat::FP8:
    return "fp8";
  case ResidentFormat::FP4:
    return "fp4";
  }
  return "?";
}

/// How a checkpoint stores its quantized linear weights; the names are
/// those of helix-make-checkpoint --format. The values are what generated
/// code passes.
enum class CheckpointFormat : int {
  BF16 = 0,      // unquantized (BF16, F16 or F32 tensors)
  FP8Block = 1,  // E4M3 + weight_scale_inv per 128x128 (DeepSeek-V3/R1)
  FP8Tensor = 2, // E4M3 + weight_scale per tensor (ModelOpt FP8)
  NVFP4 = 3,     // packed E2M1 + E4M3 per 16 + weight_scale_2 (ModelOpt)
  MXFP4 = 4,     // *_blocks E2M1 + *_scales E8M0 per 32 (gpt-oss)
};

inline const char *checkpointFormatName(CheckpointFormat f) {
  switch (f) {
  case CheckpointFormat::BF16:
    return "bf16";
  case CheckpointFormat::FP8Block:
    return "fp8-block";
  case CheckpointFormat::FP8Tensor:
    return "fp8-tensor";
  case CheckpointFormat::NVFP4:
    return "nvfp4";
  case CheckpointFormat::MXFP4:
    return "mxfp4";
  }
  return "?";
}

/// "bf16", "fp8-block", "fp8-tensor", "nvfp4", "mxfp4"; false otherwise.
inline bool parseCheckpointFormat(const char *name, CheckpointFormat &f) {
  for (int i = 0; i <= static_cast<int>(CheckpointFormat::MXFP4); ++i) {
    const char *n = checkpointFormatName(static_cast<CheckpointFormat>(i));
    const char *a = name, *b = n;
    while (*a && *a == *b)
      ++a, ++b;
    if (*a == 0 && *b == 0) {
      f = static_cast<CheckpointFormat>(i);
      return true;
    }
  }
  return false;
}

} // namespace helix

#endif // HELIX_COMMON_WEIGHTFORMAT_H
