//===- Partition.cpp - helix-partition ------------------------------------===//
//
// Global view to one SPMD program per pipeline stage, run by every rank of
// the stage: every value gets the local static shape its #helix.dist
// gives (the same on every rank), weights the offsets of the slice a rank
// loads, computed in the IR from the rank's grid coordinates
// (shard.process_multi_index and arith), as are the vocabulary, expert
// and KVP offsets and which rank adds a row-parallel bias (helix.keep_if);
// KV caches become the rank's !helix.kv_shard, collectives the upstream
// shard ops over their grid axes (send_recv a shard.send on the sending
// stage and a shard.recv on the receiving one), and a stage keeps only its
// own ops.
//
//===----------------------------------------------------------------------===//

#include "RankIR.h"

#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/ModelIR/ModelIR.h"
#include "helix/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "helix-partition"

namespace mlir::helix {
#define GEN_PASS_DEF_HELIXPARTITION
#include "helix/Transforms/Passes.h.inc"
} // namespace mlir::helix

using namespace mlir;
using namespace mlir::helix;
using namespace ::helix::sharding;

namespace {

/// Pipeline stage of a global-view value (-1: every stage).
int64_t stageOf(Type type) {
  if (auto async = dyn_cast<AsyncType>(type))
    type = async.getValue();
  auto tensor = dyn_cast<RankedTensorType>(type);
  auto dist =
      tensor ? dyn_cast_or_null<DistAttr>(tensor.getEncoding()) : DistAttr();
  return dist ? dist.getStage() : -1;
}

/// Pipeline stage an op runs on (-1: every stage).
int64_t stageOf(Operation *op) {
  for (Type t : op->getResultTypes())
    if (int64_t s = stageOf(t); s >= 0)
      return s;
  return -1;
}

/// Builds the program of one pipeline stage.
class StageBuilder {
public:
  StageBuilder(func::FuncOp global, const Grids &grids, int64_t stage)
      : global(global), grids(grids), stage(stage), b(global), ib(global) {}

  FailureOr<func::FuncOp> build();

private:
  func::FuncOp global;
  const Grids &grids;
  int64_t stage;
  OpBuilder b;    // the program
  OpBuilder ib;   // the rank-dependent index values ...
  Block prologue; // ... built here, then moved to the entry
  IRMapping map;
  SmallVector<Value> results;
  llvm::StringMap<SmallVector<Value>> coordValues;
  std::map<std::tuple<std::string, SmallVector<int16_t>, int64_t, int64_t>,
           Value>
      offsets;
  DenseMap<int64_t, Value> constants;
  std::map<std::pair<std::string, SmallVector<int16_t>>, Value> indices;
  DenseMap<Value, Value> firsts;

  InFlightDiagnostic fail(Operation *op, const Twine &why) {
    return op->emitOpError()
           << "helix-partition: stage " << stage << ": " << why;
  }
  FailureOr<SplitPart> split(Operation *at, Type global);
  FailureOr<Type> localType(Operation *at, Type global);
  FailureOr<Type> cacheType(BlockArgument cache);
  Value constant(int64_t v);
  /// The offset of dimension `d` of `global` on the running rank: a
  /// constant 0 when the dimension is not split.
  FailureOr<Value> offset(Operation *at, Type global, unsigned d);
  FailureOr<Type> stateType(BlockArgument state);
  FailureOr<Type> indexCacheType(BlockArgument cache);
  /// True on the rank holding the first slice of dimension `d` of `global`.
  FailureOr<Value> firstSlice(Operation *at, Value global, unsigned d);
  /// `bias` kept on the rank holding the first slice of dimension `d` of
  /// `weight` (a row-parallel contraction) only.
  FailureOr<Value> biasOnFirst(Operation *at, Value localBias, Value weight,
                               unsigned d);
  LogicalResult lower(Operation *op);
  LogicalResult lowerCollective(CollectiveOp op);
  LogicalResult lowerSlice(tensor::ExtractSliceOp op);
  LogicalResult lowerAsync(AsyncStartOp op);
  LogicalResult fixUp(Operation *global, Operation *local);
};

FailureOr<SplitPart> StageBuilder::split(Operation *at, Type global) {
  std::string error;
  FailureOr<SplitPart> p =
      splitPart(cast<RankedTensorType>(global), grids, error);
  if (failed(p))
    return fail(at, error);
  return p;
}

FailureOr<Type> StageBuilder::localType(Operation *at, Type global) {
  if (auto async = dyn_cast<AsyncType>(global)) {
    FailureOr<SplitPart> p = split(at, async.getValue());
    if (failed(p))
      return failure();
    return Type(AsyncType::get(global.getContext(), p->type));
  }
  if (!isa<RankedTensorType>(global))
    return global;
  FailureOr<SplitPart> p = split(at, global);
  if (failed(p))
    return failure();
  return Type(p->type);
}

Value StageBuilder::constant(int64_t v) {
  Value &c = constants[v];
  if (!c)
    c = arith::ConstantIndexOp::create(ib, global.getLoc(), v);
  return c;
}

FailureOr<Value> StageBuilder::offset(Operation *at, Type global, unsigned d) {
  FailureOr<SplitPart> p = split(at, global);
  if (failed(p))
    return failure();
  const DimSplit &s = p->dims[d];
  if (!s.split())
    return constant(0);
  auto key = std::make_tuple(p->grid, s.axes, s.local, s.duplicated);
  if (Value v = offsets[key])
    return v;
  Location loc = this->global.getLoc();
  SmallVector<Value> &coords = coordValues[p->grid];
  if (coords.empty()) {
    ArrayRef<int64_t> shape = grids.shapes.find(p->grid)->second;
    auto all = llvm::to_vector(llvm::seq<int16_t>(0, shape.size()));
    auto op = shard::ProcessMultiIndexOp::create(ib, loc, p->grid, all);
    coords.assign(op->result_begin(), op->result_end());
  }
  // The rank's index over the axes (first major), then its offset.
  ArrayRef<int64_t> shape = grids.shapes.find(p->grid)->second;
  Value &index = indices[{p->grid, s.axes}];
  if (!index)
    for (int16_t a : s.axes)
      index =
          index ? arith::AddIOp::create(
                      ib, loc,
                      arith::MulIOp::create(ib, loc, index, constant(shape[a])),
                      coords[a])
                : coords[a];
  Value v =
      s.duplicated > 1 ? Value(arith::DivUIOp::create(ib, loc, index,
                                                      constant(s.duplicated)))
      : s.local == 1
          ? index
          : Value(arith::MulIOp::create(ib, loc, index, constant(s.local)));
  offsets[key] = v;
  return v;
}

FailureOr<Value> StageBuilder::firstSlice(Operation *at, Value global,
                                          unsigned d) {
  FailureOr<Value> o = offset(at, global.getType(), d);
  if (failed(o))
    return failure();
  Value &first = firsts[*o];
  if (!first)
    first = arith::CmpIOp::create(ib, this->global.getLoc(),
                                  arith::CmpIPredicate::eq, *o, constant(0));
  return first;
}

FailureOr<Value> StageBuilder::biasOnFirst(Operation *at, Value localBias,
                                           Value weight, unsigned d) {
  FailureOr<SplitPart> p = split(at, weight.getType());
  if (failed(p))
    return failure();
  if (!p->dims[d].split())
    return localBias;
  FailureOr<Value> first = firstSlice(at, weight, d);
  if (failed(first))
    return failure();
  return Value(KeepIfOp::create(b, at->getLoc(), *first, localBias));
}

/// The rank's shard of a layer's KV cache, from the attention that reads it.
FailureOr<Type> StageBuilder::cacheType(BlockArgument cache) {
  auto type = cast<KVCacheType>(cache.getType());
  for (Operation *user : cache.getUsers()) {
    auto attn = dyn_cast<AttentionPartialOp>(user);
    if (!attn || (stageOf(user) != stage && stageOf(user) >= 0))
      continue;
    if (!attn.getPlacement())
      return fail(attn, "the attention has no KV placement (run "
                        "helix-kv-placement first)");
    FailureOr<SplitPart> k = split(attn, attn.getK().getType());
    // Cache rows are split over the ranks that split the requests.
    auto q = cast<RankedTensorType>(attn.getQ().getType());
    int64_t cacheRows = attn.getCacheRows();
    Attribute rowsDist;
    if (auto qDist = dyn_cast_or_null<DistAttr>(q.getEncoding()))
      rowsDist = DistAttr::getFromAxes(
          b.getContext(), qDist.getGrid(),
          {SmallVector<int16_t>(qDist.getSplitAxes(0))}, {}, qDist.getStage());
    auto rows =
        RankedTensorType::get({cacheRows}, q.getElementType(), rowsDist);
    FailureOr<SplitPart> r = split(attn, rows);
    if (failed(k) || failed(r))
      return failure();
    return Type(KVShardType::get(b.getContext(), r->type.getDimSize(0),
                                 attn.getPlacement()->getCapacity(),
                                 type.getLatent() ? 1 : k->type.getDimSize(1),
                                 type.getKeyDim(), type.getValueDim(),
                                 type.getElement(), type.getLatent(),
                                 type.getWindow()));
  }
  return Type();
}

/// The rank's shard of a recurrent layer's state, from the step that
/// updates it: its rows of the batch, its heads' states.
FailureOr<Type> StageBuilder::stateType(BlockArgument state) {
  for (Operation *user : state.getUsers()) {
    auto gdn = dyn_cast<GDNStepOp>(user);
    if (!gdn || (stageOf(user) != stage && stageOf(user) >= 0))
      continue;
    FailureOr<SplitPart> rows = split(gdn, gdn.getInput().getType());
    FailureOr<SplitPart> heads = split(gdn, gdn.getWqkvz().getType());
    if (failed(rows) || failed(heads))
      return failure();
    LinearAttentionConfigAttr c = gdn.getConfig();
    int64_t hk = heads->type.getDimSize(0),
            hv = hk * (c.getValueHeads() / c.getKeyHeads());
    int64_t batchRows = rows->type.getDimSize(0);
    // A micro-batched stage keeps the state of every row of the batch.
    if (auto micro = global->getAttrOfType<IntegerAttr>(
            ::mlir::helix::attrs::microBatches);
        micro && gdn.getRowBase())
      batchRows *= micro.getInt();
    return Type(StateShardType::get(b.getContext(), batchRows,
                                    gdnStateValues(c, hk, hv)));
  }
  return Type();
}

/// The rank's shard of a DSA layer's index keys: its requests' rows, each
/// the keys (and positions) of the KV slots the layer's placement gives it.
FailureOr<Type> StageBuilder::indexCacheType(BlockArgument cache) {
  for (Operation *user : cache.getUsers()) {
    auto index = dyn_cast<IndexCandidatesOp>(user);
    if (!index || (stageOf(user) != stage && stageOf(user) >= 0))
      continue;
    if (!index.getPlacement())
      return fail(index, "the indexer has no KV placement (run "
                         "helix-kv-placement first)");
    auto x = cast<RankedTensorType>(index.getInput().getType());
    Attribute rowsDist;
    if (auto xDist = dyn_cast_or_null<DistAttr>(x.getEncoding()))
      rowsDist = DistAttr::getFromAxes(
          b.getContext(), xDist.getGrid(),
          {SmallVector<int16_t>(xDist.getSplitAxes(0))}, {}, xDist.getStage());
    FailureOr<SplitPart> rows =
        split(index, RankedTensorType::get({int64_t(index.getCacheRows())},
                                           x.getElementType(), rowsDist));
    if (failed(rows))
      return failure();
    return Type(StateShardType::get(b.getContext(), rows->type.getDimSize(0),
                                    index.getPlacement()->getCapacity() *
                                        (index.getConfig().getHeadDim() + 1)));
  }
  return Type();
}

FailureOr<func::FuncOp> StageBuilder::build() {
  MLIRContext *ctx = global.getContext();
  // Arguments this rank uses, with their local types.
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<BlockArgument> kept;
  for (BlockArgument arg : global.getArguments()) {
    Type t = arg.getType();
    FailureOr<Type> local = Type();
    if (isa<KVCacheType>(t))
      local = cacheType(arg);
    else if (isa<RecurrentStateType>(t))
      local = stateType(arg);
    else if (isa<IndexCacheType>(t))
      local = indexCacheType(arg);
    else if (stageOf(t) < 0 || stageOf(t) == stage)
      local = localType(global, t);
    if (failed(local))
      return failure();
    if (!*local)
      continue;
    NamedAttrList attrs(global.getArgAttrDict(arg.getArgNumber()));
    if (isa<KVCacheType>(t))
      for (Operation *user : arg.getUsers())
        if (auto attn = dyn_cast<AttentionPartialOp>(user))
          attrs.set(::mlir::helix::attrs::kvLayer, attn.getLayerAttr());
    argTypes.push_back(*local);
    argAttrs.push_back(attrs.getDictionary(ctx));
    kept.push_back(arg);
  }
  auto func = func::FuncOp::create(b, global.getLoc(),
                                   kStageFuncPrefix + std::to_string(stage),
                                   FunctionType::get(ctx, argTypes, {}));
  Block *body = func.addEntryBlock();
  for (auto [i, arg] : llvm::enumerate(kept)) {
    map.map(arg, body->getArgument(i));
    func.setArgAttrs(i, argAttrs[i]);
  }
  func->setAttr(::mlir::helix::attrs::stage, b.getI64IntegerAttr(stage));

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  ib.setInsertionPointToEnd(&prologue);
  for (Operation &op : global.getBody().front())
    if (failed(lower(&op)))
      return failure();
  func::ReturnOp::create(b, global.getLoc(), results);
  body->getOperations().splice(body->begin(), prologue.getOperations());
  func.setType(
      FunctionType::get(ctx, argTypes, ValueRange(results).getTypes()));
  if (results.size() == global.getNumResults())
    for (unsigned i = 0; i < global.getNumResults(); ++i)
      if (DictionaryAttr attrs = global.getResultAttrDict(i))
        func.setResultAttrs(i, attrs.getValue());
  return func;
}

LogicalResult StageBuilder::lower(Operation *op) {
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    for (Value v : ret.getOperands())
      if (Value local = map.lookupOrNull(v))
        results.push_back(local);
    return success();
  }
  if (auto c = dyn_cast<CollectiveOp>(op))
    if (c.getKind() == CollectiveKind::send_recv)
      return lowerCollective(c);
  int64_t s = stageOf(op);
  if (s >= 0 && s != stage)
    return success();
  for (Value operand : op->getOperands())
    if (!map.contains(operand))
      return fail(op, "an operand comes from another pipeline stage without "
                      "a send_recv");
  if (auto c = dyn_cast<CollectiveOp>(op))
    return lowerCollective(c);
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return lowerSlice(slice);
  if (auto start = dyn_cast<AsyncStartOp>(op))
    return lowerAsync(start);
  if (op->getNumRegions() != 0)
    return fail(op, "has regions helix-partition does not know");
  Operation *local = b.clone(*op, map);
  for (auto [g, l] : llvm::zip(op->getResults(), local->getResults())) {
    FailureOr<Type> t = localType(op, g.getType());
    if (failed(t))
      return failure();
    l.setType(*t);
  }
  return fixUp(op, local);
}

/// Operands that depend on which slice the rank holds, computed from its
/// coordinates.
LogicalResult StageBuilder::fixUp(Operation *global, Operation *local) {
  if (auto w = dyn_cast<WeightOp>(local)) {
    Type t = global->getResult(0).getType();
    FailureOr<SplitPart> p = split(global, t);
    if (failed(p))
      return failure();
    if (ArrayRef<int64_t>(w.getViewShape()) == p->type.getShape())
      return success();
    // A box of the view (a part of a fused tensor) starts at its offsets;
    // the rank's slice at the box's offset plus its own.
    SmallVector<int64_t> base = cast<WeightOp>(global).getSliceOffsets();
    SmallVector<int64_t> statics;
    SmallVector<Value> dynamics;
    for (auto [d, s] : llvm::enumerate(p->dims)) {
      if (!s.split()) {
        statics.push_back(base[d]);
        continue;
      }
      FailureOr<Value> o = offset(global, t, d);
      if (failed(o))
        return failure();
      Value at = *o;
      if (base[d] != 0)
        at = arith::AddIOp::create(ib, this->global.getLoc(), at,
                                   constant(base[d]));
      statics.push_back(ShapedType::kDynamic);
      dynamics.push_back(at);
    }
    w.setOffsetsAttr(b.getDenseI64ArrayAttr(statics));
    w.getDynamicOffsetsMutable().assign(dynamics);
    return success();
  }
  // An offset operand: dimension `d` of `v`'s split, when split.
  auto setOffset = [&](Value v, unsigned d, MutableOperandRange operand) {
    FailureOr<SplitPart> p = split(global, v.getType());
    if (failed(p))
      return failure();
    if (!p->dims[d].split())
      return success();
    FailureOr<Value> o = offset(global, v.getType(), d);
    if (failed(o))
      return failure();
    operand.assign(*o);
    return success();
  };
  if (auto e = dyn_cast<EmbedRowsOp>(local))
    return setOffset(cast<EmbedRowsOp>(global).getTable(), 0,
                     e.getVocabOffsetMutable());
  if (auto s = dyn_cast<KVSlotsOp>(local))
    return setOffset(global->getResult(0), 0, s.getRankOffsetMutable());
  // Sparse attention finds the selected tokens it holds by its KVP rank.
  if (auto a = dyn_cast<AttentionPartialOp>(local); a && a.getSelected()) {
    if (failed(setOffset(global->getResult(0), 0, a.getKvpRankMutable())))
      return failure();
    if (!a.getKvpRank())
      a.getKvpRankMutable().assign(constant(0));
    return success();
  }
  // A row-parallel output's bias is added by the rank holding the first
  // slice of the contraction dimension (one per reduction group).
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(local);
  if (auto m = dyn_cast<MoEExpertsOp>(local)) {
    auto g = cast<MoEExpertsOp>(global);
    if (failed(setOffset(g.getExpertWeights().front(), 0,
                         m.getExpertOffsetMutable())))
      return failure();
    // Each expert's down bias: on the first TPF rank of its group.
    if (!m.getExpertBiases().empty() &&
        m.getExpertBiases().size() == m.getExpertWeights().size()) {
      unsigned last = m.getExpertBiases().size() - 1;
      FailureOr<Value> bias =
          biasOnFirst(global, m.getExpertBiases()[last],
                      g.getExpertWeights().back(), g.getFusedGateUp() ? 1 : 2);
      if (failed(bias))
        return failure();
      m.getExpertBiasesMutable()[last].set(*bias);
    }
    return success();
  }
  if (auto mm = dyn_cast<MatmulOp>(local); mm && mm.getBias()) {
    FailureOr<Value> bias = biasOnFirst(global, mm.getBias(),
                                        cast<MatmulOp>(global).getWeight(), 1);
    if (failed(bias))
      return failure();
    mm.getBiasMutable().assign(*bias);
  }
  if (auto mlp = dyn_cast<GatedMLPOp>(local); mlp && mlp.getBDown()) {
    FailureOr<Value> bias = biasOnFirst(global, mlp.getBDown(),
                                        cast<GatedMLPOp>(global).getWDown(), 1);
    if (failed(bias))
      return failure();
    mlp.getBDownMutable().assign(*bias);
  }
  return success();
}

LogicalResult StageBuilder::lowerCollective(CollectiveOp op) {
  Location loc = op.getLoc();
  Value input = map.lookupOrNull(op.getInput());
  // The group is the rank's over the grid axes (the runtime computes its
  // members from the grid and the rank's coordinates).
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("grid", op.getGridAttr()),
      b.getNamedAttr("grid_axes", op.getGridAxesAttr())};
  auto index = [&](StringRef name, std::optional<uint64_t> v) {
    attrs.push_back(b.getNamedAttr(name, b.getIndexAttr(*v)));
  };
  if (op.getKind() == CollectiveKind::send_recv) {
    int64_t from = (*op.getSource())[0], to = (*op.getDestination())[0];
    if (stage == from) {
      attrs.push_back(b.getNamedAttr("destination", op.getDestinationAttr()));
      shard::SendOp::create(b, loc, TypeRange{input.getType()},
                            ValueRange{input}, attrs);
    } else if (stage == to) {
      FailureOr<Type> t = localType(op, op.getType());
      if (failed(t))
        return failure();
      auto tensor = cast<RankedTensorType>(*t);
      Value buffer = tensor::EmptyOp::create(b, loc, tensor.getShape(),
                                             tensor.getElementType());
      attrs.push_back(b.getNamedAttr("source", op.getSourceAttr()));
      map.map(op.getResult(), shard::RecvOp::create(b, loc, TypeRange{tensor},
                                                    ValueRange{buffer}, attrs)
                                  ->getResult(0));
    }
    return success();
  }
  FailureOr<Type> t = localType(op, op.getType());
  if (failed(t))
    return failure();
  Operation *local = nullptr;
  Type resultType = *t;
  ArrayRef<Type> types(resultType);
  ArrayRef<Value> operands(input);
  switch (op.getKind()) {
  case CollectiveKind::all_reduce:
    local = shard::AllReduceOp::create(b, loc, types, operands, attrs);
    break;
  case CollectiveKind::all_gather:
    index("gather_axis", op.getGatherAxis());
    local = shard::AllGatherOp::create(b, loc, types, operands, attrs);
    break;
  case CollectiveKind::reduce_scatter:
    index("scatter_axis", op.getScatterAxis());
    local = shard::ReduceScatterOp::create(b, loc, types, operands, attrs);
    break;
  case CollectiveKind::all_slice:
    index("slice_axis", op.getSliceAxis());
    local = shard::AllSliceOp::create(b, loc, types, operands, attrs);
    break;
  case CollectiveKind::all_to_all:
    index("split_axis", op.getSplitAxis());
    index("concat_axis", op.getConcatAxis());
    local = shard::AllToAllOp::create(b, loc, types, operands, attrs);
    break;
  case CollectiveKind::broadcast:
    attrs.push_back(b.getNamedAttr("root", op.getRootAttr()));
    local = shard::BroadcastOp::create(b, loc, types, operands, attrs);
    break;
  case CollectiveKind::send_recv:
    llvm_unreachable("handled above");
  }
  map.map(op.getResult(), local->getResult(0));
  return success();
}

/// A slice along dimensions the rank holds whole keeps its offsets; a
/// dimension the rank holds a part of must be taken whole.
LogicalResult StageBuilder::lowerSlice(tensor::ExtractSliceOp op) {
  auto source = cast<RankedTensorType>(op.getSourceType());
  FailureOr<Type> src = localType(op, source);
  FailureOr<Type> res = localType(op, op.getType());
  if (failed(src) || failed(res))
    return failure();
  auto local = cast<RankedTensorType>(*res);
  auto localSrc = cast<RankedTensorType>(*src);
  if (!op.hasUnitStride() || op.getType().getRank() != source.getRank())
    return fail(op, "only unit-stride, rank-preserving slices are supported");
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t d = 0; d < source.getRank(); ++d) {
    int64_t offset = op.getStaticOffsets()[d];
    bool whole = localSrc.getDimSize(d) == source.getDimSize(d);
    if (!whole &&
        (offset != 0 || op.getType().getDimSize(d) != source.getDimSize(d)))
      return fail(op, "slices dimension " + Twine(d) +
                          ", which the ranks hold parts of");
    offsets.push_back(b.getIndexAttr(whole ? offset : 0));
    sizes.push_back(b.getIndexAttr(local.getDimSize(d)));
    strides.push_back(b.getIndexAttr(1));
  }
  map.map(op.getResult(), tensor::ExtractSliceOp::create(
                              b, op.getLoc(), local, map.lookup(op.getSource()),
                              offsets, sizes, strides));
  return success();
}

LogicalResult StageBuilder::lowerAsync(AsyncStartOp op) {
  FailureOr<Type> t = localType(op, op.getType());
  if (failed(t))
    return failure();
  auto start = AsyncStartOp::create(b, op.getLoc(), *t);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&start.getBody().emplaceBlock());
  for (Operation &inner : op.getBody().front()) {
    if (auto yield = dyn_cast<AsyncYieldOp>(inner)) {
      SmallVector<Value> values;
      for (Value v : yield.getValues())
        values.push_back(map.lookup(v));
      AsyncYieldOp::create(b, yield.getLoc(), values);
      continue;
    }
    if (failed(lower(&inner)))
      return failure();
  }
  map.map(op.getResult(), start.getResult());
  return success();
}

struct Partition : public mlir::helix::impl::HelixPartitionBase<Partition> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp global = ::helix::findDecodeStep(module);
    FailureOr<Grids> grids = Grids::read(module, "helix-partition");
    if (failed(grids))
      return signalPassFailure();
    if (!global) {
      module.emitError() << "helix-partition: no global-view decode step "
                            "(func.func @decode_step)";
      return signalPassFailure();
    }
    for (int64_t stage = 0; stage < grids->stages(); ++stage) {
      StageBuilder builder(global, *grids, stage);
      FailureOr<func::FuncOp> program = builder.build();
      if (failed(program))
        return signalPassFailure();
      if (layerFunctions)
        outlineLayers(*program);
    }
    // The plan and model describe the whole module now.
    for (StringRef name :
         {::mlir::helix::attrs::plan, ::mlir::helix::attrs::model,
          ::mlir::helix::attrs::microBatches, ::mlir::helix::attrs::mtp})
      if (Attribute a = global->getAttr(name))
        module->setAttr(name, a);
    global.erase();
    if (failed(verifyRankIR(module, "helix-partition")))
      return signalPassFailure();
    int64_t weights = 0, collectives = 0;
    module.walk([&](Operation *op) {
      weights += isa<WeightOp>(op);
      collectives += isa<CollectiveOp>(op);
    });
    LLVM_DEBUG(llvm::dbgs() << "helix-partition: " << grids->stages()
                            << " stage programs over " << grids->devices
                            << " ranks, " << weights << " weight loads, "
                            << collectives << " collectives\n");
  }
};

} // namespace
