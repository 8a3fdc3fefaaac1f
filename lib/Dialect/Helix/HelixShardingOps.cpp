//===- HelixShardingOps.cpp - sharded decode ops, types and attributes ----===//
//
// Verifiers of the ops the sharding passes produce, the #helix.dist syntax,
// and the distribution rules of the global-view collective. Shapes are
// checked the same way in global view (logical shapes) and rank IR (local
// shapes): the verifiers only relate an op's operand and result shapes.
//
//===----------------------------------------------------------------------===//

#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::helix;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
/// One expected dimension: a size, or kAny to accept whatever is there.
constexpr int64_t kAny = ShapedType::kDynamic;

std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") +
         (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return s + "]";
}

/// Checks that `value` is a ranked tensor of shape `expected` (kAny and
/// dynamic dims match anything).
LogicalResult expectShape(Operation *op, StringRef what, Value value,
                          ArrayRef<int64_t> expected) {
  auto type = cast<RankedTensorType>(value.getType());
  bool ok = type.getRank() == int64_t(expected.size());
  for (unsigned i = 0; ok && i < expected.size(); ++i)
    ok = expected[i] == kAny || type.isDynamicDim(i) ||
         type.getDimSize(i) == expected[i];
  if (ok)
    return success();
  SmallVector<int64_t> want(expected);
  return op->emitOpError() << what << " must have shape " << shapeText(want)
                           << ", got " << shapeText(type.getShape());
}

int64_t dim(Value v, unsigned i) {
  return cast<RankedTensorType>(v.getType()).getDimSize(i);
}

LogicalResult expectPresent(Operation *op, bool wanted, bool present,
                            StringRef what, StringRef why) {
  if (wanted == present)
    return success();
  return op->emitOpError() << what
                           << (wanted ? " are required " : " are not expected ")
                           << why;
}
} // namespace

//===----------------------------------------------------------------------===//
// DistAttr
//===----------------------------------------------------------------------===//

static ParseResult parseAxisList(AsmParser &parser,
                                 SmallVectorImpl<int16_t> &axes) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                        [&]() -> ParseResult {
                                          int16_t axis;
                                          if (parser.parseInteger(axis))
                                            return failure();
                                          axes.push_back(axis);
                                          return success();
                                        });
}

static void printAxisList(AsmPrinter &printer, ArrayRef<int16_t> axes) {
  printer << "[";
  llvm::interleaveComma(axes, printer);
  printer << "]";
}

/// The split lists as attributes, trailing empty dimensions dropped.
static SmallVector<DenseI16ArrayAttr>
splitAttrs(MLIRContext *ctx, ArrayRef<SmallVector<int16_t>> split) {
  size_t n = split.size();
  while (n > 0 && split[n - 1].empty())
    --n;
  SmallVector<DenseI16ArrayAttr> dims;
  for (size_t i = 0; i < n; ++i)
    dims.push_back(DenseI16ArrayAttr::get(ctx, split[i]));
  return dims;
}

Attribute DistAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  FlatSymbolRefAttr grid;
  SmallVector<SmallVector<int16_t>> split;
  SmallVector<int16_t> partial;
  int64_t stage = 0;
  if (parser.parseLess() || parser.parseAttribute(grid))
    return {};
  while (succeeded(parser.parseOptionalComma())) {
    if (succeeded(parser.parseOptionalKeyword("partial"))) {
      if (parser.parseEqual() || parseAxisList(parser, partial))
        return {};
    } else if (succeeded(parser.parseOptionalKeyword("stage"))) {
      if (parser.parseEqual() || parser.parseInteger(stage))
        return {};
    } else if (parser.parseCommaSeparatedList(
                   AsmParser::Delimiter::Square, [&]() -> ParseResult {
                     return parseAxisList(parser, split.emplace_back());
                   })) {
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  MLIRContext *ctx = parser.getContext();
  SmallVector<DenseI16ArrayAttr> dims = splitAttrs(ctx, split);
  return getChecked([&] { return parser.emitError(loc); }, ctx, grid,
                    ArrayRef<DenseI16ArrayAttr>(dims),
                    ArrayRef<int16_t>(partial), stage);
}

void DistAttr::print(AsmPrinter &printer) const {
  printer << "<" << getGrid();
  if (!getSplit().empty()) {
    printer << ", [";
    llvm::interleaveComma(getSplit(), printer, [&](DenseI16ArrayAttr axes) {
      printAxisList(printer, axes.asArrayRef());
    });
    printer << "]";
  }
  if (!getPartial().empty()) {
    printer << ", partial = ";
    printAxisList(printer, getPartial());
  }
  if (getStage() != 0)
    printer << ", stage = " << getStage();
  printer << ">";
}

LogicalResult DistAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               FlatSymbolRefAttr grid,
                               ArrayRef<DenseI16ArrayAttr> split,
                               ArrayRef<int16_t> partial, int64_t stage) {
  if (!grid)
    return emitError() << "#helix.dist needs a grid";
  if (stage < 0)
    return emitError() << "#helix.dist stage must not be negative";
  SmallVector<int16_t> seen;
  auto check = [&](int16_t axis) -> LogicalResult {
    if (axis < 0)
      return emitError() << "#helix.dist grid axis " << axis << " is negative";
    if (llvm::is_contained(seen, axis))
      return emitError() << "#helix.dist uses grid axis " << axis
                         << " more than once";
    seen.push_back(axis);
    return success();
  };
  for (DenseI16ArrayAttr axes : split)
    for (int16_t a : axes.asArrayRef())
      if (failed(check(a)))
        return failure();
  for (int16_t a : partial)
    if (failed(check(a)))
      return failure();
  return success();
}

ArrayRef<int16_t> DistAttr::getSplitAxes(unsigned dim) const {
  if (dim >= getSplit().size())
    return {};
  return getSplit()[dim].asArrayRef();
}

DistAttr DistAttr::getFromAxes(MLIRContext *ctx, FlatSymbolRefAttr grid,
                               ArrayRef<SmallVector<int16_t>> split,
                               ArrayRef<int16_t> partial, int64_t stage) {
  return get(ctx, grid, splitAttrs(ctx, split), partial, stage);
}

static SmallVector<SmallVector<int16_t>> splitLists(DistAttr d) {
  SmallVector<SmallVector<int16_t>> out;
  for (DenseI16ArrayAttr axes : d.getSplit())
    out.emplace_back(axes.asArrayRef());
  return out;
}

DistAttr DistAttr::withSplit(ArrayRef<SmallVector<int16_t>> split) const {
  return getFromAxes(getContext(), getGrid(), split, getPartial(), getStage());
}
DistAttr DistAttr::withPartial(ArrayRef<int16_t> partial) const {
  return getFromAxes(getContext(), getGrid(), splitLists(*this), partial,
                     getStage());
}
DistAttr DistAttr::withStage(int64_t stage) const {
  return getFromAxes(getContext(), getGrid(), splitLists(*this), getPartial(),
                     stage);
}

//===----------------------------------------------------------------------===//
// KVPlacementAttr, KVShardType
//===----------------------------------------------------------------------===//

LogicalResult
KVPlacementAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t block, int64_t kvp, int64_t capacity,
                        int64_t window) {
  if (block <= 0 || kvp <= 0 || capacity <= 0)
    return emitError() << "kv_placement 'block', 'kvp' and 'capacity' must be "
                          "positive, got "
                       << block << ", " << kvp << ", " << capacity;
  if (capacity % block != 0)
    return emitError() << "kv_placement capacity (" << capacity
                       << ") must be a whole number of " << block
                       << "-token blocks";
  if (window < 0)
    return emitError() << "kv_placement 'window' must not be negative";
  return success();
}

LogicalResult KVShardType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t rows, int64_t tokens, int64_t heads,
                                  int64_t keyDim, int64_t valueDim,
                                  Type element, bool latent, int64_t window) {
  if (rows <= 0 || tokens <= 0 || heads <= 0 || keyDim <= 0 || valueDim <= 0)
    return emitError() << "kv_shard sizes must be positive";
  if (!isa<FloatType>(element))
    return emitError() << "kv_shard 'element' must be a float type, got "
                       << element;
  if (latent && (heads != 1 || valueDim > keyDim))
    return emitError() << "a latent kv_shard has one head whose values are a "
                          "prefix of its keys";
  if (window < 0)
    return emitError() << "kv_shard 'window' must not be negative";
  return success();
}

LogicalResult
StateShardType::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t rows, int64_t values) {
  if (rows <= 0 || values <= 0)
    return emitError() << "state_shard rows and values must be positive";
  return success();
}

/// Values of one request's Gated DeltaNet state on a rank holding `hk` key
/// heads and `hv` value heads: the delta-rule states, then the
/// convolution's last conv_kernel - 1 inputs of its q, k and v channels.
int64_t mlir::helix::gdnStateValues(LinearAttentionConfigAttr c, int64_t hk,
                                    int64_t hv) {
  int64_t channels = 2 * hk * c.getKeyHeadDim() + hv * c.getValueHeadDim();
  return hv * c.getKeyHeadDim() * c.getValueHeadDim() +
         channels * (c.getConvKernel() - 1);
}

LogicalResult IndexCandidatesOp::verify() {
  IndexerConfigAttr c = getConfig();
  int64_t b = dim(getInput(), 0), h = dim(getInput(), 1);
  int64_t nh = c.getHeads(), d = c.getHeadDim(), ql = dim(getWqA(), 0);
  if (c.getReusesPrevious())
    return emitOpError() << "a layer that reuses the previous layer's "
                            "selection has no indexer of its own";
  if (c.getRopeDim() < 0 || c.getRopeDim() > d || c.getRopeDim() % 2 != 0)
    return emitOpError() << "rope_dim " << c.getRopeDim()
                         << " must be an even number of at most head_dim " << d;
  if (failed(expectShape(*this, "positions", getPositions(), {b})) ||
      failed(expectShape(*this, "wq_a", getWqA(), {ql, h})) ||
      failed(expectShape(*this, "q_norm", getQNorm(), {ql})) ||
      failed(expectShape(*this, "wq_b", getWqB(), {nh, d, ql})) ||
      failed(expectShape(*this, "wk", getWk(), {d, h})) ||
      failed(expectShape(*this, "k_norm", getKNorm(), {d})) ||
      failed(expectShape(*this, "k_norm_bias", getKNormBias(), {d})) ||
      failed(expectShape(*this, "w_proj", getWProj(), {nh, h})) ||
      failed(
          expectShape(*this, "result", getResult(), {kAny, b, c.getTopK(), 2})))
    return failure();
  if (bool(getSlots()) != bool(getPlacement()))
    return emitOpError() << "takes kv(slots, spans) with its placement";
  Type cache = getCache().getType();
  if (auto whole = dyn_cast<IndexCacheType>(cache)) {
    if (whole.getHeadDim() != d)
      return emitOpError() << "index cache of head_dim " << whole.getHeadDim()
                           << " for an indexer of head_dim " << d;
    return success();
  }
  auto shard = dyn_cast<StateShardType>(cache);
  if (!shard)
    return emitOpError() << "cache must be a !helix.index_cache or a "
                            "!helix.state_shard, got "
                         << cache;
  if (getPlacement() &&
      shard.getValues() != getPlacement()->getCapacity() * (d + 1))
    return emitOpError() << "index-key shard rows of " << shard.getValues()
                         << " values do not hold "
                         << getPlacement()->getCapacity() << " keys of " << d
                         << " values and their positions";
  return success();
}

LogicalResult OutputGateOp::verify() {
  int64_t b = dim(getAttention(), 0), h = dim(getWGate(), 0),
          d = dim(getWGate(), 1);
  if (failed(expectShape(*this, "attention", getAttention(), {b, h * d})) ||
      failed(expectShape(*this, "input", getInput(), {b, dim(getWGate(), 2)})))
    return failure();
  return expectShape(*this, "result", getResult(), {b, h * d});
}

LogicalResult TopkMergeOp::verify() {
  int64_t b = dim(getCandidates(), 1), k = getTopK();
  if (k < 1 || dim(getCandidates(), 2) != k || dim(getCandidates(), 3) != 2)
    return emitOpError() << "candidates must be [P, B, top_k, 2] with top_k = "
                         << k;
  return expectShape(*this, "selected", getSelected(), {b, k});
}

LogicalResult GDNStepOp::verify() {
  LinearAttentionConfigAttr c = getConfig();
  if (c.getVariant() != LinearAttnVariant::gated_deltanet)
    return emitOpError() << "takes a Gated DeltaNet config, got "
                         << stringifyLinearAttnVariant(c.getVariant());
  int64_t b = dim(getInput(), 0), h = dim(getInput(), 1);
  int64_t dk = c.getKeyHeadDim(), dv = c.getValueHeadDim(),
          k = c.getConvKernel();
  int64_t r = c.getValueHeads() / c.getKeyHeads();
  int64_t hk = dim(getWqkvz(), 0), hv = hk * r;
  if (failed(expectShape(*this, "positions", getPositions(), {b})) ||
      failed(expectShape(*this, "wqkvz", getWqkvz(),
                         {hk, 2 * dk + 2 * r * dv, h})) ||
      failed(expectShape(*this, "wba", getWba(), {hk, 2 * r, h})) ||
      failed(expectShape(*this, "conv_q", getConvQ(), {hk * dk, k})) ||
      failed(expectShape(*this, "conv_k", getConvK(), {hk * dk, k})) ||
      failed(expectShape(*this, "conv_v", getConvV(), {hv * dv, k})) ||
      failed(expectShape(*this, "a_log", getALog(), {hv})) ||
      failed(expectShape(*this, "dt_bias", getDtBias(), {hv})) ||
      failed(expectShape(*this, "norm", getNorm(), {dv})) ||
      failed(expectShape(*this, "result", getResult(), {b, hv * dv})))
    return failure();
  Type state = getState().getType();
  if (auto shard = dyn_cast<StateShardType>(state)) {
    if (shard.getValues() != gdnStateValues(c, hk, hv))
      return emitOpError() << "state rows of " << shard.getValues()
                           << " values do not hold the states and "
                              "convolution inputs of "
                           << hk << " key and " << hv << " value heads ("
                           << gdnStateValues(c, hk, hv) << ")";
    return success();
  }
  auto whole = dyn_cast<RecurrentStateType>(state);
  if (!whole)
    return emitOpError() << "state must be a !helix.recurrent_state or a "
                            "!helix.state_shard, got "
                         << state;
  if (whole.getHeads() != c.getValueHeads() || whole.getRows() != dk ||
      whole.getCols() != dv || whole.getConvKernel() != k)
    return emitOpError() << "state " << state
                         << " is not the layer's (value heads x key dim x "
                            "value dim, conv_kernel taps)";
  return success();
}

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

SmallVector<int64_t> WeightOp::getViewShape() {
  return SmallVector<int64_t>(getView() ? *getView() : getShape());
}

SmallVector<int64_t> WeightOp::getSliceOffsets() {
  if (getOffsets())
    return SmallVector<int64_t>(*getOffsets());
  return SmallVector<int64_t>(getViewShape().size(), 0);
}

std::string WeightOp::getNameOfLayer(int64_t layer) {
  std::string name = getName().str();
  size_t at = name.find("{layer}");
  if (at != std::string::npos)
    name.replace(at, strlen("{layer}"), std::to_string(layer));
  return name;
}

SmallVector<OpFoldResult> WeightOp::getMixedSliceOffsets() {
  Builder b(getContext());
  return getMixedValues(getSliceOffsets(), getDynamicOffsets(), b);
}

LogicalResult WeightOp::verify() {
  if (getName().contains("{layer}") != bool(getLayer()))
    return emitOpError() << "a name with {layer} takes a layer(..) operand, "
                            "and only such a name";
  SmallVector<int64_t> view = getViewShape();
  auto type = cast<RankedTensorType>(getType());
  if (!type.hasStaticShape())
    return emitOpError() << "weights have static shapes";
  if (type.getRank() != int64_t(view.size()))
    return emitOpError() << "result rank " << type.getRank()
                         << " differs from the view's " << view.size();
  int64_t stored = 1, viewed = 1;
  for (int64_t d : getShape())
    stored *= d;
  bool perExpert = getName().contains("{expert}");
  for (auto [i, d] : llvm::enumerate(view))
    if (!(perExpert && i == 0))
      viewed *= d;
  if (llvm::any_of(getShape(), [](int64_t d) { return d <= 0; }) ||
      llvm::any_of(view, [](int64_t d) { return d <= 0; }))
    return emitOpError() << "checkpoint and view shapes must be positive";
  if (stored != viewed)
    return emitOpError() << "view " << shapeText(view)
                         << (perExpert ? " (one expert per leading row)" : "")
                         << " does not hold the " << stored
                         << " values of checkpoint shape "
                         << shapeText(getShape());
  SmallVector<int64_t> offsets = getSliceOffsets();
  if (offsets.size() != view.size())
    return emitOpError() << "needs one offset per view dimension";
  if (failed(verifyListOfOperandsOrIntegers(*this, "offset", view.size(),
                                            offsets, getDynamicOffsets())))
    return failure();
  for (auto [i, o] : llvm::enumerate(offsets))
    if (!ShapedType::isDynamic(o) &&
        (o < 0 || o + type.getDimSize(i) > view[i]))
      return emitOpError() << "slice [" << o << ", " << o + type.getDimSize(i)
                           << ") of dimension " << i << " is outside the view "
                           << shapeText(view);
  return success();
}

//===----------------------------------------------------------------------===//
// Element-wise pieces
//===----------------------------------------------------------------------===//

LogicalResult EmbedRowsOp::verify() {
  return expectShape(*this, "result", getResult(),
                     {dim(getTokens(), 0), dim(getTable(), 1)});
}

LogicalResult NormRowsOp::verify() {
  if (!(getEps().convertToDouble() > 0))
    return emitOpError() << "'eps' must be positive";
  return expectShape(*this, "weight", getWeight(), {dim(getInput(), 1)});
}

LogicalResult MatmulOp::verify() {
  Value x = getInput(), w = getWeight();
  if (failed(expectShape(*this, "weight", w, {kAny, dim(x, 1)})) ||
      failed(expectShape(*this, "result", getResult(), {dim(x, 0), dim(w, 0)})))
    return failure();
  if (getBias() && failed(expectShape(*this, "bias", getBias(), {dim(w, 0)})))
    return failure();
  return success();
}

LogicalResult GroupSumOp::verify() {
  return expectShape(*this, "result", getResult(),
                     {dim(getInput(), 1), dim(getInput(), 2)});
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult QKVOp::verify() {
  AttentionConfigAttr c = getConfig();
  if (c.isMLA())
    return emitOpError() << "mla uses helix.mla_qkv";
  int64_t b = dim(getInput(), 0), h = dim(getInput(), 1);
  int64_t hq = dim(getWq(), 0), kv = dim(getWk(), 0);
  int64_t d = c.getHeadDim(), dv = c.getVHeadDim();
  if (failed(expectShape(*this, "positions", getPositions(), {b})) ||
      failed(expectShape(*this, "wq", getWq(), {hq, d, h})) ||
      failed(expectShape(*this, "wk", getWk(), {kv, d, h})) ||
      failed(expectShape(*this, "wv", getWv(), {kv, dv, h})) ||
      failed(expectShape(*this, "q", getQ(), {b, hq, d})) ||
      failed(expectShape(*this, "k", getK(), {b, kv, d})) ||
      failed(expectShape(*this, "v", getV(), {b, kv, dv})))
    return failure();
  if (hq % kv != 0)
    return emitOpError() << "the " << hq << " query heads must be a multiple "
                         << "of the " << kv << " KV heads";
  if (failed(expectPresent(*this, c.getQkvBias(), bool(getBq()), "q/k/v biases",
                           "by the attention config")) ||
      failed(expectPresent(*this, c.getQkNorm(), bool(getQNorm()),
                           "q/k norm weights", "by the attention config")))
    return failure();
  if (getBq() && (failed(expectShape(*this, "bq", getBq(), {hq, d})) ||
                  failed(expectShape(*this, "bk", getBk(), {kv, d})) ||
                  failed(expectShape(*this, "bv", getBv(), {kv, dv}))))
    return failure();
  if (getQNorm() && (failed(expectShape(*this, "q_norm", getQNorm(), {d})) ||
                     failed(expectShape(*this, "k_norm", getKNorm(), {d}))))
    return failure();
  return success();
}

LogicalResult MLAQKVOp::verify() {
  AttentionConfigAttr c = getConfig();
  if (!c.isMLA())
    return emitOpError() << "needs an mla attention config";
  int64_t b = dim(getInput(), 0), h = dim(getInput(), 1);
  int64_t hq = dim(getWqB(), 0), lora = c.getKvLoraRank(),
          rope = c.getRopeDim(), nope = c.getHeadDim() - rope;
  int64_t qIn = c.getQLoraRank() > 0 ? c.getQLoraRank() : h;
  if (failed(expectPresent(*this, c.getQLoraRank() > 0, bool(getWqA()),
                           "q LoRA weights", "exactly when q_lora_rank > 0")))
    return failure();
  if (getWqA() &&
      (failed(expectShape(*this, "wq_a", getWqA(), {c.getQLoraRank(), h})) ||
       failed(expectShape(*this, "q_norm", getQNorm(), {c.getQLoraRank()}))))
    return failure();
  if (failed(expectShape(*this, "positions", getPositions(), {b})) ||
      failed(expectShape(*this, "wq_b", getWqB(), {hq, nope + rope, qIn})) ||
      failed(expectShape(*this, "wkv_a", getWkvA(), {lora + rope, h})) ||
      failed(expectShape(*this, "kv_norm", getKvNorm(), {lora})) ||
      failed(expectShape(*this, "wkv_b", getWkvB(),
                         {hq, nope + c.getVHeadDim(), lora})) ||
      failed(expectShape(*this, "q", getQ(), {b, hq, lora + rope})) ||
      failed(expectShape(*this, "latent", getLatent(), {b, 1, lora + rope})))
    return failure();
  return success();
}

/// Checks a KV cache operand (global !helix.kv_cache or a rank's
/// !helix.kv_shard) against the attention config and local KV heads.
static LogicalResult verifyCacheOperand(AttentionPartialOp op,
                                        int64_t kvHeads) {
  AttentionConfigAttr c = op.getConfig();
  Type type = op.getCache().getType();
  int64_t keyDim =
      c.isMLA() ? c.getKvLoraRank() + c.getRopeDim() : c.getHeadDim();
  int64_t valueDim = c.isMLA() ? c.getKvLoraRank() : c.getVHeadDim();
  if (auto cache = dyn_cast<KVCacheType>(type)) {
    if (cache.getLatent() != c.isMLA() || cache.getKeyDim() != keyDim ||
        cache.getValueDim() != valueDim || cache.getWindow() != c.getWindow() ||
        (!c.isMLA() && cache.getHeads() != c.getKvHeads()))
      return op.emitOpError() << "KV cache " << cache
                              << " does not match the attention config " << c;
    return success();
  }
  auto shard = dyn_cast<KVShardType>(type);
  if (!shard)
    return op.emitOpError() << "cache must be a !helix.kv_cache or a "
                               "!helix.kv_shard, got "
                            << type;
  if (shard.getLatent() != c.isMLA() || shard.getKeyDim() != keyDim ||
      shard.getValueDim() != valueDim || shard.getWindow() != c.getWindow() ||
      shard.getHeads() != kvHeads)
    return op.emitOpError() << "KV shard " << shard << " does not match the "
                            << kvHeads << " local KV heads of config " << c;
  if (!op.getPlacement() || !op.getSlots())
    return op.emitOpError() << "a KV shard needs its placement and kv(slots, "
                               "spans) (run helix-kv-placement)";
  if (shard.getTokens() != op.getPlacement()->getCapacity())
    return op.emitOpError() << "KV shard holds " << shard.getTokens()
                            << " tokens per request but the placement's "
                               "capacity is "
                            << op.getPlacement()->getCapacity();
  int64_t q = op.getQueries();
  int64_t b = dim(op.getQ(), 0), offset = op.getBatchOffset() / q;
  if (!ShapedType::isDynamic(b) && offset + b / q > shard.getRows())
    return op.emitOpError()
           << "requests [" << offset << ", " << offset + b / q
           << ") are outside the KV shard's " << shard.getRows() << " rows";
  return success();
}

LogicalResult AttentionPartialOp::verify() {
  AttentionConfigAttr c = getConfig();
  int64_t b = dim(getQ(), 0), hq = dim(getQ(), 1), kv = dim(getK(), 1);
  int64_t s = getHeadSplit(), dv = c.getVHeadDim();
  if (c.isMLA()) {
    int64_t lr = c.getKvLoraRank() + c.getRopeDim();
    if (getV() || !getWUv())
      return emitOpError() << "mla takes q, the latent and w_uv, no v";
    if (failed(expectShape(*this, "q", getQ(), {b, hq, lr})) ||
        failed(expectShape(*this, "latent", getK(), {b, 1, lr})) ||
        failed(expectShape(
            *this, "w_uv", getWUv(),
            {hq, c.getHeadDim() - c.getRopeDim() + dv, c.getKvLoraRank()})))
      return failure();
  } else {
    if (!getV() || getWUv())
      return emitOpError() << "takes q, k and v (w_uv is for mla)";
    if (failed(expectShape(*this, "q", getQ(), {b, hq, c.getHeadDim()})) ||
        failed(expectShape(*this, "k", getK(), {b, kv, c.getHeadDim()})) ||
        failed(expectShape(*this, "v", getV(), {b, kv, dv})))
      return failure();
    if (hq % kv != 0)
      return emitOpError() << "the " << hq << " query heads must be a "
                           << "multiple of the " << kv << " KV heads";
  }
  if (s < 1 || dv % s != 0)
    return emitOpError() << "head_split (" << s << ") must divide v_head_dim ("
                         << dv << ")";
  if (int64_t(getBatchOffset()) < 0 || int64_t(getCacheRows()) < 1)
    return emitOpError() << "batch_offset must not be negative and cache_rows "
                            "must be positive";
  if (getSelected()) {
    if (!c.isMLA() || getQueries() != 1)
      return emitOpError() << "selected tokens are DeepSeek sparse attention: "
                              "MLA, one query per request";
    if (dim(getSelected(), 0) != b && !ShapedType::isDynamic(b))
      return emitOpError() << "selected has " << dim(getSelected(), 0)
                           << " rows for " << b << " requests";
  }
  if (getKvpRank() && !getSelected())
    return emitOpError() << "kvp_rank is for sparse attention (selected)";
  int64_t q = getQueries();
  if (q < 1 || q > ::helix::kMaxMTPTokens + 1)
    return emitOpError() << "queries (" << q << ") must be in [1, "
                         << ::helix::kMaxMTPTokens + 1 << "]";
  if (int64_t(getBatchOffset()) % q != 0 ||
      (!ShapedType::isDynamic(b) && b % q != 0))
    return emitOpError() << "the " << b << " query rows from batch_offset "
                         << getBatchOffset() << " are not whole requests of "
                         << q << " queries";
  int64_t parts = dim(getResult(), 0);
  if (failed(expectShape(*this, "result", getResult(),
                         {parts, b, hq * s, dv / s + 1})))
    return failure();
  if (bool(getSlots()) != bool(getPlacement()))
    return emitOpError() << "kv(slots, spans) and placement go together";
  if (getSlots() &&
      (failed(expectShape(*this, "slots", getSlots(), {parts, b})) ||
       failed(expectShape(*this, "spans", getSpans(), {parts, b, 2}))))
    return failure();
  if (getPlacement() && getPlacement()->getWindow() != c.getWindow())
    return emitOpError() << "placement window differs from the attention's";
  return verifyCacheOperand(*this, c.isMLA() ? 1 : kv);
}

LogicalResult LSECombineOp::verify() {
  Value p = getPartials();
  int64_t d = dim(p, 3);
  if (!ShapedType::isDynamic(d) && d < 2)
    return emitOpError() << "partials need at least one value and the LSE";
  int64_t width = ShapedType::isDynamic(dim(p, 2)) || ShapedType::isDynamic(d)
                      ? kAny
                      : dim(p, 2) * (d - 1);
  return expectShape(*this, "result", getResult(), {dim(p, 1), width});
}

LogicalResult KVSlotsOp::verify() {
  int64_t parts = dim(getSlots(), 0), b = dim(getPositions(), 0);
  std::optional<int64_t> first =
      getRankOffset() ? getConstantIntValue(getRankOffset()) : 0;
  if (!ShapedType::isDynamic(parts) &&
      (parts > getPlacement().getKvp() ||
       (first && (*first < 0 || *first + parts > getPlacement().getKvp()))))
    return emitOpError() << "ranks [" << (first ? *first : 0) << ", "
                         << (first ? *first : 0) + parts << ") are outside the "
                         << getPlacement().getKvp() << " KVP ranks";
  if (failed(expectShape(*this, "slots", getSlots(), {parts, b})) ||
      failed(expectShape(*this, "spans", getSpans(), {parts, b, 2})))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// FFN and MoE
//===----------------------------------------------------------------------===//

LogicalResult GatedMLPOp::verify() {
  int64_t h = dim(getInput(), 1), i = dim(getWGate(), 0);
  if (failed(expectShape(*this, "w_gate", getWGate(), {i, h})) ||
      failed(expectShape(*this, "w_up", getWUp(), {i, h})) ||
      failed(expectShape(*this, "w_down", getWDown(), {h, i})) ||
      failed(
          expectShape(*this, "result", getResult(), {dim(getInput(), 0), h})))
    return failure();
  if (bool(getBGate()) != bool(getBUp()))
    return emitOpError() << "gate and up biases go together";
  if (getBGate() && (failed(expectShape(*this, "b_gate", getBGate(), {i})) ||
                     failed(expectShape(*this, "b_up", getBUp(), {i}))))
    return failure();
  if (getBDown() && failed(expectShape(*this, "b_down", getBDown(), {h})))
    return failure();
  return success();
}

LogicalResult MoERouterOp::verify() {
  MoEConfigAttr c = getConfig();
  int64_t b = dim(getInput(), 0), k = c.getTopK();
  if (failed(expectShape(*this, "weight", getWeight(),
                         {c.getExperts(), dim(getInput(), 1)})) ||
      failed(expectShape(*this, "weights", getWeights(), {b, k})) ||
      failed(expectShape(*this, "ids", getIds(), {b, k})))
    return failure();
  if (getBias() &&
      failed(expectShape(*this, "bias", getBias(), {c.getExperts()})))
    return failure();
  return success();
}

LogicalResult MoEExpertsOp::verify() {
  MoEConfigAttr c = getConfig();
  int64_t b = dim(getInput(), 0), h = dim(getInput(), 1), k = c.getTopK();
  if (failed(expectShape(*this, "weights", getWeights(), {b, k})) ||
      failed(expectShape(*this, "ids", getIds(), {b, k})))
    return failure();
  bool fused = getFusedGateUp();
  ValueRange w = getExpertWeights(), bias = getExpertBiases();
  if (w.size() != (fused ? 2u : 3u))
    return emitOpError() << "expects " << (fused ? "2" : "3")
                         << " stacked expert weights"
                         << (fused ? " (gate_up, down)" : " (gate, up, down)");
  int64_t e = dim(w[0], 0);
  int64_t i = fused ? dim(w[1], 1) : dim(w[0], 1);
  if (fused ? failed(expectShape(*this, "gate_up", w[0], {e, h, 2 * i})) ||
                  failed(expectShape(*this, "down", w[1], {e, i, h}))
            : failed(expectShape(*this, "gate", w[0], {e, i, h})) ||
                  failed(expectShape(*this, "up", w[1], {e, i, h})) ||
                  failed(expectShape(*this, "down", w[2], {e, h, i})))
    return failure();
  if (failed(expectPresent(*this, c.getExpertBias(), !bias.empty(),
                           "expert biases", "by the MoE config")))
    return failure();
  if (!bias.empty() && bias.size() != w.size() && bias.size() != w.size() - 1)
    return emitOpError() << "expects one bias per expert weight (the down "
                            "bias may be left out)";
  if (!bias.empty()) {
    bool bad =
        fused ? failed(expectShape(*this, "gate_up bias", bias[0], {e, 2 * i}))
              : failed(expectShape(*this, "gate bias", bias[0], {e, i})) ||
                    failed(expectShape(*this, "up bias", bias[1], {e, i}));
    if (bad || (bias.size() == w.size() &&
                failed(expectShape(*this, "down bias", bias.back(), {e, h}))))
      return failure();
  }
  ValueRange sh = getSharedWeights();
  if (!sh.empty() && c.getSharedExperts() == 0)
    return emitOpError() << "the MoE config has no shared experts";
  if (!sh.empty()) {
    int64_t is = dim(sh[0], 0);
    bool gated = c.getSharedExpertGate();
    size_t want = gated ? 4 : 3;
    if (sh.size() != want)
      return emitOpError() << "expects " << want
                           << " shared-expert weights (gate, up, down"
                           << (gated ? ", and the sigmoid gate's [1, hidden]"
                                     : "")
                           << "), got " << sh.size();
    if (failed(expectShape(*this, "shared gate", sh[0], {is, h})) ||
        failed(expectShape(*this, "shared up", sh[1], {is, h})) ||
        failed(expectShape(*this, "shared down", sh[2], {h, is})) ||
        (gated &&
         failed(expectShape(*this, "shared expert gate", sh[3], {1, h}))))
      return failure();
  }
  std::optional<int64_t> known =
      getExpertOffset() ? getConstantIntValue(getExpertOffset()) : 0;
  int64_t first = known ? *known : 0;
  if (!ShapedType::isDynamic(e) &&
      (e > c.getExperts() || first < 0 || first + e > c.getExperts()))
    return emitOpError() << "experts [" << first << ", " << first + e
                         << ") are outside the " << c.getExperts()
                         << " experts";
  auto result = cast<RankedTensorType>(getResult().getType());
  if (result.getRank() == 2)
    return expectShape(*this, "result", getResult(), {b, h});
  if (result.getRank() == 3)
    return expectShape(*this, "result", getResult(), {kAny, b, h});
  return emitOpError() << "result must be [G, B, H] or [B, H]";
}

//===----------------------------------------------------------------------===//
// CollectiveOp
//===----------------------------------------------------------------------===//

namespace {
/// A distribution with every tensor dimension listed.
struct Dist {
  SmallVector<SmallVector<int16_t>> split;
  SmallVector<int16_t> partial;
  int64_t stage = -1; // -1: every stage (no encoding)
  FlatSymbolRefAttr grid;
};

Dist distOf(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  Dist d;
  d.split.resize(tensor.getRank());
  auto attr = dyn_cast_or_null<DistAttr>(tensor.getEncoding());
  if (!attr)
    return d;
  d.grid = attr.getGrid();
  d.stage = attr.getStage();
  for (unsigned i = 0; i < d.split.size(); ++i)
    d.split[i].assign(attr.getSplitAxes(i).begin(), attr.getSplitAxes(i).end());
  d.partial.assign(attr.getPartial().begin(), attr.getPartial().end());
  return d;
}

bool endsWith(ArrayRef<int16_t> list, ArrayRef<int16_t> suffix) {
  return list.size() >= suffix.size() &&
         list.take_back(suffix.size()) == suffix;
}

SmallVector<int16_t> without(ArrayRef<int16_t> list, ArrayRef<int16_t> drop) {
  SmallVector<int16_t> out;
  for (int16_t a : list)
    if (!llvm::is_contained(drop, a))
      out.push_back(a);
  return out;
}

bool sameSet(ArrayRef<int16_t> a, ArrayRef<int16_t> b) {
  SmallVector<int16_t> x(a), y(b);
  llvm::sort(x);
  llvm::sort(y);
  return x == y;
}

std::string axesText(ArrayRef<int16_t> axes) {
  std::string s = "[";
  for (auto [i, a] : llvm::enumerate(axes))
    s += (i ? ", " : "") + std::to_string(a);
  return s + "]";
}
} // namespace

/// The attributes each kind needs (and only those).
static LogicalResult verifyKindAttrs(CollectiveOp op) {
  CollectiveKind kind = op.getKind();
  struct Need {
    StringRef name;
    bool present;
    bool wanted;
  };
  Need needs[] = {
      {"split_axis", bool(op.getSplitAxis()),
       kind == CollectiveKind::all_to_all},
      {"concat_axis", bool(op.getConcatAxis()),
       kind == CollectiveKind::all_to_all},
      {"gather_axis", bool(op.getGatherAxis()),
       kind == CollectiveKind::all_gather},
      {"scatter_axis", bool(op.getScatterAxis()),
       kind == CollectiveKind::reduce_scatter},
      {"slice_axis", bool(op.getSliceAxis()),
       kind == CollectiveKind::all_slice},
      {"root", bool(op.getRoot()), kind == CollectiveKind::broadcast},
      {"source", bool(op.getSource()), kind == CollectiveKind::send_recv},
      {"destination", bool(op.getDestination()),
       kind == CollectiveKind::send_recv}};
  for (const Need &n : needs)
    if (n.present != n.wanted)
      return op.emitOpError()
             << stringifyCollectiveKind(kind)
             << (n.wanted ? " needs " : " takes no ") << "'" << n.name << "'";
  return success();
}

/// Checks that the result's distribution is what the collective makes of
/// the input's.
static LogicalResult verifyTransition(CollectiveOp op, const Dist &in,
                                      const Dist &out) {
  ArrayRef<int16_t> axes = op.getGridAxes();
  auto fail = [&](const Twine &why) {
    return op.emitOpError()
           << stringifyCollectiveKind(op.getKind()) << " over grid axes "
           << axesText(axes) << ": " << why;
  };
  if (op.getKind() == CollectiveKind::send_recv) {
    if (axes != ArrayRef<int16_t>{0})
      return fail("send_recv moves between pipeline stages: grid_axes = [0]");
    if (op.getSource()->size() != 1 || op.getDestination()->size() != 1)
      return fail("source and destination are one stage each");
    if (in.stage != (*op.getSource())[0] ||
        out.stage != (*op.getDestination())[0])
      return fail("the input must be on stage 'source' and the result on "
                  "stage 'destination'");
    if (in.split != out.split || in.partial != out.partial)
      return fail("the distribution within the stage must not change");
    return success();
  }
  // A tensor without encoding is on every stage.
  if (in.stage != out.stage && in.stage >= 0 && out.stage >= 0)
    return fail("input and result must be on the same pipeline stage");
  SmallVector<SmallVector<int16_t>> split = in.split;
  SmallVector<int16_t> partial = in.partial;
  auto axis = [&](std::optional<uint64_t> a) -> int64_t {
    return a ? int64_t(*a) : -1;
  };
  auto checkDim = [&](int64_t d, StringRef name) -> LogicalResult {
    if (d < 0 || d >= int64_t(split.size()))
      return fail("'" + name + "' is not a dimension of the operand");
    return success();
  };
  switch (op.getKind()) {
  case CollectiveKind::all_reduce:
  case CollectiveKind::reduce_scatter:
    for (int16_t a : axes)
      if (!llvm::is_contained(partial, a))
        return fail("the input is not partial over axis " + Twine(a));
    partial = without(partial, axes);
    if (op.getKind() == CollectiveKind::reduce_scatter) {
      int64_t d = axis(op.getScatterAxis());
      if (failed(checkDim(d, "scatter_axis")))
        return failure();
      split[d].append(axes.begin(), axes.end());
    }
    break;
  case CollectiveKind::all_gather: {
    int64_t d = axis(op.getGatherAxis());
    if (failed(checkDim(d, "gather_axis")))
      return failure();
    if (!endsWith(split[d], axes))
      return fail("the gathered dimension must be split over the grid axes "
                  "last");
    split[d].resize(split[d].size() - axes.size());
    break;
  }
  case CollectiveKind::all_slice: {
    int64_t d = axis(op.getSliceAxis());
    if (failed(checkDim(d, "slice_axis")))
      return failure();
    split[d].append(axes.begin(), axes.end());
    break;
  }
  case CollectiveKind::all_to_all: {
    int64_t s = axis(op.getSplitAxis()), c = axis(op.getConcatAxis());
    if (failed(checkDim(s, "split_axis")) || failed(checkDim(c, "concat_axis")))
      return failure();
    if (!endsWith(split[c], axes))
      return fail("the concatenated dimension must be split over the grid "
                  "axes last");
    split[c].resize(split[c].size() - axes.size());
    split[s].append(axes.begin(), axes.end());
    break;
  }
  case CollectiveKind::broadcast:
  case CollectiveKind::send_recv:
    break;
  }
  if (split != out.split || !sameSet(partial, out.partial))
    return fail("the result's distribution is not the input's after the "
                "collective");
  return success();
}

LogicalResult CollectiveOp::verify() {
  if (failed(verifyKindAttrs(*this)))
    return failure();
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getResult().getType());
  if (in.getShape() != out.getShape() ||
      in.getElementType() != out.getElementType())
    return emitOpError() << "is the identity on the logical (global-view) "
                            "value: shapes and element types must match";
  // (That the grid is a shard.grid with these axes: verifySymbolUses.)
  SmallVector<int16_t> seen;
  for (int16_t a : getGridAxes()) {
    if (a < 0 || llvm::is_contained(seen, a))
      return emitOpError() << "grid_axes " << axesText(getGridAxes())
                           << " must be distinct non-negative axes";
    seen.push_back(a);
  }
  Dist from = distOf(in), to = distOf(out);
  for (const Dist *d : {&from, &to})
    if (d->grid && d->grid != getGridAttr() &&
        !(d->split == SmallVector<SmallVector<int16_t>>(d->split.size()) &&
          d->partial.empty()))
      return emitOpError() << "operand and result must be distributed over "
                           << getGridAttr();
  return verifyTransition(*this, from, to);
}

//===----------------------------------------------------------------------===//
// Async start / wait
//===----------------------------------------------------------------------===//

LogicalResult AsyncStartOp::verify() {
  auto yield = cast<AsyncYieldOp>(getBody().front().getTerminator());
  Type value = getResult().getType().getValue();
  if (yield.getValues().size() != 1 ||
      yield.getValues().front().getType() != value)
    return emitOpError() << "must yield exactly one value of type " << value;
  return success();
}

LogicalResult AsyncWaitOp::verify() {
  if (getToken().getType().getValue() != getResult().getType())
    return emitOpError() << "result type must be the awaited "
                         << getToken().getType().getValue();
  return success();
}
