//===- SearchLayouts.cpp - helix-search-layouts ---------------------------===//
//
// Runs the planner's exhaustive search on the model IR and annotates the
// chosen configuration.
//
//===----------------------------------------------------------------------===//

#include "helix/ModelIR/ModelIR.h"
#include "helix/Transforms/ApplyPlan.h"
#include "helix/Transforms/Passes.h"
#include "helix/Plan/Planning.h"

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

    std::string error;
    ::helix::Hardware hw;
    ::helix::Workload workload;
    ::helix::PlanRequest request;
    ::helix::PlanRecord record;
    request.hardware = hardware;
    request.gpus = gpus;
    request.maxGpus = maxGpus;
    request.batch = batch;
    request.ttlMs = ttlMs;
    request.perLayer = perLayer;
    if (!::helix::loadPassWorkload(hardware, dtype, context, routingSkew, hw,
                                   workload, error) ||
        !::helix::parseStrategy(strategy, request.strategy, error) ||
        !::helix::choosePlan(*model, hw, workload, request, record, error)) {
      func.emitError() << "helix-search-layouts: " << error;
      return signalPassFailure();
    }
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
