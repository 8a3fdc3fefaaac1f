//===- SearchLayouts.cpp - helix-search-layouts ---------------------------===//
//
// Runs the planner's exhaustive search on the model IR and annotates the
// chosen configuration.
//
//===----------------------------------------------------------------------===//

#include "helix/ModelIR/ModelIR.h"
#include "helix/Plan/Planning.h"
#include "helix/Transforms/ApplyPlan.h"
#include "helix/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "helix-search-layouts"

namespace mlir::helix {
#define GEN_PASS_DEF_HELIXSEARCHLAYOUTS
#include "helix/Transforms/Passes.h.inc"
} // namespace mlir::helix

using namespace mlir;

namespace {

struct SearchLayouts
    : public mlir::helix::impl::HelixSearchLayoutsBase<SearchLayouts> {
  using Base::Base;

  void runOnOperation() override {
    auto found =
        ::helix::findDecodeStepModel(getOperation(), "helix-search-layouts");
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = found->first;
    FailureOr<::helix::ModelSpec> model = found->second;

    ::helix::PlanRequest request;
    ::helix::PlanRecord record;
    request.gpus = gpus;
    request.maxGpus = maxGpus;
    request.batch = batch;
    request.ttlMs = ttlMs;
    request.perLayer = perLayer;
    if (failed(::helix::choosePassPlan(
            func, "helix-search-layouts", *model,
            {hardware, dtype, strategy, context, routingSkew}, request,
            record)))
      return signalPassFailure();
    [[maybe_unused]] int64_t annotated = ::helix::applyPlan(func, record);
    LLVM_DEBUG(llvm::dbgs()
               << "helix-search-layouts: " << record.evaluated
               << " configurations priced; " << annotated
               << " ops given the layout " << record.config.layout.str()
               << " at batch " << record.config.batch << ", TTL "
               << record.ttlS * 1e3 << " ms\n");
  }
};

} // namespace
