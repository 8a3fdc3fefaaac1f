//===- DType.h - Number formats ---------------------------------*- C++ -*-===//
//
// `helix::DType` (fp4, fp8, bf16) and its names: stringifyDType /
// symbolizeDType, generated from dialects/Helix/HelixDType.td. The cost
// model, the reports and #helix.plan's weights / kv_cache / compute all use
// this one definition. Needs LLVM's ADT headers only (and MLIR's
// header-only FailureOr for the generated FieldParser); link HelixCommon.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_DTYPE_H
#define HELIX_COMMON_DTYPE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

#include "helix/Dialect/Helix/HelixDType.h.inc"

namespace helix {

/// Number of formats (DType values are 0 .. kNumDTypes - 1).
constexpr int kNumDTypes = getMaxEnumValForDType() + 1;

/// "fp4 weights, fp8 KV, bf16 math" (and ", NVFP4 block scales" when they
/// are counted): how reports and generated projects describe a workload's
/// formats.
std::string describePrecision(DType weights, DType kvCache, DType compute,
                              bool nvfp4BlockScales);

} // namespace helix

#endif // HELIX_COMMON_DTYPE_H
