//===- OpCosts.cpp - The cost of each op of one decode step ---------------===//

#include "helix/Cost/OpCosts.h"

#include "helix/Cost/PerLayer.h"

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
  /// Per-layer plans: the costs under each kind's layout (empty when
  /// uniform), and each layer's kinds.
  std::array<std::vector<detail::LayerCost>, kNumLayerKinds> perKind;
  std::vector<LayerKind> attnKind, ffnKind;
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

OpPricer::OpPricer(const ModelSpec &model, const Hardware &hw,
                   const Workload &workload, const Config &config,
                   const PerLayerChoice &choice) {
  const int64_t gpus = config.gpus ? config.gpus : config.layout.gpus();
  if (config.strategy != Strategy::Helix || config.layout.pp != 1 ||
      config.layout.dp != 1) {
    error_ = "per-layer layouts are Helix plans on one pipeline stage";
    return;
  }
  // Exactly the choice, as the per-layer search prices it.
  PerLayerSearch check(model, hw, workload, gpus, choice, config.hopbSlices);
  if (!check.valid()) {
    error_ = check.error();
    return;
  }
  impl_ = std::make_unique<Impl>();
  Impl &im = *impl_;
  const KindLayout &attn = choice.mainMixer();
  for (const LayerSpec &l : model.layers) {
    im.attnKind.push_back(mixerPricingKindOf(l));
    im.ffnKind.push_back(ffnPricingKindOf(l));
  }
  im.microBatch = config.batch;
  for (int k = 0; k < kNumLayerKinds; ++k) {
    const KindLayout &kl = choice.kinds[k];
    if (kl.layers == 0)
      continue;
    detail::Prepared p;
    const KindLayout &a = kl.isMixer() ? kl : attn;
    detail::prepare(model, hw, workload,
                    kindConfig(kl, gpus, a, config.hopbSlices),
                    kindPlacement(kl, gpus, a, config.hopbSlices), p);
    for (const detail::LayerShape &s : p.classes)
      im.perKind[k].push_back(detail::costLayer(p, s, im.microBatch));
    if (im.perClass.empty()) {
      // Classes, stages and the step outside the layers are the same
      // under every kind's layout (one stage of the same GPUs).
      im.prepared = std::move(p);
      im.perClass = im.perKind[k];
      im.step = detail::costStep(im.prepared, im.microBatch);
    }
  }
}

OpPricer::~OpPricer() = default;

int64_t OpPricer::stages() const { return impl_->prepared.pp; }
int64_t OpPricer::microBatch() const { return impl_->microBatch; }
int64_t OpPricer::microBatches() const { return impl_->microBatches; }

int64_t OpPricer::stageOfLayer(size_t i) const {
  return impl_->prepared.stageOfLayer[i];
}

LayerOps OpPricer::layer(size_t i) const {
  const Impl &im = *impl_;
  const int64_t cls = im.prepared.classOfLayer[i];
  const detail::LayerCost &a = im.attnKind.empty()
                                   ? im.perClass[cls]
                                   : im.perKind[int(im.attnKind[i])][cls];
  const detail::LayerCost &f = im.ffnKind.empty()
                                   ? im.perClass[cls]
                                   : im.perKind[int(im.ffnKind[i])][cls];
  OpCost attention = a.core;
  attention += a.combine;
  LayerOps ops;
  ops.qkv = priced(a.qkv, {});
  ops.attention = priced(attention, a.exchange);
  ops.outProj = priced(a.oproj, a.oprojComm);
  ops.ffn = priced(f.ffn, f.ffnComm);
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
