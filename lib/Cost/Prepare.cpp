//===- Prepare.cpp - Per-GPU shapes of each class of layers ---------------===//

#include "Engine.h"

#include "helix/Common/KVCapacity.h"
#include "helix/Common/ModulePatterns.h"
#include "helix/Common/WeightFormat.h"
#include "helix/Cost/PerLayer.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace helix {
namespace detail {

/// Layers whose cost cannot differ share a class.
static bool sameCostShape(const LayerSpec &a, const LayerSpec &b) {
  if (a.mixer != b.mixer || a.hasFFN != b.hasFFN)
    return false;
  const AttentionSpec &x = a.attention, &y = b.attention;
  const IndexerSpec &i = x.indexer, &j = y.indexer;
  const LinearAttentionSpec &la = a.linear, &lb = b.linear;
  const MambaSpec &ma = a.mamba, &mb = b.mamba;
  bool mixer = true;
  switch (a.mixer) {
  case MixerKind::Attention:
    mixer =
        x.kind == y.kind && x.numHeads == y.numHeads &&
        x.numKVHeads == y.numKVHeads && x.headDim == y.headDim &&
        x.vHeadDim == y.vHeadDim && x.qLoraRank == y.qLoraRank &&
        x.kvLoraRank == y.kvLoraRank && x.qkNopeHeadDim == y.qkNopeHeadDim &&
        x.qkRopeHeadDim == y.qkRopeHeadDim && x.qkvBias == y.qkvBias &&
        x.outBias == y.outBias && x.qkNorm == y.qkNorm && x.sinks == y.sinks &&
        x.slidingWindow == y.slidingWindow && x.outputGate == y.outputGate &&
        i.numHeads == j.numHeads && i.headDim == j.headDim &&
        i.topK == j.topK && i.reusesPrevious == j.reusesPrevious;
    break;
  case MixerKind::LinearAttention:
    mixer =
        la.variant == lb.variant && la.numKeyHeads == lb.numKeyHeads &&
        la.numValueHeads == lb.numValueHeads &&
        la.keyHeadDim == lb.keyHeadDim && la.valueHeadDim == lb.valueHeadDim &&
        la.convKernel == lb.convKernel && la.fullRankGate == lb.fullRankGate &&
        la.stateDType == lb.stateDType;
    break;
  case MixerKind::Mamba:
    mixer = ma.numHeads == mb.numHeads && ma.headDim == mb.headDim &&
            ma.stateSize == mb.stateSize && ma.nGroups == mb.nGroups &&
            ma.convKernel == mb.convKernel && ma.convBias == mb.convBias &&
            ma.stateDType == mb.stateDType;
    break;
  case MixerKind::None:
    break;
  }
  if (!mixer || a.isMoE != b.isMoE)
    return false;
  if (!a.hasFFN)
    return true;
  if (!a.isMoE)
    return a.ffn.intermediate == b.ffn.intermediate &&
           a.ffn.bias == b.ffn.bias && a.ffn.activation == b.ffn.activation;
  const MoESpec &m = a.moe, &n = b.moe;
  return m.numExperts == n.numExperts && m.topK == n.topK &&
         m.expertIntermediate == n.expertIntermediate &&
         m.numSharedExperts == n.numSharedExperts &&
         m.sharedIntermediate == n.sharedIntermediate &&
         m.expertBias == n.expertBias && m.latentSize == n.latentSize &&
         m.latentNorm == n.latentNorm &&
         m.sharedExpertGate == n.sharedExpertGate && m.gated() == n.gated();
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The busiest of `kvp` ranks' share of `k` selected tokens placed
/// round-robin: each rank's count is Binomial(k, 1/kvp); the expected
/// maximum of kvp of them is about mean + sqrt(2 var ln kvp) (the Gaussian
/// extreme-value estimate), at most all k or the rank's own tokens.
static double busiestSelectedShare(double k, double kvp, double perRank) {
  if (kvp <= 1)
    return std::min(k, perRank);
  const double mean = k / kvp;
  const double var = k * (1.0 / kvp) * (1.0 - 1.0 / kvp);
  return std::min({mean + std::sqrt(2.0 * var * std::log(kvp)), k, perRank});
}

/// A recurrent mixer (linear attention, Mamba-2) on its TP group: the in
/// and out projections' shards, its state and the math of one token.
static void recurrentShape(const LayerSpec &layer, const ModelSpec &model,
                           const Placement &pl, const Workload &workload,
                           LayerShape &s) {
  const int64_t h = model.hiddenSize;
  const double g = double(recurrentGroupWidth(layer, pl.tpa));
  const double act = workload.precision.activationBytes();
  s.recurrent = true;
  s.recurrentGroup = g;
  s.coreKernels = kernels::kRecurrentCore;
  if (layer.mixer == MixerKind::LinearAttention) {
    const LinearAttentionSpec &l = layer.linear;
    s.qkvParams = double(linearAttentionInParameterCount(l, h)) / g;
    s.oprojParams = double(linearAttentionOutParameterCount(l, h)) / g;
    // q, k, v (and GDN's output gate z, KDA's gates) per token.
    s.qkvOutWidth = double(l.convChannels() + l.outputDim()) / g;
    // The state (its dtype) and the convolution's last kernel - 1 inputs
    // (activation dtype).
    s.stateBytesPerRequest =
        (double(l.stateValues()) * double(stateDTypeBytes(l.stateDType)) +
         double(l.convChannels() * (l.convKernel - 1)) * act) /
        g;
    // Per value head and token: decay, k^T S, the delta update and q^T S
    // (about 7 flops per state value), plus the convolution.
    s.recurrentFlopsPerToken = (7.0 * double(l.stateValues()) +
                                2.0 * double(l.convChannels() * l.convKernel)) /
                               g;
    s.qkvKernels = l.variant == LinearAttentionSpec::Variant::KDA
                       ? kernels::kKdaQkv
                       : kernels::kGatedDeltaNetQkv;
    s.outHeadDim = double(l.valueHeadDim);
    s.qHeads = double(l.numValueHeads) / g;
    return;
  }
  const MambaSpec &m = layer.mamba;
  s.qkvParams = double(mambaInParameterCount(m, h)) / g;
  s.oprojParams = double(mambaOutParameterCount(m, h)) / g;
  s.qkvOutWidth =
      double(2 * m.innerSize() + 2 * m.nGroups * m.stateSize + m.numHeads) / g;
  s.stateBytesPerRequest =
      (double(m.stateValues()) * double(stateDTypeBytes(m.stateDType)) +
       double(m.convChannels() * (m.convKernel - 1)) * act) /
      g;
  // Per head channel and state value: decay, the x B update, the C read.
  s.recurrentFlopsPerToken = (5.0 * double(m.stateValues()) +
                              2.0 * double(m.convChannels() * m.convKernel)) /
                             g;
  s.qkvKernels = kernels::kMambaQkv;
  s.outHeadDim = double(m.headDim);
  s.qHeads = double(m.numHeads) / g;
}

/// Attention over a KV cache (GQA, MLA; sliding windows; DSA's indexer
/// and sparse selection) on its kvp x tpa share.
static void attentionShape(const LayerSpec &layer, const ModelSpec &model,
                           const Placement &pl, const Workload &workload,
                           LayerShape &s) {
  const int64_t context = workload.context;
  const int64_t kvBlock = workload.kvBlock;
  const AttentionSpec &a = layer.attention;
  // Attention: each GPU holds the projections of its TPA share of heads.
  int64_t kvHeads = s.mla ? 1 : std::max<int64_t>(1, a.numKVHeads);
  int64_t localKV = ceilDiv(kvHeads, pl.tpa);
  AttentionSpec shard = a;
  shard.numHeads = a.numHeads / pl.tpa;
  shard.indexer = IndexerSpec(); // priced apart (indexerParams)
  if (!s.mla)
    shard.numKVHeads = localKV;
  s.qkvParams = double(qkvParameterCount(shard, model.hiddenSize));
  s.oprojParams =
      double(outProjParameterCount(a, model.hiddenSize)) / pl.oprojWidth;
  s.qHeads = double(shard.numHeads);
  s.outHeadDim = double(a.vHeadDim);
  if (s.mla) {
    s.qkDim = double(a.kvLoraRank + a.qkRopeHeadDim);
    s.vDim = double(a.kvLoraRank);
    s.qkvOutWidth = s.qHeads * s.qkDim + s.qkDim;
    s.qkvKernels = kernels::kMlaQkv;
    s.coreKernels = kernels::kMlaCore;
    s.attnRowsPerRequest = 1; // one latent "KV head"
  } else {
    s.qkDim = double(a.headDim);
    s.vDim = double(a.vHeadDim);
    s.qkvOutWidth = s.qHeads * a.headDim + localKV * (a.headDim + a.vHeadDim);
    s.qkvKernels = kernels::kGqaQkv;
    s.coreKernels = kernels::kGqaCore; // launched per HOP-B slice
    s.attnRowsPerRequest = double(localKV);
  }
  // KV: a GPU holds ceil(K / TPA) of the K heads (all of MLA's latent).
  s.kvValuesPerToken =
      double(a.kvValuesPerToken()) * double(localKV) / double(kvHeads);
  int64_t window =
      a.slidingWindow > 0 ? std::min(a.slidingWindow, context) : context;
  s.tokensRead = double(window) / double(pl.kvp);
  // The slots the program allocates: whole KV blocks (a ring for windows).
  s.tokensStored = double(kvSlotsPerRank(
      context, a.slidingWindow > 0 ? a.slidingWindow : 0, kvBlock, pl.kvp));
  // Per query head per context token: q.k then p.v.
  s.coreFlopsPerRequest =
      s.qHeads * s.tokensRead * (2.0 * s.qkDim + 2.0 * s.vDim);

  if (a.outputGate)
    s.coreKernels += kernels::kOutputGate;
  if (!a.indexer.sparse())
    return;
  // DeepSeek Sparse Attention: each GPU scores its KVP share of the index
  // keys with every index head (the indexer is replicated over the TPA
  // group), keeps its top-k, and attends to its share of the selected
  // tokens; shared-selection layers (reusesPrevious) skip the indexer.
  const IndexerSpec &x = a.indexer;
  s.sparse = true;
  s.topK = double(x.topK);
  const double perRank = s.tokensRead;
  s.tokensRead = busiestSelectedShare(std::min(double(x.topK), double(window)),
                                      double(pl.kvp), perRank);
  s.coreFlopsPerRequest =
      s.qHeads * s.tokensRead * (2.0 * s.qkDim + 2.0 * s.vDim);
  if (!x.reusesPrevious) {
    s.indexerParams = double(indexerParameterCount(a, model.hiddenSize));
    s.indexKeyBytes = double(x.keyBytes());
    s.indexHeads = double(x.numHeads);
    s.indexHeadDim = double(x.headDim);
    s.tokensScored = perRank;
    s.indexTokensStored = s.tokensStored;
  }
}

static LayerShape shapeOf(const LayerSpec &layer, const ModelSpec &model,
                          const Placement &pl, const Workload &workload) {
  const AttentionSpec &a = layer.attention;
  LayerShape s;
  s.mla = layer.hasAttention() && a.kind == AttentionKind::MLA;
  s.moe = layer.hasFFN && layer.isMoE;
  s.hasMixer = layer.mixer != MixerKind::None;
  s.hasFFN = layer.hasFFN;
  s.norms = double(int(s.hasMixer) + int(s.hasFFN));
  if (layer.isRecurrent())
    recurrentShape(layer, model, pl, workload, s);
  if (layer.hasAttention())
    attentionShape(layer, model, pl, workload, s);
  if (!layer.hasFFN)
    return s;

  // FFN.
  if (!layer.isMoE) {
    s.ffnParams =
        double(ffnParameterCount(layer.ffn, model.hiddenSize)) / pl.ffnWidth;
    s.ffnWidth = (isGatedActivation(layer.ffn.activation) ? 2.0 : 1.0) *
                 double(layer.ffn.intermediate) / pl.ffnWidth;
    s.residentFFNParams = s.ffnParams;
    return s;
  }
  const MoESpec &m = layer.moe;
  s.numExperts = double(m.numExperts);
  s.expertTopK = double(m.topK);
  s.localExperts = double(m.numExperts) / pl.ep;
  s.expertParams = double(expertParameterCount(m, model.hiddenSize)) / pl.tpf;
  s.expertWidth =
      (m.gated() ? 2.0 : 1.0) * double(m.expertIntermediate) / pl.tpf;
  s.sharedParams =
      double(sharedExpertParameterCount(m, model.hiddenSize)) / pl.sharedWidth;
  s.routerParams = double(routerParameterCount(m, model.hiddenSize));
  // A latent MoE's down / up projections, replicated on every GPU of the
  // FFN (each needs the whole latent of its tokens).
  s.latentParams = double(latentProjectionParameterCount(m, model.hiddenSize));
  s.expertInput = double(m.latentSize > 0 ? m.latentSize : model.hiddenSize);
  s.residentFFNParams = s.localExperts * s.expertParams + s.sharedParams +
                        s.routerParams + s.latentParams;
  s.experts =
      ExpertLoadModel(m.numExperts, pl.ep, m.topK, workload.routingSkew);
  return s;
}

LayerSpec layerOfClass(const ModelSpec &model, const Prepared &p, size_t c) {
  for (size_t i = 0; i < p.classOfLayer.size(); ++i)
    if (p.classOfLayer[i] == int64_t(c))
      return model.layers[i];
  return mtpLayerOf(model, 0);
}

/// Whether the checkpoint keeps the attention and the FFN weights
/// unquantized (its modules_to_not_convert / ignore patterns). A function of
/// the patterns alone, remembered for the last list seen: the search prepares
/// every configuration of one model, and matching "re:" patterns per
/// configuration cost more than the rest of prepare().
static std::pair<bool, bool>
keptUnquantized(const std::vector<std::string> &patterns) {
  thread_local std::vector<std::string> lastPatterns;
  thread_local std::pair<bool, bool> lastKept{false, false};
  thread_local bool valid = false;
  if (valid && lastPatterns == patterns)
    return lastKept;
  auto kept = [&](std::initializer_list<const char *> modules) {
    for (const char *m : modules)
      if (isExcludedModule(m, patterns))
        return true;
    return false;
  };
  lastKept = {kept({"model.layers.0.self_attn"}),
              kept({"model.layers.0.mlp", "model.layers.0.mlp.experts",
                    "model.layers.0.block_sparse_moe.experts"})};
  lastPatterns = patterns;
  valid = true;
  return lastKept;
}

LayerClasses classifyLayers(const ModelSpec &model) {
  LayerClasses lc;
  const int64_t numLayers = model.numLayers();
  lc.classOfLayer.resize(numLayers);
  for (int64_t i = 0; i < numLayers; ++i) {
    const LayerSpec &layer = model.layers[i];
    int64_t cls = -1;
    for (size_t c = 0; c < lc.representative.size() && cls < 0; ++c)
      if (sameCostShape(model.layers[lc.representative[c]], layer))
        cls = int64_t(c);
    if (cls < 0) {
      cls = int64_t(lc.representative.size());
      lc.representative.push_back(i);
    }
    lc.classOfLayer[i] = cls;
  }
  if (numLayers > 0) {
    const LayerSpec mtp = mtpLayerOf(model, 0);
    for (size_t c = 0; c < lc.representative.size() && lc.mtpClass < 0; ++c)
      if (sameCostShape(model.layers[lc.representative[c]], mtp))
        lc.mtpClass = int64_t(c);
  }
  return lc;
}

void prepare(const ModelSpec &model, const Hardware &hw,
             const Workload &workload, const Config &config, Prepared &out,
             const LayerClasses *classes) {
  prepare(model, hw, workload, config, placementFor(config), out, classes);
}

void prepare(const ModelSpec &model, const Hardware &hw,
             const Workload &workload, const Config &config,
             const Placement &place, Prepared &out,
             const LayerClasses *classes) {
  // A fresh Prepared that keeps `out`'s buffers (the search prepares one
  // layout after another into the same object).
  {
    Prepared fresh;
    auto keep = [](auto &from, auto &to) {
      from.clear();
      std::swap(from, to);
    };
    keep(out.classes, fresh.classes);
    keep(out.classOfLayer, fresh.classOfLayer);
    keep(out.stageOfLayer, fresh.stageOfLayer);
    keep(out.stageCounts, fresh.stageCounts);
    keep(out.sameLayersAs, fresh.sameLayersAs);
    keep(out.distinctStages, fresh.distinctStages);
    keep(out.distinctStageCount, fresh.distinctStageCount);
    keep(out.distinctInMiddle, fresh.distinctInMiddle);
    keep(out.memoryStages, fresh.memoryStages);
    keep(out.stageWeights, fresh.stageWeights);
    keep(out.stageKVPerRequest, fresh.stageKVPerRequest);
    keep(out.stageWorkspacePerToken, fresh.stageWorkspacePerToken);
    out = std::move(fresh);
  }
  out.hw = &hw;
  out.precision = workload.precision;
  out.config = config;
  out.balancedMoE = workload.balancedExperts;
  out.draftTokens = workload.mtpTokens;
  out.queryTokens = double(1 + workload.mtpTokens);
  out.acceptance = workload.mtpAcceptance;
  out.place = place;
  out.pp = config.layout.pp;
  out.hidden = double(model.hiddenSize);
  out.vocab = double(model.vocabSize);
  out.tiedEmbeddings = model.tieWordEmbeddings;
  const double wb = workload.precision.weightBytes();
  const auto [attnKept, ffnKept] = keptUnquantized(model.quantExclude);
  out.attnWeightBytes = attnKept ? Prepared::kPlainWeightBytes : wb;
  out.ffnWeightBytes = ffnKept ? Prepared::kPlainWeightBytes : wb;
  out.attnWeightFormat =
      attnKept ? Prepared::kPlainWeightFormat : workload.precision.weights;
  out.ffnWeightFormat =
      ffnKept ? Prepared::kPlainWeightFormat : workload.precision.weights;
  // An MXFP4 checkpoint's experts planned at FP4 stay MXFP4 (what the
  // program keeps, helix/Common/WeightFormat.h): E8M0 scales per 32 values.
  out.ffnMXFP4 = !ffnKept && out.ffnWeightFormat == DType::FP4 &&
                 model.quantFormat == "mxfp4";
  if (out.ffnMXFP4 && workload.precision.nvfp4BlockScales)
    out.ffnWeightBytes = Prepared::kMXFP4BytesWithScales;

  LayerClasses computed;
  const LayerClasses &lc =
      classes ? *classes : (computed = classifyLayers(model));
  const int64_t numLayers = model.numLayers();
  out.classOfLayer = lc.classOfLayer;
  for (int64_t r : lc.representative)
    out.classes.push_back(shapeOf(model.layers[r], model, out.place, workload));

  // The MTP layer (mtpLayerOf: the last decoder layer's shape unless the
  // model says otherwise): its class, added when no decoder layer has it.
  if (out.draftTokens > 0 && numLayers > 0) {
    out.draftClass = lc.mtpClass;
    if (out.draftClass < 0) {
      out.draftClass = int64_t(out.classes.size());
      out.classes.push_back(
          shapeOf(mtpLayerOf(model, 0), model, out.place, workload));
    }
  }

  // Contiguous stages: stage s holds layers [s*L/pp, (s+1)*L/pp).
  const size_t nc = out.classes.size();
  out.stageCounts.assign(size_t(out.pp) * nc, 0);
  out.stageOfLayer.resize(numLayers);
  for (int64_t i = 0; i < numLayers; ++i) {
    int64_t stage = 0;
    while (stage + 1 < out.pp && i >= ((stage + 1) * numLayers) / out.pp)
      ++stage;
    out.stageOfLayer[i] = stage;
    ++out.stageCounts[size_t(stage) * nc + size_t(out.classOfLayer[i])];
  }
  // The first stage with each count vector. Contiguous stages of a
  // pattern repeat few distinct vectors, so a scan of those found so far.
  out.sameLayersAs.resize(out.pp);
  std::vector<int64_t> distinct;
  for (int64_t st = 0; st < out.pp; ++st) {
    int64_t same = st;
    const int64_t *mine = &out.stageCounts[size_t(st) * nc];
    for (int64_t d : distinct)
      if (std::equal(mine, mine + nc, &out.stageCounts[size_t(d) * nc])) {
        same = d;
        break;
      }
    if (same == st)
      distinct.push_back(st);
    out.sameLayersAs[st] = same;
  }
  out.distinctStages = distinct;
  out.distinctStageCount.assign(distinct.size(), 0);
  out.distinctInMiddle.assign(distinct.size(), 0);
  for (int64_t st = 0; st < out.pp; ++st) {
    size_t i = size_t(
        std::find(distinct.begin(), distinct.end(), out.sameLayersAs[st]) -
        distinct.begin());
    ++out.distinctStageCount[i];
    if (st != 0 && st != out.pp - 1)
      out.distinctInMiddle[i] = 1;
  }
  out.memoryStages = {0};
  for (int64_t st = 1; st < out.pp; ++st) {
    int64_t same = out.sameLayersAs[st];
    if (st == out.pp - 1 || (same == st))
      out.memoryStages.push_back(st);
  }
  stageMemory(out);
}

} // namespace detail
} // namespace helix
