//===- ApplyLayout.cpp - helix-apply-layout -------------------------------===//
//
// Annotates model IR with an explicit layout after checking it against the
// model, the hardware and the memory at the requested batch.
//
//===----------------------------------------------------------------------===//

#include "helix/ModelIR/ModelIR.h"
#include "helix/Plan/Planning.h"
#include "helix/Transforms/ApplyPlan.h"
#include "helix/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::helix {
#define GEN_PASS_DEF_HELIXAPPLYLAYOUT
#include "helix/Transforms/Passes.h.inc"
} // namespace mlir::helix

using namespace mlir;

namespace {

struct ApplyLayout
    : public mlir::helix::impl::HelixApplyLayoutBase<ApplyLayout> {
  using Base::Base;

  void runOnOperation() override {
    auto found =
        ::helix::findDecodeStepModel(getOperation(), "helix-apply-layout");
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = found->first;
    FailureOr<::helix::ModelSpec> model = found->second;

    std::string error;
    ::helix::PlanRequest request;
    ::helix::PlanRecord record;
    ::helix::Layout parsed;
    request.gpus = gpus;
    request.batch = batch;
    request.hopb = hopb;
    bool perLayer = !layerLayouts.empty();
    if (layout.empty() && !perLayer)
      error = "needs a layout (layout=kvp=..,tpa=..,tpf=..,ep=..)";
    else if (!layout.empty() && ::helix::parseLayout(layout, parsed, error))
      request.layout = parsed;
    if (perLayer && error.empty() &&
        !::helix::parseKindLayouts(layerLayouts, request.layerLayouts, error))
      request.layout.reset();
    if (failed(::helix::choosePassPlan(
            func, "helix-apply-layout", *model,
            {hardware, dtype, strategy, context, routingSkew}, request, record,
            error)))
      return signalPassFailure();
    ::helix::applyPlan(func, record);
  }
};

} // namespace
