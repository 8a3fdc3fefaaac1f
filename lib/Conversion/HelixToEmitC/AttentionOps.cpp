//===- AttentionOps.cpp - Attention ops to adapter calls ------------------===//
//
// helix.qkv, helix.mla_qkv, helix.kv_slots, helix.attention_partial (and
// its sparse form), helix.index_candidates, helix.topk_merge,
// helix.lse_combine and helix.output_gate. RoPE is built from the layer's
// #helix.rope and the model's max_position (one `helix::rt::cg::rope` call per
// use).
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "helix/Dialect/Helix/HelixOps.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir;
using namespace mlir::helix;

namespace helix::emitc_codegen {

namespace {

/// The shortest decimal text of `v` that reads back as `v` (a C++ literal).
std::string exactLiteral(double v) {
  char buf[40];
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", v); // 500000, not 5e+05
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

/// A RopeConfig value for `rope` (default RoPE when null): a
/// `helix::rt::cg::RopeSpec` that names the fields differing from the
/// shared defaults (helix/Common/Rope.h), passed to `rope`.
Value ropeConfig(OpBuilder &b, Location loc, RopeAttr rope, int64_t maxPosition,
                 int64_t rotaryDim, bool interleaved) {
  const ::helix::RopeParams defaults;
  ::helix::RopeParams p = rope ? rope.getParams() : defaults;
  std::string spec = std::string(kNs) + "RopeSpec()";
  auto real = [&](const char *name, double v, double d) {
    if (v != d)
      spec += std::string(".") + name + "(" + exactLiteral(v) + ")";
  };
  auto integer = [&](const char *name, int64_t v, int64_t d) {
    if (v != d)
      spec += std::string(".") + name + "(" + std::to_string(v) + ")";
  };
  real("theta", p.theta, defaults.theta);
  if (p.scaling != defaults.scaling)
    spec += ".scaling(" + cppString(p.scaling) + ")";
  real("factor", p.factor, defaults.factor);
  integer("originalMaxPosition", p.originalMaxPosition,
          defaults.originalMaxPosition);
  real("lowFreqFactor", p.lowFreqFactor, defaults.lowFreqFactor);
  real("highFreqFactor", p.highFreqFactor, defaults.highFreqFactor);
  real("betaFast", p.betaFast, defaults.betaFast);
  real("betaSlow", p.betaSlow, defaults.betaSlow);
  real("mscale", p.mscale, defaults.mscale);
  real("mscaleAllDim", p.mscaleAllDim, defaults.mscaleAllDim);
  integer("maxPosition", maxPosition, 0);
  integer("rotaryDim", rotaryDim, 0);
  if (interleaved)
    spec += ".interleaved(true)";
  return Call(b, loc, "rope").verbatim(spec).create1(ropeType(b.getContext()));
}

struct QKVLowering : HelixPattern<QKVOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(QKVOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AttentionConfigAttr c = op.getConfig();
    // Partial RoPE (Qwen3-Next, Qwen3.5) rotates the first values of each
    // head (a whole even number of them: the importer checks).
    int64_t rotary = static_cast<int64_t>(std::lround(
        double(c.getHeadDim()) * c.getPartialRotary().convertToDouble()));
    Value rope = ropeConfig(rewriter, loc, op.getRope(), facts.maxPosition,
                            rotary, /*interleaved=*/false);
    Type t = tensorType(getContext());
    auto call = Call(rewriter, loc, "qkv")
                    .operand(contextOf(op))
                    .operand(a.getInput())
                    .operand(a.getPositions())
                    .operand(a.getWq())
                    .operand(a.getWk())
                    .operand(a.getWv())
                    .optional(a.getBq())
                    .optional(a.getBk())
                    .optional(a.getBv())
                    .optional(a.getQNorm())
                    .optional(a.getKNorm())
                    .f64(facts.normEps)
                    .operand(rope)
                    .create({t, t, t});
    rewriter.replaceOp(op, call.getResults());
    return success();
  }
};

struct MLAQKVLowering : HelixPattern<MLAQKVOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(MLAQKVOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    AttentionConfigAttr c = op.getConfig();
    Value rope = ropeConfig(rewriter, loc, op.getRope(), facts.maxPosition,
                            c.getRopeDim(), /*interleaved=*/true);
    Type t = tensorType(getContext());
    auto call = Call(rewriter, loc, "mlaQkv")
                    .operand(contextOf(op))
                    .operand(a.getInput())
                    .operand(a.getPositions())
                    .optional(a.getWqA())
                    .optional(a.getQNorm())
                    .operand(a.getWqB())
                    .operand(a.getWkvA())
                    .operand(a.getKvNorm())
                    .operand(a.getWkvB())
                    .i64(c.getRopeDim())
                    .operand(rope)
                    .create({t, t});
    rewriter.replaceOp(op, call.getResults());
    return success();
  }
};

struct KVSlotsLowering : HelixPattern<KVSlotsOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(KVSlotsOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    KVPlacementAttr p = op.getPlacement();
    Type t = intsType(getContext());
    auto call = Call(rewriter, op.getLoc(), "kvSlots")
                    .operand(a.getPositions())
                    .i64(p.getBlock())
                    .i64(p.getKvp())
                    .i64(p.getCapacity())
                    .i64(p.getWindow())
                    .indexOr0(a.getRankOffset())
                    .i64(op.getSlots().getType().getDimSize(0))
                    .create({t, t});
    rewriter.replaceOp(op, call.getResults());
    return success();
  }
};

struct AttentionPartialLowering : HelixPattern<AttentionPartialOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(AttentionPartialOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    if (!a.getSlots())
      return op.emitOpError("convert-helix-to-emitc: the attention has no KV "
                            "placement (run helix-kv-placement)"),
             failure();
    Location loc = op.getLoc();
    AttentionConfigAttr c = op.getConfig();
    bool mla = c.isMLA();
    RopeAttr ropeAttr = dyn_cast_or_null<RopeAttr>(
        facts.layerRope.lookup(static_cast<int64_t>(op.getLayer())));
    Value rope = ropeConfig(rewriter, loc, ropeAttr, facts.maxPosition,
                            mla ? c.getRopeDim() : c.getHeadDim(), mla);
    Value scale = Call(rewriter, loc, "softmaxScale")
                      .operand(rope)
                      .i64(c.getHeadDim())
                      .boolean(mla)
                      .create1(rewriter.getF32Type());
    if (a.getSelected()) {
      // DeepSeek Sparse Attention: the selected tokens this rank holds.
      KVPlacementAttr p = *op.getPlacement();
      Call sparse(rewriter, loc, "sparseAttentionPartial");
      sparse.operand(contextOf(op))
          .operand(a.getQ())
          .operand(a.getK())
          .operand(a.getCache())
          .operand(a.getWUv())
          .operand(a.getSlots())
          .operand(a.getSelected())
          .i64(p.getBlock())
          .i64(p.getKvp())
          .indexOr0(a.getKvpRank())
          .indexOr0(a.getRowBase())
          .i64(op.getBatchOffset())
          .i64(op.getHeadSplit())
          .operand(scale);
      rewriter.replaceOp(op, sparse.create1(tensorType(getContext())));
      return success();
    }
    Call call(rewriter, loc, "attentionPartial");
    call.operand(contextOf(op))
        .operand(a.getQ())
        .operand(a.getK())
        .optional(a.getV())
        .operand(a.getCache())
        .optional(a.getWUv())
        .operand(a.getSlots())
        .operand(a.getSpans());
    if (a.getRowBase())
      call.operand(a.getRowBase());
    else
      call.i64(0);
    call.i64(op.getBatchOffset()).i64(op.getHeadSplit()).operand(scale);
    if (op.getQueries() > 1) // a speculative verify step
      call.i64(op.getQueries());
    Value r = call.create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct IndexCandidatesLowering : HelixPattern<IndexCandidatesOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(IndexCandidatesOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    if (!a.getSlots())
      return op.emitOpError("convert-helix-to-emitc: the indexer has no KV "
                            "placement (run helix-kv-placement)"),
             failure();
    Location loc = op.getLoc();
    IndexerConfigAttr c = op.getConfig();
    Value rope = ropeConfig(rewriter, loc, op.getRope(), facts.maxPosition,
                            c.getRopeDim(), c.getRopeInterleave());
    Value r = Call(rewriter, loc, "indexCandidates")
                  .operand(contextOf(op))
                  .operand(a.getInput())
                  .operand(a.getPositions())
                  .operand(a.getWqA())
                  .operand(a.getQNorm())
                  .operand(a.getWqB())
                  .operand(a.getWk())
                  .operand(a.getKNorm())
                  .operand(a.getKNormBias())
                  .operand(a.getWProj())
                  .operand(a.getCache())
                  .operand(a.getSlots())
                  .operand(a.getSpans())
                  .indexOr0(a.getRowBase())
                  .i64(0)
                  .i64(c.getHeads())
                  .i64(c.getHeadDim())
                  .i64(c.getRopeDim())
                  .i64(c.getTopK())
                  .f64(op.getEps().convertToDouble())
                  .operand(rope)
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct TopkMergeLowering : HelixPattern<TopkMergeOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(TopkMergeOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = Call(rewriter, op.getLoc(), "topkMerge")
                  .operand(contextOf(op))
                  .operand(a.getCandidates())
                  .i64(op.getTopK())
                  .create1(intsType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct OutputGateLowering : HelixPattern<OutputGateOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(OutputGateOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = Call(rewriter, op.getLoc(), "outputGate")
                  .operand(contextOf(op))
                  .operand(a.getAttention())
                  .operand(a.getInput())
                  .operand(a.getWGate())
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct LSECombineLowering : HelixPattern<LSECombineOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(LSECombineOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = Call(rewriter, op.getLoc(), "lseCombine")
                  .operand(contextOf(op))
                  .operand(a.getPartials())
                  .optional(a.getSinks())
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void populateAttentionPatterns(RewritePatternSet &patterns,
                               const TypeConverter &converter,
                               const ModuleFacts &facts) {
  patterns.add<QKVLowering, MLAQKVLowering, KVSlotsLowering,
               AttentionPartialLowering, IndexCandidatesLowering,
               TopkMergeLowering, OutputGateLowering, LSECombineLowering>(
      converter, patterns.getContext(), facts);
}

} // namespace helix::emitc_codegen
