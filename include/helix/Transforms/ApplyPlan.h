//===- ApplyPlan.h - Annotate model IR with a chosen plan -------*- C++ -*-===//

#ifndef HELIX_TRANSFORMS_APPLYPLAN_H
#define HELIX_TRANSFORMS_APPLYPLAN_H

#include "helix/Dialect/Helix/HelixAttributes.h"
#include "helix/Model/ModelSpec.h"
#include "helix/Plan/Planning.h"

#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace helix {

/// Sets `layout` on every layout-carrying helix op of the decode step `func`
/// (attention ops and the output projection get the attention layout, but
/// kvp and ep leave the output projection, which runs on the TPA group, without
/// one; MoE
/// blocks get TPF x EP; dense FFNs get TPF = GPUs per stage, EP = 1, or the
/// attention TP group for the Medha-style kvp strategy) and `helix.plan` on
/// the function. A per-layer plan gives each op its own layer's layout:
/// the attention widths of the layer's attention kind and, on a dense FFN
/// or MoE block, the tpf, ep of the layer's FFN kind (attention ops and the
/// LM head carry the MoE, else dense, kind's), and lists the kinds'
/// layouts in `helix.plan`'s `layouts`. Returns the number of ops
/// annotated.
int64_t applyPlan(mlir::func::FuncOp func, const PlanRecord &plan);

/// The planning passes' options, as their TableGen declarations name them.
struct PassPlanOptions {
  std::string hardware, dtype, strategy;
  int64_t context = 0;
  double routingSkew = 0;
};

/// helix-apply-layout's and helix-search-layouts' common step: the hardware
/// and workload of the pass's options, its strategy, then choosePlan for
/// `request` into `record`. On failure (or a non-empty `error` on entry:
/// the pass's own option error) emits "`pass`: error" on `func` and
/// returns failure.
mlir::LogicalResult choosePassPlan(mlir::func::FuncOp func,
                                   llvm::StringRef pass, const ModelSpec &model,
                                   const PassPlanOptions &options,
                                   PlanRequest &request, PlanRecord &record,
                                   std::string error = "");

/// Speculative decoding (Workload::mtpTokens, mtpAcceptance) as the
/// `helix.mtp` attribute of `holder` (the decode step, or the module of
/// rank IR) records it: set when drafting, removed otherwise; and read
/// back (nothing when absent).
void recordSpeculative(mlir::Operation *holder, const Workload &workload);
void readSpeculative(mlir::Operation *holder, Workload &workload);

/// `plan` with the HOP-B slices and KV block a program was compiled with.
mlir::helix::PlanAttr planWithProgram(mlir::helix::PlanAttr plan,
                                      int64_t slices, int64_t kvBlock);

/// What a #helix.plan records (strategy, GPUs, batch, context, precision,
/// overlap, hardware, latency); the layout's widths are not in it.
PlanRecord planRecordOf(mlir::helix::PlanAttr attr);

/// The inverse of applyPlan: the configuration, hardware, workload and
/// predicted latency a planned decode step records (helix.plan, and the
/// widths from its ops' layouts). Fails with a one-line `error` when there is
/// no plan, an op has no layout, or an op's layout is not the one the plan
/// gives it (for a per-layer plan, its layer's kinds').
bool readPlan(mlir::func::FuncOp func, PlanRecord &plan, std::string &error);

} // namespace helix

#endif // HELIX_TRANSFORMS_APPLYPLAN_H
