//===- OpCosts.cpp - The cost of each op of one decode step ---------------===//

#include "helix/Cost/OpCosts.h"

#include "Engine.h"

namespace helix {

TimeBreakdown PricedOp::where() const {
  TimeBreakdown t = kernels.where;
  t.exposedComm += exposedCommS;
  return t;
}

double PricedOp::bytes() const {
  return kernels.weightBytes + kernels.kvBytes + kernels.actBytes;
}

static PricedOp priced(const OpCost &kernels, const detail::CommCost &comm) {
  PricedOp op;
  op.kernels = kernels;
  op.commS = comm.timeS;
  op.exposedCommS = comm.exposedS;
  return op;
}

struct OpPricer::Impl {
  detail::Prepared prepared;
  int64_t microBatch = 1;
  int64_t microBatches = 1;
  std::vector<detail::LayerCost> perClass; // at the micro-batch
  detail::StepCost step;
};

OpPricer::OpPricer(const ModelSpec &model, const Hardware &hw,
                   const Workload &workload, const Config &config) {
  error_ = validateConfig(model, hw, workload, config);
  if (!error_.empty())
    return;
  impl_ = std::make_unique<Impl>();
  detail::prepare(model, hw, workload, config, impl_->prepared);
  const detail::Prepared &p = impl_->prepared;
  impl_->microBatches = detail::microBatchesOf(p, config.batch);
  impl_->microBatch =
      (config.batch + impl_->microBatches - 1) / impl_->microBatches;
  for (const detail::LayerShape &s : p.classes)
    impl_->perClass.push_back(detail::costLayer(p, s, impl_->microBatch));
  impl_->step = detail::costStep(p, impl_->microBatch);
}

OpPricer::~OpPricer() = default;

int64_t OpPricer::stages() const { return impl_->prepared.pp; }
int64_t OpPricer::microBatch() const { return impl_->microBatch; }
int64_t OpPricer::microBatches() const { return impl_->microBatches; }

int64_t OpPricer::stageOfLayer(size_t i) const {
  return impl_->prepared.stageOfLayer[i];
}

LayerOps OpPricer::layer(size_t i) const {
  const detail::LayerCost &c = impl_->perClass[impl_->prepared.classOfLayer[i]];
  OpCost attention = c.core;
  attention += c.combine;
  LayerOps ops;
  ops.qkv = priced(c.qkv, {});
  ops.attention = priced(attention, c.exchange);
  ops.outProj = priced(c.oproj, c.oprojComm);
  ops.ffn = priced(c.ffn, c.ffnComm);
  return ops;
}

PricedOp OpPricer::embedding() const {
  const detail::StepCost &s = impl_->step;
  return priced(s.first, {s.firstCommS, s.firstCommS});
}

PricedOp OpPricer::lmHead() const {
  const detail::StepCost &s = impl_->step;
  return priced(s.last, {s.lastCommS, s.lastCommS});
}

PricedOp OpPricer::draftProjection() const {
  detail::DraftProjectionCost c =
      detail::costDraftProjection(impl_->prepared, impl_->microBatch);
  return priced(c.kernels, {c.commS, c.commS});
}

PricedOp OpPricer::stageTransfer() const {
  const detail::StepCost &s = impl_->step;
  return priced(OpCost(), {s.p2pS, s.p2pS});
}

} // namespace helix
