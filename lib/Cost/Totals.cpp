//===- Totals.cpp - Step latency, pipeline stages and memory per GPU ------===//
//
// Pipeline model (tp-pp; pp = 1 for every other strategy): the batch is cut
// into M = min(pp, B) micro-batches of b = ceil(B / M) requests. A token of
// one micro-batch passes every stage in turn, so a round takes at least the
// sum of the stage times plus pp - 1 transfers; the busiest stage must also
// serve all M micro-batches per round. TTL = max(sum, M * slowest stage);
// throughput = B / TTL. With B < pp the pipeline is never full and most
// stages idle, which shows as low tokens/s/GPU.
//
//===----------------------------------------------------------------------===//

#include "Engine.h"

#include <algorithm>

namespace helix {

double pipelineTTL(const std::vector<double> &stageS, double p2pS,
                   int64_t microBatches) {
  double sum = 0, slowest = 0;
  for (double s : stageS) {
    sum += s;
    slowest = std::max(slowest, s);
  }
  if (!stageS.empty())
    sum += double(stageS.size() - 1) * p2pS;
  return std::max(sum, double(microBatches) * slowest);
}

namespace detail {

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

double attentionWeightBytes(const Prepared &p, const LayerShape &s) {
  return (s.qkvParams + s.oprojParams) * p.attnWeightBytes +
         s.indexerParams * Prepared::kPlainWeightBytes;
}

double kvCacheBytes(const Prepared &p, const LayerShape &s,
                    double layerRequests) {
  // A recurrent mixer's fixed-size state; DSA's index keys beside the KV.
  return layerRequests *
         (s.kvValuesPerToken * s.tokensStored * p.precision.kvBytes() +
          s.indexKeyBytes * s.indexTokensStored + s.stateBytesPerRequest);
}

double ffnMatrixBytes(const Prepared &p, const LayerShape &s) {
  return (s.residentFFNParams - s.routerParams) * p.ffnWeightBytes;
}

double normRouterBytes(const Prepared &p, const LayerShape &s) {
  return (s.norms * p.hidden + s.routerParams) * Prepared::kPlainWeightBytes;
}

double attentionWorkspaceBytes(const Prepared &p, const LayerShape &s,
                               double mb) {
  // fp32 partial outputs + LSE (send and receive buffers, or all KVP
  // ranks' when gathered), QKV outputs; a recurrent mixer's projections'
  // outputs; DSA's fp32 scores of the tokens one GPU scores.
  if (!s.hasMixer)
    return 0;
  if (s.recurrent)
    return mb * s.qkvOutWidth * p.precision.activationBytes();
  const Placement &pl = p.place;
  double copies =
      pl.exchange == Placement::Exchange::AllGather ? double(pl.kvp) : 2.0;
  return copies * mb * s.qHeads * (s.outHeadDim + 1.0) * 4.0 +
         mb * s.qkvOutWidth * p.precision.activationBytes() +
         mb * s.tokensScored * 4.0;
}

double ffnWorkspaceBytes(const Prepared &p, const LayerShape &s, double mb) {
  // FFN or expert intermediates.
  const double act = p.precision.activationBytes();
  if (!s.hasFFN)
    return 0;
  return s.moe ? mb * s.expertTopK * (p.hidden + s.expertWidth) * act
               : mb * s.ffnWidth * act;
}

void addStageWeights(const Prepared &p, int64_t stage, double &weights) {
  const double wb = Prepared::kPlainWeightBytes;
  const double h = p.hidden;
  const double g = double(p.place.stageGPUs);
  if (stage == 0)
    weights += p.vocab * h / g * wb; // embedding shard
  if (stage == p.pp - 1) {
    if (!(p.tiedEmbeddings && p.pp == 1))
      weights += p.vocab * h / g * wb; // LM head shard
    weights += h * wb;                 // final norm
  }
}

double logitsWorkspaceBytes(const Prepared &p, double mb) {
  return mb * p.vocab / double(p.place.stageGPUs) * 4.0;
}

double attentionRequests(const Prepared &p, int64_t batch) {
  return double(p.place.tokensSplit ? ceilDiv(batch, p.place.dp) : batch);
}

void stageMemory(Prepared &p) {
  p.stageWeights.assign(p.pp, 0.0);
  p.stageKVPerRequest.assign(p.pp, 0.0);
  p.stageWorkspacePerToken.assign(p.pp, 0.0);
  for (int64_t st = 0; st < p.pp; ++st) {
    int64_t same = p.sameLayersAs[st];
    if (same != st) {
      p.stageWeights[st] = p.stageWeights[same];
      p.stageKVPerRequest[st] = p.stageKVPerRequest[same];
      p.stageWorkspacePerToken[st] = p.stageWorkspacePerToken[same];
      continue;
    }
    // Weights, KV cache per request, and the largest workspace per query
    // token of the stage's layers: the KV is linear in the requests, each
    // workspace in the tokens (so is their largest).
    for (size_t c = 0; c < p.classes.size(); ++c) {
      int64_t n = p.stageCount(st, c);
      if (n == 0)
        continue;
      const LayerShape &s = p.classes[c];
      p.stageWeights[st] += n * (attentionWeightBytes(p, s) +
                                 ffnMatrixBytes(p, s) + normRouterBytes(p, s));
      p.stageKVPerRequest[st] += kvCacheBytes(p, s, double(n));
      p.stageWorkspacePerToken[st] = std::max(
          p.stageWorkspacePerToken[st],
          attentionWorkspaceBytes(p, s, 1.0) + ffnWorkspaceBytes(p, s, 1.0));
    }
  }
}

/// Weights, KV cache and the largest workspace of the layers of stage `st`.
static MemoryUse layerMemory(const Prepared &p, int64_t st, double requests,
                             double mb) {
  MemoryUse m;
  m.weights = p.stageWeights[st];
  m.kvCache = p.stageKVPerRequest[st] * requests;
  m.activations = p.stageWorkspacePerToken[st] * mb;
  return m;
}

/// Memory of the fullest GPU: weights and KV of its stage's layers, plus the
/// live activations of one layer at the micro-batch.
static MemoryUse memoryOf(const Prepared &p, int64_t batch, int64_t micro,
                          int64_t microBatches) {
  const double requests = attentionRequests(p, batch);
  // Workspace per query token (MTP verifies 1 + K per request).
  const double mb = double(micro) * p.queryTokens;
  // Stages with the same layers hold the same (Prepared::memoryStages).
  MemoryUse worst;
  for (int64_t st : p.memoryStages) {
    MemoryUse m = layerMemory(p, p.sameLayersAs[st], requests, mb);
    double workspace = m.activations;
    addStageWeights(p, st, m.weights);
    if (p.draftClass >= 0 && st == p.pp - 1) {
      // The MTP layer (with its eh_proj) and its KV cache.
      const LayerShape &s = p.classes[p.draftClass];
      m.weights += attentionWeightBytes(p, s) + ffnMatrixBytes(p, s) +
                   normRouterBytes(p, s) +
                   mtpProjectionParams(p) * p.attnWeightBytes;
      m.kvCache += kvCacheBytes(p, s, requests);
    }
    if (st == p.pp - 1)
      workspace = std::max(workspace, logitsWorkspaceBytes(p, mb));
    // fp32 residual stream of every micro-batch in flight.
    m.activations = workspace + microBatches * mb * p.hidden * 4.0;
    if (m.total() > worst.total())
      worst = m;
  }
  return worst;
}

int64_t microBatchesOf(const Prepared &p, int64_t batch) {
  return std::min<int64_t>(p.pp, batch);
}

Totals computeTotals(const Prepared &p, int64_t batch,
                     std::vector<LayerCost> *perClass, bool breakdown) {
  const int64_t micro = ceilDiv(batch, microBatchesOf(p, batch));
  std::vector<LayerCost> local;
  std::vector<LayerCost> &costs = perClass ? *perClass : local;
  costs.clear();
  costs.reserve(p.classes.size());
  for (const LayerShape &s : p.classes)
    costs.push_back(costLayer(p, s, micro));
  return totalsFrom(p, batch, costs, costStep(p, micro), breakdown);
}

Totals totalsFrom(const Prepared &p, int64_t batch,
                  const std::vector<LayerCost> &costs, const StepCost &step,
                  bool breakdown) {
  Totals t;
  t.microBatches = microBatchesOf(p, batch);
  t.microBatch = ceilDiv(batch, t.microBatches);
  for (const LayerCost &c : costs)
    t.slices = std::max(t.slices, c.slices);

  const double first = step.first.timeS + step.firstCommS,
               last = step.last.timeS + step.lastCommS;
  const double p2p = double(p.pp - 1) * step.p2pS;
  // Each distinct stage's layers once (Prepared::distinctStages): stages
  // with the same layers take the same time; the first and last stage add
  // the step's own work. The pipeline's time as pipelineTTL gives it.
  double sum = 0; // the stages' times and the transfers between them
  double slowest = 0, firstStage = 0, lastStage = 0;
  // Each class's time once (a tp-pp plan reads it in every stage).
  thread_local std::vector<double> classS;
  classS.resize(costs.size());
  for (size_t c = 0; c < costs.size(); ++c)
    classS[c] = costs[c].timeS();
  for (size_t i = 0; i < p.distinctStages.size(); ++i) {
    const int64_t st = p.distinctStages[i];
    double layers = 0;
    for (size_t c = 0; c < costs.size(); ++c)
      if (int64_t n = p.stageCount(st, c))
        layers += n * classS[c];
    sum += layers * double(p.distinctStageCount[i]);
    if (p.distinctInMiddle[i])
      slowest = std::max(slowest, layers);
    if (st == 0)
      firstStage = layers;
    if (st == p.sameLayersAs[p.pp - 1])
      lastStage = layers;
  }
  sum += first + last + p2p;
  if (p.pp == 1)
    slowest = std::max(slowest, firstStage + first + last);
  else
    slowest = std::max({slowest, firstStage + first, lastStage + last});
  t.ttlS = std::max(sum, double(t.microBatches) * slowest);
  if (breakdown) {
    // Where each stage's layers spend their time.
    for (int64_t st = 0; st < p.pp; ++st)
      for (size_t c = 0; c < costs.size(); ++c)
        if (int64_t n = p.stageCount(st, c))
          t.where += costs[c].where().scaled(double(n));
    t.where.pipelineStall = t.ttlS - sum;
  }
  t.stepComputeS = step.first.timeS + step.last.timeS;
  t.stepWeightBytes = step.first.weightBytes + step.last.weightBytes;
  t.stepKernels = step.first.kernels + step.last.kernels;
  t.stepCommS = step.firstCommS + step.lastCommS + p2p;
  t.stepExposedS = t.stepCommS;
  if (breakdown) {
    t.where += step.first.where;
    t.where += step.last.where;
    t.where.exposedComm += t.stepExposedS;
  }

  if (p.draftTokens > 0) {
    // Speculative decoding: the verify step above, then K draft passes of
    // the MTP layer per micro-batch; a step yields the expected accepted
    // tokens per request, and ttlS is the time per token.
    DraftCost d = costDraft(p, t.microBatch);
    double k = double(p.draftTokens) * double(t.microBatches);
    t.mtpVerifyS = t.ttlS;
    t.mtpDraftS = k * d.timeS;
    t.mtpExpectedTokens = expectedAcceptedTokens(p.draftTokens, p.acceptance);
    t.ttlS = (t.mtpVerifyS + t.mtpDraftS) / t.mtpExpectedTokens;
    if (breakdown) {
      t.where += d.where.scaled(k);
      t.where = t.where.scaled(1.0 / t.mtpExpectedTokens);
    }
  }
  t.memory = memoryOf(p, batch, t.microBatch, t.microBatches);
  t.fits = t.memory.total() <= p.hw->hbmCapacityBytes;
  return t;
}

} // namespace detail
} // namespace helix
