//===- ComputeOps.cpp - Dense and MoE compute ops to adapter calls --------===//
//
// helix.embed_rows, helix.norm_rows, helix.matmul, helix.add, helix.group_sum,
// helix.gated_mlp, helix.moe_router and helix.moe_experts.
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "helix/Common/Routing.h"

#include "helix/Dialect/Helix/HelixOps.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix::emitc_codegen {

namespace {

struct EmbedRowsLowering : HelixPattern<EmbedRowsOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(EmbedRowsOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = Call(rewriter, op.getLoc(), "embedRows")
                  .operand(contextOf(op))
                  .operand(a.getTokens())
                  .operand(a.getTable())
                  .indexOr0(a.getVocabOffset())
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct NormLowering : HelixPattern<NormRowsOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(NormRowsOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = Call(rewriter, op.getLoc(), "norm")
                  .operand(contextOf(op))
                  .operand(a.getInput())
                  .operand(a.getWeight())
                  .f64(op.getEps().convertToDouble())
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct MatmulLowering : HelixPattern<MatmulOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(MatmulOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = Call(rewriter, op.getLoc(), "matmul")
                  .operand(contextOf(op))
                  .operand(a.getInput())
                  .operand(a.getWeight())
                  .optional(a.getBias())
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Whether `v` is available at `at`: a block argument of its block or the
/// result of an op before it.
static bool availableAt(Value v, Operation *at) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return v.getParentBlock() == at->getBlock() ||
           v.getParentBlock()->getParentOp()->isProperAncestor(at);
  return def->getBlock() == at->getBlock() && def->isBeforeInBlock(at);
}

/// Whether `v` is a weight lookup (helix.weight, or the layerWeight /
/// weight call RankPrograms turned it into, behind its cast) of values
/// available at `at`; if so, the ops to move before `at`, operands first.
static bool lookupMovable(Value v, Operation *at,
                          SmallVectorImpl<Operation *> &chain, int depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 2 || def->getBlock() != at->getBlock() ||
      def->getNumRegions() != 0)
    return false;
  auto call = dyn_cast<emitc::CallOpaqueOp>(def);
  if (!isa<WeightOp, UnrealizedConversionCastOp>(def) &&
      !(call &&
        (call.getCallee() == "helix::rt::cg::layerWeight" ||
         call.getCallee() == "helix::rt::cg::weight" ||
         call.getCallee() == "layerWeight" || call.getCallee() == "weight")))
    return false;
  for (Value o : def->getOperands())
    if (!availableAt(o, at) && !lookupMovable(o, at, chain, depth + 1))
      return false;
  chain.push_back(def);
  return true;
}

/// The norm that reads `add`'s sum and can take it from one fused kernel:
/// the first helix.norm_rows on the result whose weight is available where the
/// add is, or is looked up from values that are (`lookup`: the ops to
/// move before the add).
static NormRowsOp fusibleNorm(AddOp add, SmallVectorImpl<Operation *> &lookup) {
  for (Operation *user : add.getResult().getUsers()) {
    auto norm = dyn_cast<NormRowsOp>(user);
    if (!norm || norm.getInput() != add.getResult() ||
        norm->getBlock() != add->getBlock())
      continue;
    lookup.clear();
    Value w = norm.getWeight();
    if (availableAt(w, add) || lookupMovable(w, add, lookup))
      return norm;
  }
  lookup.clear();
  return {};
}

/// helix.add; where a helix.norm_rows reads the sum, the add and that norm in
/// one call (the residual add + RMSNorm kernel), the norm replaced by its
/// result.
struct AddLowering : HelixPattern<AddOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(AddOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Type t = tensorType(getContext());
    SmallVector<Operation *> lookup;
    if (NormRowsOp norm = fusibleNorm(op, lookup)) {
      for (Operation *l : lookup)
        rewriter.moveOpBefore(l, op);
      auto call = Call(rewriter, op.getLoc(), "addNorm")
                      .operand(contextOf(op))
                      .operand(a.getLhs())
                      .operand(a.getRhs())
                      .operand(rewriter.getRemappedValue(norm.getWeight()))
                      .f64(norm.getEps().convertToDouble())
                      .create({t, t});
      rewriter.replaceOp(op, call.getResult(0));
      rewriter.replaceOp(norm, call.getResult(1));
      return success();
    }
    Value r = Call(rewriter, op.getLoc(), "add")
                  .operand(contextOf(op))
                  .operand(a.getLhs())
                  .operand(a.getRhs())
                  .create1(t);
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct GroupSumLowering : HelixPattern<GroupSumOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(GroupSumOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = Call(rewriter, op.getLoc(), "groupSum")
                  .operand(contextOf(op))
                  .operand(a.getInput())
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct GatedMLPLowering : HelixPattern<GatedMLPOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(GatedMLPOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    Value r = Call(rewriter, op.getLoc(), "gatedMlp")
                  .operand(contextOf(op))
                  .operand(a.getInput())
                  .operand(a.getWGate())
                  .operand(a.getWUp())
                  .operand(a.getWDown())
                  .optional(a.getBGate())
                  .optional(a.getBUp())
                  .optional(a.getBDown())
                  .str(op.getActivation())
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// Router semantics the IR leaves to the model type: gpt-oss's router bias
/// is added to the logits, DeepSeek's is a selection-only score
/// correction; DeepSeek-V3 (noaux_tc) ranks groups by the sum of their top
/// two scores, DeepSeek-V2 routes greedily (its default topk_method).
struct MoERouterLowering : HelixPattern<MoERouterOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(MoERouterOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    MoEConfigAttr c = op.getConfig();
    StringRef type = facts.modelType;
    bool grouped = ::helix::routesAsDeepSeekV3(type.str()) && c.getNGroup() > 1;
    MLIRContext *ctx = getContext();
    auto call = Call(rewriter, op.getLoc(), "moeRouter")
                    .operand(contextOf(op))
                    .operand(a.getInput())
                    .operand(a.getWeight())
                    .optional(a.getBias())
                    .boolean(type == "gpt_oss")
                    .boolean(c.getScoring() == ScoringFunc::sigmoid)
                    .i64(c.getTopK())
                    .i64(c.getNGroup())
                    .i64(c.getTopkGroup())
                    .str(grouped ? "top2sum" : "")
                    .boolean(c.getNormTopkProb())
                    .f64(c.getRoutedScaling().convertToDouble())
                    .create({tensorType(ctx), tensorType(ctx)});
    rewriter.replaceOp(op, call.getResults());
    return success();
  }
};

struct MoEExpertsLowering : HelixPattern<MoEExpertsOp> {
  using HelixPattern::HelixPattern;
  LogicalResult
  matchAndRewrite(MoEExpertsOp op, OpAdaptor a,
                  ConversionPatternRewriter &rewriter) const override {
    bool fused = op.getFusedGateUp();
    ValueRange w = a.getExpertWeights(), bias = a.getExpertBiases(),
               shared = a.getSharedWeights();
    auto at = [](ValueRange r, size_t i) {
      return i < r.size() ? r[i] : Value();
    };
    if (w.size() != (fused ? 2u : 3u) ||
        (!shared.empty() && shared.size() != 3 && shared.size() != 4))
      return op.emitOpError("convert-helix-to-emitc: unexpected expert weight "
                            "operands"),
             failure();
    Value gate = w[0], up = fused ? Value() : w[1], down = w[fused ? 1 : 2];
    // Biases: gate/up (or fused), then down; the down bias only on the
    // rank that adds it.
    Value gateBias, upBias, downBias;
    if (fused) {
      gateBias = at(bias, 0);
      downBias = at(bias, 1);
    } else {
      gateBias = at(bias, 0);
      upBias = at(bias, 1);
      downBias = at(bias, 2);
    }
    auto type = cast<RankedTensorType>(op.getType());
    // gpt-oss configs say hidden_act "silu"; its experts run the clamped
    // SwiGLU (swiglu_limit 7, the released models' value).
    StringRef act = facts.modelType == "gpt_oss"
                        ? StringRef("swiglu")
                        : op.getConfig().getActivation();
    Value r = Call(rewriter, op.getLoc(), "moeExperts")
                  .operand(contextOf(op))
                  .operand(a.getInput())
                  .operand(a.getWeights())
                  .operand(a.getIds())
                  .operand(gate)
                  .optional(up)
                  .operand(down)
                  .optional(gateBias)
                  .optional(upBias)
                  .optional(downBias)
                  .optional(at(shared, 0))
                  .optional(at(shared, 1))
                  .optional(at(shared, 2))
                  .optional(at(shared, 3))
                  .indexOr0(a.getExpertOffset())
                  .str(act)
                  .boolean(fused)
                  .boolean(type.getRank() == 3)
                  .create1(tensorType(getContext()));
    rewriter.replaceOp(op, r);
    return success();
  }
};

} // namespace

void populateComputePatterns(RewritePatternSet &patterns,
                             const TypeConverter &converter,
                             const ModuleFacts &facts) {
  patterns.add<EmbedRowsLowering, NormLowering, MatmulLowering, AddLowering,
               GroupSumLowering, GatedMLPLowering, MoERouterLowering,
               MoEExpertsLowering>(converter, patterns.getContext(), facts);
}

} // namespace helix::emitc_codegen
