//===- EstimateCost.cpp - helix-estimate-cost -----------------------------===//
//
// Prices planned IR op by op with the cost model's per-op functions
// (helix/Cost/OpCosts.h) and attaches #helix.cost to every priced op and the
// step's total to the decode-step function; rank IR is priced by
// RankIRPricing.cpp.
//
//===----------------------------------------------------------------------===//

#include "RankIRPricing.h"
#include "StepPricing.h"

#include "helix/Cost/OpCosts.h"
#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/ModelIR/ModelIR.h"
#include "helix/Transforms/ApplyPlan.h"
#include "helix/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>

namespace mlir::helix {
#define GEN_PASS_DEF_HELIXESTIMATECOST
#include "helix/Transforms/Passes.h.inc"
} // namespace mlir::helix

using namespace mlir;
using namespace mlir::helix;

using namespace ::helix::pricing;

namespace {

struct EstimateCost
    : public mlir::helix::impl::HelixEstimateCostBase<EstimateCost> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (isRankIR(module)) {
      if (failed(priceRankIR(
              module, {hardware, dtype, weightsDtype, kvDtype, computeDtype})))
        signalPassFailure();
      return;
    }
    if (module
            .walk([](Operation *op) {
              return op->getDialect() &&
                             op->getDialect()->getNamespace() == "shard"
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted()) {
      module.emitError() << kPass
                         << ": global-view sharded IR (after "
                            "helix-insert-collectives) is not priced; run it "
                            "on planned IR or on rank IR";
      return signalPassFailure();
    }
    auto found = ::helix::findDecodeStepModel(module, kPass);
    if (failed(found))
      return signalPassFailure();
    func::FuncOp func = found->first;
    const ::helix::ModelSpec &model = found->second;

    std::string error;
    ::helix::PlanRecord plan;
    ::helix::Hardware hw;
    ::helix::Workload &workload = plan.workload;
    if (!::helix::readPlan(func, plan, error) ||
        !::helix::loadHardware(hardware.empty() ? plan.hardware : hardware, hw,
                               error) ||
        !::helix::applyDTypeOptions(
            {dtype, weightsDtype, kvDtype, computeDtype}, "",
            workload.precision, error)) {
      func.emitError() << kPass << ": " << error;
      return signalPassFailure();
    }
    std::unique_ptr<::helix::OpPricer> pricer =
        pricerFor(model, hw, workload, plan);
    if (!pricer->valid()) {
      func.emitError() << kPass << ": the plan's "
                       << ::helix::stringifyStrategy(plan.config.strategy)
                       << " " << plan.config.layout.str() << " is invalid on "
                       << hw.name << ": " << pricer->error();
      return signalPassFailure();
    }
    if (failed(price(func, model, *pricer)))
      return signalPassFailure();
  }

  /// Prices every op, attaches the costs and the step total.
  LogicalResult price(func::FuncOp func, const ::helix::ModelSpec &model,
                      const ::helix::OpPricer &pricer) {
    std::map<int64_t, size_t> position; // layer index -> model.layers[i]
    for (size_t i = 0; i < model.layers.size(); ++i)
      position[model.layers[i].index] = i;
    // Each layer's four priced ops are found exactly once.
    std::map<size_t, int> seen;
    StepPricing step(pricer);
    auto layerOf = [&](Operation *op, int64_t index) -> FailureOr<size_t> {
      auto it = position.find(index);
      if (it == position.end())
        return op->emitError()
               << kPass << ": no layer " << index << " in the model";
      return it->second;
    };

    WalkResult walked = func.walk([&](Operation *op) -> WalkResult {
      int64_t index = -1;
      if (auto qkv = dyn_cast<QKVProjOp>(op))
        index = qkv.getLayer();
      else if (auto attn = dyn_cast<AttentionOp>(op))
        index = attn.getLayer();
      else if (auto ffn = dyn_cast<FFNOp>(op))
        index = ffn.getLayer();
      else if (auto moe = dyn_cast<MoEOp>(op))
        index = moe.getLayer();
      else if (auto linear = dyn_cast<LinearOp>(op)) {
        // The output projection of the attention whose result it takes.
        auto attn = linear.getInput().getDefiningOp<AttentionOp>();
        if (!attn)
          return op->emitError()
                 << kPass << ": cannot price a " << LinearOp::getOperationName()
                 << " that does not project a "
                 << AttentionOp::getOperationName() << " output";
        index = attn.getLayer();
      } else if (isa<EmbedOp>(op)) {
        step.attach(op, {pricer.embedding()}, 0);
        return WalkResult::advance();
      } else if (isa<LMHeadOp>(op)) {
        step.attach(op, {pricer.lmHead()}, pricer.stages() - 1);
        return WalkResult::advance();
      } else {
        // Norms and residual adds are priced with the op that follows them
        // (their kernels' fixed overhead); nothing else is model IR.
        return WalkResult::advance();
      }
      FailureOr<size_t> i = layerOf(op, index);
      if (failed(i))
        return WalkResult::interrupt();
      ::helix::LayerOps ops = pricer.layer(*i);
      const ::helix::PricedOp &cost = isa<QKVProjOp>(op)     ? ops.qkv
                                      : isa<AttentionOp>(op) ? ops.attention
                                      : isa<LinearOp>(op)    ? ops.outProj
                                                             : ops.ffn;
      ++seen[*i];
      step.attach(op, {cost}, pricer.stageOfLayer(*i));
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return failure();
    for (size_t i = 0; i < model.layers.size(); ++i)
      if (seen[i] != 4)
        return func.emitError()
               << kPass << ": layer " << model.layers[i].index << " has "
               << seen[i] << " of its 4 priced ops ("
               << QKVProjOp::getOperationName() << ", "
               << AttentionOp::getOperationName() << ", "
               << LinearOp::getOperationName() << ", "
               << FFNOp::getOperationName() << " or "
               << MoEOp::getOperationName() << ")";
    func->setAttr(::mlir::helix::attrs::cost, step.total(func.getContext()));
    return success();
  }
};

} // namespace
