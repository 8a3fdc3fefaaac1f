//===- ApplyPlan.cpp - Annotate model IR with a chosen plan, read it back -===//

#include "helix/Transforms/ApplyPlan.h"

#include "helix/Cost/Placement.h"
#include "helix/Dialect/Helix/HelixOps.h"

#include "helix/ModelIR/ModelIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <array>
#include <map>

using namespace mlir;
using namespace mlir::helix;

namespace helix {

namespace {
/// The layouts applyPlan puts on the ops of a configuration.
struct OpLayouts {
  LayoutAttr main;   // attention ops, MoE blocks, LM head (and o_proj)
  LayoutAttr dense;  // dense FFNs
  bool oprojOnStage; // whether the output projection carries `main`

  OpLayouts(MLIRContext *ctx, const Config &config) {
    const Layout &l = config.layout;
    int64_t gpus = l.gpus();
    auto layoutAttr = [&](int64_t tpf, int64_t ep) {
      return LayoutAttr::get(ctx, gpus, l.kvp, l.tpa, tpf, ep, l.pp, l.dp);
    };
    main = layoutAttr(l.tpf, l.ep);
    // A dense FFN has no experts: the FFN group's GPUs shard it (the stage,
    // or the attention TP group in Medha-style kvp).
    Placement place = placementFor(config);
    dense = layoutAttr(place.ffnWidth, 1);
    // The output projection runs TP over the stage's GPUs, except where it
    // runs on the attention TP group (kvp, ep): a #helix.layout (whose
    // linear verifier checks the stage's GPUs) cannot say that, so it has
    // none.
    oprojOnStage = place.oprojOnStage();
  }

  /// The layout `op` gets, or null for none.
  LayoutAttr of(Operation *op) const {
    auto carrier = dyn_cast<LayoutCarrier>(op);
    if (!carrier)
      return {};
    LayoutKind kind = carrier.getLayoutKind();
    if (kind == LayoutKind::linear && !oprojOnStage)
      return {};
    return kind == LayoutKind::ffn ? dense : main;
  }
};

/// The layer and mixer kind of a model-IR token-mixer op (attention, sparse
/// attention and its indexer, linear attention, Mamba-2), or nullopt.
std::optional<std::pair<int64_t, LayerKind>> mixerKindOfOp(Operation *op) {
  if (auto a = dyn_cast<AttentionOp>(op))
    return std::make_pair(a.getLayer(), a.getConfig().getWindow() > 0
                                            ? LayerKind::WindowAttention
                                            : LayerKind::FullAttention);
  if (auto a = dyn_cast<SparseAttentionOp>(op))
    return std::make_pair(a.getLayer(), LayerKind::SparseAttention);
  if (auto a = dyn_cast<DSAIndexerOp>(op))
    return std::make_pair(a.getLayer(), LayerKind::SparseAttention);
  if (auto a = dyn_cast<LinearAttentionOp>(op))
    return std::make_pair(a.getLayer(), LayerKind::LinearAttention);
  if (auto a = dyn_cast<MambaOp>(op))
    return std::make_pair(a.getLayer(), LayerKind::Mamba);
  return std::nullopt;
}

/// The layouts applyPlan puts on the ops of a per-layer plan: each op its
/// layer's (the layer's attention kind's kvp, tpa; on an FFN its FFN
/// kind's tpf, ep; elsewhere the MoE, else dense, kind's).
struct PerLayerOpLayouts {
  MLIRContext *ctx;
  int64_t gpus;
  const PerLayerChoice &choice;
  std::map<int64_t, LayerKind> attnKindOfLayer;
  const KindLayout *mainFFN;
  const KindLayout *mainAttn;

  PerLayerOpLayouts(func::FuncOp func, int64_t gpus,
                    const PerLayerChoice &choice)
      : ctx(func.getContext()), gpus(gpus), choice(choice) {
    func.walk([&](Operation *op) {
      if (std::optional<std::pair<int64_t, LayerKind>> k = mixerKindOfOp(op))
        attnKindOfLayer[k->first] = k->second;
    });
    mainFFN = &choice.mainFFN();
    mainAttn = &choice.mainMixer();
  }

  LayoutAttr of(Operation *op) const {
    auto carrier = dyn_cast<LayoutCarrier>(op);
    if (!carrier)
      return {};
    const KindLayout *attn = mainAttn;
    if (std::optional<int64_t> layer = ::helix::layerOfOp(op)) {
      auto it = attnKindOfLayer.find(*layer);
      if (it != attnKindOfLayer.end())
        attn = &choice.of(it->second);
    }
    const KindLayout *ffn = mainFFN;
    if (carrier.getLayoutKind() == LayoutKind::ffn)
      ffn = &choice.of(LayerKind::DenseFFN);
    else if (carrier.getLayoutKind() == LayoutKind::moe)
      ffn = &choice.of(LayerKind::MoEFFN);
    // A recurrent kind's group of tpa GPUs, replicated: the layout's kvp
    // counts the replicas (helix.linear_attention, helix.mamba).
    int64_t kvp = attn->isRecurrent() ? attn->replicas : attn->kvp;
    return LayoutAttr::get(ctx, gpus, kvp, attn->tpa, ffn->tpf, ffn->ep,
                           /*pp=*/1, /*dp=*/1);
  }
};

/// The kinds' layouts as #helix.plan's `layouts` (kinds with layers).
SmallVector<KindLayoutAttr> kindLayoutAttrs(MLIRContext *ctx,
                                            const PerLayerChoice &choice) {
  SmallVector<KindLayoutAttr> out;
  for (const KindLayout &k : choice.kinds) {
    if (k.layers == 0)
      continue;
    bool attn = k.isAttention(), mixer = k.isMixer();
    out.push_back(KindLayoutAttr::get(ctx, k.kind, k.layers, attn ? k.kvp : 1,
                                      mixer ? k.tpa : 1, mixer ? 1 : k.tpf,
                                      mixer ? 1 : k.ep, attn ? 1 : k.replicas));
  }
  return out;
}

/// The op's name and its layer ("<op name> of layer 3").
std::string describe(Operation *op) {
  std::string name = op->getName().getStringRef().str();
  if (auto layer = op->getAttrOfType<IntegerAttr>("layer"))
    name += " of layer " + std::to_string(layer.getInt());
  return name;
}
} // namespace

int64_t applyPlan(func::FuncOp func, const PlanRecord &plan) {
  MLIRContext *ctx = func.getContext();
  OpLayouts layouts(ctx, plan.config);
  std::optional<PerLayerOpLayouts> perLayer;
  if (plan.perLayer)
    perLayer.emplace(func, plan.config.layout.gpus(), *plan.perLayer);
  int64_t annotated = 0;
  func.walk([&](LayoutCarrier op) {
    if (LayoutAttr layout = perLayer ? perLayer->of(op) : layouts.of(op)) {
      op.setLayoutOrNull(layout);
      ++annotated;
    }
  });
  SmallVector<KindLayoutAttr> kinds;
  if (plan.perLayer)
    kinds = kindLayoutAttrs(ctx, *plan.perLayer);
  const Precision &precision = plan.workload.precision;
  func->setAttr(
      ::mlir::helix::attrs::plan,
      PlanAttr::get(ctx, plan.config.strategy, plan.hardware,
                    plan.config.layout.gpus(), plan.config.batch,
                    plan.workload.context, precision.weights, precision.kvCache,
                    precision.compute, precision.nvfp4BlockScales,
                    plan.config.effectiveHopB(), APFloat(plan.ttlS),
                    placementFor(plan.config).overlap, plan.config.hopbSlices,
                    plan.kvBlock, APFloat(plan.workload.routingSkew),
                    plan.workload.balancedExperts, kinds));
  recordSpeculative(func, plan.workload);
  return annotated;
}

void recordSpeculative(Operation *holder, const Workload &workload) {
  if (workload.mtpTokens <= 0) {
    holder->removeAttr(::mlir::helix::attrs::mtp);
    return;
  }
  holder->setAttr(::mlir::helix::attrs::mtp,
                  MTPAttr::get(holder->getContext(), workload.mtpTokens,
                               APFloat(workload.mtpAcceptance)));
}

void readSpeculative(Operation *holder, Workload &workload) {
  if (auto mtp = holder->getAttrOfType<MTPAttr>(::mlir::helix::attrs::mtp)) {
    workload.mtpTokens = mtp.getDraftTokens();
    workload.mtpAcceptance = mtp.getAcceptance().convertToDouble();
  }
}

PlanAttr planWithProgram(PlanAttr p, int64_t slices, int64_t kvBlock) {
  return PlanAttr::get(p.getContext(), p.getStrategy(), p.getHardware(),
                       p.getGpus(), p.getBatch(), p.getContextLength(),
                       p.getWeights(), p.getKvCache(), p.getCompute(),
                       p.getNvfp4Scales(), p.getHopb(), p.getTtlS(),
                       p.getOverlap(), slices, kvBlock, p.getRoutingSkew(),
                       p.getBalancedExperts(), p.getLayouts());
}

PlanRecord planRecordOf(PlanAttr attr) {
  PlanRecord r;
  Config &c = r.config;
  c.strategy = attr.getStrategy();
  Precision &precision = r.workload.precision;
  precision.weights = attr.getWeights();
  precision.kvCache = attr.getKvCache();
  precision.compute = attr.getCompute();
  precision.nvfp4BlockScales = attr.getNvfp4Scales();
  r.hardware = attr.getHardware().str();
  r.workload.context = attr.getContextLength();
  r.workload.kvBlock = attr.getKvBlock();
  r.workload.routingSkew = attr.getRoutingSkew().convertToDouble();
  r.workload.balancedExperts = attr.getBalancedExperts();
  r.ttlS = attr.getTtlS().convertToDouble();
  c.batch = attr.getBatch();
  c.gpus = attr.getGpus();
  c.hopb = attr.getHopb() || attr.getOverlap();
  c.hopbSlices = attr.getSlices();
  r.kvBlock = attr.getKvBlock();
  if (!attr.getLayouts().empty()) {
    PerLayerChoice choice;
    for (int k = 0; k < kNumLayerKinds; ++k)
      choice.kinds[k].kind = LayerKind(k);
    for (KindLayoutAttr l : attr.getLayouts()) {
      KindLayout &k = choice.kinds[int(l.getKind())];
      k.layers = l.getLayers();
      k.kvp = l.getKvp();
      k.tpa = l.getTpa();
      k.tpf = l.getTpf();
      k.ep = l.getEp();
      k.replicas = l.getReplicas();
    }
    // The representative layout, as PerLayerSearch reports it.
    const KindLayout &attn = choice.mainMixer();
    const KindLayout &ffn = choice.mainFFN();
    c.layout.kvp = attn.kvp;
    c.layout.tpa = attn.tpa;
    c.layout.tpf = ffn.tpf;
    c.layout.ep = ffn.ep;
    r.perLayer = choice;
  }
  return r;
}

/// Every op of `func` carries the layout `want(op)` gives it; otherwise a
/// one-line `error` naming the first op that does not (`whose` says whose
/// layout it should have been: "the plan's helix kvp=4,...").
static bool checkOpLayouts(func::FuncOp func,
                           function_ref<LayoutAttr(Operation *)> want,
                           const std::string &whose, std::string &error) {
  func.walk([&](Operation *op) {
    LayoutAttr expected = want(op);
    auto have = op->getAttrOfType<LayoutAttr>("layout");
    if (expected == have)
      return WalkResult::advance();
    std::string text;
    llvm::raw_string_ostream os(text);
    os << describe(op);
    if (!have)
      os << " has no layout (run helix-search-layouts or helix-apply-layout "
            "first)";
    else if (expected)
      os << " has layout " << have << " but " << whose << " gives it "
         << expected;
    else
      os << " has layout " << have << " but " << whose << " gives it none";
    error = text;
    return WalkResult::interrupt();
  });
  return error.empty();
}

/// readPlan of a per-layer plan (`r` from its helix.plan): the kinds'
/// layer counts are the model's, and every op carries its layer's layout.
static bool readPerLayerPlan(func::FuncOp func, PlanRecord &r, PlanRecord &plan,
                             std::string &error) {
  std::array<int64_t, kNumLayerKinds> layers{};
  func.walk([&](Operation *op) {
    std::optional<std::pair<int64_t, LayerKind>> mixer = mixerKindOfOp(op);
    if (mixer && !isa<DSAIndexerOp>(op)) // one per layer: its attention
      ++layers[int(mixer->second)];
    else if (isa<FFNOp>(op))
      ++layers[int(LayerKind::DenseFFN)];
    else if (isa<MoEOp>(op))
      ++layers[int(LayerKind::MoEFFN)];
  });
  for (int k = 0; k < kNumLayerKinds; ++k)
    if (layers[k] != r.perLayer->kinds[k].layers) {
      error = "the plan's layouts give " +
              std::to_string(r.perLayer->kinds[k].layers) + " " +
              stringifyLayerKind(LayerKind(k)).str() +
              " layers but the decode step has " + std::to_string(layers[k]);
      return false;
    }
  PerLayerOpLayouts expected(func, r.config.gpus, *r.perLayer);
  if (!checkOpLayouts(
          func, [&](Operation *op) { return expected.of(op); },
          "the plan's per-layer layout", error))
    return false;
  plan = r;
  return true;
}

bool readPlan(func::FuncOp func, PlanRecord &plan, std::string &error) {
  auto attr = func->getAttrOfType<PlanAttr>(::mlir::helix::attrs::plan);
  if (!attr) {
    error = "the decode step has no helix.plan (run helix-search-layouts or "
            "helix-apply-layout first)";
    return false;
  }
  PlanRecord r = planRecordOf(attr);
  readSpeculative(func, r.workload);
  Config &c = r.config;
  if (r.perLayer)
    return readPerLayerPlan(func, r, plan, error);

  // The widths: attention's from an attention op, the FFN grid from an MoE
  // block (or a dense FFN when the model has no experts).
  Operation *attn = nullptr, *moe = nullptr, *dense = nullptr;
  func.walk([&](Operation *op) {
    if (isa<AttentionOp, SparseAttentionOp>(op) && !attn)
      attn = op;
    if (isa<MoEOp>(op) && !moe)
      moe = op;
    if (isa<FFNOp>(op) && !dense)
      dense = op;
  });
  Operation *ffn = moe ? moe : dense;
  if (!attn || !ffn) {
    error = "the decode step has no helix.attention (or "
            "helix.sparse_attention) or no FFN";
    return false;
  }
  for (Operation *op : {attn, ffn})
    if (!op->getAttrOfType<LayoutAttr>("layout")) {
      error = describe(op) + " has no layout (run helix-search-layouts or "
                             "helix-apply-layout first)";
      return false;
    }
  auto attnLayout = attn->getAttrOfType<LayoutAttr>("layout");
  auto ffnLayout = ffn->getAttrOfType<LayoutAttr>("layout");
  Layout &l = c.layout;
  l.kvp = attnLayout.getKvp();
  l.tpa = attnLayout.getTpa();
  l.dp = attnLayout.getDp();
  l.pp = attnLayout.getPp();
  l.tpf = ffnLayout.getTpf();
  l.ep = ffnLayout.getEp();
  if (l.gpus() != c.gpus) {
    error = "the layouts use " + std::to_string(l.gpus()) +
            " GPUs but the plan has " + std::to_string(c.gpus);
    return false;
  }

  // Every op carries the layout applyPlan would give it.
  OpLayouts expected(func.getContext(), c);
  if (!checkOpLayouts(
          func, [&](Operation *op) { return expected.of(op); },
          "the plan's " + stringifyStrategy(c.strategy).str() + " " + l.str(),
          error))
    return false;
  plan = r;
  return true;
}

} // namespace helix

namespace helix {

LogicalResult choosePassPlan(func::FuncOp func, llvm::StringRef pass,
                             const ModelSpec &model,
                             const PassPlanOptions &options,
                             PlanRequest &request, PlanRecord &record,
                             std::string error) {
  Hardware hw;
  Workload workload;
  request.hardware = options.hardware;
  if (!error.empty() ||
      !loadPassWorkload(options.hardware, options.dtype, options.context,
                        options.routingSkew, hw, workload, error) ||
      !parseStrategy(options.strategy, request.strategy, error) ||
      !choosePlan(model, hw, workload, request, record, error)) {
    func.emitError() << pass << ": " << error;
    return failure();
  }
  return success();
}

} // namespace helix
