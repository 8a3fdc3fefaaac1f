//===- RecurrentOps.cpp - Recurrent-layer ops to adapter calls ------------===//
//
// helix.gdn_step: one call to helix::rt::cg::gdnStep with the rank's head
// counts (from its weight slices) and the layer's sizes as constants.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "helix/Dialect/Helix/HelixOps.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix::emitc_codegen {

namespace {

struct GDNStepLowering : HelixPattern<GDNStepOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(GDNStepOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    LinearAttentionConfigAttr c = op.getConfig();
    int64_t keyHeads =
        cast<RankedTensorType>(op.getWqkvz().getType()).getDimSize(0);
    int64_t valueHeads = keyHeads * (c.getValueHeads() / c.getKeyHeads());
    Value out = Call(rewriter, op.getLoc(), "gdnStep")
                    .operand(contextOf(op))
                    .operand(a.getInput())
                    .operand(a.getPositions())
                    .operand(a.getWqkvz())
                    .operand(a.getWba())
                    .operand(a.getConvQ())
                    .operand(a.getConvK())
                    .operand(a.getConvV())
                    .operand(a.getALog())
                    .operand(a.getDtBias())
                    .operand(a.getNorm())
                    .operand(a.getState())
                    .indexOr0(a.getRowBase())
                    .i64(keyHeads)
                    .i64(valueHeads)
                    .i64(c.getKeyHeadDim())
                    .i64(c.getValueHeadDim())
                    .i64(c.getConvKernel())
                    .f64(op.getEps().convertToDouble())
                    .create1(tensorType(getContext()));
    rewriter.replaceOp(op, out);
    return success();
  }
};

} // namespace

void populateRecurrentPatterns(RewritePatternSet &patterns,
                               const TypeConverter &converter,
                               const ModuleFacts &facts) {
  patterns.add<GDNStepLowering>(converter, patterns.getContext(), facts);
}

} // namespace helix::emitc_codegen
