//===- HelixOps.cpp - helix operation verifiers ---------------------------===//

#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::helix;

#define GET_OP_CLASSES
#include "helix/Dialect/Helix/HelixOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shape helpers
//===----------------------------------------------------------------------===//

static bool dimsAgree(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      ", ");
  os << "]";
  return s;
}

/// Checks that `value` has shape `expected` (dynamic dims match anything).
static LogicalResult expectShape(Operation *op, StringRef what, Value value,
                                 ArrayRef<int64_t> expected) {
  auto type = cast<RankedTensorType>(value.getType());
  bool ok = type.getRank() == static_cast<int64_t>(expected.size());
  for (unsigned i = 0; ok && i < expected.size(); ++i)
    ok = dimsAgree(type.getDimSize(i), expected[i]);
  if (ok)
    return success();
  return op->emitOpError() << what << " must have shape "
                           << shapeString(expected) << ", got "
                           << shapeString(type.getShape());
}

static int64_t batchOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getDimSize(0);
}
static int64_t featuresOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getDimSize(1);
}

/// The attention layout must split heads evenly: TPA divides the query heads
/// and either divides the KV heads (no duplication) or is a multiple of them
/// (each KV head duplicated over TPA / K ranks, as plain TP does).
static LogicalResult verifyAttentionLayout(Operation *op,
                                           AttentionConfigAttr config,
                                           std::optional<LayoutAttr> layout) {
  if (!layout)
    return success();
  int64_t tpa = layout->getTpa(), k = config.getKvHeads();
  if (config.getHeads() % tpa != 0)
    return op->emitOpError()
           << "tpa (" << tpa << ") must divide the query heads ("
           << config.getHeads() << ")";
  if (tpa <= k ? k % tpa != 0 : tpa % k != 0)
    return op->emitOpError()
           << "tpa (" << tpa << ") must divide the KV heads (" << k
           << "), or be a multiple of them when KV heads are duplicated";
  return success();
}

/// Checkpoint names of the model-level ops (weights and prefixes) are
/// tensor names: "{layer}" and "{expert}" are helix.weight's placeholders
/// (the layer operand of layer functions, one tensor per expert), which the
/// passes would read into the names they derive.
static LogicalResult verifyCheckpointName(Operation *op, StringRef what,
                                          StringRef name) {
  for (StringRef placeholder : {"{layer}", "{expert}"})
    if (name.contains(placeholder))
      return op->emitOpError()
             << "'" << what << "' must not contain " << placeholder
             << " (a placeholder of helix.weight), got \"" << name << "\"";
  return success();
}

//===----------------------------------------------------------------------===//
// EmbedOp
//===----------------------------------------------------------------------===//

LogicalResult EmbedOp::verify() {
  // I64Attr getters return uint64_t: read sizes signed, or -96 passes.
  if (getVocabAttr().getInt() <= 0)
    return emitOpError() << "'vocab' must be positive, got "
                         << getVocabAttr().getInt();
  if (failed(verifyCheckpointName(*this, "weight", getWeight())))
    return failure();
  return expectShape(*this, "result", getResult(),
                     {batchOf(getTokens()), featuresOf(getResult())});
}

//===----------------------------------------------------------------------===//
// RMSNormOp
//===----------------------------------------------------------------------===//

LogicalResult RMSNormOp::verify() {
  if (!(getEps().convertToDouble() > 0))
    return emitOpError() << "'eps' must be positive";
  return verifyCheckpointName(*this, "weight", getWeight());
}

//===----------------------------------------------------------------------===//
// QKVProjOp
//===----------------------------------------------------------------------===//

/// Shapes of (q, k, v) for one decode step of `batch` tokens. For MLA, v is
/// empty (the latent serves as both keys and values).
static SmallVector<SmallVector<int64_t>>
expectedQKVShapes(AttentionConfigAttr c, int64_t batch) {
  if (c.isMLA()) {
    int64_t latent = c.getKvLoraRank() + c.getRopeDim();
    return {{batch, c.getHeads(), latent}, {batch, 1, latent}};
  }
  return {{batch, c.getHeads(), c.getHeadDim()},
          {batch, c.getKvHeads(), c.getHeadDim()},
          {batch, c.getKvHeads(), c.getVHeadDim()}};
}

static LogicalResult verifyQKV(Operation *op, AttentionConfigAttr config,
                               int64_t batch, Value q, Value k, Value v) {
  auto shapes = expectedQKVShapes(config, batch);
  if (config.isMLA() && v)
    return op->emitOpError() << "mla has no separate values: expected q and "
                                "the latent only";
  if (!config.isMLA() && !v)
    return op->emitOpError() << stringifyAttentionKind(config.getKind())
                             << " attention needs q, k and v";
  if (failed(expectShape(op, "q", q, shapes[0])) ||
      failed(expectShape(op, config.isMLA() ? "latent" : "k", k, shapes[1])))
    return failure();
  if (v && failed(expectShape(op, "v", v, shapes[2])))
    return failure();
  return success();
}

/// The decoder-layer index of a model-level op.
static LogicalResult verifyLayerIndex(Operation *op, int64_t layer) {
  if (layer < 0)
    return op->emitOpError() << "'layer' must not be negative, got " << layer;
  return success();
}

LogicalResult QKVProjOp::verify() {
  if (failed(verifyLayerIndex(*this, getLayerAttr().getInt())) ||
      failed(verifyCheckpointName(*this, "prefix", getPrefix())))
    return failure();
  int64_t batch = batchOf(getInput());
  if (!dimsAgree(
          batch,
          cast<RankedTensorType>(getPositions().getType()).getDimSize(0)))
    return emitOpError() << "positions must have one entry per batch row";
  if (failed(verifyQKV(*this, getConfig(), batch, getQ(), getK(), getV())))
    return failure();
  return verifyAttentionLayout(*this, getConfig(), getLayout());
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionOp::verify() {
  if (failed(verifyLayerIndex(*this, getLayerAttr().getInt())) ||
      failed(verifyCheckpointName(*this, "prefix", getPrefix())))
    return failure();
  AttentionConfigAttr c = getConfig();
  // One layer's attention reads what its projection made: the passes shape
  // both from one config (MLA's up-projection of the latent, say).
  if (auto qkv = getQ().getDefiningOp<QKVProjOp>()) {
    if (qkv.getConfig() != c)
      return emitOpError() << "config " << c
                           << " differs from the config of the helix.qkv_proj "
                              "that makes its q, "
                           << qkv.getConfig();
    if (qkv.getLayerAttr().getInt() != getLayerAttr().getInt())
      return emitOpError() << "'layer' (" << getLayerAttr().getInt()
                           << ") differs from the layer of the helix.qkv_proj "
                              "that makes its q ("
                           << qkv.getLayerAttr().getInt() << ")";
  }
  int64_t batch = batchOf(getQ());
  if (failed(verifyQKV(*this, c, batch, getQ(), getK(), getV())))
    return failure();
  KVCacheType cache = getCache().getType();
  bool match =
      c.isMLA() ? cache.getLatent() && cache.getHeads() == 1 &&
                      cache.getKeyDim() == c.getKvLoraRank() + c.getRopeDim() &&
                      cache.getValueDim() == c.getKvLoraRank()
                : !cache.getLatent() && cache.getHeads() == c.getKvHeads() &&
                      cache.getKeyDim() == c.getHeadDim() &&
                      cache.getValueDim() == c.getVHeadDim();
  if (!match)
    return emitOpError() << "KV cache " << cache
                         << " does not match the attention config " << c;
  if (cache.getWindow() != c.getWindow())
    return emitOpError() << "KV cache window (" << cache.getWindow()
                         << ") differs from the attention window ("
                         << c.getWindow() << ")";
  if (failed(
          expectShape(*this, "result", getResult(), {batch, c.getOutputDim()})))
    return failure();
  return verifyAttentionLayout(*this, c, getLayout());
}

//===----------------------------------------------------------------------===//
// LinearAttentionOp, MambaOp
//===----------------------------------------------------------------------===//

/// The state type a recurrent mixer's config implies, and the element its
/// state_dtype names.
static LogicalResult verifyState(Operation *op, RecurrentStateType state,
                                 int64_t heads, int64_t rows, int64_t cols,
                                 int64_t convChannels, int64_t convKernel,
                                 StringRef dtype) {
  Type element = state.getElement();
  bool elementOk = dtype == "float32"    ? element.isF32()
                   : dtype == "bfloat16" ? element.isBF16()
                                         : element.isF16();
  if (state.getHeads() != heads || state.getRows() != rows ||
      state.getCols() != cols || state.getConvChannels() != convChannels ||
      state.getConvKernel() != convKernel || !elementOk)
    return op->emitOpError()
           << "state " << state << " does not match the config: expected "
           << heads << " heads of " << rows << " x " << cols << " " << dtype
           << " values and " << convChannels << " convolution channels of "
           << convKernel << " taps";
  return success();
}

LogicalResult LinearAttentionOp::verify() {
  if (failed(verifyLayerIndex(*this, getLayerAttr().getInt())) ||
      failed(verifyCheckpointName(*this, "prefix", getPrefix())))
    return failure();
  LinearAttentionConfigAttr c = getConfig();
  if (failed(verifyState(*this, getState().getType(), c.getValueHeads(),
                         c.getKeyHeadDim(), c.getValueHeadDim(),
                         c.getConvChannels(), c.getConvKernel(),
                         c.getStateDtype())) ||
      failed(expectShape(*this, "result", getResult(),
                         {batchOf(getInput()), c.getOutputDim()})))
    return failure();
  return success();
}

LogicalResult MambaOp::verify() {
  if (failed(verifyLayerIndex(*this, getLayerAttr().getInt())) ||
      failed(verifyCheckpointName(*this, "prefix", getPrefix())))
    return failure();
  MambaConfigAttr c = getConfig();
  if (failed(verifyState(*this, getState().getType(), c.getHeads(),
                         c.getHeadDim(), c.getStateSize(), c.getConvChannels(),
                         c.getConvKernel(), c.getStateDtype())) ||
      failed(expectShape(*this, "result", getResult(),
                         {batchOf(getInput()), c.getInnerSize()})))
    return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// DSAIndexerOp, SparseAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult DSAIndexerOp::verify() {
  if (failed(verifyLayerIndex(*this, getLayerAttr().getInt())) ||
      failed(verifyCheckpointName(*this, "prefix", getPrefix())))
    return failure();
  IndexerConfigAttr c = getConfig();
  if (c.getReusesPrevious())
    return emitOpError() << "a layer that reuses the previous layer's "
                            "selection has no indexer";
  if (getCache().getType().getHeadDim() != c.getHeadDim())
    return emitOpError() << "index cache " << getCache().getType()
                         << " does not match the indexer's head_dim ("
                         << c.getHeadDim() << ")";
  if (getQLoraRankAttr().getInt() < 0)
    return emitOpError() << "'q_lora_rank' must not be negative";
  if (!dimsAgree(
          batchOf(getInput()),
          cast<RankedTensorType>(getPositions().getType()).getDimSize(0)))
    return emitOpError() << "input and positions batch sizes differ";
  return expectShape(*this, "selected", getSelected(),
                     {batchOf(getInput()), c.getTopK()});
}

LogicalResult SparseAttentionOp::verify() {
  if (failed(verifyLayerIndex(*this, getLayerAttr().getInt())) ||
      failed(verifyCheckpointName(*this, "prefix", getPrefix())))
    return failure();
  AttentionConfigAttr c = getConfig();
  if (!c.isMLA())
    return emitOpError() << "sparse attention is MLA's (DeepSeek Sparse "
                            "Attention), got kind "
                         << stringifyAttentionKind(c.getKind());
  int64_t batch = batchOf(getQ());
  if (failed(verifyQKV(*this, c, batch, getQ(), getK(), Value())))
    return failure();
  KVCacheType cache = getCache().getType();
  if (!cache.getLatent() ||
      cache.getKeyDim() != c.getKvLoraRank() + c.getRopeDim() ||
      cache.getValueDim() != c.getKvLoraRank())
    return emitOpError() << "KV cache " << cache
                         << " does not match the attention config " << c;
  if (!dimsAgree(batchOf(getSelected()), batch))
    return emitOpError() << "selected and q batch sizes differ";
  if (failed(
          expectShape(*this, "result", getResult(), {batch, c.getOutputDim()})))
    return failure();
  return verifyAttentionLayout(*this, c, getLayout());
}

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  if (!dimsAgree(batchOf(getInput()), batchOf(getResult())))
    return emitOpError() << "input and result batch sizes differ";
  if (failed(verifyCheckpointName(*this, "weight", getWeight())) ||
      (getBias() && failed(verifyCheckpointName(*this, "bias", *getBias()))))
    return failure();
  if (auto layout = getLayout()) {
    int64_t n = layout->getGpus() / layout->getPp();
    int64_t in = featuresOf(getInput());
    if (!ShapedType::isDynamic(in) && in % n != 0)
      return emitOpError()
             << "the " << n
             << " GPUs of a stage must divide the input features (" << in
             << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// FFNOp
//===----------------------------------------------------------------------===//

LogicalResult FFNOp::verify() {
  if (getIntermediateAttr().getInt() <= 0)
    return emitOpError() << "'intermediate' must be positive, got "
                         << getIntermediateAttr().getInt();
  if (failed(verifyLayerIndex(*this, getLayerAttr().getInt())) ||
      failed(verifyCheckpointName(*this, "prefix", getPrefix())))
    return failure();
  if (auto layout = getLayout()) {
    if (layout->getEp() != 1)
      return emitOpError() << "a dense FFN has no experts: ep must be 1, got "
                           << layout->getEp();
    if (getIntermediate() % layout->getTpf() != 0)
      return emitOpError() << "tpf (" << layout->getTpf()
                           << ") must divide the intermediate size ("
                           << getIntermediate() << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// MoEOp
//===----------------------------------------------------------------------===//

LogicalResult MoEOp::verify() {
  if (failed(verifyLayerIndex(*this, getLayerAttr().getInt())) ||
      failed(verifyCheckpointName(*this, "prefix", getPrefix())))
    return failure();
  auto layout = getLayout();
  if (!layout)
    return success();
  MoEConfigAttr c = getConfig();
  if (c.getExperts() % layout->getEp() != 0)
    return emitOpError() << "ep (" << layout->getEp()
                         << ") must divide the number of experts ("
                         << c.getExperts() << ")";
  if (c.getExpertIntermediate() % layout->getTpf() != 0)
    return emitOpError() << "tpf (" << layout->getTpf()
                         << ") must divide the expert intermediate size ("
                         << c.getExpertIntermediate() << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// LMHeadOp
//===----------------------------------------------------------------------===//

LogicalResult LMHeadOp::verify() {
  if (!dimsAgree(batchOf(getInput()), batchOf(getResult())))
    return emitOpError() << "input and result batch sizes differ";
  return verifyCheckpointName(*this, "weight", getWeight());
}
