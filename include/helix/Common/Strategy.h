//===- Strategy.h - The sharding strategies ---------------------*- C++ -*-===//
//
// `helix::Strategy` and its names ("helix", "helix-no-hopb", "tp", "tp-pp",
// "ep", "kvp"): stringifyStrategy / symbolizeStrategy, generated from
// dialects/Helix/HelixStrategy.td. The cost model, the reports, the tools
// and #helix.plan's `strategy` all use this one definition. Needs LLVM's ADT
// headers only (and MLIR's header-only FailureOr for the generated
// FieldParser); link HelixCommon.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_STRATEGY_H
#define HELIX_COMMON_STRATEGY_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

#include "helix/Dialect/Helix/HelixStrategy.h.inc"

#endif // HELIX_COMMON_STRATEGY_H
