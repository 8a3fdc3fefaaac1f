//===- RankIR.h - Grids, ranks and local shapes -----------------*- C++ -*-===//
//
// Private to lib/Transforms. What helix-partition and
// helix-verify-partition share: the module's device grids, a rank's
// coordinates on them (row-major), the local shape of a #helix.dist value
// and how each rank's offsets follow from its coordinates, the evaluation
// of SPMD rank IR's index values for one rank, and the rank-IR checker.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_TRANSFORMS_RANKIR_H
#define HELIX_LIB_TRANSFORMS_RANKIR_H

#include "helix/Dialect/Helix/HelixDialect.h"
#include "helix/Dialect/Helix/RankIRNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace helix::sharding {

// The programs' names: helix/Dialect/Helix/RankIRNames.h.
using ::helix::rankir::kDraftFuncPrefix;
using ::helix::rankir::kStageFuncPrefix;

/// The shard.grid symbols of a module: name -> shape.
struct Grids {
  llvm::StringMap<llvm::SmallVector<int64_t>> shapes;
  llvm::SmallVector<std::string> order; // declaration order
  int64_t devices = 0;                  // ranks every grid covers

  /// Reads the module's grids; fails (with a diagnostic) when there are none
  /// or they do not cover the same number of devices.
  static mlir::FailureOr<Grids> read(mlir::ModuleOp module,
                                     llvm::StringRef pass);
  /// Row-major coordinates of `rank` on grid `name`.
  llvm::SmallVector<int64_t> coords(llvm::StringRef name, int64_t rank) const;
  /// The ranks of `rank`'s group over `axes` of grid `name`, in in-group
  /// index order (the first axis major): what a collective on those axes
  /// exchanges with.
  llvm::SmallVector<int64_t> group(llvm::StringRef name, int64_t rank,
                                   llvm::ArrayRef<int16_t> axes) const;
  /// The index of `rank` over `axes` of grid `name` (first axis major).
  int64_t indexOver(llvm::StringRef name, int64_t rank,
                    llvm::ArrayRef<int16_t> axes) const;
  /// The pipeline stage of `rank` (axis 0 of the first grid).
  int64_t stageOf(int64_t rank) const { return coords(order.front(), rank)[0]; }
  int64_t stages() const { return shapes.find(order.front())->second[0]; }
  /// The first rank of pipeline stage `stage`.
  int64_t firstRankOf(int64_t stage) const {
    return stage * (devices / stages());
  }
};

/// How one dimension of a global-view tensor is split over the ranks: the
/// grid axes (first major) and the rank's index `i` over them, of `ranks`.
/// The rank holds `local` elements starting at `i * local`, or, when there
/// are more ranks than elements (`duplicated` > 1), the one element
/// `i / duplicated`.
struct DimSplit {
  llvm::SmallVector<int16_t> axes;
  int64_t ranks = 1;
  int64_t local = 0;
  int64_t duplicated = 1;
  bool split() const { return ranks > 1; }
  int64_t offset(int64_t index) const {
    return duplicated > 1 ? index / duplicated : index * local;
  }
};

/// The part every rank holds of a global-view tensor, the same for all:
/// its static local type and, per dimension, how the offset follows from
/// the rank's coordinates on `grid`.
struct SplitPart {
  mlir::RankedTensorType type; // static local type, no encoding
  std::string grid;            // empty: replicated
  llvm::SmallVector<DimSplit> dims;
};

/// The split of `global` (a tensor with or without #helix.dist); fails with
/// a message when a dimension does not split over its ranks.
mlir::FailureOr<SplitPart> splitPart(mlir::RankedTensorType global,
                                     const Grids &grids, std::string &error);

/// The part of a global-view tensor one rank holds.
struct LocalPart {
  mlir::RankedTensorType type; // static local type, no encoding
  llvm::SmallVector<int64_t> offsets;
};

/// The part of `global` (a tensor with or without #helix.dist) that rank
/// `rank` holds; fails with a message when a dimension does not split over
/// its ranks.
mlir::FailureOr<LocalPart> localPart(mlir::RankedTensorType global,
                                     const Grids &grids, int64_t rank,
                                     std::string &error);

/// The rank-dependent index values of an SPMD program (computed from
/// shard.process_multi_index / process_linear_index with arith) evaluated
/// for one rank.
class RankValues {
public:
  RankValues(const Grids &grids, int64_t rank) : grids(grids), rank(rank) {}
  /// The value of `v` (an index or i1 computed from the rank's coordinates
  /// and constants); fails with a message for anything else.
  mlir::FailureOr<int64_t> eval(mlir::Value v, std::string &error);
  /// Entering `callee` at `call`: its arguments are the call's operands.
  void enterCall(mlir::func::CallOp call, mlir::func::FuncOp callee);

private:
  const Grids &grids;
  int64_t rank;
  llvm::DenseMap<mlir::Value, int64_t> known;
  llvm::DenseMap<mlir::Value, mlir::Value> argument;
};

/// Visits the ops of a stage program in execution order, a layer
/// function's at each call of it (after `values->enterCall`, when given);
/// stops at the first failure.
mlir::LogicalResult
walkProgram(mlir::func::FuncOp program, RankValues *values,
            llvm::function_ref<mlir::LogicalResult(mlir::Operation *)> visit);

/// Outlines the decoder layers of a stage program into one private function
/// per distinct kind of layer (`helix.layers`), called once per layer.
void outlineLayers(mlir::func::FuncOp stage);

/// The checks of helix-verify-partition; diagnostics name `pass`.
mlir::LogicalResult verifyRankIR(mlir::ModuleOp module, llvm::StringRef pass);

} // namespace helix::sharding

#endif // HELIX_LIB_TRANSFORMS_RANKIR_H
