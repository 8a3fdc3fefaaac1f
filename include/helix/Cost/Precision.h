//===- Precision.h - Number formats of a decode workload --------*- C++ -*-===//
//
// Weights, KV cache and arithmetic each have their own format. FP4 is 0.5
// bytes per value as in the Helix paper's formulas; with NVFP4 block scales
// (16 values share one FP8 E4M3 scale) it is 4.5 bits = 0.5625 bytes.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_PRECISION_H
#define HELIX_COST_PRECISION_H

#include "helix/Common/DType.h"

#include <string>

namespace helix {

// DType, kNumDTypes, stringifyDType and symbolizeDType: helix/Common/DType.h
// (one definition with #helix.plan's formats).

/// Parses "fp4" | "fp8" | "bf16" (case-insensitive; "nvfp4" is FP4).
/// Returns false and sets `error` on anything else.
bool parseDType(const std::string &text, DType &dtype, std::string &error);

/// Formats of one workload. Activations and messages between GPUs use the
/// arithmetic format.
struct Precision {
  DType weights = DType::FP4;
  DType kvCache = DType::FP4;
  DType compute = DType::FP4;
  /// Count NVFP4 block scales: FP4 values take 0.5625 bytes instead of 0.5.
  bool nvfp4BlockScales = false;

  /// Bytes per value of `dtype` under this precision's FP4 convention.
  double bytesPerValue(DType dtype) const;
  double weightBytes() const { return bytesPerValue(weights); }
  double kvBytes() const { return bytesPerValue(kvCache); }
  double activationBytes() const { return bytesPerValue(compute); }
  /// e.g. "fp4 weights, fp4 KV, fp4 math".
  std::string describe() const;
};

/// The precision options of `helix plan`, `helix cost`, `helix compile` and
/// helix-estimate-cost: `all` (--dtype) sets every format, the others
/// (--weights-dtype, --kv-dtype, --compute-dtype) override one each. An empty
/// string leaves the format as it is.
struct DTypeOptions {
  std::string all, weights, kvCache, compute;
};

/// Applies `options` to `precision`. Errors name the option, spelt with
/// `prefix` ("--" for the command line, "" for pass options), e.g.
/// "--kv-dtype: unknown number format 'fp6' (expected fp4, fp8 or bf16)".
bool applyDTypeOptions(const DTypeOptions &options, const std::string &prefix,
                       Precision &precision, std::string &error);

/// Parses what Precision::describe() prints ("fp4 weights, fp8 KV, bf16
/// math", optionally followed by ", NVFP4 block scales"), or one format name
/// for all three (as #helix.plan's dtype may be written by hand).
bool parsePrecision(const std::string &text, Precision &precision,
                    std::string &error);

} // namespace helix

#endif // HELIX_COST_PRECISION_H
