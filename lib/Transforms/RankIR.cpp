//===- RankIR.cpp - Grids, ranks and local shapes -------------------------===//

#include "RankIR.h"

#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::helix;

namespace helix::sharding {

FailureOr<Grids> Grids::read(ModuleOp module, StringRef pass) {
  Grids g;
  for (auto grid : module.getOps<shard::GridOp>()) {
    ArrayRef<int64_t> shape = grid.getShape();
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    if (llvm::any_of(shape, ShapedType::isDynamic) || n <= 0)
      return grid.emitError() << pass << ": grid @" << grid.getSymName()
                              << " needs a static shape";
    if (g.devices && n != g.devices)
      return grid.emitError()
             << pass << ": grid @" << grid.getSymName() << " covers " << n
             << " devices, the others " << g.devices;
    g.devices = n;
    g.shapes[grid.getSymName()] = SmallVector<int64_t>(shape);
    g.order.push_back(grid.getSymName().str());
  }
  if (!g.devices)
    return module.emitError() << pass
                              << ": the module has no shard.grid "
                                 "(run helix-insert-collectives first)";
  return g;
}

SmallVector<int64_t> Grids::coords(StringRef name, int64_t rank) const {
  ArrayRef<int64_t> shape = shapes.find(name)->second;
  SmallVector<int64_t> c(shape.size());
  for (int64_t i = int64_t(shape.size()) - 1; i >= 0; --i) {
    c[i] = rank % shape[i];
    rank /= shape[i];
  }
  return c;
}

SmallVector<int64_t> Grids::group(StringRef name, int64_t rank,
                                  ArrayRef<int16_t> axes) const {
  ArrayRef<int64_t> shape = shapes.find(name)->second;
  SmallVector<int64_t> c = coords(name, rank);
  int64_t size = 1;
  for (int16_t a : axes)
    size *= shape[a];
  SmallVector<int64_t> members;
  for (int64_t index = 0; index < size; ++index) {
    int64_t rest = index;
    for (int64_t j = int64_t(axes.size()) - 1; j >= 0; --j) {
      c[axes[j]] = rest % shape[axes[j]];
      rest /= shape[axes[j]];
    }
    int64_t r = 0;
    for (auto [d, x] : llvm::zip(shape, c))
      r = r * d + x;
    members.push_back(r);
  }
  return members;
}

int64_t Grids::indexOver(StringRef name, int64_t rank,
                         ArrayRef<int16_t> axes) const {
  ArrayRef<int64_t> shape = shapes.find(name)->second;
  SmallVector<int64_t> c = coords(name, rank);
  int64_t index = 0;
  for (int16_t a : axes)
    index = index * shape[a] + c[a];
  return index;
}

FailureOr<SplitPart> splitPart(RankedTensorType global, const Grids &grids,
                               std::string &error) {
  SplitPart part;
  part.dims.resize(global.getRank());
  for (auto [d, split] : llvm::enumerate(part.dims))
    split.local = global.getDimSize(d);
  auto dist = dyn_cast_or_null<DistAttr>(global.getEncoding());
  if (!dist) {
    part.type =
        RankedTensorType::get(global.getShape(), global.getElementType());
    return part;
  }
  StringRef name = dist.getGrid().getValue();
  if (!grids.shapes.count(name)) {
    error = "unknown grid @" + name.str();
    return failure();
  }
  part.grid = name.str();
  ArrayRef<int64_t> shape = grids.shapes.find(name)->second;
  SmallVector<int64_t> local(global.getShape());
  for (int64_t d = 0; d < global.getRank(); ++d) {
    DimSplit &split = part.dims[d];
    split.axes.assign(dist.getSplitAxes(d).begin(), dist.getSplitAxes(d).end());
    for (int16_t a : split.axes)
      split.ranks *= shape[a];
    int64_t size = global.getDimSize(d), n = split.ranks;
    if (size % n == 0) {
      split.local = size / n;
    } else if (n % size == 0) {
      // More ranks than elements: each element duplicated n / size times.
      split.local = 1;
      split.duplicated = n / size;
    } else {
      error = "dimension " + std::to_string(d) + " of " + std::to_string(size) +
              " does not split over " + std::to_string(n) + " ranks";
      return failure();
    }
    local[d] = split.local;
  }
  part.type = RankedTensorType::get(local, global.getElementType());
  return part;
}

FailureOr<LocalPart> localPart(RankedTensorType global, const Grids &grids,
                               int64_t rank, std::string &error) {
  FailureOr<SplitPart> split = splitPart(global, grids, error);
  if (failed(split))
    return failure();
  LocalPart part{split->type, {}};
  for (const DimSplit &d : split->dims)
    part.offsets.push_back(
        d.split() ? d.offset(grids.indexOver(split->grid, rank, d.axes)) : 0);
  return part;
}

void RankValues::enterCall(func::CallOp call, func::FuncOp callee) {
  // Values inside the callee depend on this call's operands.
  for (auto [arg, actual] :
       llvm::zip(callee.getArguments(), call.getOperands())) {
    argument[arg] = actual;
    known.erase(arg);
  }
  callee.walk([&](Operation *op) {
    for (Value r : op->getResults())
      known.erase(r);
  });
}

LogicalResult walkProgram(func::FuncOp program, RankValues *values,
                          function_ref<LogicalResult(Operation *)> visit) {
  WalkResult walk = program.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (failed(visit(op)))
      return WalkResult::interrupt();
    if (auto call = dyn_cast<func::CallOp>(op)) {
      // (func.call's verifier checks that the callee is a function.)
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (values)
        values->enterCall(call, callee);
      if (failed(walkProgram(callee, values, visit)))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

FailureOr<int64_t> RankValues::eval(Value v, std::string &error) {
  if (auto it = known.find(v); it != known.end())
    return it->second;
  Operation *def = v.getDefiningOp();
  auto fail = [&](const Twine &why) -> FailureOr<int64_t> {
    error = why.str();
    return failure();
  };
  if (!def) {
    if (Value actual = argument.lookup(v))
      return eval(actual, error);
    return fail("an index value is a block argument; rank-dependent values "
                "must be computed from the rank's grid coordinates");
  }
  auto grid = def->getAttrOfType<FlatSymbolRefAttr>("grid");
  if (isa<shard::ProcessMultiIndexOp, shard::ProcessLinearIndexOp>(def) &&
      (!grid || !grids.shapes.count(grid.getValue())))
    return fail("the coordinates of an unknown grid");
  int64_t result = 0;
  if (auto c = dyn_cast<arith::ConstantOp>(def)) {
    auto attr = dyn_cast<IntegerAttr>(c.getValue());
    if (!attr)
      return fail("a non-integer constant");
    result = attr.getValue().getSExtValue();
  } else if (auto m = dyn_cast<shard::ProcessMultiIndexOp>(def)) {
    unsigned i = cast<OpResult>(v).getResultNumber();
    SmallVector<int64_t> c = grids.coords(grid.getValue(), rank);
    ArrayRef<int16_t> axes = m.getAxes();
    int64_t axis = axes.empty() ? int64_t(i) : axes[i];
    if (axis < 0 || axis >= int64_t(c.size()))
      return fail("a coordinate outside the grid");
    result = c[axis];
  } else if (isa<shard::ProcessLinearIndexOp>(def)) {
    result = rank;
  } else if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivUIOp,
                 arith::DivSIOp, arith::RemUIOp, arith::RemSIOp, arith::CmpIOp>(
                 def)) {
    FailureOr<int64_t> a = eval(def->getOperand(0), error);
    if (failed(a))
      return failure();
    FailureOr<int64_t> b = eval(def->getOperand(1), error);
    if (failed(b))
      return failure();
    if (isa<arith::DivUIOp, arith::DivSIOp, arith::RemUIOp, arith::RemSIOp>(
            def) &&
        *b == 0)
      return fail("a division by zero");
    if (isa<arith::AddIOp>(def))
      result = *a + *b;
    else if (isa<arith::SubIOp>(def))
      result = *a - *b;
    else if (isa<arith::MulIOp>(def))
      result = *a * *b;
    else if (isa<arith::DivUIOp, arith::DivSIOp>(def))
      result = *a / *b;
    else if (isa<arith::RemUIOp, arith::RemSIOp>(def))
      result = *a % *b;
    else {
      auto cmp = cast<arith::CmpIOp>(def);
      switch (cmp.getPredicate()) {
      case arith::CmpIPredicate::eq:
        result = *a == *b;
        break;
      case arith::CmpIPredicate::ne:
        result = *a != *b;
        break;
      default:
        return fail("a comparison other than eq / ne");
      }
    }
  } else {
    return fail("'" + def->getName().getStringRef() +
                "' does not compute a value from the rank's coordinates");
  }
  known[v] = result;
  return result;
}

} // namespace helix::sharding
