//===- RankIRPricing.cpp - helix-estimate-cost on rank IR -----------------===//
//
// The program as helix-partition emitted it, priced with the cost model's
// per-op functions: the model is read back from the stage programs (each
// layer's attention configuration from its helix.qkv / helix.mla_qkv, its
// dense FFN from helix.gated_mlp's checkpoint shapes, its MoE from
// helix.moe_router), the plan from helix.plan and the layout from the
// grids. A layer is priced where it runs: at the call of its layer
// function (the four ops of the cost model summed), or at its ops when it
// is inline. Each layer must run once, on the pipeline stage the cost model
// puts it on.
//
//===----------------------------------------------------------------------===//

#include "RankIRPricing.h"

#include "GlobalView.h"
#include "RankIR.h"
#include "StepPricing.h"

#include "helix/Cost/Hardware.h"
#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/ModelIR/ModelIR.h"
#include "helix/Transforms/ApplyPlan.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <map>

using namespace mlir;
using namespace mlir::helix;

namespace helix::pricing {

namespace {

InFlightDiagnostic fail(Operation *op) {
  return op->emitError() << kPass << ": ";
}

/// The layer index a call passes its layer function.
FailureOr<int64_t> layerOfCall(func::CallOp call) {
  std::optional<int64_t> l = call.getNumOperands()
                                 ? getConstantIntValue(call.getOperand(0))
                                 : std::nullopt;
  if (!l)
    return fail(call) << "a layer function is called with a constant layer "
                         "index";
  return *l;
}

/// The parts of the model description the ops of a layer state.
void noteLayerOp(Operation *op, LayerSpec &layer) {
  if (auto qkv = dyn_cast<QKVOp>(op))
    layer.attention = attentionSpecOf(qkv.getConfig(), qkv.getRope());
  else if (auto mla = dyn_cast<MLAQKVOp>(op))
    layer.attention = attentionSpecOf(mla.getConfig(), mla.getRope());
  else if (auto gdn = dyn_cast<GDNStepOp>(op)) {
    layer.mixer = MixerKind::LinearAttention;
    layer.linear = linearSpecOf(gdn.getConfig());
  } else if (auto index = dyn_cast<IndexCandidatesOp>(op))
    layer.attention.indexer = indexerSpecOf(index.getConfig());
  else if (auto router = dyn_cast<MoERouterOp>(op)) {
    layer.isMoE = true;
    layer.moe = moeSpecOf(router.getConfig());
  } else if (auto mlp = dyn_cast<GatedMLPOp>(op)) {
    layer.isMoE = false;
    if (auto w = mlp.getWGate().getDefiningOp<WeightOp>())
      layer.ffn.intermediate = w.getShape()[0];
    layer.ffn.activation = mlp.getActivation().str();
    layer.ffn.bias = bool(mlp.getBGate());
  }
}

/// The layer an inline op of a stage program starts (its attention's, or
/// its recurrent step's).
std::optional<int64_t> layerAttr(Operation *op) {
  if (isa<QKVOp, MLAQKVOp, GDNStepOp>(op))
    return op->getAttrOfType<IntegerAttr>("layer").getInt();
  return std::nullopt;
}

/// The matmul of op whose weight is named `name`, or ends so.
bool readsWeight(Operation *op, llvm::function_ref<bool(StringRef)> name) {
  auto mm = dyn_cast<MatmulOp>(op);
  auto w = mm ? mm.getWeight().getDefiningOp<WeightOp>() : WeightOp();
  return w && name(w.getName());
}

/// The LM head: the matmul with the vocabulary's weight (an MTP drafter's
/// shared_head.head).
bool isLMHead(Operation *op) {
  return readsWeight(op, [](StringRef n) {
    return n == "lm_head.weight" || n == "model.embed_tokens.weight" ||
           n.ends_with(".shared_head.head.weight");
  });
}

struct RankIR {
  ModuleOp module;
  SmallVector<func::FuncOp> stages;

  FailureOr<ModelSpec> model();
  FailureOr<PlanRecord> plan();
  FailureOr<mlir::helix::CostAttr> price(const OpPricer &pricer,
                                         const ModelSpec &model);
};

FailureOr<ModelSpec> RankIR::model() {
  auto attr = module->getAttrOfType<ModelAttr>(kModelAttrName);
  if (!attr)
    return fail(module) << "the module has no helix.model";
  ModelSpec spec = modelSpecBasics(attr);
  std::map<int64_t, LayerSpec> layers;
  for (func::FuncOp stage : stages) {
    std::optional<int64_t> current;
    for (Operation &op : stage.getBody().front()) {
      if (auto call = dyn_cast<func::CallOp>(op)) {
        FailureOr<int64_t> l = layerOfCall(call);
        if (failed(l))
          return failure();
        auto callee = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
        LayerSpec &layer = layers[*l];
        layer.index = *l;
        callee.walk([&](Operation *inner) { noteLayerOp(inner, layer); });
        current.reset();
        continue;
      }
      if (std::optional<int64_t> l = layerAttr(&op))
        current = *l;
      if (current) {
        LayerSpec &layer = layers[*current];
        layer.index = *current;
        op.walk([&](Operation *inner) { noteLayerOp(inner, layer); });
      }
    }
  }
  for (auto &[index, layer] : layers) {
    bool mixer = layer.mixer == MixerKind::LinearAttention ||
                 layer.attention.numHeads > 0;
    if (!mixer || (!layer.isMoE && layer.ffn.intermediate == 0))
      return fail(module) << "layer " << index
                          << " has no attention or no FFN in the stage "
                             "programs";
    layer.isMTP = index >= attr.getLayers();
    spec.mtpLayers += layer.isMTP ? 1 : 0;
    spec.layers.push_back(layer);
  }
  // A speculative program was planned for a model with an MTP layer (its
  // verify step has none).
  if (module->hasAttr(::mlir::helix::attrs::mtp))
    spec.mtpLayers = std::max<int64_t>(spec.mtpLayers, 1);
  return spec;
}

FailureOr<PlanRecord> RankIR::plan() {
  auto attr = module->getAttrOfType<PlanAttr>(::mlir::helix::attrs::plan);
  if (!attr)
    return fail(module) << "the module has no helix.plan";
  PlanRecord r = planRecordOf(attr);
  readSpeculative(module, r.workload);
  // The widths: the grids pp x dp x kvp x tpa and pp x replicas x ep x tpf.
  auto attn = module.lookupSymbol<shard::GridOp>(sharding::kAttnGrid);
  auto ffn = module.lookupSymbol<shard::GridOp>(sharding::kFFNGrid);
  if (!attn || !ffn || attn.getShape().size() != 4 ||
      ffn.getShape().size() != 4)
    return fail(module) << "rank IR needs the 4-axis grids @"
                        << sharding::kAttnGrid << " and @"
                        << sharding::kFFNGrid;
  if (r.perLayer) {
    // The representative layout is the plan's; each kind's widths were
    // lowered on grids of their own (checked by helix-verify-partition).
    const Layout &l = r.config.layout;
    if (attn.getShape()[2] != l.kvp || attn.getShape()[3] != l.tpa ||
        ffn.getShape()[2] != l.ep || ffn.getShape()[3] != l.tpf)
      return fail(module) << "the grids @" << sharding::kAttnGrid << " and @"
                          << sharding::kFFNGrid
                          << " are not the per-layer plan's " << l.str();
    return r;
  }
  Layout &l = r.config.layout;
  l.pp = attn.getShape()[0];
  l.dp = attn.getShape()[1];
  l.kvp = attn.getShape()[2];
  l.tpa = attn.getShape()[3];
  l.ep = ffn.getShape()[2];
  l.tpf = ffn.getShape()[3];
  return r;
}

FailureOr<mlir::helix::CostAttr> RankIR::price(const OpPricer &pricer,
                                               const ModelSpec &model) {
  std::map<int64_t, size_t> position; // layer index -> model.layers[i]
  for (size_t i = 0; i < model.layers.size(); ++i)
    position[model.layers[i].index] = i;
  StepPricing step(pricer);
  std::map<size_t, int> seen; // priced parts of each layer (4 when whole)
  int embeddings = 0, heads = 0;
  for (auto [s, stage] : llvm::enumerate(stages)) {
    // An inline layer's parts in order: qkv, attention, output projection
    // (the first matmul after it), FFN.
    std::optional<size_t> current;
    bool attention = false, outProj = false, ffn = false;
    // (C++17 lambdas cannot capture a structured binding; clang refuses it.)
    int64_t stageIndex = int64_t(s);
    auto onStage = [&](Operation *op, size_t i) -> LogicalResult {
      if (pricer.stageOfLayer(i) == stageIndex)
        return success();
      return fail(op) << "layer " << model.layers[i].index
                      << " runs on pipeline stage " << stageIndex
                      << " but the plan puts it on stage "
                      << pricer.stageOfLayer(i);
    };
    for (Operation &op : stage.getBody().front()) {
      if (isa<EmbedRowsOp>(op)) {
        step.attach(&op, {pricer.embedding()}, 0);
        ++embeddings;
        continue;
      }
      if (isLMHead(&op)) {
        step.attach(&op, {pricer.lmHead()}, pricer.stages() - 1);
        ++heads;
        continue;
      }
      if (readsWeight(&op, [](StringRef n) {
            return n.ends_with(".eh_proj.weight");
          })) {
        step.attach(&op, {pricer.draftProjection()}, 0); // the MTP drafter
        continue;
      }
      if (auto call = dyn_cast<func::CallOp>(op)) {
        int64_t l = *layerOfCall(call);
        size_t i = position.at(l);
        if (failed(onStage(&op, i)))
          return failure();
        LayerOps ops = pricer.layer(i);
        step.attach(&op, {ops.qkv, ops.attention, ops.outProj, ops.ffn}, s);
        seen[i] += 4;
        current.reset();
        continue;
      }
      if (std::optional<int64_t> l = layerAttr(&op)) {
        current = position.at(*l);
        attention = outProj = ffn = false;
        if (failed(onStage(&op, *current)))
          return failure();
        LayerOps ops = pricer.layer(*current);
        if (isa<GDNStepOp>(op)) {
          // The recurrent step: its projections and its state update.
          step.attach(&op, {ops.qkv, ops.attention}, s);
          seen[*current] += 2;
          attention = true;
          continue;
        }
        step.attach(&op, {ops.qkv}, s);
        ++seen[*current];
        continue;
      }
      if (!current)
        continue;
      LayerOps ops = pricer.layer(*current);
      if (isa<AttentionPartialOp>(op) && !attention) {
        step.attach(&op, {ops.attention}, s);
        attention = true;
        ++seen[*current];
      } else if (isa<MatmulOp>(op) && attention && !outProj) {
        step.attach(&op, {ops.outProj}, s);
        outProj = true;
        ++seen[*current];
      } else if (isa<GatedMLPOp, MoEExpertsOp>(op) && !ffn) {
        step.attach(&op, {ops.ffn}, s);
        ffn = true;
        ++seen[*current];
      }
    }
  }
  for (size_t i = 0; i < model.layers.size(); ++i)
    if (seen[i] != 4)
      return fail(module) << "layer " << model.layers[i].index << " has "
                          << seen[i]
                          << " of its 4 priced parts in the stage programs "
                             "(qkv, attention, output projection, FFN)";
  if (embeddings != 1 || heads != 1)
    return fail(module) << "the stage programs have " << embeddings
                        << " embeddings and " << heads
                        << " LM heads; one of each is priced";
  return step.total(module.getContext());
}

/// The step of the SPMD programs `stages` (the stage programs, or a
/// speculative program's drafter) priced op by op.
FailureOr<mlir::helix::CostAttr> priceProgram(ModuleOp module,
                                              ArrayRef<func::FuncOp> stages,
                                              const PricingOptions &options,
                                              PlanRecord &planOut) {
  RankIR ir{module, SmallVector<func::FuncOp>(stages)};
  FailureOr<ModelSpec> model = ir.model();
  FailureOr<PlanRecord> plan = ir.plan();
  if (failed(model) || failed(plan))
    return failure();
  std::string error;
  Hardware hw;
  if (!loadHardware(options.hardware.empty() ? plan->hardware
                                             : options.hardware,
                    hw, error) ||
      !applyDTypeOptions(
          {options.dtype, options.weights, options.kvCache, options.compute},
          "", plan->workload.precision, error))
    return fail(module) << error;
  std::unique_ptr<OpPricer> pricer =
      pricerFor(*model, hw, plan->workload, *plan);
  if (!pricer->valid())
    return fail(module) << "the plan's "
                        << stringifyStrategy(plan->config.strategy) << " "
                        << plan->config.layout.str() << " is invalid on "
                        << hw.name << ": " << pricer->error();
  if (int64_t(ir.stages.size()) != pricer->stages())
    return fail(module) << "the module has " << ir.stages.size()
                        << " stage programs, the plan " << pricer->stages()
                        << " pipeline stages";
  planOut = *plan;
  return ir.price(*pricer, *model);
}

} // namespace

bool isRankIR(ModuleOp module) {
  return llvm::any_of(module.getOps<func::FuncOp>(), [](func::FuncOp f) {
    return f->hasAttr(::mlir::helix::attrs::stage);
  });
}

LogicalResult priceRankIR(ModuleOp module, const PricingOptions &options) {
  std::map<int64_t, func::FuncOp> byStage, drafts;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (auto s = f->getAttrOfType<IntegerAttr>(::mlir::helix::attrs::stage))
      byStage[s.getInt()] = f;
    if (auto s =
            f->getAttrOfType<IntegerAttr>(::mlir::helix::attrs::draftStage))
      drafts[s.getInt()] = f;
  }
  auto programs = [](const std::map<int64_t, func::FuncOp> &m) {
    SmallVector<func::FuncOp> out;
    for (auto &[s, f] : m)
      out.push_back(f);
    return out;
  };
  PlanRecord plan;
  FailureOr<mlir::helix::CostAttr> step =
      priceProgram(module, programs(byStage), options, plan);
  if (failed(step))
    return failure();
  if (drafts.empty()) {
    module->setAttr(::mlir::helix::attrs::cost, *step);
    return success();
  }
  // A speculative program (helix compile --mtp): the verify step on its
  // stage program, one draft pass on the drafter, and per accepted token
  // on the module.
  FailureOr<mlir::helix::CostAttr> draft =
      priceProgram(module, programs(drafts), options, plan);
  if (failed(draft))
    return failure();
  if (plan.workload.mtpTokens <= 0)
    return fail(module) << "the module has an MTP drafter but no helix.mtp";
  byStage.begin()->second->setAttr(::mlir::helix::attrs::cost, *step);
  drafts.begin()->second->setAttr(::mlir::helix::attrs::cost, *draft);
  module->setAttr(::mlir::helix::attrs::cost,
                  perAcceptedToken(*step, *draft, plan.workload.mtpTokens,
                                   plan.workload.mtpAcceptance));
  return success();
}

} // namespace helix::pricing
