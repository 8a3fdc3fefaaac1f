//===- GridSymbolUses.cpp - Grids named by sharding ops -------------------===//
//
// SymbolUserOpInterface of the sharding ops: the grids their #helix.dist
// encodings (and helix.collective's `grid`) name must be shard.grid symbols
// with the axes and pipeline stages used. Checked once per symbol-table
// verification rather than in each op's verifier, with cached lookups.
//
//===----------------------------------------------------------------------===//

#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::helix;

namespace {

/// The shape of the shard.grid `name` seen from `op`, or a diagnostic naming
/// `what` refers to it. (Read through the generic "shape" attribute: the
/// dialect does not depend on the shard dialect's library.)
FailureOr<ArrayRef<int64_t>> gridShape(Operation *op, FlatSymbolRefAttr name,
                                       SymbolTableCollection &tables,
                                       StringRef what) {
  Operation *grid = tables.lookupNearestSymbolFrom(op, name);
  auto shape = grid && grid->getName().getStringRef() == "shard.grid"
                   ? grid->getAttrOfType<DenseI64ArrayAttr>("shape")
                   : DenseI64ArrayAttr();
  if (!shape)
    return op->emitOpError() << what << " " << name << " is not a shard.grid";
  return shape.asArrayRef();
}

LogicalResult verifyDist(Operation *op, DistAttr dist,
                         SymbolTableCollection &tables) {
  FailureOr<ArrayRef<int64_t>> shape =
      gridShape(op, dist.getGrid(), tables, "#helix.dist grid");
  if (failed(shape))
    return failure();
  int64_t rank = shape->size();
  SmallVector<int16_t> axes(dist.getPartial());
  for (DenseI16ArrayAttr split : dist.getSplit())
    llvm::append_range(axes, split.asArrayRef());
  for (int16_t a : axes)
    if (a >= rank)
      return op->emitOpError() << "#helix.dist uses axis " << a << " of the "
                               << rank << "-d grid " << dist.getGrid();
  // Axis 0 of the sharding grids is the pipeline stage.
  if (dist.getStage() > 0 && (rank == 0 || dist.getStage() >= (*shape)[0]))
    return op->emitOpError() << "#helix.dist stage " << dist.getStage()
                             << " is not on grid " << dist.getGrid();
  return success();
}

/// Every #helix.dist among the op's operand and result types.
LogicalResult verifyDists(Operation *op, SymbolTableCollection &tables) {
  for (Type t :
       llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
    if (auto tensor = dyn_cast<RankedTensorType>(t))
      if (auto dist = dyn_cast_or_null<DistAttr>(tensor.getEncoding()))
        if (failed(verifyDist(op, dist, tables)))
          return failure();
  return success();
}

} // namespace

LogicalResult CollectiveOp::verifySymbolUses(SymbolTableCollection &tables) {
  FailureOr<ArrayRef<int64_t>> shape =
      gridShape(*this, getGridAttr(), tables, "grid");
  if (failed(shape))
    return failure();
  for (int16_t a : getGridAxes())
    if (a >= int64_t(shape->size()))
      return emitOpError() << "grid_axes [" << getGridAxes()
                           << "] must be axes of the " << shape->size()
                           << "-d grid " << getGridAttr();
  return verifyDists(*this, tables);
}

#define HELIX_DIST_USER(Op)                                                    \
  LogicalResult Op::verifySymbolUses(SymbolTableCollection &tables) {          \
    return verifyDists(*this, tables);                                         \
  }
HELIX_DIST_USER(WeightOp)
HELIX_DIST_USER(EmbedRowsOp)
HELIX_DIST_USER(NormRowsOp)
HELIX_DIST_USER(MatmulOp)
HELIX_DIST_USER(GroupSumOp)
HELIX_DIST_USER(QKVOp)
HELIX_DIST_USER(MLAQKVOp)
HELIX_DIST_USER(AttentionPartialOp)
HELIX_DIST_USER(LSECombineOp)
HELIX_DIST_USER(GatedMLPOp)
HELIX_DIST_USER(MoERouterOp)
HELIX_DIST_USER(MoEExpertsOp)
HELIX_DIST_USER(GDNStepOp)
HELIX_DIST_USER(IndexCandidatesOp)
HELIX_DIST_USER(TopkMergeOp)
HELIX_DIST_USER(OutputGateOp)
#undef HELIX_DIST_USER
