//===- InsertCollectives.cpp - helix-insert-collectives -------------------===//
//
// Rewrites the planned decode step into its sharded algorithm in global
// view: the batch specialised, the device grids declared, every op replaced
// by its sharded form (ShardStream.cpp, ShardAttention.cpp, ShardFFN.cpp)
// and every communication an explicit helix.collective.
//
//===----------------------------------------------------------------------===//

#include "ShardRewriter.h"

#include "helix/ModelIR/ModelIR.h"
#include "helix/Transforms/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "helix-insert-collectives"

namespace mlir::helix {
#define GEN_PASS_DEF_HELIXINSERTCOLLECTIVES
#include "helix/Transforms/Passes.h.inc"
} // namespace mlir::helix

using namespace mlir;
using namespace mlir::helix;
using namespace ::helix::sharding;

namespace {

/// The element type of the activations (the embedding's result).
Type activationType(func::FuncOp func) {
  Type act;
  func.walk([&](EmbedOp op) {
    act = op.getResult().getType().getElementType();
    return WalkResult::interrupt();
  });
  return act;
}

/// `t` with `rows` rows (the step's batch: tokens, positions, and the MTP
/// drafter's hidden states).
RankedTensorType withRows(RankedTensorType t, int64_t rows) {
  SmallVector<int64_t> shape(t.getShape());
  shape[0] = rows;
  return RankedTensorType::get(shape, t.getElementType());
}

/// Of the 2026 long-context layers, Mamba-2 (and KDA linear attention:
/// shardLinearAttention) is planned and priced, not lowered yet.
LogicalResult notLoweredYet(Operation *op) {
  return op->emitOpError()
         << "is planned and priced, but helix-insert-collectives does not "
            "lower it to rank IR yet: helix cannot generate programs for "
            "Mamba-2 layers (docs/long-context-architectures.md)";
}

LogicalResult rewriteOp(ShardRewriter &r, Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](EmbedOp o) { return shardEmbed(r, o); })
      .Case([&](RMSNormOp o) { return shardNorm(r, o); })
      .Case([&](QKVProjOp o) { return shardQKV(r, o); })
      .Case([&](AttentionOp o) { return shardAttention(r, o); })
      .Case([&](LinearOp o) {
        return isDraftProjection(o) ? shardDraftProjection(r, o)
                                    : shardLinear(r, o);
      })
      .Case([&](tensor::ConcatOp o) { return shardConcat(r, o); })
      .Case([&](AddOp o) { return shardAdd(r, o); })
      .Case([&](FFNOp o) { return shardFFN(r, o); })
      .Case([&](MoEOp o) { return shardMoE(r, o); })
      .Case([&](LMHeadOp o) { return shardLMHead(r, o); })
      .Case([&](LinearAttentionOp o) { return shardLinearAttention(r, o); })
      .Case([&](DSAIndexerOp o) { return shardIndexer(r, o); })
      .Case([&](SparseAttentionOp o) { return shardSparseAttention(r, o); })
      .Case<MambaOp>([](Operation *o) { return notLoweredYet(o); })
      .Default([](Operation *o) {
        return o->emitOpError()
               << "is not part of helix model IR; helix-insert-collectives "
                  "cannot shard it";
      });
}

struct InsertCollectives
    : public mlir::helix::impl::HelixInsertCollectivesBase<InsertCollectives> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func = ::helix::findDecodeStep(module);
    if (!func) {
      module.emitError() << "helix-insert-collectives: no decode-step "
                            "function (func.func @decode_step or one "
                            "carrying helix.model)";
      return signalPassFailure();
    }
    if (module.lookupSymbol(kAttnGrid)) {
      module.emitError() << "helix-insert-collectives: the module already "
                            "has @"
                         << kAttnGrid << " (it is in global view already)";
      return signalPassFailure();
    }
    // Layers the lowering does not cover yet: said before anything else.
    WalkResult unsupported = func.walk([](Operation *op) {
      if (isa<MambaOp>(op)) {
        (void)notLoweredYet(op);
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (unsupported.wasInterrupted())
      return signalPassFailure();
    FailureOr<ShardPlan> plan = ShardPlan::read(func);
    Type act = activationType(func);
    if (failed(plan))
      return signalPassFailure();
    if (!act) {
      func.emitError() << "helix-insert-collectives: no helix.embed";
      return signalPassFailure();
    }
    if (failed(rewrite(module, func, *plan, act)))
      return signalPassFailure();
    // What the rewrite produced: the collectives and the values it laid out.
    int64_t collectives = 0, dist = 0;
    module.walk([&](Operation *op) {
      collectives += isa<CollectiveOp>(op);
      for (Type t : op->getResultTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(t))
          dist += isa_and_nonnull<DistAttr>(tensor.getEncoding());
    });
    LLVM_DEBUG(llvm::dbgs() << "helix-insert-collectives: " << collectives
                            << " collectives, " << dist
                            << " values with a #helix.dist layout\n");
  }

  LogicalResult rewrite(ModuleOp module, func::FuncOp func,
                        const ShardPlan &plan, Type act) {
    MLIRContext *ctx = module.getContext();
    OpBuilder b(ctx);
    b.setInsertionPointToStart(module.getBody());
    const ::helix::Layout &l = plan.layout;
    Location loc = func.getLoc();
    // The grids go at the module's start once the rewrite knows them all
    // (a per-layer plan adds one per distinct layout).
    Block *gridsAt = module.getBody();

    // The step's signature with the batch fixed (and, for tp-pp, the first
    // cache row of the micro-batch).
    SmallVector<Type> argTypes;
    for (Type t : func.getArgumentTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(t);
      argTypes.push_back(tensor ? withRows(tensor, plan.batch) : t);
    }
    bool microBatched = l.pp > 1;
    if (microBatched)
      argTypes.push_back(b.getIndexType());
    b.setInsertionPoint(func);
    auto sharded = func::FuncOp::create(b, loc, func.getName(),
                                        b.getFunctionType(argTypes, {}));
    for (NamedAttribute a : func->getDiscardableAttrs())
      sharded->setAttr(a.getName(), a.getValue());
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (DictionaryAttr attrs = func.getArgAttrDict(i))
        sharded.setArgAttrs(i, attrs.getValue());
    Block *body = sharded.addEntryBlock();

    GlobalView g(b, plan);
    ShardRewriter r(g, act);
    for (auto [old, now] : llvm::zip(func.getArguments(), body->getArguments()))
      r.set(old, now);
    if (microBatched) {
      r.rowBase = body->getArguments().back();
      sharded.setArgAttr(argTypes.size() - 1, ::mlir::helix::attrs::name,
                         b.getStringAttr("micro_batch_row"));
      sharded->setAttr(::mlir::helix::attrs::microBatches,
                       b.getI64IntegerAttr(plan.microBatches));
    }

    b.setInsertionPointToEnd(body);
    for (Operation &op : func.getBody().front()) {
      FailureOr<int64_t> stage = r.stageOfOp(&op);
      if (failed(stage))
        return failure();
      g.stage = *stage;
      g.loc = op.getLoc();
      g.select(&op);
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        SmallVector<Value> results;
        for (Value v : ret.getOperands())
          results.push_back(r.get(v));
        func::ReturnOp::create(b, g.loc, results);
        sharded.setType(
            b.getFunctionType(argTypes, ValueRange(results).getTypes()));
        for (unsigned i = 0; i < func.getNumResults(); ++i)
          if (DictionaryAttr attrs = func.getResultAttrDict(i))
            sharded.setResultAttrs(i, attrs.getValue());
        continue;
      }
      if (failed(rewriteOp(r, &op)))
        return failure();
    }
    func.erase();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(gridsAt);
    for (const GridDecl &grid : g.grids())
      shard::GridOp::create(b, loc, grid.name, ArrayRef<int64_t>(grid.shape));
    return success();
  }
};

} // namespace
