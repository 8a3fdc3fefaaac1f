//===- KVPlacement.cpp - helix-kv-placement -------------------------------===//
//
// Section 2.3 of the Helix paper: new KV entries go to one KVP rank at a
// time, `block` tokens per rank, round-robin. Records each attention's
// placement and feeds it the slots and spans of one helix.kv_slots per
// placement, stage and batch distribution.
//
//===----------------------------------------------------------------------===//

#include "helix/Common/KVCapacity.h"
#include "helix/Common/Numbers.h"
#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/Transforms/ApplyPlan.h"
#include "helix/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseMap.h"

#include <tuple>

namespace mlir::helix {
#define GEN_PASS_DEF_HELIXKVPLACEMENT
#include "helix/Transforms/Passes.h.inc"
} // namespace mlir::helix

using namespace mlir;
using namespace mlir::helix;

namespace {

/// Token slots one rank needs per request (helix/Common/KVCapacity.h,
/// shared with the planner's memory terms).
int64_t capacityOf(int64_t context, int64_t window, int64_t block,
                   int64_t kvp) {
  return ::helix::kvSlotsPerRank(context, window, block, kvp);
}

/// The positions the attention's requests were projected at: follow its q
/// back (through HOP-B's slices) to the QKV projection.
Value positionsOf(AttentionPartialOp op) {
  Value q = op.getQ();
  while (auto slice = q.getDefiningOp<tensor::ExtractSliceOp>())
    q = slice.getSource();
  if (auto qkv = q.getDefiningOp<QKVOp>())
    return qkv.getPositions();
  if (auto mla = q.getDefiningOp<MLAQKVOp>())
    return mla.getPositions();
  return {};
}

DistAttr distOf(Value v) {
  return dyn_cast_or_null<DistAttr>(
      cast<RankedTensorType>(v.getType()).getEncoding());
}

/// Rows [offset, offset + rows) of dimension 1 of `v`.
Value rowsOf(OpBuilder &b, Location loc, Value v, int64_t offset,
             int64_t rows) {
  auto type = cast<RankedTensorType>(v.getType());
  if (offset == 0 && rows == type.getDimSize(1))
    return v;
  SmallVector<int64_t> shape(type.getShape());
  shape[1] = rows;
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    offsets.push_back(b.getIndexAttr(d == 1 ? offset : 0));
    sizes.push_back(b.getIndexAttr(shape[d]));
    strides.push_back(b.getIndexAttr(1));
  }
  auto result =
      RankedTensorType::get(shape, type.getElementType(), type.getEncoding());
  return tensor::ExtractSliceOp::create(b, loc, result, v, offsets, sizes,
                                        strides);
}

/// One helix.kv_slots per (placement, positions, distribution of the
/// slots): the slots of the KV shards of `placement` for `positions`, split
/// like `partials` over KV shards and like `rows` over DP replicas.
class SlotsCache {
public:
  KVSlotsOp get(Operation *user, KVPlacementAttr placement, Value positions,
                Value partials, Value rows) {
    DistAttr pd = distOf(partials), rd = distOf(rows);
    Attribute dist;
    if (pd) {
      SmallVector<SmallVector<int16_t>> split = {
          SmallVector<int16_t>(pd.getSplitAxes(0)),
          SmallVector<int16_t>(rd ? rd.getSplitAxes(0) : ArrayRef<int16_t>())};
      dist = DistAttr::getFromAxes(user->getContext(), pd.getGrid(), split, {},
                                   pd.getStage());
    }
    KVSlotsOp &slots = cache[{placement, positions, dist}];
    if (slots)
      return slots;
    OpBuilder b(user);
    b.setInsertionPointAfterValue(positions);
    int64_t kvp = placement.getKvp(),
            n = cast<RankedTensorType>(positions.getType()).getDimSize(0);
    auto i64 = b.getI64Type();
    slots = KVSlotsOp::create(
        b, user->getLoc(), RankedTensorType::get({kvp, n}, i64, dist),
        RankedTensorType::get({kvp, n, 2}, i64, dist), positions,
        /*rank_offset=*/Value(), placement);
    return slots;
  }

private:
  llvm::DenseMap<std::tuple<Attribute, Value, Attribute>, KVSlotsOp> cache;
};

struct KVPlacement
    : public mlir::helix::impl::HelixKVPlacementBase<KVPlacement> {
  using Base::Base;

  void runOnOperation() override {
    std::string error;
    if (!::helix::checkInteger("block", block, 1, ::helix::kMaxContext,
                               error) ||
        !::helix::checkInteger("context", context, 0, ::helix::kMaxContext,
                               error)) {
      getOperation().emitError() << "helix-kv-placement: " << error;
      return signalPassFailure();
    }
    getOperation().walk([&](func::FuncOp func) {
      if (failed(place(func)))
        signalPassFailure();
    });
  }

  LogicalResult place(func::FuncOp func) {
    int64_t tokens = context;
    auto plan = func->getAttrOfType<PlanAttr>(::mlir::helix::attrs::plan);
    if (!tokens && plan)
      tokens = plan.getContextLength();
    std::string error;
    if (!::helix::checkInteger("context", tokens, 0, ::helix::kMaxContext,
                               error))
      return func.emitOpError() << "helix-kv-placement: " << error;
    // A block longer than the context leaves every rank but the first
    // empty, and keeps the capacities below 2 * context.
    // The plan's block unless told otherwise; the plan records the block
    // the program uses.
    int64_t blockSize = block;
    if (!block.hasValue() && plan)
      blockSize = plan.getKvBlock();
    if (tokens && !::helix::checkInteger("block", blockSize, 1, tokens, error))
      return func.emitOpError() << "helix-kv-placement: " << error
                                << " (at most the context length)";
    if (plan && blockSize != plan.getKvBlock())
      func->setAttr(
          ::mlir::helix::attrs::plan,
          ::helix::planWithProgram(plan, plan.getSlices(), blockSize));
    SlotsCache slotsOf;
    WalkResult walk = func.walk([&](AttentionPartialOp op) {
      if (op.getPlacement())
        return WalkResult::advance();
      if (!tokens) {
        op.emitOpError() << "helix-kv-placement: no context length (no "
                         << ::mlir::helix::attrs::plan
                         << " on the function and no context option)";
        return WalkResult::interrupt();
      }
      Value positions = positionsOf(op);
      if (!positions) {
        op.emitOpError() << "helix-kv-placement: cannot find the positions "
                            "the attention's queries were projected at";
        return WalkResult::interrupt();
      }
      auto partial = cast<RankedTensorType>(op.getResult().getType());
      int64_t kvp = partial.getDimSize(0);
      int64_t window = op.getConfig().getWindow();
      auto placement = KVPlacementAttr::get(
          op.getContext(), blockSize, kvp,
          capacityOf(tokens, window, blockSize, kvp), window);
      KVSlotsOp slots =
          slotsOf.get(op, placement, positions, op.getResult(), op.getQ());
      OpBuilder b(op);
      int64_t rows = cast<RankedTensorType>(op.getQ().getType()).getDimSize(0);
      int64_t offset = op.getBatchOffset();
      op.getSlotsMutable().assign(
          rowsOf(b, op.getLoc(), slots.getSlots(), offset, rows));
      op.getSpansMutable().assign(
          rowsOf(b, op.getLoc(), slots.getSpans(), offset, rows));
      op.setPlacementAttr(placement);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    // DSA's index keys follow the layer's KV placement: the same slots.
    walk = func.walk([&](IndexCandidatesOp op) {
      if (op.getPlacement())
        return WalkResult::advance();
      auto partial = cast<RankedTensorType>(op.getResult().getType());
      int64_t kvp = partial.getDimSize(0);
      auto placement = KVPlacementAttr::get(
          op.getContext(), blockSize, kvp,
          capacityOf(tokens, /*window=*/0, blockSize, kvp), /*window=*/0);
      KVSlotsOp slots = slotsOf.get(op, placement, op.getPositions(),
                                    op.getResult(), op.getInput());
      op.getSlotsMutable().assign(slots.getSlots());
      op.getSpansMutable().assign(slots.getSpans());
      op.setPlacementAttr(placement);
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }
};

} // namespace
