//===- Passes.h - helix passes ----------------------------------*- C++ -*-===//

#ifndef HELIX_TRANSFORMS_PASSES_H
#define HELIX_TRANSFORMS_PASSES_H

#include "helix/Common/Routing.h"

#include "mlir/Pass/Pass.h"

namespace mlir::helix {

#define GEN_PASS_DECL
#include "helix/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "helix/Transforms/Passes.h.inc"

} // namespace mlir::helix

#endif // HELIX_TRANSFORMS_PASSES_H
