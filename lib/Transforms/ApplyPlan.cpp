//===- ApplyPlan.cpp - Annotate model IR with a chosen plan, read it back -===//

#include "helix/Transforms/ApplyPlan.h"

#include "helix/Cost/Placement.h"
#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

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

/// "helix.attention of layer 3".
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
  int64_t annotated = 0;
  func.walk([&](LayoutCarrier op) {
    if (LayoutAttr layout = layouts.of(op)) {
      op.setLayoutOrNull(layout);
      ++annotated;
    }
  });
  const Precision &precision = plan.workload.precision;
  func->setAttr(
      "helix.plan",
      PlanAttr::get(ctx, plan.config.strategy, plan.hardware,
                    plan.config.layout.gpus(), plan.config.batch,
                    plan.workload.context, precision.weights, precision.kvCache,
                    precision.compute, precision.nvfp4BlockScales,
                    plan.config.effectiveHopB(), APFloat(plan.ttlS),
                    placementFor(plan.config).overlap, plan.config.hopbSlices,
                    plan.kvBlock, APFloat(plan.workload.routingSkew),
                    plan.workload.balancedExperts));
  recordSpeculative(func, plan.workload);
  return annotated;
}

void recordSpeculative(Operation *holder, const Workload &workload) {
  if (workload.mtpTokens <= 0) {
    holder->removeAttr("helix.mtp");
    return;
  }
  holder->setAttr("helix.mtp",
                  MTPAttr::get(holder->getContext(), workload.mtpTokens,
                               APFloat(workload.mtpAcceptance)));
}

void readSpeculative(Operation *holder, Workload &workload) {
  if (auto mtp = holder->getAttrOfType<MTPAttr>("helix.mtp")) {
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
                       p.getBalancedExperts());
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
  return r;
}

bool readPlan(func::FuncOp func, PlanRecord &plan, std::string &error) {
  auto attr = func->getAttrOfType<PlanAttr>("helix.plan");
  if (!attr) {
    error = "the decode step has no helix.plan (run helix-search-layouts or "
            "helix-apply-layout first)";
    return false;
  }
  PlanRecord r = planRecordOf(attr);
  readSpeculative(func, r.workload);
  Config &c = r.config;

  // The widths: attention's from an attention op, the FFN grid from an MoE
  // block (or a dense FFN when the model has no experts).
  Operation *attn = nullptr, *moe = nullptr, *dense = nullptr;
  func.walk([&](Operation *op) {
    if (isa<AttentionOp>(op) && !attn)
      attn = op;
    if (isa<MoEOp>(op) && !moe)
      moe = op;
    if (isa<FFNOp>(op) && !dense)
      dense = op;
  });
  Operation *ffn = moe ? moe : dense;
  if (!attn || !ffn) {
    error = "the decode step has no helix.attention or no FFN";
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
  func.walk([&](Operation *op) {
    if (!error.empty())
      return WalkResult::interrupt();
    LayoutAttr want = expected.of(op);
    auto have = op->getAttrOfType<LayoutAttr>("layout");
    if (want == have)
      return WalkResult::advance();
    std::string name = describe(op);
    if (!have) {
      error = name + " has no layout (run helix-search-layouts or "
                     "helix-apply-layout first)";
    } else {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << name << " has layout " << have << " but the plan's "
         << stringifyStrategy(c.strategy) << " " << l.str() << " gives it ";
      if (want)
        os << want;
      else
        os << "none";
      error = text;
    }
    return WalkResult::interrupt();
  });
  if (!error.empty())
    return false;
  plan = r;
  return true;
}

} // namespace helix
