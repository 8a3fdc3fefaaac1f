//===- TensorOps.cpp - tensor dialect ops and returns to adapter calls ----===//
//
// The tensor ops rank IR uses (HOP-B's batch slices and their
// concatenation, pipeline receive buffers) and the step's return.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace helix::emitc_codegen {

namespace {

struct ExtractSliceLowering
    : public OpConversionPattern<tensor::ExtractSliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tensor::ExtractSliceOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.hasUnitStride() || !op.getOffsets().empty() ||
        !op.getSizes().empty())
      return op.emitOpError("convert-helix-to-emitc: expects static offsets "
                            "and sizes with unit strides"),
             failure();
    Type t = getTypeConverter()->convertType(op.getType());
    Value r = Call(rewriter, op.getLoc(), "slice")
                  .operand(contextOf(op))
                  .operand(a.getSource())
                  .ints(op.getStaticOffsets())
                  .ints(op.getStaticSizes())
                  .create1(t);
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct ConcatLowering : public OpConversionPattern<tensor::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tensor::ConcatOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Call call(rewriter, op.getLoc(), "concat");
    call.operand(contextOf(op)).i64(op.getDim());
    for (Value v : a.getInputs())
      call.operand(v);
    rewriter.replaceOp(op, call.create1(tensorType(getContext())));
    return success();
  }
};

struct EmptyLowering : public OpConversionPattern<tensor::EmptyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tensor::EmptyOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op.getType().hasStaticShape())
      return op.emitOpError("convert-helix-to-emitc: dynamic shape"), failure();
    Value r = Call(rewriter, op.getLoc(), "empty")
                  .operand(contextOf(op))
                  .ints(op.getType().getShape())
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// The step returns its logits (or no tensor on ranks that have none);
/// its named results past them become outputs of the rank state.
struct ReturnLowering : public OpConversionPattern<func::ReturnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(func::ReturnOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    auto names = op->getAttrOfType<ArrayAttr>(kOutputNamesAttr);
    size_t named = names ? names.size() : 0;
    if (a.getOperands().size() > 1 + named)
      return op.emitOpError("convert-helix-to-emitc: a rank function returns "
                            "its logits and named outputs"),
             failure();
    for (size_t i = 0; i < named; ++i)
      Call(rewriter, op.getLoc(), "output")
          .operand(stateOf(op))
          .str(cast<StringAttr>(names[i]).getValue())
          .operand(a.getOperands()[i + 1])
          .create();
    Value v = a.getOperands().empty() ? Call(rewriter, op.getLoc(), "none")
                                            .create1(tensorType(getContext()))
                                      : a.getOperands()[0];
    rewriter.replaceOpWithNewOp<emitc::ReturnOp>(op, v);
    return success();
  }
};

/// A call of a layer function: the C++ function takes the Context&, the
/// RankState& and the call's first weight slot before the operands.
struct LayerCallLowering : public OpConversionPattern<func::CallOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(func::CallOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    auto base =
        op->getAttrOfType<IntegerAttr>(::mlir::helix::attrs::weightBase);
    if (!base)
      return op.emitOpError("convert-helix-to-emitc: a call of a layer "
                            "function without its weight slots"),
             failure();
    SmallVector<Type> results;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), results)))
      return failure();
    Call c(rewriter, op.getLoc(), "::" + op.getCallee().str());
    c.operand(contextOf(op)).operand(stateOf(op)).i64(base.getInt());
    for (Value v : a.getOperands())
      c.operand(v);
    rewriter.replaceOp(op, c.create(results).getResults());
    return success();
  }
};

} // namespace

void populateTensorPatterns(RewritePatternSet &patterns,
                            const TypeConverter &converter) {
  patterns.add<ExtractSliceLowering, ConcatLowering, EmptyLowering,
               ReturnLowering, LayerCallLowering>(converter,
                                                  patterns.getContext());
}

} // namespace helix::emitc_codegen
