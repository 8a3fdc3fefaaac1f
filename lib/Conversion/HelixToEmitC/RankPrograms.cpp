//===- RankPrograms.cpp - Load, prepare and step functions per rank -------===//
//
// Splits each rank function of rank IR into what runs once (loading its
// weight slices, allocating its KV shards, creating its communicators) and
// what runs every step, registers the three as the rank's program, and adds
// main. The step body keeps the rank-IR ops for the patterns; their inputs
// (the step's tokens, positions, KV shards and weights) come from adapter
// calls through unrealized casts.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "helix/Common/WeightLayout.h"
#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::helix;

namespace helix::emitc_codegen {

namespace {

constexpr const char *kRankPrefix = "decode_step_rank";

/// One weight load: a box of a checkpoint tensor's view, stored in a layout.
struct WeightLoad {
  std::string name;
  SmallVector<int64_t> shape, view, offsets, sizes;
  WeightLayout layout = WeightLayout::Plain;

  auto key() const {
    return std::make_tuple(name, shape, view, offsets, sizes, layout);
  }
};

/// What the consumer `use` of weight `w` loads.
WeightLoad loadFor(WeightOp w, OpOperand &use) {
  WeightLoad l;
  l.name = w.getName().str();
  l.shape.assign(w.getShape().begin(), w.getShape().end());
  l.view = w.getViewShape();
  l.offsets = w.getSliceOffsets();
  auto type = cast<RankedTensorType>(w.getType());
  l.sizes.assign(type.getShape().begin(), type.getShape().end());
  Operation *owner = use.getOwner();
  unsigned n = use.getOperandNumber();
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
      l.offsets[1] += c.getHeadDim() - c.getRopeDim();
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

/// The groups a rank function communicates in (world ranks, group order).
std::set<SmallVector<int64_t>>
groupsOf(func::FuncOp f, const ModuleFacts &facts, int64_t rank) {
  std::set<SmallVector<int64_t>> groups;
  f.walk([&](Operation *op) {
    if (isa<shard::AllReduceOp, shard::AllGatherOp, shard::AllToAllOp,
            shard::ReduceScatterOp, shard::SendOp, shard::RecvOp>(op))
      groups.insert(groupOf(op, facts, rank));
  });
  return groups;
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
                         TypeRange results, int64_t rank) {
    auto f = emitc::FuncOp::create(b, loc, name,
                                   FunctionType::get(ctx, args, results));
    f->setAttr(kRankAttr, b.getI64IntegerAttr(rank));
    f.addEntryBlock();
    return f;
  }
  LogicalResult buildRank(func::FuncOp f, int64_t rank,
                          const std::vector<SmallVector<int64_t>> &groups);
  void loadWeights(emitc::FuncOp step, emitc::FuncOp load);
};

LogicalResult
ProgramBuilder::buildRank(func::FuncOp f, int64_t rank,
                          const std::vector<SmallVector<int64_t>> &groups) {
  Location loc = f.getLoc();
  std::string name = f.getSymName().str();
  b.setInsertionPoint(f);
  Type ctxT = contextType(ctx), stateT = stateType(ctx),
       tensorT = tensorType(ctx);
  emitc::FuncOp load = makeFunc(
      loc, name + "_load",
      {ctxT, opaque(ctx, "const helix::rt::SafetensorsCheckpoint&"), stateT},
      {}, rank);
  emitc::FuncOp prepare = makeFunc(loc, name + "_prepare", {ctxT}, {}, rank);
  emitc::FuncOp step =
      makeFunc(loc, name,
               {ctxT, stateT, opaque(ctx, "const helix::rt::StepInputs&"),
                b.getIndexType()},
               {tensorT}, rank);

  // Communicators, in the order every rank shares.
  b.setInsertionPointToEnd(&prepare.getBody().front());
  for (const SmallVector<int64_t> &g : groups)
    if (llvm::is_contained(g, rank))
      Call(b, loc, "group").operand(prepare.getArgument(0)).ints(g).create();
  emitc::ReturnOp::create(b, loc, Value());

  // The step body: the rank function's ops, its arguments from calls.
  Block &body = step.getBody().front();
  Block &old = f.getBody().front();
  body.getOperations().splice(body.end(), old.getOperations());
  b.setInsertionPointToStart(&body);
  OpBuilder lb = OpBuilder::atBlockEnd(&load.getBody().front());
  int64_t kvSlot = 0;
  for (BlockArgument arg : old.getArguments()) {
    Value v;
    auto nameAttr =
        f.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "helix.name");
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
          .create();
      v = Call(b, loc, "kvShard")
              .operand(step.getArgument(1))
              .i64(kvSlot++)
              .create1(cacheType(ctx));
    } else if (nameAttr && (nameAttr.getValue() == "tokens" ||
                            nameAttr.getValue() == "positions")) {
      auto type = cast<RankedTensorType>(arg.getType());
      v = Call(b, loc, nameAttr.getValue())
              .operand(step.getArgument(2))
              .i64(type.getDimSize(0))
              .create1(intsType(ctx));
    } else {
      // The micro-batch's first row (pipeline stages).
      arg.replaceAllUsesWith(step.getArgument(3));
      continue;
    }
    auto cast = UnrealizedConversionCastOp::create(b, loc, arg.getType(), v);
    arg.replaceAllUsesWith(cast.getResult(0));
  }
  loadWeights(step, load);
  emitc::ReturnOp::create(lb, loc, Value());

  // The registration of the rank's program.
  b.setInsertionPoint(f);
  auto program = emitc::GlobalOp::create(
      b, loc, name + "_program", opaque(ctx, "helix::rt::cg::RankProgram"),
      emitc::OpaqueAttr::get(ctx, "{" + std::to_string(rank) + ", " + name +
                                      "_load, " + name + "_prepare, " + name +
                                      "}"));
  program->setAttr(kRankAttr, b.getI64IntegerAttr(rank));
  f.erase();
  return success();
}

void ProgramBuilder::loadWeights(emitc::FuncOp step, emitc::FuncOp load) {
  std::map<decltype(WeightLoad().key()), int64_t> slots;
  OpBuilder lb = OpBuilder::atBlockEnd(&load.getBody().front());
  SmallVector<WeightOp> weights;
  step.walk([&](WeightOp w) { weights.push_back(w); });
  for (WeightOp w : weights) {
    for (OpOperand &use : llvm::make_early_inc_range(w->getUses())) {
      WeightLoad l = loadFor(w, use);
      auto [it, inserted] =
          slots.try_emplace(l.key(), static_cast<int64_t>(slots.size()));
      if (inserted)
        Call(lb, w.getLoc(), "loadWeight")
            .operand(load.getArgument(0))
            .operand(load.getArgument(1))
            .operand(load.getArgument(2))
            .str(l.name)
            .ints(l.shape)
            .ints(l.view)
            .ints(l.offsets)
            .ints(l.sizes)
            .i64(static_cast<int64_t>(l.layout))
            .create();
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

LogicalResult ProgramBuilder::build(StringRef programName) {
  SmallVector<std::pair<func::FuncOp, int64_t>> ranks;
  for (auto f : module.getOps<func::FuncOp>()) {
    StringRef n = f.getSymName();
    int64_t r = -1;
    if (auto attr = f->getAttrOfType<IntegerAttr>("helix.rank"))
      r = attr.getInt();
    else if (n.starts_with(kRankPrefix))
      n.drop_front(strlen(kRankPrefix)).getAsInteger(10, r);
    if (!n.starts_with(kRankPrefix) || r < 0 || r >= facts.devices)
      return f.emitError("convert-helix-to-emitc: expects rank IR: ")
             << "@" << n << " is not a rank function @" << kRankPrefix
             << "<R> of the " << facts.devices << " ranks";
    for (BlockArgument arg : f.getArguments()) {
      auto name =
          f.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "helix.name");
      bool known = isa<KVShardType>(arg.getType()) ||
                   (name && (name.getValue() == "tokens" ||
                             name.getValue() == "positions")) ||
                   (name && name.getValue() == "micro_batch_row" &&
                    arg.getType().isIndex());
      if (!known)
        return f.emitError("convert-helix-to-emitc: argument ")
               << arg.getArgNumber() << " of @" << n << " ("
               << (name ? name.getValue() : StringRef("unnamed"))
               << ") is not a step input (tokens, positions, a KV shard or "
                  "micro_batch_row)";
    }
    ranks.push_back({f, r});
  }
  if (ranks.empty())
    return module.emitError("convert-helix-to-emitc: no rank function");

  // Every group of every rank, in one order: each rank creates its own in
  // that order, so creation (collective over the members) cannot deadlock.
  // Rows per step: the tokens' (or, with pipeline stages, the KV shards'
  // rows, each stage running micro-batches of the tokens' rows). The
  // logits come from the first rank whose program returns them.
  std::set<SmallVector<int64_t>> all;
  int64_t microBatch = 0, cacheRows = 0, logitsRank = -1;
  bool pipelined = false;
  for (auto [f, r] : ranks) {
    for (const SmallVector<int64_t> &g : groupsOf(f, facts, r))
      all.insert(g);
    for (BlockArgument arg : f.getArguments()) {
      auto n = f.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "helix.name");
      if (n && n.getValue() == "tokens")
        microBatch = std::max(
            microBatch, cast<RankedTensorType>(arg.getType()).getDimSize(0));
      pipelined |= n && n.getValue() == "micro_batch_row";
      if (auto shard = dyn_cast<KVShardType>(arg.getType()))
        cacheRows = std::max(cacheRows, shard.getRows());
    }
    if (f.getNumResults() > 0 && (logitsRank < 0 || r < logitsRank))
      logitsRank = r;
  }
  if (logitsRank < 0)
    return module.emitError("convert-helix-to-emitc: no rank function "
                            "returns the logits");
  int64_t batch = pipelined ? cacheRows : microBatch;
  if (logitsRank != 0)
    all.insert(SmallVector<int64_t>{0, logitsRank});
  std::vector<SmallVector<int64_t>> groups(all.begin(), all.end());
  std::stable_sort(
      groups.begin(), groups.end(),
      [](const auto &a, const auto &b) { return a.size() > b.size(); });
  for (auto [f, r] : ranks)
    if (failed(buildRank(f, r, groups)))
      return failure();

  // The header, then main.
  Location loc = module.getLoc();
  b.setInsertionPointToStart(module.getBody());
  emitc::IncludeOp::create(b, loc, "helix/Runtime/Codegen.h");
  b.setInsertionPointToEnd(module.getBody());
  Type argv =
      emitc::PointerType::get(emitc::PointerType::get(opaque(ctx, "char")));
  auto main = emitc::FuncOp::create(
      b, loc, "main",
      FunctionType::get(ctx, {b.getI32Type(), argv}, {b.getI32Type()}));
  Block *entry = main.addEntryBlock();
  OpBuilder mb = OpBuilder::atBlockEnd(entry);
  Value rc = Call(mb, loc, "run")
                 .operand(main.getArgument(0))
                 .operand(main.getArgument(1))
                 .str(programName)
                 .i64(facts.devices)
                 .i64(facts.vocab)
                 .i64(facts.context)
                 .i64(batch)
                 .i64(microBatch)
                 .i64(logitsRank)
                 .create1(mb.getI32Type());
  emitc::ReturnOp::create(mb, loc, rc);
  return success();
}

} // namespace

LogicalResult buildRankPrograms(ModuleOp module, const ModuleFacts &facts,
                                StringRef programName) {
  return ProgramBuilder(module, facts).build(programName);
}

} // namespace helix::emitc_codegen
