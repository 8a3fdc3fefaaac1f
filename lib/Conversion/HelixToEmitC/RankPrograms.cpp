//===- RankPrograms.cpp - Load, prepare and step functions per stage ------===//
//
// Splits each stage function of SPMD rank IR into what runs once (loading
// the rank's weight slices, at offsets computed from its coordinates,
// allocating its KV shards, creating its communicators) and what runs
// every step, registers the three as the stage's program, registers the
// grids, and adds main. The step body keeps the rank-IR ops for the
// patterns; their inputs (the step's tokens, positions, KV shards and
// weights) come from adapter calls through unrealized casts.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"
#include "helix/Dialect/Helix/RankIRNames.h"

#include "helix/Common/WeightLayout.h"
#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/Dialect/Helix/WeightFormats.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::helix;
using ::helix::CheckpointFormat;
using ::helix::ElementType;

namespace helix::emitc_codegen {

namespace {

using ::helix::rankir::kDraftFuncPrefix;
using ::helix::rankir::kStageFuncPrefix;

/// One weight load: a box of a checkpoint tensor's view, stored in a layout;
/// an offset is a constant or the index value computing it.
struct WeightLoad {
  std::string name;
  SmallVector<int64_t> shape, view, sizes;
  SmallVector<OpFoldResult> offsets;
  WeightLayout layout = WeightLayout::Plain;
  /// The format the program keeps it in (its element type) and the format
  /// the checkpoint stores it in (helix/Dialect/Helix/WeightFormats.h).
  ElementType resident = ElementType::BF16;
  CheckpointFormat stored = CheckpointFormat::BF16;

  std::string key() const {
    std::string k;
    llvm::raw_string_ostream os(k);
    os << name << "|" << static_cast<int>(layout) << "|"
       << static_cast<int>(resident) << "|" << static_cast<int>(stored);
    for (auto *v : {&shape, &view, &sizes}) {
      os << "|";
      llvm::interleaveComma(*v, os);
    }
    os << "|";
    for (OpFoldResult o : offsets)
      if (auto v = dyn_cast<Value>(o))
        os << "%" << v.getAsOpaquePointer() << ",";
      else
        os << cast<IntegerAttr>(cast<Attribute>(o)).getInt() << ",";
    return k;
  }
};

/// The format a KV shard keeps K and V in (f32 for element types that are
/// not a resident format).
ElementType kvFormatOf(KVShardType shard) {
  FailureOr<ElementType> f = residentFormatOf(shard.getElement());
  return succeeded(f) ? *f : ElementType::F32;
}

/// "helix::ElementType::F8E4M3": an enumerator as generated code names it.
template <typename Enum> std::string enumerator(const char *type, Enum value) {
  return std::string("helix::") + type + "::" + ::helix::enumeratorName(value);
}

/// What the consumer `use` of weight `w` loads.
WeightLoad loadFor(WeightOp w, OpOperand &use) {
  WeightLoad l;
  l.name = w.getName().str();
  l.shape.assign(w.getShape().begin(), w.getShape().end());
  l.view = w.getViewShape();
  l.offsets = w.getMixedSliceOffsets();
  auto type = cast<RankedTensorType>(w.getType());
  l.sizes.assign(type.getShape().begin(), type.getShape().end());
  // Element types other than the resident formats (f16 before
  // helix-resident-formats ran) are kept exactly, as f32.
  l.resident = succeeded(residentFormatOf(type.getElementType()))
                   ? *residentFormatOf(type.getElementType())
                   : ElementType::F32;
  auto module = w->getParentOfType<ModuleOp>();
  ModelAttr model =
      module ? module->getAttrOfType<ModelAttr>(::mlir::helix::attrs::model)
             : ModelAttr();
  l.stored = checkpointFormatOf(w, model);
  Operation *owner = use.getOwner();
  unsigned n = use.getOperandNumber();
  // The decoder's RMSNorms scale by 1 + w: their weights are kept so.
  if (isZeroCenteredNormWeight(w, model))
    l.layout = WeightLayout::PlusOne;
  if (auto mla = dyn_cast<MLAQKVOp>(owner)) {
    // W_UK: the first qk_nope rows of each head of kv_b_proj.
    AttentionConfigAttr c = mla.getConfig();
    if (n == mla.getWkvBMutable().getOperandNumber())
      l.sizes[1] = c.getHeadDim() - c.getRopeDim();
  } else if (auto attn = dyn_cast<AttentionPartialOp>(owner)) {
    // W_UV: the v_head_dim rows after them.
    AttentionConfigAttr c = attn.getConfig();
    if (attn.getWUv() &&
        n == attn.getWUvMutable().begin()->getOperandNumber()) {
      // Dimension 1 (within a head) is never split.
      int64_t at = getConstantIntValue(l.offsets[1]).value_or(0);
      l.offsets[1] = Builder(w.getContext())
                         .getIndexAttr(at + c.getHeadDim() - c.getRopeDim());
      l.sizes[1] = c.getVHeadDim();
    }
  } else if (auto moe = dyn_cast<MoEExpertsOp>(owner)) {
    // Operand groups: input, weights, ids, expert weights, expert biases.
    unsigned w0 = moe.getODSOperandIndexAndLength(3).first;
    auto [b0, nb] = moe.getODSOperandIndexAndLength(4);
    bool bias = n >= b0 && n < b0 + nb;
    if (moe.getFusedGateUp()) {
      if (n == w0)
        l.layout =
            WeightLayout::SplitGateUpTransposed; // [E, H, 2I] -> [2, E, I, H]
      else if (n == w0 + 1)
        l.layout = WeightLayout::TransposeLast2; // down [E, I, H] -> [E, H, I]
      else if (bias && n == b0)
        l.layout = WeightLayout::SplitGateUp; // [E, 2I] -> [2, E, I]
    }
  }
  return l;
}

/// A group kind: a grid and the axes a collective runs over.
using GroupKind = std::pair<std::string, SmallVector<int64_t>>;

/// The group kinds of a stage function's collectives.
void groupKindsOf(func::FuncOp f, std::set<GroupKind> &kinds) {
  auto add = [&](auto o) {
    kinds.insert(
        {o.getGrid().str(),
         SmallVector<int64_t>(o.getGridAxes().begin(), o.getGridAxes().end())});
  };
  f.walk([&](Operation *op) {
    if (auto o = dyn_cast<shard::AllReduceOp>(op))
      add(o);
    else if (auto o = dyn_cast<shard::AllGatherOp>(op))
      add(o);
    else if (auto o = dyn_cast<shard::AllToAllOp>(op))
      add(o);
    else if (auto o = dyn_cast<shard::ReduceScatterOp>(op))
      add(o);
    else if (auto o = dyn_cast<shard::SendOp>(op))
      add(o);
    else if (auto o = dyn_cast<shard::RecvOp>(op))
      add(o);
  });
}

class ProgramBuilder {
public:
  ProgramBuilder(ModuleOp module, const ModuleFacts &facts)
      : module(module), facts(facts), ctx(module.getContext()),
        b(module.getBodyRegion()) {}

  LogicalResult build(StringRef programName);

private:
  ModuleOp module;
  const ModuleFacts &facts;
  MLIRContext *ctx;
  OpBuilder b;

  emitc::FuncOp makeFunc(Location loc, StringRef name, TypeRange args,
                         TypeRange results) {
    auto f = emitc::FuncOp::create(b, loc, name,
                                   FunctionType::get(ctx, args, results));
    f.addEntryBlock();
    return f;
  }
  LogicalResult buildStage(func::FuncOp f, int64_t stage,
                           ArrayRef<GroupKind> kinds, int64_t logitsRank,
                           func::FuncOp draft);
  /// The step function (and its load function) of stage program or
  /// drafter `f`; its results past the logits become output() calls.
  emitc::FuncOp buildStep(func::FuncOp f, int64_t stage);

  // Weight loading of one stage: every load the load function makes, in
  // slot order.
  emitc::FuncOp load;
  int64_t nextSlot = 0;
  int64_t currentStage = 0;
  /// A layer function: its weight loads (slot base + k each call) and the
  /// offsets they take, recomputed in load.
  struct LayerFunction {
    emitc::FuncOp func;
    emitc::FuncOp load; // (Context&, checkpoint, RankState&, layer)
    std::vector<WeightLoad> loads;
    IRMapping inLoad;
  };
  std::map<std::string, LayerFunction> layerFunctions;

  /// A loadWeight call at the end of `into` (a load function: Context&,
  /// checkpoint, RankState& first); the name is `nameValue` when given.
  void emitLoad(emitc::FuncOp into, Location loc, const WeightLoad &l,
                StringRef name, Value nameValue, IRMapping &inLoad);
  void loadWeights(emitc::FuncOp step);
  LayerFunction &convertLayerFunction(func::FuncOp f);
  LogicalResult lowerLayerCall(func::CallOp call, emitc::FuncOp step);
};

LogicalResult ProgramBuilder::buildStage(func::FuncOp f, int64_t stage,
                                         ArrayRef<GroupKind> kinds,
                                         int64_t logitsRank,
                                         func::FuncOp draft) {
  Location loc = f.getLoc();
  std::string name = f.getSymName().str();
  b.setInsertionPoint(f);
  Type ctxT = contextType(ctx);
  emitc::FuncOp prepare = makeFunc(loc, name + "_prepare", {ctxT}, {});

  // Communicators, in the order every rank of every stage shares.
  b.setInsertionPointToEnd(&prepare.getBody().front());
  for (const auto &[grid, axes] : kinds)
    Call(b, loc, "gridGroup")
        .operand(prepare.getArgument(0))
        .str(grid)
        .ints(axes)
        .create();
  if (logitsRank != 0)
    Call(b, loc, "group")
        .operand(prepare.getArgument(0))
        .ints({0, logitsRank})
        .create();
  emitc::ReturnOp::create(b, loc, Value());

  emitc::FuncOp step = buildStep(f, stage);
  if (!step)
    return failure();
  prepare->moveBefore(step); // load, prepare, step
  SmallVector<Operation *> made = {load.getOperation(), prepare.getOperation(),
                                   step.getOperation()};
  std::string fns = name + "_load, " + name + "_prepare, " + name;
  if (draft) {
    std::string d = draft.getSymName().str();
    emitc::FuncOp draftStep = buildStep(draft, stage);
    if (!draftStep)
      return failure();
    made.append({load.getOperation(), draftStep.getOperation()});
    fns += ", " + d + "_load, " + d;
  }

  // The registration of the stage's program (after the functions it
  // names); each generated op names its stage (one source file per stage).
  b.setInsertionPoint(draft ? draft : f);
  auto program = emitc::GlobalOp::create(
      b, loc, name + "_program", opaque(ctx, "helix::rt::cg::StageProgram"),
      emitc::OpaqueAttr::get(ctx,
                             "{" + std::to_string(stage) + ", " + fns + "}"));
  made.push_back(program);
  for (Operation *op : made)
    op->setAttr(::mlir::helix::attrs::stage, b.getI64IntegerAttr(stage));
  if (draft)
    draft.erase();
  f.erase();
  return success();
}

emitc::FuncOp ProgramBuilder::buildStep(func::FuncOp f, int64_t stage) {
  Location loc = f.getLoc();
  std::string name = f.getSymName().str();
  b.setInsertionPoint(f);
  Type ctxT = contextType(ctx), stateT = stateType(ctx);
  load = makeFunc(
      loc, name + "_load",
      {ctxT, opaque(ctx, "const helix::rt::SafetensorsCheckpoint&"), stateT},
      {});
  emitc::FuncOp step =
      makeFunc(loc, name,
               {ctxT, stateT, opaque(ctx, "const helix::rt::StepInputs&"),
                b.getIndexType()},
               {tensorType(ctx)});

  // The results past the logits: named outputs of the state, which the
  // return's lowering sets (TensorOps.cpp).
  auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
  SmallVector<Attribute> outputs;
  for (unsigned i = 1; i < ret.getNumOperands(); ++i) {
    auto resultName =
        f.getResultAttrOfType<StringAttr>(i, ::mlir::helix::attrs::name);
    if (!resultName) {
      f.emitError("convert-helix-to-emitc: result ")
          << i << " of @" << name
          << " has no helix.name (a step returns its logits, then named "
             "outputs)";
      return {};
    }
    outputs.push_back(resultName);
  }
  if (!outputs.empty())
    ret->setAttr(kOutputNamesAttr, b.getArrayAttr(outputs));

  // The step body: the stage function's ops, its arguments from calls.
  Block &body = step.getBody().front();
  Block &old = f.getBody().front();
  body.getOperations().splice(body.end(), old.getOperations());
  b.setInsertionPointToStart(&body);
  OpBuilder lb = OpBuilder::atBlockEnd(&load.getBody().front());
  int64_t kvSlot = 0, stateSlot = 0;
  for (BlockArgument arg : old.getArguments()) {
    Value v;
    auto nameAttr = f.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                   ::mlir::helix::attrs::name);
    if (auto shard = dyn_cast<KVShardType>(arg.getType())) {
      Call(lb, loc, "allocKV")
          .operand(load.getArgument(0))
          .operand(load.getArgument(2))
          .i64(shard.getRows())
          .i64(shard.getTokens())
          .i64(shard.getHeads())
          .i64(shard.getKeyDim())
          .i64(shard.getValueDim())
          .boolean(shard.getLatent())
          .verbatim(enumerator("ElementType", kvFormatOf(shard)))
          .create();
      v = Call(b, loc, "kvShard")
              .operand(step.getArgument(1))
              .i64(kvSlot++)
              .create1(cacheType(ctx));
    } else if (auto shard = dyn_cast<StateShardType>(arg.getType())) {
      Call(lb, loc, "allocState")
          .operand(load.getArgument(0))
          .operand(load.getArgument(2))
          .i64(shard.getRows())
          .i64(shard.getValues())
          .create();
      v = Call(b, loc, "stateShard")
              .operand(step.getArgument(1))
              .i64(stateSlot++)
              .create1(tensorType(ctx));
    } else if (nameAttr && (nameAttr.getValue() == "tokens" ||
                            nameAttr.getValue() == "positions")) {
      auto type = cast<RankedTensorType>(arg.getType());
      v = Call(b, loc, nameAttr.getValue())
              .operand(step.getArgument(2))
              .i64(type.getDimSize(0))
              .create1(intsType(ctx));
    } else if (nameAttr && nameAttr.getValue() == "hidden") {
      // The MTP drafter's input hidden states.
      auto type = cast<RankedTensorType>(arg.getType());
      v = Call(b, loc, "hidden")
              .operand(step.getArgument(2))
              .i64(type.getDimSize(0))
              .i64(type.getDimSize(1))
              .create1(tensorType(ctx));
    } else {
      // The micro-batch's first row (pipeline stages).
      arg.replaceAllUsesWith(step.getArgument(3));
      continue;
    }
    auto cast = UnrealizedConversionCastOp::create(b, loc, arg.getType(), v);
    arg.replaceAllUsesWith(cast.getResult(0));
  }
  nextSlot = 0;
  currentStage = stage;
  loadWeights(step);
  // Layer functions: their weights load per call (with its layer index).
  SmallVector<func::CallOp> calls;
  step.walk([&](func::CallOp c) { calls.push_back(c); });
  for (func::CallOp c : calls)
    if (failed(lowerLayerCall(c, step)))
      return {};
  emitc::ReturnOp::create(lb, loc, Value());
  return step;
}

/// A loadWeight call in the load function; `inLoad` maps the offsets'
/// index values to their copies there.
void ProgramBuilder::emitLoad(emitc::FuncOp into, Location loc,
                              const WeightLoad &l, StringRef name,
                              Value nameValue, IRMapping &inLoad) {
  OpBuilder lb = OpBuilder::atBlockEnd(&into.getBody().front());
  // The rank-dependent offsets, recomputed in load from the coordinates.
  std::function<Value(Value)> loadValue = [&](Value v) -> Value {
    if (Value mapped = inLoad.lookupOrNull(v))
      return mapped;
    Operation *def = v.getDefiningOp();
    for (Value operand : def->getOperands())
      loadValue(operand);
    lb.clone(*def, inLoad);
    return inLoad.lookup(v);
  };
  Call call(lb, loc, "loadWeight");
  call.operand(into.getArgument(0))
      .operand(into.getArgument(1))
      .operand(into.getArgument(2));
  if (nameValue)
    call.operand(nameValue);
  else
    call.str(name);
  call.ints(l.shape).ints(l.view);
  if (llvm::all_of(l.offsets,
                   [](OpFoldResult o) { return isa<Attribute>(o); })) {
    SmallVector<int64_t> offsets;
    for (OpFoldResult o : l.offsets)
      offsets.push_back(*getConstantIntValue(o));
    call.ints(offsets);
  } else {
    Call offsets(lb, loc, "offsets");
    for (OpFoldResult o : l.offsets)
      if (auto v = dyn_cast<Value>(o))
        offsets.operand(loadValue(v));
      else
        offsets.i64(*getConstantIntValue(o));
    call.operand(offsets.create1(opaque(ctx, "helix::rt::cg::Offsets")));
  }
  call.ints(l.sizes)
      .verbatim(enumerator("WeightLayout", l.layout))
      .verbatim(enumerator("ElementType", l.resident))
      .verbatim(enumerator("CheckpointFormat", l.stored))
      .create();
}

/// The step's own weights (embedding, final norm, LM head, layers left
/// inline): one slot per distinct load.
void ProgramBuilder::loadWeights(emitc::FuncOp step) {
  std::map<std::string, int64_t> slots;
  IRMapping inLoad;
  SmallVector<WeightOp> weights;
  step.walk([&](WeightOp w) { weights.push_back(w); });
  for (WeightOp w : weights) {
    for (OpOperand &use : llvm::make_early_inc_range(w->getUses())) {
      WeightLoad l = loadFor(w, use);
      auto [it, inserted] = slots.try_emplace(l.key(), nextSlot);
      if (inserted) {
        emitLoad(load, w.getLoc(), l, l.name, Value(), inLoad);
        ++nextSlot;
      }
      b.setInsertionPoint(w);
      Value v = Call(b, w.getLoc(), "weight")
                    .operand(step.getArgument(1))
                    .i64(it->second)
                    .create1(tensorType(ctx));
      auto cast =
          UnrealizedConversionCastOp::create(b, w.getLoc(), w.getType(), v);
      use.set(cast.getResult(0));
    }
    w.erase();
  }
}

/// `f` as an emitc.func (Context&, RankState&, size_t weightBase, its
/// arguments...): its weights are slots `weightBase + k` of the state,
/// loaded per call.
ProgramBuilder::LayerFunction &
ProgramBuilder::convertLayerFunction(func::FuncOp f) {
  auto [it, inserted] = layerFunctions.try_emplace(f.getSymName().str());
  LayerFunction &lf = it->second;
  if (!inserted)
    return lf;
  HelixTypeConverter converter(ctx);
  Location loc = f.getLoc();
  SmallVector<Type> args = {contextType(ctx), stateType(ctx), b.getIndexType()};
  for (Type t : f.getArgumentTypes())
    args.push_back(converter.convertType(t));
  SmallVector<Type> results;
  for (Type t : f.getResultTypes())
    results.push_back(converter.convertType(t));
  b.setInsertionPoint(f);
  lf.func = makeFunc(loc, f.getSymName(), args, results);
  for (NamedAttribute a : f->getDiscardableAttrs())
    lf.func->setAttr(a.getName(), a.getValue());
  lf.func->setAttr(::mlir::helix::attrs::stage,
                   b.getI64IntegerAttr(currentStage));
  Block &body = lf.func.getBody().front();
  Block &old = f.getBody().front();
  body.getOperations().splice(body.end(), old.getOperations());
  b.setInsertionPointToStart(&body);
  for (BlockArgument arg : old.getArguments()) {
    Value v = body.getArgument(arg.getArgNumber() + 3);
    auto cast = UnrealizedConversionCastOp::create(b, loc, arg.getType(), v);
    arg.replaceAllUsesWith(cast.getResult(0));
  }
  std::map<std::string, int64_t> slots;
  SmallVector<WeightOp> weights;
  lf.func.walk([&](WeightOp w) { weights.push_back(w); });
  for (WeightOp w : weights) {
    for (OpOperand &use : llvm::make_early_inc_range(w->getUses())) {
      WeightLoad l = loadFor(w, use);
      auto [slot, added] = slots.try_emplace(l.key(), lf.loads.size());
      if (added)
        lf.loads.push_back(l);
      b.setInsertionPoint(w);
      Value v = Call(b, w.getLoc(), "layerWeight")
                    .operand(body.getArgument(1))
                    .operand(body.getArgument(2))
                    .i64(slot->second)
                    .create1(tensorType(ctx));
      use.set(UnrealizedConversionCastOp::create(b, w.getLoc(), w.getType(), v)
                  .getResult(0));
    }
  }
  // Its load function: the weights of the layer it is called for, at
  // offsets recomputed from the rank's coordinates (before the weight ops
  // go).
  b.setInsertionPoint(lf.func);
  lf.load = makeFunc(loc, (f.getSymName() + "_load").str(),
                     {contextType(ctx),
                      opaque(ctx, "const helix::rt::SafetensorsCheckpoint&"),
                      stateType(ctx), b.getIndexType()},
                     {});
  lf.load->setAttr(::mlir::helix::attrs::stage,
                   b.getI64IntegerAttr(currentStage));
  OpBuilder nb = OpBuilder::atBlockEnd(&lf.load.getBody().front());
  for (const WeightLoad &l : lf.loads) {
    Value name;
    if (StringRef(l.name).contains("{layer}"))
      name = Call(nb, loc, "layerName")
                 .str(l.name)
                 .operand(lf.load.getArgument(3))
                 .create1(opaque(ctx, "std::string"));
    emitLoad(lf.load, loc, l, l.name, name, lf.inLoad);
  }
  emitc::ReturnOp::create(nb, loc, Value());
  for (WeightOp w : weights)
    w.erase();
  f.erase();
  return lf;
}

/// A call of a layer function: its weights load into the next slots with
/// the call's layer index, and the step calls the emitc function.
LogicalResult ProgramBuilder::lowerLayerCall(func::CallOp call,
                                             emitc::FuncOp step) {
  auto f = module.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
  if (!f && !layerFunctions.count(call.getCallee().str()))
    return call.emitOpError("convert-helix-to-emitc: unknown layer function");
  std::optional<int64_t> layer = call.getNumOperands()
                                     ? getConstantIntValue(call.getOperand(0))
                                     : std::nullopt;
  if (!layer)
    return call.emitOpError("convert-helix-to-emitc: a layer function is "
                            "called with a constant layer index");
  LayerFunction &lf = f ? convertLayerFunction(f)
                        : layerFunctions.find(call.getCallee().str())->second;
  int64_t base = nextSlot;
  OpBuilder lb = OpBuilder::atBlockEnd(&load.getBody().front());
  Call(lb, call.getLoc(), "::" + lf.load.getSymName().str())
      .operand(load.getArgument(0))
      .operand(load.getArgument(1))
      .operand(load.getArgument(2))
      .i64(*layer)
      .create();
  nextSlot += lf.loads.size();
  // The call itself becomes a C++ call in the conversion (TensorOps.cpp).
  call->setAttr(::mlir::helix::attrs::weightBase, b.getI64IntegerAttr(base));
  return success();
}

/// Whether `arg` of step function `f` is an input the driver provides.
LogicalResult checkStepInput(func::FuncOp f, BlockArgument arg) {
  auto name = f.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                             ::mlir::helix::attrs::name);
  bool known =
      isa<KVShardType, StateShardType>(arg.getType()) ||
      (name &&
       (name.getValue() == "tokens" || name.getValue() == "positions")) ||
      (name && name.getValue() == "hidden" &&
       isa<RankedTensorType>(arg.getType())) ||
      (name && name.getValue() == "micro_batch_row" && arg.getType().isIndex());
  if (known)
    return success();
  return f.emitError("convert-helix-to-emitc: argument ")
         << arg.getArgNumber() << " of @" << f.getSymName() << " ("
         << (name ? name.getValue() : StringRef("unnamed"))
         << ") is not a step input (tokens, positions, hidden, a KV shard or "
            "micro_batch_row)";
}

LogicalResult ProgramBuilder::build(StringRef programName) {
  SmallVector<std::pair<func::FuncOp, int64_t>> stages;
  std::map<int64_t, func::FuncOp> drafts;
  auto grids = llvm::to_vector(module.getOps<shard::GridOp>());
  int64_t stageCount = grids.front().getShape()[0];
  for (auto f : module.getOps<func::FuncOp>()) {
    StringRef n = f.getSymName();
    if (f->hasAttr(::mlir::helix::attrs::layers))
      continue; // a layer function: converted at its first call
    if (auto d =
            f->getAttrOfType<IntegerAttr>(::mlir::helix::attrs::draftStage)) {
      if (!n.starts_with(kDraftFuncPrefix) || drafts.count(d.getInt()))
        return f.emitError("convert-helix-to-emitc: @")
               << n << " is not the one drafter @" << kDraftFuncPrefix
               << "<S> of stage " << d.getInt();
      drafts[d.getInt()] = f;
      continue;
    }
    int64_t s = -1;
    if (auto attr = f->getAttrOfType<IntegerAttr>(::mlir::helix::attrs::stage))
      s = attr.getInt();
    if (!n.starts_with(kStageFuncPrefix) || s < 0 || s >= stageCount)
      return f.emitError("convert-helix-to-emitc: expects SPMD rank IR: ")
             << "@" << n << " is not a stage program @" << kStageFuncPrefix
             << "<S> (with " << ::mlir::helix::attrs::stage << ") of the "
             << stageCount << " pipeline stages";
    for (BlockArgument arg : f.getArguments())
      if (failed(checkStepInput(f, arg)))
        return failure();
    stages.push_back({f, s});
  }
  if (stages.empty())
    return module.emitError("convert-helix-to-emitc: no stage program");
  auto mtp = module->getAttrOfType<MTPAttr>(::mlir::helix::attrs::mtp);
  for (auto &[s, d] : drafts) {
    if (!mtp || s != 0 || stageCount != 1)
      return d.emitError("convert-helix-to-emitc: a drafter belongs to a "
                         "speculative program (helix.mtp) of one pipeline "
                         "stage");
    for (BlockArgument arg : d.getArguments())
      if (failed(checkStepInput(d, arg)))
        return failure();
  }
  if (mtp && !drafts.count(0))
    return module.emitError("convert-helix-to-emitc: the speculative "
                            "program (helix.mtp) has no drafter @")
           << kDraftFuncPrefix << "0";

  // Every group kind of every stage, in one order: each rank creates its
  // groups in that order, so creation (collective over the members) cannot
  // deadlock. Rows per step: the tokens' (or, with pipeline stages, the KV
  // shards' rows, each stage running micro-batches of the tokens' rows).
  // The logits come from the first rank of the stage returning them.
  std::set<GroupKind> kinds;
  int64_t microBatch = 0, cacheRows = 0, logitsStage = -1;
  bool pipelined = false;
  for (auto &[s, d] : drafts)
    groupKindsOf(d, kinds);
  for (auto [f, s] : stages) {
    groupKindsOf(f, kinds);
    for (BlockArgument arg : f.getArguments()) {
      auto n = f.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                              ::mlir::helix::attrs::name);
      if (n && n.getValue() == "tokens")
        microBatch = std::max(
            microBatch, cast<RankedTensorType>(arg.getType()).getDimSize(0));
      pipelined |= n && n.getValue() == "micro_batch_row";
      if (auto shard = dyn_cast<KVShardType>(arg.getType()))
        cacheRows = std::max(cacheRows, shard.getRows());
      if (auto shard = dyn_cast<StateShardType>(arg.getType()))
        cacheRows = std::max(cacheRows, shard.getRows());
    }
    if (f.getNumResults() > 0 && (logitsStage < 0 || s < logitsStage))
      logitsStage = s;
  }
  if (logitsStage < 0)
    return module.emitError("convert-helix-to-emitc: no stage program "
                            "returns the logits");
  int64_t logitsRank = logitsStage * (facts.devices / stageCount);
  int64_t batch = pipelined ? cacheRows : microBatch;
  std::vector<GroupKind> ordered(kinds.begin(), kinds.end());
  for (auto [f, s] : stages)
    if (failed(buildStage(f, s, ordered, logitsRank,
                          drafts.count(s) ? drafts[s] : func::FuncOp())))
      return failure();

  // The header, the grids, then main.
  Location loc = module.getLoc();
  b.setInsertionPointToStart(module.getBody());
  emitc::IncludeOp::create(b, loc, "helix/Runtime/Codegen.h");
  for (shard::GridOp grid : grids) {
    std::string shape;
    for (int64_t d : grid.getShape())
      shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    emitc::GlobalOp::create(
        b, loc, grid.getSymName().str() + "_grid",
        opaque(ctx, "helix::rt::cg::GridDecl"),
        emitc::OpaqueAttr::get(ctx, "{" + cppString(grid.getSymName()) + ", {" +
                                        shape + "}}"));
  }
  // A step that reads device results on the host (DSA's top-k merge)
  // cannot be captured as a CUDA graph: the program says so.
  bool hostSync = false;
  module.walk([&](TopkMergeOp) { hostSync = true; });
  if (hostSync)
    emitc::GlobalOp::create(b, loc, "helix_host_sync_step",
                            opaque(ctx, "helix::rt::cg::HostSyncStep"),
                            emitc::OpaqueAttr::get(ctx, "{}"));
  b.setInsertionPointToEnd(module.getBody());
  Type argv =
      emitc::PointerType::get(emitc::PointerType::get(opaque(ctx, "char")));
  auto main = emitc::FuncOp::create(
      b, loc, "main",
      FunctionType::get(ctx, {b.getI32Type(), argv}, {b.getI32Type()}));
  Block *entry = main.addEntryBlock();
  OpBuilder mb = OpBuilder::atBlockEnd(entry);
  Call run(mb, loc, mtp ? "runSpeculative" : "run");
  run.operand(main.getArgument(0))
      .operand(main.getArgument(1))
      .str(programName)
      .i64(facts.devices)
      .i64(facts.vocab)
      .i64(facts.context);
  if (mtp) // the requests and the drafts per step
    run.i64(batch / mtp.getQueryTokens()).i64(mtp.getDraftTokens());
  else
    run.i64(batch).i64(microBatch).i64(logitsRank);
  Value rc = run.create1(mb.getI32Type());
  emitc::ReturnOp::create(mb, loc, rc);
  return success();
}

} // namespace

LogicalResult buildRankPrograms(ModuleOp module, const ModuleFacts &facts,
                                StringRef programName) {
  return ProgramBuilder(module, facts).build(programName);
}

} // namespace helix::emitc_codegen
