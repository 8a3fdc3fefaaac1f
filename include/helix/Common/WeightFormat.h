//===- WeightFormat.h - Checkpoint weight formats --------------*- C++ -*-===//
//
// The formats checkpoints store quantized weights in (docs/quantization.md),
// shared by the EmitC lowering (which writes them into the generated load
// calls) and the runtime (which loads and converts accordingly). The
// formats a program keeps a weight in are element types
// (helix/Common/ElementType.h). Header-only and dependency-free.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_WEIGHTFORMAT_H
#define HELIX_COMMON_WEIGHTFORMAT_H

#include <string>
#include <vector>

namespace helix {

/// How a checkpoint stores its quantized linear weights; the names are
/// those of helix-make-checkpoint --format.
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

/// The enumerator's name ("FP8Block"), as generated code spells it after
/// `helix::CheckpointFormat::`.
inline const char *enumeratorName(CheckpointFormat f) {
  switch (f) {
  case CheckpointFormat::BF16:
    return "BF16";
  case CheckpointFormat::FP8Block:
    return "FP8Block";
  case CheckpointFormat::FP8Tensor:
    return "FP8Tensor";
  case CheckpointFormat::NVFP4:
    return "NVFP4";
  case CheckpointFormat::MXFP4:
    return "MXFP4";
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
