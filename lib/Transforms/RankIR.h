//===- RankIR.h - Grids, ranks and local shapes -----------------*- C++ -*-===//
//
// Private to lib/Transforms. What helix-partition and
// helix-verify-partition share: the module's device grids, a rank's
// coordinates on them (row-major), the local shape and offsets a rank holds
// of a #helix.dist value, and the rank-IR checker.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_TRANSFORMS_RANKIR_H
#define HELIX_LIB_TRANSFORMS_RANKIR_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace helix::sharding {

inline constexpr const char *kRankFuncPrefix = "decode_step_rank";
/// On every collective of rank IR: the world ranks of its group.
inline constexpr const char *kGroupAttr = "helix.group";

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
};

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

/// The checks of helix-verify-partition; diagnostics name `pass`.
mlir::LogicalResult verifyRankIR(mlir::ModuleOp module, llvm::StringRef pass);

} // namespace helix::sharding

#endif // HELIX_LIB_TRANSFORMS_RANKIR_H
