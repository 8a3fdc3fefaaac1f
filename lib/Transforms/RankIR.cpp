//===- RankIR.cpp - Grids, ranks and local shapes -------------------------===//

#include "RankIR.h"

#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

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

FailureOr<LocalPart> localPart(RankedTensorType global, const Grids &grids,
                               int64_t rank, std::string &error) {
  LocalPart part;
  part.offsets.assign(global.getRank(), 0);
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
  ArrayRef<int64_t> shape = grids.shapes.find(name)->second;
  SmallVector<int64_t> coords = grids.coords(name, rank);
  // Index of the rank among the ranks of `axes` (first axis major), and
  // their number.
  auto indexOver = [&](ArrayRef<int16_t> axes) -> std::pair<int64_t, int64_t> {
    int64_t index = 0, n = 1;
    for (int16_t a : axes) {
      index = index * shape[a] + coords[a];
      n *= shape[a];
    }
    return {index, n};
  };
  SmallVector<int64_t> local(global.getShape());
  for (int64_t d = 0; d < global.getRank(); ++d) {
    auto [index, n] = indexOver(dist.getSplitAxes(d));
    int64_t size = global.getDimSize(d);
    if (size % n == 0) {
      local[d] = size / n;
      part.offsets[d] = index * local[d];
    } else if (n % size == 0) {
      // More ranks than elements: each element duplicated n / size times.
      local[d] = 1;
      part.offsets[d] = index / (n / size);
    } else {
      error = "dimension " + std::to_string(d) + " of " + std::to_string(size) +
              " does not split over " + std::to_string(n) + " ranks";
      return failure();
    }
  }
  part.type = RankedTensorType::get(local, global.getElementType());
  return part;
}

} // namespace helix::sharding
