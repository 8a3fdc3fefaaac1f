//===- StepPricing.h - Costs of a decode step's ops, summed -----*- C++ -*-===//
//
// Private to lib/Transforms: what helix-estimate-cost shares between planned
// IR and rank IR. Each priced op gets #helix.cost; the step's total (with
// the pipeline's stage-to-stage transfers and stall, which belong to no
// op) is the cost model's token-to-token latency.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_TRANSFORMS_STEPPRICING_H
#define HELIX_LIB_TRANSFORMS_STEPPRICING_H

#include "helix/Cost/OpCosts.h"
#include "helix/Dialect/Helix/HelixAttributes.h"
#include "helix/Dialect/Helix/HelixDialect.h"
#include "helix/Transforms/ApplyPlan.h"

#include "mlir/IR/Operation.h"

#include <memory>
#include <vector>

namespace helix::pricing {

inline constexpr const char *kPass = "helix-estimate-cost";

/// The pricer of a plan: per-layer plans price each layer under its
/// kinds' layouts (OpPricer's per-layer constructor).
std::unique_ptr<OpPricer> pricerFor(const ModelSpec &model, const Hardware &hw,
                                    const Workload &workload,
                                    const PlanRecord &plan);

/// Prices ops of one step and sums them per pipeline stage.
class StepPricing {
public:
  explicit StepPricing(const OpPricer &pricer)
      : pricer(pricer), stageS(pricer.stages(), 0.0) {}

  /// `op` costs the sum of `costs` (one op, or the four of a layer), on
  /// pipeline stage `stage`.
  void attach(mlir::Operation *op, llvm::ArrayRef<PricedOp> costs,
              int64_t stage);
  /// The step: #helix.cost of the whole decode step.
  mlir::helix::CostAttr total(mlir::MLIRContext *ctx) const;

private:
  const OpPricer &pricer;
  std::vector<double> stageS;
  TimeBreakdown where;
  double commS = 0, bytes = 0, flops = 0;
};

/// Speculative decoding: a step of `verify` and `drafts` passes of `draft`,
/// per accepted token (1 + a + ... + a^drafts at acceptance a): its times
/// (v + drafts x d) / E, its bytes and flops v + drafts x d (per step).
mlir::helix::CostAttr perAcceptedToken(mlir::helix::CostAttr verify,
                                       mlir::helix::CostAttr draft,
                                       int64_t drafts, double acceptance);

} // namespace helix::pricing

#endif // HELIX_LIB_TRANSFORMS_STEPPRICING_H
