//===- EstimateCost.cpp - helix-estimate-cost -----------------------------===//
//
// Prices planned IR op by op with the cost model's per-op functions
// (helix/Cost/OpCosts.h) and attaches #helix.cost to every priced op and the
// step's total to the decode-step function.
//
//===----------------------------------------------------------------------===//

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

namespace {

constexpr const char *kPass = "helix-estimate-cost";
constexpr const char *kCostAttr = "helix.cost";

/// Sharded IR (after helix-insert-collectives or helix-partition) is not
/// priced yet: says so, or returns "".
std::string shardedIRReason(ModuleOp module) {
  if (module->hasAttr("helix.plan"))
    return "rank IR (after helix-partition)";
  std::string reason;
  module.walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "shard")
      reason =
          "sharded IR (it has `" + op->getName().getStringRef().str() + "`)";
    else if (isa<func::FuncOp>(op) && op->hasAttr("helix.rank"))
      reason = "rank IR (after helix-partition)";
    return reason.empty() ? WalkResult::advance() : WalkResult::interrupt();
  });
  return reason;
}

/// Sums of priced ops.
struct Totals {
  ::helix::TimeBreakdown where;
  double commS = 0, bytes = 0, flops = 0;

  void add(const ::helix::PricedOp &op) {
    where += op.where();
    commS += op.commS;
    bytes += op.bytes();
    flops += op.kernels.flops;
  }
};

CostAttr costAttr(MLIRContext *ctx, double timeS,
                  const ::helix::TimeBreakdown &w, double commS, double bytes,
                  double flops) {
  auto us = [](double s) { return APFloat(s * 1e6); };
  return CostAttr::get(ctx, us(timeS), us(w.kvRead), us(w.weightRead),
                       us(w.compute), us(w.overhead), us(w.exposedComm),
                       us(w.pipelineStall), us(commS), APFloat(bytes),
                       APFloat(flops));
}

struct EstimateCost
    : public mlir::helix::impl::HelixEstimateCostBase<EstimateCost> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (std::string why = shardedIRReason(module); !why.empty()) {
      module.emitError() << kPass << ": " << why
                         << " is not supported yet; run it on planned IR "
                            "(after helix-apply-layout or "
                            "helix-search-layouts)";
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
    ::helix::OpPricer pricer(model, hw, workload, plan.config);
    if (!pricer.valid()) {
      func.emitError() << kPass << ": the plan's "
                       << ::helix::stringifyStrategy(plan.config.strategy)
                       << " " << plan.config.layout.str() << " is invalid on "
                       << hw.name << ": " << pricer.error();
      return signalPassFailure();
    }
    if (failed(price(func, model, pricer)))
      return signalPassFailure();
  }

  /// Prices every op, attaches the costs and the step total.
  LogicalResult price(func::FuncOp func, const ::helix::ModelSpec &model,
                      const ::helix::OpPricer &pricer) {
    MLIRContext *ctx = func.getContext();
    std::map<int64_t, size_t> position; // layer index -> model.layers[i]
    for (size_t i = 0; i < model.layers.size(); ++i)
      position[model.layers[i].index] = i;
    // Each layer's four priced ops are found exactly once.
    std::map<size_t, int> seen;
    std::vector<double> stageS(pricer.stages(), 0.0);
    Totals totals;
    auto attach = [&](Operation *op, const ::helix::PricedOp &cost,
                      int64_t stage) {
      op->setAttr(kCostAttr,
                  costAttr(ctx, cost.timeS(), cost.where(), cost.commS,
                           cost.bytes(), cost.kernels.flops));
      stageS[stage] += cost.timeS();
      totals.add(cost);
    };
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
                 << kPass
                 << ": cannot price a helix.linear that does not project a "
                    "helix.attention output";
        index = attn.getLayer();
      } else if (isa<EmbedOp>(op)) {
        attach(op, pricer.embedding(), 0);
        return WalkResult::advance();
      } else if (isa<LMHeadOp>(op)) {
        attach(op, pricer.lmHead(), pricer.stages() - 1);
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
      attach(op, cost, pricer.stageOfLayer(*i));
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      return failure();
    for (size_t i = 0; i < model.layers.size(); ++i)
      if (seen[i] != 4)
        return func.emitError()
               << kPass << ": layer " << model.layers[i].index << " has "
               << seen[i]
               << " of its 4 priced ops (helix.qkv_proj, helix.attention, "
                  "helix.linear, helix.ffn or helix.moe)";

    // The step: stage-to-stage transfers and the pipeline stall belong to
    // no single op.
    ::helix::PricedOp p2p = pricer.stageTransfer();
    double transfers = double(pricer.stages() - 1) * p2p.exposedCommS;
    double ttl =
        ::helix::pipelineTTL(stageS, p2p.exposedCommS, pricer.microBatches());
    double sum = transfers;
    for (double s : stageS)
      sum += s;
    ::helix::TimeBreakdown where = totals.where;
    where.exposedComm += transfers;
    where.pipelineStall = std::max(0.0, ttl - sum);
    func->setAttr(kCostAttr, costAttr(ctx, ttl, where, totals.commS + transfers,
                                      totals.bytes, totals.flops));
    return success();
  }
};

} // namespace
