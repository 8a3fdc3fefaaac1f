//===- IndexOps.cpp - The rank's coordinates and index arithmetic ---------===//
//
// SPMD rank IR computes what differs between ranks from the rank's grid
// coordinates: shard.process_multi_index becomes one `coord` call per
// coordinate, and the index arithmetic on them (arith constants, +, -, *,
// /, %, ==, !=) the same C++ expressions on size_t; helix.keep_if passes a
// bias only where its condition holds.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix::emitc_codegen {

namespace {

struct MultiIndexLowering : HelixPattern<shard::ProcessMultiIndexOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(shard::ProcessMultiIndexOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto grid = facts.grids.find(op.getGrid());
    if (grid == facts.grids.end())
      return op.emitOpError("convert-helix-to-emitc: unknown grid"), failure();
    SmallVector<Value> coords;
    for (unsigned i = 0; i < op.getNumResults(); ++i) {
      int64_t axis = op.getAxes().empty() ? i : op.getAxes()[i];
      coords.push_back(Call(rewriter, op.getLoc(), "coord")
                           .operand(contextOf(op))
                           .str(op.getGrid())
                           .i64(axis)
                           .create1(rewriter.getIndexType()));
    }
    rewriter.replaceOp(op, coords);
    return success();
  }
};

struct ConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getType().isIndex())
      return failure();
    rewriter.replaceOpWithNewOp<emitc::ConstantOp>(op, op.getType(),
                                                   op.getValue());
    return success();
  }
};

template <typename From, typename To>
struct BinaryLowering : OpConversionPattern<From> {
  using OpConversionPattern<From>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(From op, typename From::Adaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getType().isIndex())
      return failure();
    rewriter.replaceOpWithNewOp<To>(op, op.getType(), a.getLhs(), a.getRhs());
    return success();
  }
};

struct CmpLowering : OpConversionPattern<arith::CmpIOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::CmpIOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getLhs().getType().isIndex())
      return failure();
    emitc::CmpPredicate p;
    switch (op.getPredicate()) {
    case arith::CmpIPredicate::eq:
      p = emitc::CmpPredicate::eq;
      break;
    case arith::CmpIPredicate::ne:
      p = emitc::CmpPredicate::ne;
      break;
    default:
      return op.emitOpError("convert-helix-to-emitc: only eq / ne index "
                            "comparisons"),
             failure();
    }
    rewriter.replaceOpWithNewOp<emitc::CmpOp>(op, op.getType(), p, a.getLhs(),
                                              a.getRhs());
    return success();
  }
};

struct KeepIfLowering : HelixPattern<KeepIfOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(KeepIfOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = Call(rewriter, op.getLoc(), "keepIf")
                  .operand(a.getCondition())
                  .operand(a.getValue())
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void populateIndexPatterns(RewritePatternSet &patterns,
                           const TypeConverter &converter,
                           const ModuleFacts &facts) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<MultiIndexLowering, KeepIfLowering>(converter, ctx, facts);
  patterns.add<ConstantLowering, CmpLowering,
               BinaryLowering<arith::AddIOp, emitc::AddOp>,
               BinaryLowering<arith::SubIOp, emitc::SubOp>,
               BinaryLowering<arith::MulIOp, emitc::MulOp>,
               BinaryLowering<arith::DivUIOp, emitc::DivOp>,
               BinaryLowering<arith::RemUIOp, emitc::RemOp>>(converter, ctx);
}

} // namespace helix::emitc_codegen
