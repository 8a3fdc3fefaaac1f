//===- LayerCost.cpp - One layer and the per-step work at a batch ---------===//

#include "Engine.h"

#include "helix/Common/AttentionSplits.h"
#include "helix/Cost/Collectives.h"
#include "helix/Cost/HopB.h"
#include "helix/Cost/MoE.h"

#include <algorithm>

namespace helix {
namespace detail {

OpCost LayerCost::attention() const {
  OpCost a = qkv;
  a += core;
  a += combine;
  a += oproj;
  return a;
}

double LayerCost::commS() const {
  return exchange.timeS + oprojComm.timeS + ffnComm.timeS;
}

double LayerCost::exposedS() const {
  return exchange.exposedS + oprojComm.exposedS + ffnComm.exposedS;
}

double LayerCost::timeS() const {
  return qkv.timeS + core.timeS + combine.timeS + oproj.timeS + ffn.timeS +
         exposedS();
}

TimeBreakdown LayerCost::where() const {
  TimeBreakdown t = attention().where;
  t += ffn.where;
  t.exposedComm += exposedS();
  return t;
}

/// Partial outputs and one fp32 log-sum-exp per head and request.
static double partialBytes(const Prepared &p, const LayerShape &s, double b) {
  return b * s.qHeads * (s.outHeadDim * p.precision.activationBytes() + 4.0);
}

/// The kernels `counts` (their GEMMs weight-streaming in `format` over `m`
/// tokens).
static KernelMix gemmMix(DType format, double m, const KernelCounts &counts) {
  KernelMix k;
  k.counts = counts;
  k.format = format;
  k.m = m;
  return k;
}

// With MTP every request brings p.queryTokens query tokens to a step: the
// token counts below (t) are requests x query tokens; the KV each request
// reads is not (one pass over it serves all its query tokens).

OpCost costQKV(const Prepared &p, const LayerShape &s, int64_t batch) {
  if (!s.hasMixer)
    return OpCost();
  const double act = p.precision.activationBytes();
  const double t = attentionRequests(p, batch) * p.queryTokens;
  return kernelCost(*p.hw, p.precision.compute, 2.0 * t * s.qkvParams,
                    s.qkvParams * p.attnWeightBytes, 0,
                    t * (p.hidden + s.qkvOutWidth) * act,
                    gemmMix(p.attnWeightFormat, t, s.qkvKernels));
}

/// A recurrent mixer's step: the convolution over its last inputs, the
/// state update and read-out (each request's state read and written once,
/// whatever its query tokens), the gated norm.
static OpCost costRecurrentCore(const Prepared &p, const LayerShape &s,
                                int64_t batch) {
  const double b = attentionRequests(p, batch);
  const double t = b * p.queryTokens;
  KernelMix k = gemmMix(p.attnWeightFormat, t, s.coreKernels);
  return kernelCost(*p.hw, p.precision.compute, t * s.recurrentFlopsPerToken, 0,
                    2.0 * b * s.stateBytesPerRequest,
                    2.0 * t * s.qkvOutWidth * p.precision.activationBytes(), k);
}

/// DSA's indexer on one GPU: its projections (replicated over the TPA
/// group), the scores of every index key the GPU holds with every index
/// head (FP8 keys, FP8 math where the GPU has it), and the top-k of those
/// scores.
static OpCost costIndexer(const Prepared &p, const LayerShape &s,
                          int64_t batch) {
  const Hardware &hw = *p.hw;
  const double act = p.precision.activationBytes();
  const double b = attentionRequests(p, batch);
  const double t = b * p.queryTokens;
  // wq_b (from the q latent) and wk with weights_proj (from the input);
  // the key's norm, RoPE, FP8 quantization and append.
  OpCost c = kernelCost(
      hw, p.precision.compute, 2.0 * t * s.indexerParams,
      s.indexerParams * Prepared::kPlainWeightBytes, 0,
      t * (p.hidden + s.indexHeads * s.indexHeadDim) * act,
      gemmMix(Prepared::kPlainWeightFormat, t, kernels::kIndexerProjections));
  const DType scoreMath =
      hw.supports(DType::FP8) ? DType::FP8 : p.precision.compute;
  KernelMix scores = gemmMix(p.attnWeightFormat, t, kernels::kIndexerScores);
  scores.rows = t;
  scores.localHeads = s.indexHeads;
  scores.kvFormat = DType::FP8;
  c += kernelCost(hw, scoreMath,
                  2.0 * t * s.indexHeads * s.indexHeadDim * s.tokensScored, 0,
                  b * s.indexKeyBytes * s.tokensScored,
                  t * s.tokensScored * 4.0, scores);
  // Top-k over the fp32 scores (a radix select: read them twice), and
  // under KVP the merge of the ranks' candidates into the threshold.
  c +=
      roofline(hw, p.precision.compute, 0, 0, 0, 2.0 * t * s.tokensScored * 4.0,
               kernels::kIndexerTopK * (p.place.kvp > 1 ? 2 : 1));
  return c;
}

OpCost costAttentionCore(const Prepared &p, const LayerShape &s,
                         int64_t batch) {
  if (!s.hasMixer)
    return OpCost();
  if (s.recurrent)
    return costRecurrentCore(p, s, batch);
  const double b = attentionRequests(p, batch);
  const double t = b * p.queryTokens;
  KernelMix k = gemmMix(p.attnWeightFormat, t, s.coreKernels);
  // The merge of split-K parts, where the runtime's kernel splits (the
  // rule it launches by; without the GPU's SM count, always).
  int sms = static_cast<int>(p.hw->smCount);
  if (sms == 0 ||
      attentionSplits(int64_t(t * s.qHeads), int64_t(s.tokensStored), sms) > 1)
    k.counts += kernels::kSplitMerge;
  k.mla = s.mla;
  // Each query token is a row of the decode kernel (its curve's key).
  k.rows = t * s.attnRowsPerRequest;
  k.localHeads = s.qHeads;
  k.kvFormat = p.precision.kvCache;
  OpCost c = kernelCost(
      *p.hw, p.precision.compute, t * s.coreFlopsPerRequest, 0,
      b * s.kvValuesPerToken * s.tokensRead * p.precision.kvBytes(),
      t * s.qHeads * (s.qkDim + s.outHeadDim) * p.precision.activationBytes(),
      k);
  if (s.sparse && s.indexKeyBytes > 0)
    c += costIndexer(p, s, batch);
  return c;
}

OpCost costCombine(const Prepared &p, const LayerShape &s, int64_t batch) {
  if (p.place.kvp <= 1 || !s.hasMixer || s.recurrent)
    return OpCost();
  const double t = attentionRequests(p, batch) * p.queryTokens;
  return roofline(*p.hw, p.precision.compute, 3.0 * t * s.qHeads * s.outHeadDim,
                  0, 0, 2.0 * partialBytes(p, s, t), kernels::kCombine);
}

OpCost costOutProj(const Prepared &p, const LayerShape &s, int64_t batch) {
  if (!s.hasMixer)
    return OpCost();
  const double t = attentionRequests(p, batch) * p.queryTokens;
  return kernelCost(*p.hw, p.precision.compute, 2.0 * t * s.oprojParams,
                    s.oprojParams * p.attnWeightBytes, 0,
                    t * (s.oprojParams / p.hidden + p.hidden) *
                        p.precision.activationBytes(),
                    gemmMix(p.attnWeightFormat, t, kernels::kOutProj));
}

void costAttentionComm(const Prepared &p, const LayerShape &s, int64_t batch,
                       LayerCost &c) {
  const Hardware &hw = *p.hw;
  const Placement &pl = p.place;
  const double b = attentionRequests(p, batch);
  const double t = b * p.queryTokens;
  const double partials = partialBytes(p, s, t);
  const double arBytes = t * p.hidden * p.precision.activationBytes();
  if (!s.hasMixer)
    return;
  if (s.recurrent) {
    // The out projection is row-parallel within the recurrent TP group:
    // one all-reduce over it.
    double ar = collectiveTime(hw, CollectiveKind::AllReduce,
                               int64_t(s.recurrentGroup), arBytes);
    c.oprojComm = {ar, ar};
    return;
  }
  const double ar =
      collectiveTime(hw, CollectiveKind::AllReduce, pl.oprojWidth, arBytes);
  switch (pl.exchange) {
  case Placement::Exchange::AllToAll: {
    // Helix: all-to-all over the KVP group, overlapped by HOP-B with the
    // attention kernel; then the TP = N all-reduce of the output projection.
    OverlapResult o =
        overlapWithCollective(hw, int64_t(b), c.core, CollectiveKind::AllToAll,
                              pl.kvp, partials, pl.overlap, pl.slices);
    c.exchange = {o.commS, o.exposedS};
    c.oprojComm = {ar, ar};
    c.slices = o.slices;
    // Each slice launches the attention kernels again (their fixed costs
    // are in the overlap's time) and combines its partials as they arrive:
    // one combine kernel per slice, as the program runs it.
    c.core.kernels *= std::max<int64_t>(1, o.slices);
    if (o.slices > 1 && c.combine.kernels.total() > 0) {
      double extra = double(o.slices - 1) * c.combine.overheadS;
      c.combine.overheadS += extra;
      c.combine.timeS += extra;
      c.combine.where.overhead += extra;
      c.combine.kernels *= o.slices;
    }
    break;
  }
  case Placement::Exchange::AllGather: {
    // Medha-style: every rank gathers all KVP partials; nothing overlapped.
    double ag = collectiveTime(hw, CollectiveKind::AllGather, pl.kvp,
                               double(pl.kvp) * partials);
    c.exchange = {ag, ag};
    c.oprojComm = {ar, ar};
    break;
  }
  case Placement::Exchange::None: {
    // TP: the output-projection all-reduce, overlapped batch-wise with the
    // attention kernel and projection when overlap is on.
    OpCost stage = c.core;
    stage += c.oproj;
    OverlapResult o =
        overlapWithCollective(hw, int64_t(b), stage, CollectiveKind::AllReduce,
                              pl.oprojWidth, arBytes, pl.overlap, pl.slices);
    c.oprojComm = {o.commS, o.exposedS};
    c.slices = o.slices;
    c.core.kernels *= std::max<int64_t>(1, o.slices);
    c.oproj.kernels *= std::max<int64_t>(1, o.slices);
    break;
  }
  }
  if (s.sparse && pl.kvp > 1 && s.indexKeyBytes > 0) {
    // Exact top-k under KVP: every rank's k best candidates are
    // all-gathered over the KVP group and merged into the global top-k;
    // it precedes the attention, so nothing hides it. A candidate is a
    // (score, position) pair of two 4-byte values, as the program sends it
    // (helix.index_candidates: [1, B, k, 2] f32).
    double g = collectiveTime(hw, CollectiveKind::AllGather, pl.kvp,
                              double(pl.kvp) * t * s.topK * 8.0);
    c.exchange.timeS += g;
    c.exchange.exposedS += g;
  }
}

// RMSNorm weights (H values) are resident (see Totals.cpp) but their reads are
// left to the norm kernels' fixed overhead, so that weight bytes are exactly
// the projection / FFN matrices (Appendix A of the paper).

OpCost costDenseFFN(const Prepared &p, const LayerShape &s, int64_t batch) {
  if (!s.hasFFN)
    return OpCost();
  const double tokens = double(batch) * p.queryTokens;
  // Norm, gate-up GEMM, gated activation, down GEMM.
  return kernelCost(*p.hw, p.precision.compute, 2.0 * tokens * s.ffnParams,
                    s.ffnParams * p.ffnWeightBytes, 0,
                    tokens * (2.0 * p.hidden + 1.5 * s.ffnWidth) *
                        p.precision.activationBytes(),
                    gemmMix(p.ffnWeightFormat, tokens, kernels::kDenseFfn));
}

OpCost costMoE(const Prepared &p, const LayerShape &s, int64_t batch,
               double &activeExperts) {
  const Hardware &hw = *p.hw;
  const DType math = p.precision.compute;
  const double act = p.precision.activationBytes();
  const double wb = p.ffnWeightBytes;
  const double h = p.hidden;
  // Every GPU of the FFN holds every token (with DP attention they are
  // all-gathered first, as the ep strategy is lowered: costFFNComm).
  const double tokens = double(batch) * p.queryTokens;
  const double held = tokens;
  // Norm, router GEMM (BF16) and top-k over the tokens this GPU holds.
  OpCost c = kernelCost(
      hw, math, 2.0 * held * s.routerParams,
      s.routerParams * Prepared::kPlainWeightBytes, 0,
      held * (2.0 * h + s.numExperts) * act,
      gemmMix(Prepared::kPlainWeightFormat, held, kernels::kMoeRouter));
  // Routed experts: the step waits for the busiest EP rank, which computes
  // its token-expert pairs and reads only the distinct local experts they
  // activate (MoE.h; the mean rank with Prepared::balancedMoE).
  RankLoad load =
      p.balancedMoE ? s.experts.balanced(tokens) : s.experts.busiest(tokens);
  activeExperts = load.distinctExperts;
  // One routed-expert block as engines run it and the grouped-GEMM curve
  // measures it: token permute, gate-up GEMM, activation, down GEMM,
  // finalize.
  KernelMix grouped;
  grouped.counts = kernels::kMoeExperts;
  grouped.format = p.ffnWeightFormat;
  grouped.mxfp4 = p.ffnMXFP4;
  grouped.m = tokens;
  c += kernelCost(
      hw, math, 2.0 * load.pairs * s.expertParams,
      activeExperts * s.expertParams * wb, 0,
      load.pairs * (2.0 * s.expertInput + 1.5 * s.expertWidth) * act, grouped);
  if (s.sharedParams > 0)
    c += kernelCost(hw, math, 2.0 * held * s.sharedParams, s.sharedParams * wb,
                    0, held * 3.0 * h * act,
                    gemmMix(p.ffnWeightFormat, held, kernels::kMoeShared));
  // A latent MoE's down and up projections around the routed experts.
  if (s.latentParams > 0)
    c += kernelCost(
        hw, math, 2.0 * held * s.latentParams,
        s.latentParams * Prepared::kPlainWeightBytes, 0, held * 2.0 * h * act,
        gemmMix(Prepared::kPlainWeightFormat, held, kernels::kMoeLatent));
  // Weighted sum of expert outputs.
  c += roofline(hw, math, 0, 0, 0, 2.0 * held * h * act, kernels::kMoeSum);
  return c;
}

CommCost costFFNComm(const Prepared &p, const LayerShape &s, int64_t batch) {
  if (!s.hasFFN)
    return CommCost();
  const Hardware &hw = *p.hw;
  const Placement &pl = p.place;
  const double act = p.precision.activationBytes();
  const double h = p.hidden;
  const double bytes = double(batch) * p.queryTokens * h * act;
  double t = 0;
  if (pl.tokensSplit) {
    // DP attention (ep): the replicas' tokens are all-gathered to every GPU
    // of the FFN and the partial sums reduce-scattered back, dense and MoE
    // layers alike: what helix-insert-collectives lowers it to, and what
    // SGLang's DP attention does around its MoE (dp_gather / dp_scatter).
    // A DeepEP-style dispatch / combine of routed tokens only
    // (CollectiveKind::MoEDispatch / MoECombine) is not lowered yet.
    t = collectiveTime(hw, CollectiveKind::AllGather, pl.ffnWidth, bytes) +
        collectiveTime(hw, CollectiveKind::ReduceScatter, pl.ffnWidth, bytes);
  } else {
    // Every GPU holds every token: partial outputs of TP shards (and expert
    // groups) are summed by one all-reduce over the FFN group.
    t = collectiveTime(hw, CollectiveKind::AllReduce, pl.ffnWidth, bytes);
  }
  return {t, t};
}

void costAttentionHalf(const Prepared &p, const LayerShape &shape,
                       int64_t batch, LayerCost &c) {
  c.qkv = costQKV(p, shape, batch);
  c.core = costAttentionCore(p, shape, batch);
  c.combine = costCombine(p, shape, batch);
  c.oproj = costOutProj(p, shape, batch);
  costAttentionComm(p, shape, batch, c);
}

void costFFNHalf(const Prepared &p, const LayerShape &shape, int64_t batch,
                 LayerCost &c) {
  c.ffn = !shape.hasFFN ? OpCost()
          : shape.moe   ? costMoE(p, shape, batch, c.activeExperts)
                        : costDenseFFN(p, shape, batch);
  c.ffnComm = costFFNComm(p, shape, batch);
}

LayerCost costLayer(const Prepared &p, const LayerShape &shape, int64_t batch) {
  LayerCost c;
  costAttentionHalf(p, shape, batch, c);
  costFFNHalf(p, shape, batch, c);
  return c;
}

StepCost costStep(const Prepared &p, int64_t batch) {
  const Hardware &hw = *p.hw;
  const DType math = p.precision.compute;
  const double act = p.precision.activationBytes();
  const double wb = Prepared::kPlainWeightBytes; // embedding, LM head
  const double h = p.hidden;
  const double b = double(batch) * p.queryTokens; // tokens embedded, sampled
  const int64_t g = p.place.stageGPUs;
  StepCost s;
  // Embedding rows of the new tokens, broadcast to every GPU of the stage.
  s.first =
      roofline(hw, math, 0, b * h * wb, 0, b * h * act, kernels::kEmbedding);
  s.firstCommS = collectiveTime(hw, CollectiveKind::Broadcast, g, b * h * act);
  // Final norm and a vocabulary-parallel LM head; sampling gathers each
  // rank's best (value, index) per request.
  double lmParams = p.vocab * h / g;
  s.last =
      kernelCost(hw, math, 2.0 * b * lmParams, lmParams * wb, 0,
                 b * (h + p.vocab / g) * act,
                 gemmMix(Prepared::kPlainWeightFormat, b, kernels::kLmHead));
  s.lastCommS =
      collectiveTime(hw, CollectiveKind::AllGather, g, double(g) * b * 8.0);
  s.p2pS = collectiveTime(hw, CollectiveKind::P2P, 2, b * h * act);
  return s;
}

double mtpProjectionParams(const Prepared &p) {
  return 2.0 * p.hidden * p.hidden / double(p.place.oprojWidth);
}

DraftProjectionCost costDraftProjection(const Prepared &p, int64_t batch) {
  const double act = p.precision.activationBytes();
  const double t = attentionRequests(p, batch) * p.queryTokens;
  const double params = mtpProjectionParams(p);
  DraftProjectionCost c;
  c.kernels =
      kernelCost(*p.hw, p.precision.compute, 2.0 * t * params,
                 params * p.attnWeightBytes, 0, t * 3.0 * p.hidden * act,
                 gemmMix(p.attnWeightFormat, t, kernels::kDraftProjection));
  c.commS = collectiveTime(*p.hw, CollectiveKind::AllReduce, p.place.oprojWidth,
                           t * p.hidden * act);
  return c;
}

// A draft pass runs the MTP layer over the verify step's K + 1 rows per
// request (as the generated program does: the first pass writes the MTP
// KV entries of every accepted position, the later ones repeat one row),
// so it is priced at p.queryTokens tokens per request like the verify step.
DraftCost costDraft(const Prepared &p, int64_t batch) {
  LayerCost layer = costLayer(p, p.classes[p.draftClass], batch);
  DraftProjectionCost eh = costDraftProjection(p, batch);
  StepCost step = costStep(p, batch);
  DraftCost d;
  d.timeS = layer.timeS() + eh.kernels.timeS + eh.commS + step.first.timeS +
            step.firstCommS + step.last.timeS + step.lastCommS;
  d.where = layer.where();
  d.where += eh.kernels.where;
  d.where += step.first.where;
  d.where += step.last.where;
  d.where.exposedComm += eh.commS + step.firstCommS + step.lastCommS;
  return d;
}

} // namespace detail
} // namespace helix
