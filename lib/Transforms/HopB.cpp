//===- HopB.cpp - helix-hopb ----------------------------------------------===//
//
// HOP-B (section 2.1.3 of the Helix paper): the attention of a batch is cut
// into slices and software-pipelined with its all-to-all, so that the
// exchange of slice i is in flight while slice i + 1 attends:
//
//   p0 = attend(0); t0 = start(exchange p0)
//   p1 = attend(1); t1 = start(exchange p1); o0 = combine(wait t0)
//   ...
//   o(n-1) = combine(wait t(n-1));  out = concat(o0, ..., o(n-1))
//
// Without an exchange (tp, tp-pp, Helix with KVP = 1) the plan's overlap is
// the output projection's all-reduce, in flight while the next slice
// attends and projects (the cost model's overlap of the TP baselines):
//
//   y0 = project(combine(attend(0))); t0 = start(all-reduce y0)
//   y1 = project(combine(attend(1))); t1 = start(all-reduce y1); wait t0
//   ...  out = concat(wait t0, ..., wait t(n-1))
//
//===----------------------------------------------------------------------===//

#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/Transforms/ApplyPlan.h"
#include "helix/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/Support/Debug.h"

#include <algorithm>

#define DEBUG_TYPE "helix-hopb"

namespace mlir::helix {
#define GEN_PASS_DEF_HELIXHOPB
#include "helix/Transforms/Passes.h.inc"
} // namespace mlir::helix

using namespace mlir;
using namespace mlir::helix;

namespace {

/// An attention whose partials go through one all-to-all into one combine.
struct Exchange {
  AttentionPartialOp attention;
  CollectiveOp allToAll;
  LSECombineOp combine;
};

std::optional<Exchange> matchExchange(AttentionPartialOp op) {
  if (!op->hasOneUse())
    return std::nullopt;
  auto a2a = dyn_cast<CollectiveOp>(*op->user_begin());
  if (!a2a || a2a.getKind() != CollectiveKind::all_to_all || !a2a->hasOneUse())
    return std::nullopt;
  auto combine = dyn_cast<LSECombineOp>(*a2a->user_begin());
  if (!combine || combine.getPartials() != a2a.getResult())
    return std::nullopt;
  return Exchange{op, a2a, combine};
}

/// An attention without exchange, its combine, the output projection and the
/// projection's all-reduce (the TP baselines' overlap).
struct OutputAllReduce {
  AttentionPartialOp attention;
  LSECombineOp combine;
  MatmulOp outProj;
  CollectiveOp allReduce;
};

std::optional<OutputAllReduce> matchOutputAllReduce(AttentionPartialOp op) {
  if (!op->hasOneUse())
    return std::nullopt;
  auto combine = dyn_cast<LSECombineOp>(*op->user_begin());
  if (!combine || !combine->hasOneUse())
    return std::nullopt;
  auto proj = dyn_cast<MatmulOp>(*combine->user_begin());
  if (!proj || proj.getInput() != combine.getResult() || !proj->hasOneUse())
    return std::nullopt;
  auto ar = dyn_cast<CollectiveOp>(*proj->user_begin());
  if (!ar || ar.getKind() != CollectiveKind::all_reduce)
    return std::nullopt;
  // Rows split over DP replicas (ep) cannot be sliced in the global view.
  auto q = cast<RankedTensorType>(op.getQ().getType());
  if (auto dist = dyn_cast_or_null<DistAttr>(q.getEncoding());
      dist && !dist.getSplitAxes(0).empty())
    return std::nullopt;
  return OutputAllReduce{op, combine, proj, ar};
}

/// `type` with dimension `dim` set to `size`.
RankedTensorType resized(Type type, int64_t dim, int64_t size) {
  auto t = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = size;
  return RankedTensorType::get(shape, t.getElementType(), t.getEncoding());
}

/// Rows [offset, offset + size) of dimension `dim` of `v`.
Value slice(OpBuilder &b, Location loc, Value v, int64_t dim, int64_t offset,
            int64_t size) {
  if (!v)
    return v;
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    offsets.push_back(b.getIndexAttr(d == dim ? offset : 0));
    sizes.push_back(b.getIndexAttr(d == dim ? size : type.getDimSize(d)));
    strides.push_back(b.getIndexAttr(1));
  }
  return tensor::ExtractSliceOp::create(b, loc, resized(type, dim, size), v,
                                        offsets, sizes, strides);
}

struct HopB : public mlir::helix::impl::HelixHopBBase<HopB> {
  using Base::Base;
  int64_t count = 0; // slices of the function being piped (0: per request)

  void runOnOperation() override {
    if (!enable)
      return;
    if (slices < 0) {
      getOperation().emitError() << "helix-hopb: slices must not be negative";
      return signalPassFailure();
    }
    getOperation().walk([&](func::FuncOp func) {
      auto plan = func->getAttrOfType<PlanAttr>(::mlir::helix::attrs::plan);
      if (plan && !plan.getHopb() && !plan.getOverlap())
        return;
      // The plan's slices (what it was priced with) unless told otherwise.
      count = slices;
      if (!slices.hasValue() && plan && plan.getSlices() > 0)
        count = plan.getSlices();
      SmallVector<Exchange> exchanges;
      SmallVector<OutputAllReduce> allReduces;
      func.walk([&](AttentionPartialOp op) {
        if (auto e = matchExchange(op))
          exchanges.push_back(*e);
        else if (auto a = matchOutputAllReduce(op);
                 a && (!plan || plan.getOverlap()))
          allReduces.push_back(*a);
      });
      int64_t used = 0;
      for (Exchange &e : exchanges)
        used = std::max(used, pipeline(e));
      for (OutputAllReduce &e : allReduces)
        used = std::max(used, pipeline(e));
      int64_t async = 0;
      func.walk([&](AsyncStartOp) { ++async; });
      LLVM_DEBUG(llvm::dbgs()
                 << "helix-hopb: @" << func.getName() << ": "
                 << exchanges.size() << " all-to-alls, " << allReduces.size()
                 << " output all-reduces in " << used << " slices, " << async
                 << " async regions\n");
      // The plan records the slices the program runs (what it is priced
      // with).
      if (plan && used > 0 && used != plan.getSlices())
        func->setAttr(::mlir::helix::attrs::plan,
                      ::helix::planWithProgram(plan, used, plan.getKvBlock()));
    });
  }

  /// Sizes of `n` nearly equal slices of `rows` (the first ones larger).
  static SmallVector<int64_t> sliceSizes(int64_t rows, int64_t n) {
    SmallVector<int64_t> sizes;
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(rows / n + (i < rows % n ? 1 : 0));
    return sizes;
  }

  /// The attention of rows [offset, offset + size) of `attn`.
  static AttentionPartialOp sliceAttention(OpBuilder &b,
                                           AttentionPartialOp attn,
                                           int64_t offset, int64_t size) {
    Location loc = attn.getLoc();
    IRMapping m;
    for (Value v : {attn.getQ(), attn.getK(), attn.getV(), attn.getSelected()})
      if (v)
        m.map(v, slice(b, loc, v, 0, offset, size));
    for (Value v : {attn.getSlots(), attn.getSpans()})
      if (v)
        m.map(v, slice(b, loc, v, 1, offset, size));
    auto part = cast<AttentionPartialOp>(b.clone(*attn, m));
    part.setBatchOffset(attn.getBatchOffset() + offset);
    part.getResult().setType(resized(attn.getType(), 1, size));
    return part;
  }

  /// The requests of `attn`'s batch: its query rows, or whole groups of
  /// `queries` rows in a speculative verify step (slices keep them whole).
  static int64_t requestsOf(AttentionPartialOp attn) {
    int64_t rows = cast<RankedTensorType>(attn.getQ().getType()).getDimSize(0);
    return rows / int64_t(attn.getQueries());
  }

  /// The slices the batch of `attn` is cut into (1: left whole).
  int64_t sliceCount(AttentionPartialOp attn) const {
    int64_t requests = requestsOf(attn);
    return count == 0 ? requests : std::min<int64_t>(count, requests);
  }

  /// `collective` on `input` (instead of `from`), started and left in
  /// flight, with the result type `type`.
  static AsyncStartOp startInFlight(OpBuilder &b, Location loc,
                                    Operation *collective, Value from,
                                    Value input, Type type) {
    auto start =
        AsyncStartOp::create(b, loc, AsyncType::get(b.getContext(), type));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&start.getBody().emplaceBlock());
    IRMapping inner;
    inner.map(from, input);
    Operation *c = b.clone(*collective, inner);
    c->getResult(0).setType(type);
    AsyncYieldOp::create(b, loc, c->getResults());
    return start;
  }

  /// The two-stage pipeline over the batch of `attn`, built before
  /// `anchor`: `start` builds slice [offset, offset + size) up to its
  /// collective in flight, `finish` turns a waited-for result into the
  /// slice's output; the outputs are concatenated and replace `replaced`.
  /// Returns the slice count (1: nothing built).
  int64_t pipelineSlices(
      AttentionPartialOp attn, Operation *anchor, Value replaced,
      function_ref<AsyncStartOp(OpBuilder &, int64_t, int64_t)> start,
      function_ref<Value(OpBuilder &, Value)> finish) {
    int64_t queries = attn.getQueries();
    int64_t n = sliceCount(attn);
    if (n <= 1)
      return 1;
    OpBuilder b(anchor);
    Location loc = attn.getLoc();
    SmallVector<Value> outputs;
    auto wait = [&](Value token) {
      Value done = AsyncWaitOp::create(
          b, loc, cast<AsyncType>(token.getType()).getValue(), token);
      outputs.push_back(finish(b, done));
    };
    Value pending;
    int64_t offset = 0;
    for (int64_t requests : sliceSizes(requestsOf(attn), n)) {
      int64_t size = requests * queries;
      AsyncStartOp started = start(b, offset, size);
      // The previous slice's collective has overlapped this slice.
      if (pending)
        wait(pending);
      pending = started.getResult();
      offset += size;
    }
    wait(pending);
    auto concat = tensor::ConcatOp::create(b, loc, replaced.getType(),
                                           /*dim=*/0, outputs);
    replaced.replaceAllUsesWith(concat.getResult());
    return n;
  }

  /// Pipes the output projection's all-reduce of `e` in slices.
  int64_t pipeline(OutputAllReduce &e) {
    AttentionPartialOp attn = e.attention;
    int64_t n = pipelineSlices(
        attn, e.allReduce, e.allReduce.getResult(),
        [&](OpBuilder &b, int64_t offset, int64_t size) {
          // Attention, combine and projection of this slice, then its
          // all-reduce.
          AttentionPartialOp part = sliceAttention(b, attn, offset, size);
          IRMapping m;
          m.map(attn.getResult(), part.getResult());
          Operation *combine = b.clone(*e.combine, m);
          combine->getResult(0).setType(resized(e.combine.getType(), 0, size));
          Operation *proj = b.clone(*e.outProj, m);
          proj->getResult(0).setType(resized(e.outProj.getType(), 0, size));
          return startInFlight(b, attn.getLoc(), e.allReduce,
                               e.outProj.getResult(), proj->getResult(0),
                               resized(e.allReduce.getType(), 0, size));
        },
        [](OpBuilder &, Value reduced) { return reduced; });
    if (n > 1) {
      e.allReduce.erase();
      e.outProj.erase();
      e.combine.erase();
      attn.erase();
    }
    return n;
  }

  /// Pipes the exchange of `e` in slices.
  int64_t pipeline(Exchange &e) {
    AttentionPartialOp attn = e.attention;
    int64_t n = pipelineSlices(
        attn, e.combine, e.combine.getResult(),
        [&](OpBuilder &b, int64_t offset, int64_t size) {
          // Attention of this slice, then its exchange.
          AttentionPartialOp part = sliceAttention(b, attn, offset, size);
          return startInFlight(b, attn.getLoc(), e.allToAll, attn.getResult(),
                               part.getResult(),
                               resized(e.allToAll.getType(), 1, size));
        },
        [&](OpBuilder &b, Value exchanged) {
          IRMapping m;
          m.map(e.combine.getPartials(), exchanged);
          Operation *combine = b.clone(*e.combine, m);
          int64_t size =
              cast<RankedTensorType>(exchanged.getType()).getDimSize(1);
          combine->getResult(0).setType(resized(e.combine.getType(), 0, size));
          return combine->getResult(0);
        });
    if (n > 1) {
      e.combine.erase();
      e.allToAll.erase();
      attn.erase();
    }
    return n;
  }
};

} // namespace
