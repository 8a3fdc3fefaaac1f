//===- ShardDraft.cpp - The MTP drafter's input projection ----------------===//
//
// DeepSeek-V3's multi-token-prediction layer projects the concatenation of
// the normalized embedding of the next token and the normalized hidden
// state, [B, 2H], with eh_proj [H, 2H] (docs/speculative-decoding.md). Both
// halves are replicated on every rank of the stage; eh_proj runs
// row-parallel over the ranks of the output projection (the cost model's
// costDraft): each rank takes its slice of the 2H columns (all_slice, no
// data moves), multiplies it with its column slice of eh_proj, and an
// all-reduce sums the partials.
//
//===----------------------------------------------------------------------===//

#include "ShardRewriter.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix::sharding {

bool isDraftProjection(LinearOp op) {
  return op.getInput().getDefiningOp<tensor::ConcatOp>() != nullptr;
}

LogicalResult shardConcat(ShardRewriter &r, tensor::ConcatOp op) {
  GlobalView &g = r.g;
  SmallVector<Value> inputs;
  int64_t width = 0;
  for (Value v : op.getInputs()) {
    inputs.push_back(r.toStream(r.get(v)));
    width += cast<RankedTensorType>(inputs.back().getType()).getDimSize(1);
  }
  if (op.getDim() != 1 || !llvm::all_equal(llvm::map_range(
                              inputs, [](Value v) { return v.getType(); })))
    return op.emitOpError()
           << "helix-insert-collectives: the MTP drafter concatenates two "
              "activations of the same distribution along their features";
  auto t = cast<RankedTensorType>(inputs.front().getType());
  auto type = RankedTensorType::get({t.getDimSize(0), width},
                                    t.getElementType(), t.getEncoding());
  r.set(op.getResult(),
        tensor::ConcatOp::create(g.b, g.loc, type, /*dim=*/1, inputs));
  return success();
}

LogicalResult shardDraftProjection(ShardRewriter &r, LinearOp op) {
  GlobalView &g = r.g;
  Value x = r.get(op.getInput());
  int64_t out = op.getResult().getType().getDimSize(1),
          in = cast<RankedTensorType>(x.getType()).getDimSize(1);
  // The output projection's ranks: the stage (Helix, tp) or its TPA group.
  Axes ranks =
      g.plan.place.oprojOnStage() ? g.attn({kKVP, kTPA}) : g.attn({kTPA});
  if (in % g.size(g.attnGrid, ranks) != 0)
    return op.emitOpError() << "helix-insert-collectives: eh_proj's " << in
                            << " input columns do not split over its "
                            << g.size(g.attnGrid, ranks) << " ranks";
  Value cols = g.allSlice(x, g.attnGrid, ranks, 1);
  Value w =
      g.weight(op.getWeight(), {out, in}, {}, r.act, g.attnGrid, {{}, ranks});
  auto type =
      g.type({g.plan.batch, out}, r.act, g.dist(g.attnGrid, {{}}, ranks));
  Value y = MatmulOp::create(g.b, g.loc, type, cols, w, Value());
  r.set(op.getResult(), g.allReduce(y, g.attnGrid, ranks));
  return success();
}

} // namespace helix::sharding
