//===- Passes.td - helix transformation passes -------------*- tablegen -*-===//

#ifndef HELIX_TRANSFORMS_PASSES_TD
#define HELIX_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

#endif // HELIX_TRANSFORMS_PASSES_TD
