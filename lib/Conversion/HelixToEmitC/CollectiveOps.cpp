//===- CollectiveOps.cpp - shard collectives and HOP-B to adapter calls ---===//
//
// Upstream shard collectives become calls over the group's explicit world
// ranks (the grid shape and the rank's coordinates give them);
// helix.async_start of an all-to-all or all-reduce starts it without
// waiting, helix.async_wait waits for it.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix::emitc_codegen {

namespace {

int64_t axisOf(const llvm::APInt &v) { return v.getSExtValue(); }

/// A fresh, otherwise unused result may be reduced in place.
bool reducibleInPlace(Value v) {
  Operation *def = v.getDefiningOp();
  return def && v.hasOneUse() &&
         isa<MatmulOp, GatedMLPOp, MoEExpertsOp, EmbedRowsOp, GroupSumOp, AddOp,
             LSECombineOp, NormOp>(def);
}

/// The call of a collective `op` on `input` (converted); `start`: as
/// helix.async_start's body (an Async instead of a Tensor).
FailureOr<Value> lowerCollective(OpBuilder &b, Operation *op, Value input,
                                 const ModuleFacts &facts, bool start) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value context = contextOf(op);
  int64_t rank = rankOf(op);
  Type result = start ? asyncType(ctx) : tensorType(ctx);
  SmallVector<int64_t> members = groupOf(op, facts, rank);
  Value v;
  if (auto o = dyn_cast<shard::AllReduceOp>(op)) {
    if (o.getReduction() != shard::ReductionKind::Sum)
      return o.emitOpError("convert-helix-to-emitc: only sum reductions"),
             failure();
    v = Call(b, loc, start ? "allReduceStart" : "allReduce")
            .operand(context)
            .operand(input)
            .ints(members)
            .boolean(reducibleInPlace(o.getInput()))
            .create1(result);
    return v;
  }
  if (auto o = dyn_cast<shard::AllToAllOp>(op))
    return Call(b, loc, start ? "allToAllStart" : "allToAll")
        .operand(context)
        .operand(input)
        .ints(members)
        .i64(axisOf(o.getSplitAxis()))
        .i64(axisOf(o.getConcatAxis()))
        .create1(result);
  // The others complete at once.
  if (auto o = dyn_cast<shard::AllGatherOp>(op))
    v = Call(b, loc, "allGather")
            .operand(context)
            .operand(input)
            .ints(members)
            .i64(axisOf(o.getGatherAxis()))
            .create1(tensorType(ctx));
  else if (auto o = dyn_cast<shard::ReduceScatterOp>(op))
    v = Call(b, loc, "reduceScatter")
            .operand(context)
            .operand(input)
            .ints(members)
            .i64(axisOf(o.getScatterAxis()))
            .create1(tensorType(ctx));
  else if (auto o = dyn_cast<shard::AllSliceOp>(op)) {
    auto type = cast<RankedTensorType>(o.getResult().getType());
    v = Call(b, loc, "allSlice")
            .operand(context)
            .operand(input)
            .i64(axisOf(o.getSliceAxis()))
            .i64(llvm::find(members, rank) - members.begin())
            .i64(members.size())
            .create1(type.getElementType().isInteger(64) ? intsType(ctx)
                                                         : tensorType(ctx));
  } else {
    return op->emitOpError("convert-helix-to-emitc: unsupported collective"),
           failure();
  }
  if (start)
    v = Call(b, loc, "ready").operand(v).create1(result);
  return v;
}

template <typename Op> struct CollectiveLowering : HelixPattern<Op> {
  using HelixPattern<Op>::HelixPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> v =
        lowerCollective(rewriter, op, a.getInput(), this->facts, false);
    if (failed(v))
      return failure();
    rewriter.replaceOp(op, *v);
    return success();
  }
};

/// The peer of a send or recv: the rank at `peer` on the op's grid axes.
int64_t peerOf(const ModuleFacts &facts, StringRef grid, ArrayRef<int16_t> axes,
               ArrayRef<int64_t> peer, int64_t rank) {
  SmallVector<int64_t> c = facts.coords(grid, rank);
  for (auto [i, axis] : llvm::enumerate(axes))
    c[axis] = peer[i];
  return facts.rankOf(grid, c);
}

/// shard.send / shard.recv over the pair's group (its `helix.group`, else
/// the two ranks in increasing order).
template <typename Op> struct PointToPointLowering : HelixPattern<Op> {
  using HelixPattern<Op>::HelixPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t rank = rankOf(op);
    SmallVector<int64_t> members = groupOf(op, this->facts, rank);
    int64_t peer = -1;
    if constexpr (std::is_same_v<Op, shard::SendOp>)
      peer = peerOf(this->facts, op.getGrid(), op.getGridAxes(),
                    op.getDestination(), rank);
    else if (op.getSource())
      peer = peerOf(this->facts, op.getGrid(), op.getGridAxes(),
                    *op.getSource(), rank);
    auto it = llvm::find(members, peer);
    if (peer < 0 || it == members.end() || !llvm::is_contained(members, rank))
      return op.emitOpError("convert-helix-to-emitc: the peer is not in the "
                            "op's group"),
             failure();
    Value r = Call(rewriter, op.getLoc(),
                   std::is_same_v<Op, shard::SendOp> ? "send" : "recv")
                  .operand(contextOf(op))
                  .operand(a.getInput())
                  .ints(members)
                  .i64(it - members.begin())
                  .create1(tensorType(this->getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct AsyncStartLowering : HelixPattern<AsyncStartOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(AsyncStartOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto yield = cast<AsyncYieldOp>(body.getTerminator());
    Operation *inner = &body.front();
    if (yield.getValues().size() != 1 ||
        yield.getValues()[0].getDefiningOp() != inner ||
        inner->getNumOperands() < 1)
      return op.emitOpError("convert-helix-to-emitc: expects one collective "
                            "yielded by helix.async_start"),
             failure();
    Value input = rewriter.getRemappedValue(inner->getOperand(0));
    if (!input)
      return failure();
    FailureOr<Value> v = lowerCollective(rewriter, inner, input, facts, true);
    if (failed(v))
      return failure();
    rewriter.replaceOp(op, *v);
    return success();
  }
};

struct AsyncWaitLowering : HelixPattern<AsyncWaitOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(AsyncWaitOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = Call(rewriter, op.getLoc(), "wait")
                  .operand(contextOf(op))
                  .operand(a.getToken())
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

SmallVector<int64_t> groupOf(Operation *op, const ModuleFacts &facts,
                             int64_t rank) {
  if (auto g = op->getAttrOfType<DenseI64ArrayAttr>("helix.group"))
    return SmallVector<int64_t>(g.asArrayRef());
  auto from = [&](auto o) {
    return facts.members(o.getGrid(), o.getGridAxes(), rank);
  };
  if (auto o = dyn_cast<shard::AllReduceOp>(op))
    return from(o);
  if (auto o = dyn_cast<shard::AllGatherOp>(op))
    return from(o);
  if (auto o = dyn_cast<shard::AllToAllOp>(op))
    return from(o);
  if (auto o = dyn_cast<shard::ReduceScatterOp>(op))
    return from(o);
  if (auto o = dyn_cast<shard::AllSliceOp>(op))
    return from(o);
  // A point-to-point pair: this rank and its peer, in increasing order.
  auto pair = [&](int64_t peer) {
    return peer < rank ? SmallVector<int64_t>{peer, rank}
                       : SmallVector<int64_t>{rank, peer};
  };
  if (auto o = dyn_cast<shard::SendOp>(op))
    return pair(
        peerOf(facts, o.getGrid(), o.getGridAxes(), o.getDestination(), rank));
  if (auto o = dyn_cast<shard::RecvOp>(op); o && o.getSource())
    return pair(
        peerOf(facts, o.getGrid(), o.getGridAxes(), *o.getSource(), rank));
  return {};
}

void populateCollectivePatterns(RewritePatternSet &patterns,
                                const TypeConverter &converter,
                                const ModuleFacts &facts) {
  patterns.add<CollectiveLowering<shard::AllReduceOp>,
               CollectiveLowering<shard::AllGatherOp>,
               CollectiveLowering<shard::AllToAllOp>,
               CollectiveLowering<shard::ReduceScatterOp>,
               CollectiveLowering<shard::AllSliceOp>,
               PointToPointLowering<shard::SendOp>,
               PointToPointLowering<shard::RecvOp>, AsyncStartLowering,
               AsyncWaitLowering>(converter, patterns.getContext(), facts);
}

} // namespace helix::emitc_codegen
