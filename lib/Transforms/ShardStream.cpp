//===- ShardStream.cpp - Residual stream, embedding and LM head -----------===//
//
// The ops around the layers' sharded blocks: the vocabulary-parallel
// embedding and LM head, norms and residual adds (on the stream's
// distribution: replicated, or batch-split over DP for the ep strategy), and
// the pipeline-stage bookkeeping of the rewriter.
//
//===----------------------------------------------------------------------===//

#include "ShardRewriter.h"

#include "helix/ModelIR/ModelIR.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix::sharding {

int64_t stageOfValue(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  auto d = t ? dyn_cast_or_null<DistAttr>(t.getEncoding()) : DistAttr();
  return d ? d.getStage() : -1;
}

Value ShardRewriter::get(Value old) {
  Value v = map.lookup(old);
  int64_t from = stageOfValue(v);
  if (from < 0 || from >= g.stage)
    return v;
  if (Value done = moved.lookup({old, g.stage}))
    return done;
  int64_t here = g.stage;
  for (int64_t s = from; s < here; ++s) {
    g.stage = s + 1;
    v = g.sendRecv(v, s);
  }
  moved[{old, here}] = v;
  return v;
}

Axes ShardRewriter::batchAxes() const {
  return g.plan.tokensSplit() ? g.attn({kDP}) : Axes();
}

Value ShardRewriter::gather(Value v, bool keepBatch) {
  auto dist = dyn_cast_or_null<DistAttr>(
      cast<RankedTensorType>(v.getType()).getEncoding());
  if (!dist)
    return v;
  FlatSymbolRefAttr grid = dist.getGrid();
  ValueDist d = distOf(v);
  v = g.allReduce(v, grid, d.partial);
  Axes keep = keepBatch ? batchAxes() : Axes();
  for (int64_t dim = int64_t(d.split.size()) - 1; dim >= 0; --dim) {
    if (dim == 0 && d.split[0] == keep)
      return v;
    v = g.allGather(v, grid, d.split[dim], dim);
  }
  return g.allSlice(v, g.attnGrid, keep, 0);
}

Value ShardRewriter::replicate(Value v) { return gather(v, false); }
Value ShardRewriter::toStream(Value v) { return gather(v, true); }

Value ShardRewriter::streamPositions(Value old) {
  Value v = get(old);
  if (batchAxes().empty())
    return v;
  Value &done = sliced[{old, g.stage}];
  if (!done)
    done = g.allSlice(v, g.attnGrid, batchAxes(), 0);
  return done;
}

static std::optional<int64_t> layerOfName(StringRef name) {
  return ::helix::layerOfCheckpointName(name);
}

FailureOr<int64_t> ShardRewriter::stageOfOp(Operation *op) {
  int64_t last = g.plan.layout.pp - 1;
  if (auto layer = op->getAttrOfType<IntegerAttr>("layer"))
    return g.plan.stageOf(layer.getInt());
  if (isa<EmbedOp>(op))
    return int64_t(0);
  if (isa<LMHeadOp, func::ReturnOp>(op))
    return last;
  if (auto norm = dyn_cast<RMSNormOp>(op))
    return g.plan.stageOf(
        layerOfName(norm.getWeight()).value_or(g.plan.layers));
  if (auto linear = dyn_cast<LinearOp>(op))
    return g.plan.stageOf(
        layerOfName(linear.getWeight()).value_or(g.plan.layers));
  if (isa<AddOp, tensor::ConcatOp>(op)) {
    int64_t stage = 0;
    for (Value operand : op->getOperands())
      stage = std::max(stage, stageOfValue(map.lookup(operand)));
    return stage;
  }
  return op->emitOpError() << "is not part of helix model IR; "
                              "helix-insert-collectives cannot shard it";
}

/// The GPUs of a stage share the vocabulary when it splits evenly.
static Axes vocabAxes(GlobalView &g, int64_t vocab) {
  Axes all = g.attn({kDP, kKVP, kTPA});
  return vocab % g.size(g.attnGrid, all) == 0 ? all : Axes();
}

LogicalResult shardEmbed(ShardRewriter &r, EmbedOp op) {
  GlobalView &g = r.g;
  int64_t vocab = op.getVocab(),
          hidden = op.getResult().getType().getDimSize(1);
  Axes vocabSplit = vocabAxes(g, vocab);
  Value table = g.weight(op.getWeight(), {vocab, hidden}, {}, r.act, g.attnGrid,
                         {vocabSplit});
  auto type =
      g.type({g.plan.batch, hidden}, r.act, g.dist(g.attnGrid, {}, vocabSplit));
  Value e = EmbedRowsOp::create(g.b, g.loc, type, r.get(op.getTokens()), table,
                                /*vocab_offset=*/Value());
  Value h = g.allReduce(e, g.attnGrid, vocabSplit);
  r.set(op.getResult(), g.allSlice(h, g.attnGrid, r.batchAxes(), 0));
  return success();
}

LogicalResult shardNorm(ShardRewriter &r, RMSNormOp op) {
  GlobalView &g = r.g;
  Value x = r.toStream(r.get(op.getInput()));
  int64_t hidden = cast<RankedTensorType>(x.getType()).getDimSize(1);
  Value w = g.weight(op.getWeight(), {hidden}, r.act);
  r.set(op.getResult(),
        NormRowsOp::create(g.b, g.loc, x.getType(), x, w, op.getEpsAttr()));
  return success();
}

LogicalResult shardAdd(ShardRewriter &r, AddOp op) {
  GlobalView &g = r.g;
  Value a = r.toStream(r.get(op.getLhs())), b = r.toStream(r.get(op.getRhs()));
  if (a.getType() != b.getType())
    return op.emitOpError() << "helix-insert-collectives: the residual add's "
                               "operands are distributed differently: "
                            << a.getType() << " and " << b.getType();
  r.set(op.getResult(), AddOp::create(g.b, g.loc, a.getType(), a, b));
  return success();
}

LogicalResult shardLMHead(ShardRewriter &r, LMHeadOp op) {
  GlobalView &g = r.g;
  Value x = r.replicate(r.get(op.getInput()));
  auto result = op.getResult().getType();
  int64_t vocab = result.getDimSize(1),
          hidden = cast<RankedTensorType>(x.getType()).getDimSize(1);
  Axes vocabSplit = vocabAxes(g, vocab);
  Value w = g.weight(op.getWeight(), {vocab, hidden}, {}, r.act, g.attnGrid,
                     {vocabSplit});
  auto type = g.type({g.plan.batch, vocab}, result.getElementType(),
                     g.dist(g.attnGrid, {{}, vocabSplit}));
  Value logits = MatmulOp::create(g.b, g.loc, type, x, w, Value());
  r.set(op.getResult(), g.allGather(logits, g.attnGrid, vocabSplit, 1));
  return success();
}

} // namespace helix::sharding
