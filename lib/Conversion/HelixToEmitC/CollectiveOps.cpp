//===- CollectiveOps.cpp - shard collectives and HOP-B to adapter calls ---===//
//
// Upstream shard collectives become calls over the rank's group on their
// grid axes (`members`: the runtime computes it from the grid and the
// rank's coordinates);
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
             LSECombineOp, NormRowsOp>(def);
}

/// The rank's group over the op's grid axes.
template <typename Op> Value membersOf(OpBuilder &b, Op op) {
  SmallVector<int64_t> axes(op.getGridAxes().begin(), op.getGridAxes().end());
  return Call(b, op.getLoc(), "members")
      .operand(contextOf(op))
      .str(op.getGrid())
      .ints(axes)
      .create1(opaque(b.getContext(), "helix::rt::cg::Members"));
}

/// The call of a collective `op` on `input` (converted); `start`: as
/// helix.async_start's body (an Async instead of a Tensor).
FailureOr<Value> lowerCollective(OpBuilder &b, Operation *op, Value input,
                                 bool start) {
  Location loc = op->getLoc();
  MLIRContext *ctx = b.getContext();
  Value context = contextOf(op);
  Type result = start ? asyncType(ctx) : tensorType(ctx);
  Value v;
  if (auto o = dyn_cast<shard::AllReduceOp>(op)) {
    if (o.getReduction() != shard::ReductionKind::Sum)
      return o.emitOpError("convert-helix-to-emitc: only sum reductions"),
             failure();
    v = Call(b, loc, start ? "allReduceStart" : "allReduce")
            .operand(context)
            .operand(input)
            .operand(membersOf(b, o))
            .boolean(reducibleInPlace(o.getInput()))
            .create1(result);
    return v;
  }
  if (auto o = dyn_cast<shard::AllToAllOp>(op))
    return Call(b, loc, start ? "allToAllStart" : "allToAll")
        .operand(context)
        .operand(input)
        .operand(membersOf(b, o))
        .i64(axisOf(o.getSplitAxis()))
        .i64(axisOf(o.getConcatAxis()))
        .create1(result);
  // The others complete at once.
  if (auto o = dyn_cast<shard::AllGatherOp>(op))
    v = Call(b, loc, "allGather")
            .operand(context)
            .operand(input)
            .operand(membersOf(b, o))
            .i64(axisOf(o.getGatherAxis()))
            .create1(tensorType(ctx));
  else if (auto o = dyn_cast<shard::ReduceScatterOp>(op))
    v = Call(b, loc, "reduceScatter")
            .operand(context)
            .operand(input)
            .operand(membersOf(b, o))
            .i64(axisOf(o.getScatterAxis()))
            .create1(tensorType(ctx));
  else if (auto o = dyn_cast<shard::AllSliceOp>(op)) {
    auto type = cast<RankedTensorType>(o.getResult().getType());
    v = Call(b, loc, "allSlice")
            .operand(context)
            .operand(input)
            .operand(membersOf(b, o))
            .i64(axisOf(o.getSliceAxis()))
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
    FailureOr<Value> v = lowerCollective(rewriter, op, a.getInput(), false);
    if (failed(v))
      return failure();
    rewriter.replaceOp(op, *v);
    return success();
  }
};

/// shard.send / shard.recv over the rank's group on their grid axes; the
/// peer's index in the group is its coordinates on those axes.
template <typename Op> struct PointToPointLowering : HelixPattern<Op> {
  using HelixPattern<Op>::HelixPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<ArrayRef<int64_t>> peer;
    if constexpr (std::is_same_v<Op, shard::SendOp>)
      peer = op.getDestination();
    else
      peer = op.getSource();
    auto grid = this->facts.grids.find(op.getGrid());
    if (!peer || grid == this->facts.grids.end() ||
        peer->size() != op.getGridAxes().size())
      return op.emitOpError("convert-helix-to-emitc: needs its peer's "
                            "coordinates on its grid axes"),
             failure();
    int64_t index = 0;
    for (auto [axis, c] : llvm::zip(op.getGridAxes(), *peer))
      index = index * grid->second[axis] + c;
    Value r = Call(rewriter, op.getLoc(),
                   std::is_same_v<Op, shard::SendOp> ? "send" : "recv")
                  .operand(contextOf(op))
                  .operand(a.getInput())
                  .operand(membersOf(rewriter, op))
                  .i64(index)
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
    FailureOr<Value> v = lowerCollective(rewriter, inner, input, true);
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
