//===- Passes.h - helix conversion passes -----------------------*- C++ -*-===//

#ifndef HELIX_CONVERSION_PASSES_H
#define HELIX_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::helix {

#define GEN_PASS_DECL
#include "helix/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "helix/Conversion/Passes.h.inc"

} // namespace mlir::helix

#endif // HELIX_CONVERSION_PASSES_H
