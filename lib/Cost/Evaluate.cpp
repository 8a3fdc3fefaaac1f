//===- Evaluate.cpp - Validation and full evaluation of one config --------===//

#include "helix/Cost/Evaluate.h"

#include "Engine.h"

#include "helix/Cost/PerLayer.h"

#include <algorithm>
#include <array>

#include "helix/Common/Numbers.h"

namespace helix {

static std::string str(int64_t v) { return std::to_string(v); }

/// Whether two layers have the same figures the checks below read (the
/// checks would say the same of both).
static bool sameChecks(const LayerSpec &prev, const LayerSpec &layer) {
  const AttentionSpec &a = prev.attention, &b = layer.attention;
  return prev.mixer == layer.mixer && prev.hasFFN == layer.hasFFN &&
         a.kind == b.kind && a.numHeads == b.numHeads &&
         a.outputGate == b.outputGate && a.numKVHeads == b.numKVHeads &&
         a.vHeadDim == b.vHeadDim && prev.isMoE == layer.isMoE &&
         prev.ffn.intermediate == layer.ffn.intermediate &&
         prev.moe.numExperts == layer.moe.numExperts &&
         prev.moe.expertIntermediate == layer.moe.expertIntermediate &&
         prev.moe.numSharedExperts == layer.moe.numSharedExperts &&
         prev.moe.sharedIntermediate == layer.moe.sharedIntermediate;
}

/// Builds a failed check's message only when one is wanted: the search
/// validates every candidate layout and needs only whether it is valid.
struct Why {
  bool explain = true;
  template <typename F> std::string operator()(F message) const {
    return explain ? std::string(message()) : std::string("-");
  }
};

std::string helixHeadSpreadError(int64_t localHeads, int64_t kvp,
                                 const AttentionSpec &a) {
  const int64_t pieces = helixHeadSplit(localHeads, kvp, a.vHeadDim);
  if (pieces == 0)
    return "the " + str(localHeads) +
           " query heads of a TPA slice cannot be spread over the " + str(kvp) +
           " KVP ranks of the all-to-all (kvp must divide them, or be a "
           "multiple of them that cuts v_head_dim " +
           str(a.vHeadDim) + " evenly)";
  if (pieces > 1 && a.outputGate)
    return "the gated attention output needs whole heads on each KVP rank, "
           "but kvp=" +
           str(kvp) + " cuts each of a TPA slice's " + str(localHeads) +
           " query heads into " + str(pieces) +
           " pieces; choose kvp dividing " + str(localHeads);
  return "";
}

/// Checks the attention widths against one layer's heads.
static std::string checkAttention(const Config &c, const AttentionSpec &a,
                                  const Why &why) {
  const Layout &l = c.layout;
  int64_t q = a.numHeads;
  int64_t k = a.kind == AttentionKind::MLA ? 1 : a.numKVHeads;
  if (q < 1 || k < 1)
    return why(
        [&] { return "attention needs at least one query and one KV head"; });
  if (q % l.tpa != 0)
    return why([&] {
      return "tpa=" + str(l.tpa) + " does not divide the " + str(q) +
             " query heads";
    });
  bool helix =
      c.strategy == Strategy::Helix || c.strategy == Strategy::HelixNoHopB;
  if (helix && k % l.tpa != 0)
    return why([&] {
      return "helix needs tpa to divide the " + str(k) + " KV heads" +
             (a.kind == AttentionKind::MLA ? " (MLA has one latent KV head)"
                                           : "") +
             " but tpa=" + str(l.tpa) + "; put the other GPUs in kvp";
    });
  if (k % l.tpa != 0 && l.tpa % k != 0)
    return why([&] {
      return "tpa=" + str(l.tpa) +
             " neither divides nor is a multiple of the " + str(k) +
             " KV heads";
    });
  return "";
}

/// Checks the FFN widths of the layout against the strategy.
static std::string checkFFN(const Config &c, const ModelSpec &m,
                            const std::vector<const LayerSpec *> &layers,
                            bool moe, const Why &why) {
  const Layout &l = c.layout;
  int64_t g = l.gpusPerStage();
  // Built only for a message: the search validates every candidate layout.
  auto grid = [&] { return "tpf x ep = " + str(l.tpf) + " x " + str(l.ep); };
  if (!moe && l.ep != 1)
    return why([&] {
      return "ep=" + str(l.ep) + " but " + m.name + " has no experts";
    });
  switch (c.strategy) {
  case Strategy::KVP:
    if (l.tpf * l.ep != l.tpa)
      return why([&] {
        return "kvp ties the FFN to the attention TP group: " + grid() +
               " must equal tpa=" + str(l.tpa);
      });
    break;
  case Strategy::EP:
    if (moe && (l.ep != g || l.tpf != 1))
      return why([&] {
        return "ep spreads the experts over all " + str(g) +
               " GPUs of the stage: need tpf=1, ep=" + str(g) + " (got " +
               grid() + ")";
      });
    if (!moe && l.tpf != g)
      return why([&] {
        return "ep on a dense model runs the FFN TP over all " + str(g) +
               " GPUs: need tpf=" + str(g) + " (got tpf=" + str(l.tpf) + ")";
      });
    break;
  default:
    if (l.tpf * l.ep != g)
      return why([&] {
        return grid() + " = " + str(l.tpf * l.ep) + " must equal the " +
               str(g) + " GPUs of the attention layout (kvp x tpa" +
               (l.pp > 1 ? " per stage)" : ")");
      });
  }
  for (const LayerSpec *layer : layers)
    if (layer->hasFFN && layer->isMoE && layer->moe.numExperts % l.ep != 0)
      return why([&] {
        return "ep=" + str(l.ep) + " does not divide the " +
               str(layer->moe.numExperts) + " experts";
      });
  return "";
}

/// Checks that every sharded matrix splits evenly: the output projection
/// over its TP width (the heads x v_head_dim rows each rank holds after the
/// exchange), dense FFNs over their width and experts over TPF.
static std::string checkEvenSplits(const Config &c,
                                   const std::vector<const LayerSpec *> &layers,
                                   const Why &why) {
  detail::Placement pl = detail::placementFor(c);
  for (const LayerSpec *layerPtr : layers) {
    const LayerSpec &layer = *layerPtr;
    const AttentionSpec &a = layer.attention;
    int64_t rows = a.numHeads * a.vHeadDim;
    if (layer.hasAttention() && rows % pl.oprojWidth != 0)
      return why([&] {
        return "the output projection's " + str(rows) +
               " input rows (heads x v_head_dim) do not split over " +
               str(pl.oprojWidth) + " GPUs";
      });
    // A recurrent mixer runs on the widest group its heads allow
    // (recurrentGroupWidth): always an even split.
    if (!layer.hasFFN)
      continue;
    if (!layer.isMoE && layer.ffn.intermediate % pl.ffnWidth != 0)
      return why([&] {
        return "the dense FFN's intermediate size " +
               str(layer.ffn.intermediate) + " does not split over " +
               str(pl.ffnWidth) + " GPUs";
      });
    if (layer.isMoE && layer.moe.expertIntermediate % c.layout.tpf != 0)
      return why([&] {
        return "tpf=" + str(c.layout.tpf) +
               " does not divide the expert intermediate size " +
               str(layer.moe.expertIntermediate);
      });
    if (layer.isMoE && layer.moe.numSharedExperts > 0 &&
        layer.moe.sharedIntermediate % pl.sharedWidth != 0)
      return why([&] {
        return "the shared experts' intermediate size " +
               str(layer.moe.sharedIntermediate) + " does not split over " +
               str(pl.sharedWidth) + " GPUs";
      });
  }
  return "";
}

ConfigValidator::ConfigValidator(const ModelSpec &model, const Hardware &hw,
                                 const Workload &workload)
    : model(model), hw(hw), workload(workload), moe(model.numMoELayers() > 0) {
  for (const LayerSpec &layer : model.layers)
    if (std::none_of(distinct.begin(), distinct.end(),
                     [&](const LayerSpec *d) { return sameChecks(*d, layer); }))
      distinct.push_back(&layer);
}

std::string ConfigValidator::why(const Config &config) const {
  return check(config, true);
}

bool ConfigValidator::valid(const Config &config) const {
  return check(config, false).empty();
}

std::string ConfigValidator::check(const Config &config, bool explain) const {
  const Why why{explain};
  const Layout &l = config.layout;
  llvm::StringRef name = stringifyStrategy(config.strategy);
  if (model.numLayers() == 0 || model.hiddenSize <= 0)
    return "model '" + model.name + "' has no layers";
  if (l.kvp < 1 || l.tpa < 1 || l.tpf < 1 || l.ep < 1 || l.pp < 1 || l.dp < 1)
    return "layout widths must be at least 1 (" + l.str() + ")";
  // The limits keep every size product below int64 and a double's exact
  // integers (docs/robustness.md); each width is at most kMaxGPUs, so the
  // products below cannot overflow.
  std::string error;
  for (int64_t w : {l.kvp, l.tpa, l.tpf, l.ep, l.pp, l.dp})
    if (!checkInteger("layout width", w, 1, kMaxGPUs, error))
      return error + " (" + l.str() + ")";
  if (!checkInteger("layout GPUs", l.gpus(), 1, kMaxGPUs, error) ||
      !checkInteger("gpus", config.gpus, 0, kMaxGPUs, error) ||
      !checkInteger("batch", config.batch, 1, kMaxBatch, error) ||
      !checkInteger("context", workload.context, 1, kMaxContext, error) ||
      !checkInteger("kv block", workload.kvBlock, 1, kMaxContext, error))
    return error;
  if (!checkInteger("mtp draft tokens", workload.mtpTokens, 0, kMaxMTPTokens,
                    error))
    return error;
  if (workload.mtpTokens > 0 &&
      !(workload.mtpAcceptance > 0 && workload.mtpAcceptance <= 1))
    return "mtp acceptance must be in (0, 1], got " +
           std::to_string(workload.mtpAcceptance);
  if (workload.mtpTokens > 0 && model.mtpLayers == 0)
    return "model '" + model.name +
           "' has no multi-token-prediction layer to draft with "
           "(num_nextn_predict_layers is 0 or absent in its config)";
  if (config.gpus != 0 && config.gpus != l.gpus())
    return "layout " + l.str() + " uses " + str(l.gpus()) +
           " GPUs (pp x kvp x " + "tpa x dp), but " + str(config.gpus) +
           " were requested";
  if (!hw.supports(workload.precision.compute))
    return "hardware '" + hw.name + "' has no " +
           stringifyDType(workload.precision.compute).str() +
           " arithmetic; choose another compute format";
  if (l.pp > 1 && config.strategy != Strategy::TPPP)
    return std::string(name) + " has no pipeline stages (pp=" + str(l.pp) +
           "); use tp-pp";
  if (config.strategy == Strategy::TPPP && l.pp < 2)
    return "tp-pp needs pp >= 2";
  if (l.pp > model.numLayers())
    return why([&] {
      return "pp=" + str(l.pp) + " exceeds the " + str(model.numLayers()) +
             " layers";
    });
  bool kvpAllowed = config.strategy == Strategy::Helix ||
                    config.strategy == Strategy::HelixNoHopB ||
                    config.strategy == Strategy::KVP;
  if (l.kvp > 1 && !kvpAllowed)
    return std::string(name) +
           " does not shard the KV cache (kvp=" + str(l.kvp) +
           "); use helix or kvp";
  if (l.dp > 1 && config.strategy != Strategy::EP)
    return std::string(name) +
           " has no data-parallel attention (dp=" + str(l.dp) + "); use ep";
  for (const LayerSpec *layer : distinct) {
    if (!layer->hasAttention())
      continue;
    std::string err = checkAttention(config, layer->attention, why);
    if (!err.empty())
      return err;
  }
  std::string err = checkFFN(config, model, distinct, moe, why);
  if (err.empty())
    err = checkEvenSplits(config, distinct, why);
  const bool helix = config.strategy == Strategy::Helix ||
                     config.strategy == Strategy::HelixNoHopB;
  for (const LayerSpec *layer : distinct) {
    if (!err.empty() || !helix || l.kvp == 1 || !layer->hasAttention())
      continue;
    // The message only for a failed check (helixHeadSplit is the cheap part).
    const AttentionSpec &a = layer->attention;
    const int64_t local = a.numHeads / l.tpa;
    const int64_t pieces = helixHeadSplit(local, l.kvp, a.vHeadDim);
    if (pieces == 0 || (pieces > 1 && a.outputGate))
      err = why([&] { return helixHeadSpreadError(local, l.kvp, a); });
  }
  return err;
}

std::string validateConfig(const ModelSpec &model, const Hardware &hw,
                           const Workload &workload, const Config &config) {
  return ConfigValidator(model, hw, workload).why(config);
}

bool isValidConfig(const ModelSpec &model, const Hardware &hw,
                   const Workload &workload, const Config &config) {
  return ConfigValidator(model, hw, workload).valid(config);
}

/// The Evaluation of priced layer costs (`perClass`, each class's cost at
/// the micro-batch) and their totals `t`; `balancedTtlS` the step with
/// every EP rank at the mean load.
static Evaluation describe(const ModelSpec &model, const Hardware &hw,
                           const Workload &workload, const Config &config,
                           const detail::Prepared &p,
                           const std::vector<detail::LayerCost> &perClass,
                           const detail::Totals &t, double balancedTtlS) {
  Evaluation ev;
  ev.config = config;
  ev.gpus = config.layout.gpus();
  ev.batch = config.batch;
  ev.microBatch = t.microBatch;
  ev.microBatches = t.microBatches;
  ev.ttlS = t.ttlS;
  ev.tokensPerSecPerUser = 1.0 / t.ttlS;
  ev.tokensPerSecPerGPU = double(config.batch) / (t.ttlS * ev.gpus);
  ev.memory = t.memory;
  ev.memoryPerGPUBytes = t.memory.total();
  ev.hbmCapacityBytes = hw.hbmCapacityBytes;
  ev.fits = t.fits;
  ev.breakdown = t.where;
  ev.mtp.draftTokens = workload.mtpTokens;
  ev.mtp.acceptance = workload.mtpTokens > 0 ? workload.mtpAcceptance : 1;
  ev.mtp.expectedTokens = t.mtpExpectedTokens;
  ev.mtp.verifyStepS = t.mtpVerifyS;
  ev.mtp.draftS = t.mtpDraftS;
  ev.step.computeS = t.stepComputeS;
  ev.step.weightBytesPerGPU = t.stepWeightBytes;
  ev.step.kernels = t.stepKernels.total();
  ev.step.kernelsByKind = t.stepKernels;
  ev.step.commS = t.stepCommS;
  ev.step.exposedS = t.stepExposedS;
  for (const detail::LayerCost &c : perClass)
    ev.hopbSlices = std::max(ev.hopbSlices, c.slices);
  ev.balancedTtlS = balancedTtlS;

  ev.layers.reserve(model.layers.size());
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const detail::LayerCost &c = perClass[p.classOfLayer[i]];
    LayerEvaluation le;
    le.index = model.layers[i].index;
    le.stage = p.stageOfLayer[i];
    OpCost attn = c.attention();
    le.attention.kvBytesPerGPU = attn.kvBytes;
    le.attention.weightBytesPerGPU = attn.weightBytes;
    le.attention.flopsPerGPU = attn.flops;
    le.attention.timeS = attn.timeS;
    le.attention.kernels = attn.kernels.total();
    le.attention.kernelsByKind = attn.kernels;
    le.attention.qkvKernels = c.qkv.kernels.total();
    le.attention.coreKernels = c.core.kernels.total();
    le.attention.combineKernels = c.combine.kernels.total();
    le.attention.oprojKernels = c.oproj.kernels.total();
    le.attention.coreComputeS = c.core.computeS;
    le.attention.coreMemoryS = c.core.memoryS;
    le.ffn.weightBytesPerGPU = c.ffn.weightBytes;
    le.ffn.flopsPerGPU = c.ffn.flops;
    le.ffn.timeS = c.ffn.timeS;
    le.ffn.kernels = c.ffn.kernels.total();
    le.ffn.kernelsByKind = c.ffn.kernels;
    le.ffn.activeExperts = c.activeExperts;
    le.comm.timeS = c.commS();
    le.comm.exposedS = c.exposedS();
    le.timeS = c.timeS();
    ev.layers.push_back(le);
  }
  return ev;
}

Evaluation evaluate(const ModelSpec &model, const Hardware &hw,
                    const Workload &workload, const Config &config) {
  Evaluation ev;
  ev.config = config;
  ev.error = validateConfig(model, hw, workload, config);
  if (!ev.valid())
    return ev;
  detail::Prepared p;
  detail::prepare(model, hw, workload, config, p);
  std::vector<detail::LayerCost> perClass;
  detail::Totals t = detail::computeTotals(p, config.batch, &perClass);
  // The same step with every EP rank at the mean expert load.
  double balancedTtlS = t.ttlS;
  bool moe = false;
  for (const detail::LayerShape &s : p.classes)
    moe = moe || s.moe;
  if (moe) {
    p.balancedMoE = true;
    balancedTtlS = detail::computeTotals(p, config.batch).ttlS;
    p.balancedMoE = false;
  }
  return describe(model, hw, workload, config, p, perClass, t, balancedTtlS);
}

Evaluation evaluate(const ModelSpec &model, const Hardware &hw,
                    const Workload &workload, const Config &config,
                    const PerLayerChoice &choice) {
  Evaluation ev;
  ev.config = config;
  const int64_t gpus = config.layout.gpus();
  if (config.strategy != Strategy::Helix || config.layout.pp != 1 ||
      config.layout.dp != 1)
    ev.error = "per-layer layouts are Helix plans on one pipeline stage";
  if (ev.valid() && workload.mtpTokens > 0)
    ev.error = "per-layer layouts are not priced with --mtp yet";
  PerLayerSearch check(model, hw, workload, gpus, choice, config.hopbSlices);
  if (ev.valid() && !check.valid())
    ev.error = check.error();
  if (!ev.valid())
    return ev;
  const KindLayout &attn = choice.mainMixer();
  std::array<detail::Prepared, kNumLayerKinds> kinds;
  for (int k = 0; k < kNumLayerKinds; ++k) {
    const KindLayout &kl = choice.kinds[k];
    if (kl.layers == 0)
      continue;
    const KindLayout &a = kl.isMixer() ? kl : attn;
    detail::prepare(model, hw, workload,
                    kindConfig(kl, gpus, a, config.hopbSlices),
                    kindPlacement(kl, gpus, a, config.hopbSlices), kinds[k]);
  }
  // Each class: its attention half under its attention kind, its FFN half
  // under its FFN kind (classes are the same in every kind's Prepared).
  const detail::Prepared &p0 = kinds[int(mixerPricingKindOf(model.layers[0]))];
  std::vector<LayerKind> attnOf, ffnOf;
  for (size_t c = 0; c < p0.classes.size(); ++c) {
    const LayerSpec &l = detail::layerOfClass(model, p0, c);
    attnOf.push_back(mixerPricingKindOf(l));
    ffnOf.push_back(ffnPricingKindOf(l));
  }
  auto price = [&](bool balanced, std::vector<detail::LayerCost> &perClass) {
    perClass.clear();
    for (size_t c = 0; c < p0.classes.size(); ++c) {
      detail::Prepared &pa = kinds[int(attnOf[c])], &pf = kinds[int(ffnOf[c])];
      pf.balancedMoE = balanced;
      detail::LayerCost cost =
          detail::costLayer(pa, pa.classes[c], config.batch);
      detail::LayerCost f = detail::costLayer(pf, pf.classes[c], config.batch);
      pf.balancedMoE = false;
      cost.ffn = f.ffn;
      cost.ffnComm = f.ffnComm;
      cost.activeExperts = f.activeExperts;
      perClass.push_back(cost);
    }
    return detail::totalsFrom(p0, config.batch, perClass,
                              detail::costStep(p0, config.batch),
                              /*breakdown=*/true);
  };
  std::vector<detail::LayerCost> perClass, balancedClass;
  detail::Totals t = price(false, perClass);
  const double balancedTtlS = price(true, balancedClass).ttlS;
  // Memory with the actual mix of layouts (as PerLayerSearch weighs it).
  MemoryUse m;
  const double mb = double(config.batch);
  double workspace = detail::logitsWorkspaceBytes(p0, mb);
  for (size_t c = 0; c < p0.classes.size(); ++c) {
    const detail::Prepared &pa = kinds[int(attnOf[c])],
                           &pf = kinds[int(ffnOf[c])];
    const detail::LayerShape &sa = pa.classes[c], &sf = pf.classes[c];
    const double n = double(p0.stageCount(0, c));
    m.weights +=
        n * (detail::attentionWeightBytes(pa, sa) +
             detail::ffnMatrixBytes(pf, sf) + detail::normRouterBytes(pf, sf));
    m.kvCache += detail::kvCacheBytes(
        pa, sa, n * detail::attentionRequests(pa, config.batch));
    workspace =
        std::max(workspace, detail::attentionWorkspaceBytes(pa, sa, mb) +
                                detail::ffnWorkspaceBytes(pf, sf, mb));
  }
  detail::addStageWeights(p0, 0, m.weights);
  m.activations = workspace + mb * p0.hidden * 4.0;
  t.memory = m;
  t.fits = m.total() <= hw.hbmCapacityBytes;
  return describe(model, hw, workload, config, p0, perClass, t, balancedTtlS);
}

} // namespace helix
