//===- ApplyPlan.cpp - Annotate model IR with a chosen plan ---------------===//

#include "helix/Transforms/ApplyPlan.h"
#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix {

int64_t applyPlan(func::FuncOp func, const PlanRecord &plan) {
  MLIRContext *ctx = func.getContext();
  const Layout &l = plan.config.layout;
  int64_t gpus = l.gpus();
  auto layoutAttr = [&](int64_t tpf, int64_t ep) {
    return LayoutAttr::get(ctx, gpus, l.kvp, l.tpa, tpf, ep, l.pp, l.dp);
  };
  LayoutAttr main = layoutAttr(l.tpf, l.ep);
  // A dense FFN has no experts: all of an expert-parallel grid's GPUs shard
  // it (the kvp strategy keeps its FFN on the attention TP group).
  LayoutAttr dense = plan.config.strategy == Strategy::KVP
                         ? layoutAttr(l.tpf * l.ep, 1)
                         : layoutAttr(gpus / l.pp, 1);

  // The output projection runs TP over the stage's GPUs, except in kvp and
  // ep, where it runs on the attention TP group: a #helix.layout (whose
  // linear verifier checks the stage's GPUs) cannot say that, so it has none.
  bool oprojOnStage = plan.config.strategy != Strategy::KVP &&
                      plan.config.strategy != Strategy::EP;
  int64_t annotated = 0;
  func.walk([&](LayoutCarrier op) {
    LayoutKind kind = op.getLayoutKind();
    if (kind == LayoutKind::linear && !oprojOnStage)
      return;
    op.setLayoutOrNull(kind == LayoutKind::ffn ? dense : main);
    ++annotated;
  });
  const Precision &precision = plan.workload.precision;
  func->setAttr("helix.plan",
                PlanAttr::get(ctx, plan.config.strategy, plan.hardware, gpus,
                              plan.config.batch, plan.workload.context,
                              precision.weights, precision.kvCache,
                              precision.compute, precision.nvfp4BlockScales,
                              plan.config.effectiveHopB(), APFloat(plan.ttlS)));
  return annotated;
}

} // namespace helix
