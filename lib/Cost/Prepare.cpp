//===- Prepare.cpp - Per-GPU shapes of each class of layers ---------------===//

#include "Engine.h"

#include "helix/Common/KVCapacity.h"
#include "helix/Common/WeightFormat.h"

#include <algorithm>
#include <cmath>

namespace helix {
namespace detail {

/// Layers whose cost cannot differ share a class.
static bool sameCostShape(const LayerSpec &a, const LayerSpec &b) {
  const AttentionSpec &x = a.attention, &y = b.attention;
  bool attn = x.kind == y.kind && x.numHeads == y.numHeads &&
              x.numKVHeads == y.numKVHeads && x.headDim == y.headDim &&
              x.vHeadDim == y.vHeadDim && x.qLoraRank == y.qLoraRank &&
              x.kvLoraRank == y.kvLoraRank &&
              x.qkNopeHeadDim == y.qkNopeHeadDim &&
              x.qkRopeHeadDim == y.qkRopeHeadDim && x.qkvBias == y.qkvBias &&
              x.outBias == y.outBias && x.qkNorm == y.qkNorm &&
              x.sinks == y.sinks && x.slidingWindow == y.slidingWindow;
  if (!attn || a.isMoE != b.isMoE)
    return false;
  if (!a.isMoE)
    return a.ffn.intermediate == b.ffn.intermediate && a.ffn.bias == b.ffn.bias;
  const MoESpec &m = a.moe, &n = b.moe;
  return m.numExperts == n.numExperts && m.topK == n.topK &&
         m.expertIntermediate == n.expertIntermediate &&
         m.numSharedExperts == n.numSharedExperts &&
         m.sharedIntermediate == n.sharedIntermediate &&
         m.expertBias == n.expertBias;
}

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static LayerShape shapeOf(const LayerSpec &layer, const ModelSpec &model,
                          const Placement &pl, const Workload &workload) {
  const int64_t context = workload.context;
  const int64_t kvBlock = workload.kvBlock;
  const AttentionSpec &a = layer.attention;
  LayerShape s;
  s.mla = a.kind == AttentionKind::MLA;
  s.moe = layer.isMoE;

  // Attention: each GPU holds the projections of its TPA share of heads.
  int64_t kvHeads = s.mla ? 1 : std::max<int64_t>(1, a.numKVHeads);
  int64_t localKV = ceilDiv(kvHeads, pl.tpa);
  AttentionSpec shard = a;
  shard.numHeads = a.numHeads / pl.tpa;
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
    // norm, q_a+kv_a GEMM, latent norms, q_b GEMM, W_UK BMM + RoPE.
    s.qkvGemms = 3;
    s.qkvElementwise = 2;
    // The KV append, the attention kernel (and the merge of its split-K
    // parts: costAttentionCore), the W_UV BMM.
    s.coreGemms = 1;
    s.coreElementwise = 1;
    s.attnRowsPerRequest = 1; // one latent "KV head"
  } else {
    s.qkDim = double(a.headDim);
    s.vDim = double(a.vHeadDim);
    s.qkvOutWidth = s.qHeads * a.headDim + localKV * (a.headDim + a.vHeadDim);
    // norm, QKV GEMM, RoPE.
    s.qkvGemms = 1;
    s.qkvElementwise = 2;
    // The KV append, then the attention kernel (and the merge of its
    // split-K parts: costAttentionCore). Both are launched per HOP-B slice.
    s.coreGemms = 0;
    s.coreElementwise = 1;
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

  // FFN.
  if (!layer.isMoE) {
    s.ffnParams =
        double(ffnParameterCount(layer.ffn, model.hiddenSize)) / pl.ffnWidth;
    s.ffnWidth = 2.0 * double(layer.ffn.intermediate) / pl.ffnWidth;
    s.residentFFNParams = s.ffnParams;
    return s;
  }
  const MoESpec &m = layer.moe;
  s.numExperts = double(m.numExperts);
  s.topK = double(m.topK);
  s.localExperts = double(m.numExperts) / pl.ep;
  s.expertParams = double(expertParameterCount(m, model.hiddenSize)) / pl.tpf;
  s.expertWidth = 2.0 * double(m.expertIntermediate) / pl.tpf;
  s.sharedParams =
      double(sharedExpertParameterCount(m, model.hiddenSize)) / pl.sharedWidth;
  s.routerParams = double(routerParameterCount(m, model.hiddenSize));
  s.residentFFNParams =
      s.localExperts * s.expertParams + s.sharedParams + s.routerParams;
  s.experts =
      ExpertLoadModel(m.numExperts, pl.ep, m.topK, workload.routingSkew);
  return s;
}

void prepare(const ModelSpec &model, const Hardware &hw,
             const Workload &workload, const Config &config, Prepared &out) {
  prepare(model, hw, workload, config, placementFor(config), out);
}

void prepare(const ModelSpec &model, const Hardware &hw,
             const Workload &workload, const Config &config,
             const Placement &place, Prepared &out) {
  out = Prepared();
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
  auto kept = [&](std::initializer_list<const char *> modules) {
    for (const char *m : modules)
      if (isExcludedModule(m, model.quantExclude))
        return true;
    return false;
  };
  const bool attnKept = kept({"model.layers.0.self_attn"});
  const bool ffnKept = kept({"model.layers.0.mlp", "model.layers.0.mlp.experts",
                             "model.layers.0.block_sparse_moe.experts"});
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

  std::vector<int64_t> representative;
  int64_t numLayers = model.numLayers();
  out.classOfLayer.resize(numLayers);
  for (int64_t i = 0; i < numLayers; ++i) {
    const LayerSpec &layer = model.layers[i];
    int64_t cls = -1;
    for (size_t c = 0; c < representative.size(); ++c)
      if (sameCostShape(model.layers[representative[c]], layer)) {
        cls = int64_t(c);
        break;
      }
    if (cls < 0) {
      cls = int64_t(representative.size());
      representative.push_back(i);
      out.classes.push_back(shapeOf(layer, model, out.place, workload));
    }
    out.classOfLayer[i] = cls;
  }

  // The MTP layer is shaped like the last decoder layer (HFConfig.cpp).
  if (out.draftTokens > 0 && numLayers > 0)
    out.draftClass = out.classOfLayer.back();

  // Contiguous stages: stage s holds layers [s*L/pp, (s+1)*L/pp).
  out.stageCounts.assign(out.pp, std::vector<int64_t>(out.classes.size(), 0));
  out.stageOfLayer.resize(numLayers);
  for (int64_t i = 0; i < numLayers; ++i) {
    int64_t stage = 0;
    while (stage + 1 < out.pp && i >= ((stage + 1) * numLayers) / out.pp)
      ++stage;
    out.stageOfLayer[i] = stage;
    ++out.stageCounts[stage][out.classOfLayer[i]];
  }
  out.sameLayersAs.resize(out.pp);
  for (int64_t st = 0; st < out.pp; ++st) {
    int64_t first = 0;
    while (out.stageCounts[first] != out.stageCounts[st])
      ++first;
    out.sameLayersAs[st] = first;
  }
}

} // namespace detail
} // namespace helix
