//===- LayerCost.cpp - One layer and the per-step work at a batch ---------===//

#include "Engine.h"

#include "helix/Cost/Collectives.h"
#include "helix/Cost/HopB.h"
#include "helix/Cost/MoE.h"

namespace helix {
namespace detail {

OpCost LayerCost::attention() const {
  OpCost a = qkv;
  a += core;
  a += combine;
  a += oproj;
  return a;
}

double LayerCost::timeS() const {
  return qkv.timeS + core.timeS + combine.timeS + oproj.timeS + ffn.timeS +
         exposedS;
}

TimeBreakdown LayerCost::where() const {
  TimeBreakdown t = attention().where;
  t += ffn.where;
  t.exposedComm += exposedS;
  return t;
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Attention block: projections, attention kernel, KVP combine, output
/// projection and their collectives.
static void costAttention(const Prepared &p, const LayerShape &s, int64_t batch,
                          LayerCost &c) {
  const Hardware &hw = *p.hw;
  const Placement &pl = p.place;
  const DType math = p.precision.compute;
  const double act = p.precision.activationBytes();
  const double wb = p.precision.weightBytes();
  const double kvb = p.precision.kvBytes();
  const double h = p.hidden;
  // Requests this GPU's attention serves: all of them, or its DP share.
  const double b = double(pl.tokensSplit ? ceilDiv(batch, pl.dp) : batch);

  c.qkv = roofline(hw, math, 2.0 * b * s.qkvParams, s.qkvParams * wb, 0,
                   b * (h + s.qkvOutWidth) * act, s.qkvKernels);
  c.core =
      roofline(hw, math, b * s.coreFlopsPerRequest, 0,
               b * s.kvValuesPerToken * s.tokensRead * kvb,
               b * s.qHeads * (s.qkDim + s.outHeadDim) * act, s.coreKernels);
  // Partial outputs and one fp32 log-sum-exp per head and request.
  const double partials = b * s.qHeads * (s.outHeadDim * act + 4.0);
  if (pl.kvp > 1)
    c.combine = roofline(hw, math, 3.0 * b * s.qHeads * s.outHeadDim, 0, 0,
                         2.0 * partials, 1);
  c.oproj = roofline(hw, math, 2.0 * b * s.oprojParams, s.oprojParams * wb, 0,
                     b * (s.oprojParams / h + h) * act, 1);

  const double arBytes = b * h * act;
  const double ar =
      collectiveTime(hw, CollectiveKind::AllReduce, pl.oprojWidth, arBytes);
  switch (pl.exchange) {
  case Placement::Exchange::AllToAll: {
    // Helix: all-to-all over the KVP group, overlapped by HOP-B with the
    // attention kernel; then the TP = N all-reduce of the output projection.
    OverlapResult o =
        overlapWithCollective(hw, int64_t(b), c.core, CollectiveKind::AllToAll,
                              pl.kvp, partials, pl.overlap);
    c.commS += o.commS + ar;
    c.exposedS += o.exposedS + ar;
    c.slices = o.slices;
    break;
  }
  case Placement::Exchange::AllGather: {
    // Medha-style: every rank gathers all KVP partials; nothing overlapped.
    double ag = collectiveTime(hw, CollectiveKind::AllGather, pl.kvp,
                               double(pl.kvp) * partials);
    c.commS += ag + ar;
    c.exposedS += ag + ar;
    break;
  }
  case Placement::Exchange::None: {
    // TP: the output-projection all-reduce, overlapped batch-wise with the
    // attention kernel and projection when overlap is on.
    OpCost stage = c.core;
    stage += c.oproj;
    OverlapResult o =
        overlapWithCollective(hw, int64_t(b), stage, CollectiveKind::AllReduce,
                              pl.oprojWidth, arBytes, pl.overlap);
    c.commS += o.commS;
    c.exposedS += o.exposedS;
    c.slices = o.slices;
    break;
  }
  }
}

// RMSNorm weights (H values) are resident (see Totals.cpp) but their reads are
// left to the norm kernels' fixed overhead, so that weight bytes are exactly
// the projection / FFN matrices (Appendix A of the paper).

/// Dense FFN or MoE block and its collectives (never overlapped).
static void costFFN(const Prepared &p, const LayerShape &s, int64_t batch,
                    LayerCost &c) {
  const Hardware &hw = *p.hw;
  const Placement &pl = p.place;
  const DType math = p.precision.compute;
  const double act = p.precision.activationBytes();
  const double wb = p.precision.weightBytes();
  const double h = p.hidden;
  const double tokens = double(batch);
  const double held = double(pl.tokensSplit ? ceilDiv(batch, pl.dp) : batch);
  double comm = 0;

  if (!s.moe) {
    c.ffn = roofline(hw, math, 2.0 * tokens * s.ffnParams, s.ffnParams * wb, 0,
                     tokens * (2.0 * h + 1.5 * s.ffnWidth) * act, 3);
    const double bytes = tokens * h * act;
    if (pl.tokensSplit)
      comm =
          collectiveTime(hw, CollectiveKind::AllGather, pl.ffnWidth, bytes) +
          collectiveTime(hw, CollectiveKind::ReduceScatter, pl.ffnWidth, bytes);
    else
      comm = collectiveTime(hw, CollectiveKind::AllReduce, pl.ffnWidth, bytes);
    c.commS += comm;
    c.exposedS += comm;
    return;
  }

  // Norm, router GEMM and top-k over the tokens this GPU holds.
  c.ffn = roofline(hw, math, 2.0 * held * s.routerParams, s.routerParams * wb,
                   0, held * (2.0 * h + s.numExperts) * act, 3);
  // Routed experts: T*k/EP token-expert pairs land on this GPU's experts;
  // only the distinct experts they activate are read.
  const double pairs = tokens * s.topK / pl.ep;
  c.activeExperts =
      expectedDistinctExperts(s.localExperts, s.numExperts, s.topK, tokens);
  c.ffn += roofline(hw, math, 2.0 * pairs * s.expertParams,
                    c.activeExperts * s.expertParams * wb, 0,
                    pairs * (2.0 * h + 1.5 * s.expertWidth) * act, 2);
  if (s.sharedParams > 0)
    c.ffn += roofline(hw, math, 2.0 * held * s.sharedParams,
                      s.sharedParams * wb, 0, held * 3.0 * h * act, 2);
  // Weighted sum of expert outputs.
  c.ffn += roofline(hw, math, 0, 0, 0, 2.0 * held * h * act, 1);

  if (pl.tokensSplit) {
    const double msg =
        held * expectedDistinctRanks(double(pl.ep), s.topK) * h * act;
    comm = collectiveTime(hw, CollectiveKind::MoEDispatch, pl.ep, msg) +
           collectiveTime(hw, CollectiveKind::MoECombine, pl.ep, msg);
  } else {
    // Every GPU holds every token: partial outputs of TP shards and expert
    // groups are summed by one all-reduce over the FFN group.
    comm = collectiveTime(hw, CollectiveKind::AllReduce, pl.ffnWidth,
                          tokens * h * act);
  }
  c.commS += comm;
  c.exposedS += comm;
}

LayerCost costLayer(const Prepared &p, const LayerShape &shape, int64_t batch) {
  LayerCost c;
  costAttention(p, shape, batch, c);
  costFFN(p, shape, batch, c);
  return c;
}

StepCost costStep(const Prepared &p, int64_t batch) {
  const Hardware &hw = *p.hw;
  const DType math = p.precision.compute;
  const double act = p.precision.activationBytes();
  const double wb = p.precision.weightBytes();
  const double h = p.hidden;
  const double b = double(batch);
  const int64_t g = p.place.stageGPUs;
  StepCost s;
  // Embedding rows of the new tokens, broadcast to every GPU of the stage.
  s.first = roofline(hw, math, 0, b * h * wb, 0, b * h * act, 1);
  s.firstCommS = collectiveTime(hw, CollectiveKind::Broadcast, g, b * h * act);
  // Final norm and a vocabulary-parallel LM head; sampling gathers each
  // rank's best (value, index) per request.
  double lmParams = p.vocab * h / g;
  s.last = roofline(hw, math, 2.0 * b * lmParams, lmParams * wb, 0,
                    b * (h + p.vocab / g) * act, 3);
  s.lastCommS =
      collectiveTime(hw, CollectiveKind::AllGather, g, double(g) * b * 8.0);
  s.p2pS = collectiveTime(hw, CollectiveKind::P2P, 2, b * h * act);
  return s;
}

} // namespace detail
} // namespace helix
