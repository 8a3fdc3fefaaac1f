//===- RankIRPricing.h - helix-estimate-cost on rank IR ---------*- C++ -*-===//
//
// Private to lib/Transforms. Prices the program helix-partition emitted: the
// model, plan and layout are read back from the module (helix.model,
// helix.plan, the grids) and the stage programs' ops, each layer is priced
// where it runs (a call of its layer function, or its ops), and the step's
// total goes on the module.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_TRANSFORMS_RANKIRPRICING_H
#define HELIX_LIB_TRANSFORMS_RANKIRPRICING_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace helix::pricing {

/// helix-estimate-cost's options: a hardware preset or file and number
/// formats overriding the plan's ("" keeps the plan's).
struct PricingOptions {
  std::string hardware, dtype, weights, kvCache, compute;
};

/// Whether `module` is rank IR (it has stage programs).
bool isRankIR(mlir::ModuleOp module);

/// Attaches #helix.cost to every layer call (or layer op), the embedding
/// and the LM head of the stage programs, and the step's total to the
/// module.
mlir::LogicalResult priceRankIR(mlir::ModuleOp module,
                                const PricingOptions &options);

} // namespace helix::pricing

#endif // HELIX_LIB_TRANSFORMS_RANKIRPRICING_H
