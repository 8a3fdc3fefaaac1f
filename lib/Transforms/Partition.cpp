//===- Partition.cpp - helix-partition ------------------------------------===//
//
// Global view to one SPMD program per rank: every value gets the local
// static shape its #helix.dist gives the rank, weights the offsets of the
// slice the rank loads, KV caches the rank's !helix.kv_shard, collectives
// become the upstream shard ops (send_recv a shard.send on the sending
// stage and a shard.recv on the receiving one), and a rank keeps only the
// ops of its pipeline stage.
//
//===----------------------------------------------------------------------===//

#include "RankIR.h"

#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/ModelIR/ModelIR.h"
#include "helix/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

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

/// Builds the program of one rank.
class RankBuilder {
public:
  RankBuilder(func::FuncOp global, const Grids &grids, int64_t rank)
      : global(global), grids(grids), rank(rank), b(global) {
    stage = grids.coords(grids.order.front(), rank).front();
  }

  FailureOr<func::FuncOp> build();

private:
  func::FuncOp global;
  const Grids &grids;
  int64_t rank, stage;
  OpBuilder b;
  IRMapping map;
  SmallVector<Value> results;

  InFlightDiagnostic fail(Operation *op, const Twine &why) {
    return op->emitOpError() << "helix-partition: rank " << rank << ": " << why;
  }
  FailureOr<LocalPart> part(Operation *at, Type global);
  FailureOr<Type> localType(Operation *at, Type global);
  FailureOr<Type> cacheType(BlockArgument cache);
  LogicalResult lower(Operation *op);
  LogicalResult lowerCollective(CollectiveOp op);
  LogicalResult lowerSlice(tensor::ExtractSliceOp op);
  LogicalResult lowerAsync(AsyncStartOp op);
  LogicalResult fixUp(Operation *global, Operation *local);
};

FailureOr<LocalPart> RankBuilder::part(Operation *at, Type global) {
  std::string error;
  FailureOr<LocalPart> p =
      localPart(cast<RankedTensorType>(global), grids, rank, error);
  if (failed(p))
    return fail(at, error);
  return p;
}

FailureOr<Type> RankBuilder::localType(Operation *at, Type global) {
  if (auto async = dyn_cast<AsyncType>(global)) {
    FailureOr<LocalPart> p = part(at, async.getValue());
    if (failed(p))
      return failure();
    return Type(AsyncType::get(global.getContext(), p->type));
  }
  if (!isa<RankedTensorType>(global))
    return global;
  FailureOr<LocalPart> p = part(at, global);
  if (failed(p))
    return failure();
  return Type(p->type);
}

/// The rank's shard of a layer's KV cache, from the attention that reads it.
FailureOr<Type> RankBuilder::cacheType(BlockArgument cache) {
  auto type = cast<KVCacheType>(cache.getType());
  for (Operation *user : cache.getUsers()) {
    auto attn = dyn_cast<AttentionPartialOp>(user);
    if (!attn || (stageOf(user) != stage && stageOf(user) >= 0))
      continue;
    if (!attn.getPlacement())
      return fail(attn, "the attention has no KV placement (run "
                        "helix-kv-placement first)");
    FailureOr<LocalPart> k = part(attn, attn.getK().getType());
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
    FailureOr<LocalPart> r = part(attn, rows);
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

FailureOr<func::FuncOp> RankBuilder::build() {
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
          attrs.set("helix.kv_layer", attn.getLayerAttr());
    argTypes.push_back(*local);
    argAttrs.push_back(attrs.getDictionary(ctx));
    kept.push_back(arg);
  }
  auto func = func::FuncOp::create(b, global.getLoc(),
                                   kRankFuncPrefix + std::to_string(rank),
                                   FunctionType::get(ctx, argTypes, {}));
  Block *body = func.addEntryBlock();
  for (auto [i, arg] : llvm::enumerate(kept)) {
    map.map(arg, body->getArgument(i));
    func.setArgAttrs(i, argAttrs[i]);
  }
  SmallVector<NamedAttribute> coords;
  for (const std::string &grid : grids.order)
    coords.push_back(
        b.getNamedAttr(grid, b.getDenseI64ArrayAttr(grids.coords(grid, rank))));
  func->setAttr("helix.rank", b.getI64IntegerAttr(rank));
  func->setAttr("helix.coords", b.getDictionaryAttr(coords));

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  for (Operation &op : global.getBody().front())
    if (failed(lower(&op)))
      return failure();
  func::ReturnOp::create(b, global.getLoc(), results);
  func.setType(
      FunctionType::get(ctx, argTypes, ValueRange(results).getTypes()));
  // Biases other ranks add are not loaded here.
  func.walk([](WeightOp w) {
    if (w->use_empty())
      w->erase();
  });
  return func;
}

LogicalResult RankBuilder::lower(Operation *op) {
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

/// Attributes and operands that depend on which slice the rank holds.
LogicalResult RankBuilder::fixUp(Operation *global, Operation *local) {
  auto offsetOf = [&](Value v, unsigned d) -> FailureOr<int64_t> {
    FailureOr<LocalPart> p = part(global, v.getType());
    if (failed(p))
      return failure();
    return p->offsets[d];
  };
  // A row-parallel output's bias is added by the rank holding the first
  // slice of the contraction dimension (one per reduction group).
  auto firstSlice = [&](Value weight, unsigned d) {
    FailureOr<int64_t> o = offsetOf(weight, d);
    return succeeded(o) && *o == 0;
  };
  if (auto w = dyn_cast<WeightOp>(local)) {
    FailureOr<LocalPart> p = part(global, global->getResult(0).getType());
    if (failed(p))
      return failure();
    if (ArrayRef<int64_t>(w.getViewShape()) != p->type.getShape())
      w.setOffsetsAttr(b.getDenseI64ArrayAttr(p->offsets));
    return success();
  }
  if (auto e = dyn_cast<EmbedRowsOp>(local)) {
    FailureOr<int64_t> o = offsetOf(cast<EmbedRowsOp>(global).getTable(), 0);
    if (failed(o))
      return failure();
    e.setVocabOffset(*o);
  }
  if (auto s = dyn_cast<KVSlotsOp>(local)) {
    FailureOr<int64_t> o = offsetOf(global->getResult(0), 0);
    if (failed(o))
      return failure();
    s.setRankOffset(*o);
  }
  if (auto m = dyn_cast<MoEExpertsOp>(local)) {
    FailureOr<int64_t> o =
        offsetOf(cast<MoEExpertsOp>(global).getExpertWeights().front(), 0);
    if (failed(o))
      return failure();
    m.setExpertOffset(*o);
    // Each expert's down bias: on the first TPF rank of its group.
    auto g = cast<MoEExpertsOp>(global);
    Value down = g.getExpertWeights().back();
    if (!firstSlice(down, g.getFusedGateUp() ? 1 : 2) &&
        !m.getExpertBiases().empty() &&
        m.getExpertBiases().size() == m.getExpertWeights().size())
      m.getExpertBiasesMutable().erase(m.getExpertBiases().size() - 1);
  }
  if (auto mm = dyn_cast<MatmulOp>(local);
      mm && mm.getBias() && !firstSlice(cast<MatmulOp>(global).getWeight(), 1))
    mm.getBiasMutable().clear();
  if (auto mlp = dyn_cast<GatedMLPOp>(local);
      mlp && mlp.getBDown() &&
      !firstSlice(cast<GatedMLPOp>(global).getWDown(), 1))
    mlp.getBDownMutable().clear();
  return success();
}

LogicalResult RankBuilder::lowerCollective(CollectiveOp op) {
  Location loc = op.getLoc();
  Value input = map.lookupOrNull(op.getInput());
  // The group's members, explicit for the runtime's communicators.
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("grid", op.getGridAttr()),
      b.getNamedAttr("grid_axes", op.getGridAxesAttr()),
      b.getNamedAttr(kGroupAttr, b.getDenseI64ArrayAttr(grids.group(
                                     op.getGrid(), rank, op.getGridAxes())))};
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
LogicalResult RankBuilder::lowerSlice(tensor::ExtractSliceOp op) {
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

LogicalResult RankBuilder::lowerAsync(AsyncStartOp op) {
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
    for (int64_t rank = 0; rank < grids->devices; ++rank) {
      RankBuilder builder(global, *grids, rank);
      if (failed(builder.build()))
        return signalPassFailure();
    }
    // The plan and model describe the whole module now.
    for (StringRef name : {"helix.plan", "helix.model", "helix.micro_batches"})
      if (Attribute a = global->getAttr(name))
        module->setAttr(name, a);
    global.erase();
    if (failed(verifyRankIR(module, "helix-partition")))
      signalPassFailure();
  }
};

} // namespace
