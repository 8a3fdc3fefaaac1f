//===- StepPricing.cpp - Costs of a decode step's ops, summed -------------===//

#include "StepPricing.h"

#include "helix/Common/Speculative.h"

#include <algorithm>

using namespace mlir;

namespace helix::pricing {

std::unique_ptr<OpPricer> pricerFor(const ModelSpec &model, const Hardware &hw,
                                    const Workload &workload,
                                    const PlanRecord &plan) {
  if (plan.perLayer)
    return std::make_unique<OpPricer>(model, hw, workload, plan.config,
                                      *plan.perLayer);
  return std::make_unique<OpPricer>(model, hw, workload, plan.config);
}

static mlir::helix::CostAttr costAttr(MLIRContext *ctx, double timeS,
                                      const TimeBreakdown &w, double commS,
                                      double bytes, double flops) {
  auto us = [](double s) { return APFloat(s * 1e6); };
  return mlir::helix::CostAttr::get(
      ctx, us(timeS), us(w.kvRead), us(w.weightRead), us(w.compute),
      us(w.overhead), us(w.exposedComm), us(w.pipelineStall), us(commS),
      APFloat(bytes), APFloat(flops));
}

void StepPricing::attach(Operation *op, ArrayRef<PricedOp> costs,
                         int64_t stage) {
  double time = 0, comm = 0, opBytes = 0, opFlops = 0;
  TimeBreakdown opWhere;
  for (const PricedOp &c : costs) {
    time += c.timeS();
    comm += c.commS;
    opBytes += c.bytes();
    opFlops += c.kernels.flops;
    opWhere += c.where();
  }
  op->setAttr(
      ::mlir::helix::attrs::cost,
      costAttr(op->getContext(), time, opWhere, comm, opBytes, opFlops));
  stageS[stage] += time;
  where += opWhere;
  commS += comm;
  bytes += opBytes;
  flops += opFlops;
}

mlir::helix::CostAttr StepPricing::total(MLIRContext *ctx) const {
  // Stage-to-stage transfers and the pipeline stall belong to no single op.
  PricedOp p2p = pricer.stageTransfer();
  double transfers = double(pricer.stages() - 1) * p2p.exposedCommS;
  double ttl = pipelineTTL(stageS, p2p.exposedCommS, pricer.microBatches());
  double sum = transfers;
  for (double s : stageS)
    sum += s;
  TimeBreakdown w = where;
  w.exposedComm += transfers;
  w.pipelineStall = std::max(0.0, ttl - sum);
  return costAttr(ctx, ttl, w, commS + transfers, bytes, flops);
}

mlir::helix::CostAttr perAcceptedToken(mlir::helix::CostAttr v,
                                       mlir::helix::CostAttr d, int64_t drafts,
                                       double acceptance) {
  double k = double(drafts), e = expectedAcceptedTokens(drafts, acceptance);
  auto step = [&](APFloat a, APFloat b) {
    return a.convertToDouble() + k * b.convertToDouble();
  };
  auto perToken = [&](APFloat a, APFloat b) { return APFloat(step(a, b) / e); };
  return mlir::helix::CostAttr::get(
      v.getContext(), perToken(v.getTimeUs(), d.getTimeUs()),
      perToken(v.getKvReadUs(), d.getKvReadUs()),
      perToken(v.getWeightReadUs(), d.getWeightReadUs()),
      perToken(v.getComputeUs(), d.getComputeUs()),
      perToken(v.getOverheadUs(), d.getOverheadUs()),
      perToken(v.getCommUs(), d.getCommUs()),
      perToken(v.getStallUs(), d.getStallUs()),
      perToken(v.getCommTotalUs(), d.getCommTotalUs()),
      APFloat(step(v.getBytes(), d.getBytes())),
      APFloat(step(v.getFlops(), d.getFlops())));
}

} // namespace helix::pricing
