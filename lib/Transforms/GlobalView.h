//===- GlobalView.h - Building sharded IR in global view --------*- C++ -*-===//
//
// Private to lib/Transforms. What helix-insert-collectives knows about the
// plan (ShardPlan: strategy, widths, batch, stages) and a builder for
// global-view IR (GlobalView: grid axes with the size-1 ones dropped,
// #helix.dist types, checkpoint weights, and collectives whose result
// distribution is derived from their input's).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_TRANSFORMS_GLOBALVIEW_H
#define HELIX_LIB_TRANSFORMS_GLOBALVIEW_H

#include "helix/Cost/Layout.h"
#include "helix/Cost/PerLayer.h"
#include "helix/Cost/Placement.h"
#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace helix::sharding {

/// Axes of the attention grid @helix_attn (pp x dp x kvp x tpa) and of the
/// FFN grid @helix_ffn (pp x replicas x ep x tpf). Both cover the same GPUs
/// in row-major rank order; axis 0 is the pipeline stage on both.
enum AttnAxis : int16_t { kPP = 0, kDP = 1, kKVP = 2, kTPA = 3 };
enum FFNAxis : int16_t { kReplica = 1, kEP = 2, kTPF = 3 };

inline constexpr const char *kAttnGrid = "helix_attn";
inline constexpr const char *kFFNGrid = "helix_ffn";

/// What the planned IR says about the sharding: the plan's strategy and
/// layout, and their placement (the strategy rules the cost model prices,
/// helix/Cost/Placement.h).
struct ShardPlan {
  Strategy strategy = Strategy::Helix;
  Layout layout;
  Placement place;
  int64_t replicas = 1;     // FFN copies per stage (kvp: the KVP ranks)
  int64_t batch = 1;        // rows of the global-view step
  int64_t planBatch = 1;    // the plan's batch
  int64_t cacheRows = 1;    // KV cache rows of each layer
  int64_t microBatches = 1; // tp-pp: micro-batches per round
  int64_t queries = 1;      // query rows per request (MTP verify: K + 1)
  int64_t layers = 1;
  std::string modelType;
  /// A per-layer plan (docs/per-layer-layouts.md): each op is lowered on
  /// the grids of its own #helix.layout (forOp); empty for uniform plans.
  std::optional<PerLayerChoice> perLayer;

  /// The plan an op of a per-layer plan is lowered with: its layout's
  /// widths (attention kvp x tpa, FFN group tpf x ep, replicated), their
  /// placement (kindPlacement).
  ShardPlan forLayout(mlir::helix::LayoutAttr layout) const;

  int64_t stageOf(int64_t layer) const;
  /// The attention partials go through the KVP all-to-all (Helix).
  bool allToAll() const {
    return place.exchange == Placement::Exchange::AllToAll;
  }
  /// The attention partials are all-gathered over KVP (Medha-style kvp).
  bool allGather() const {
    return place.exchange == Placement::Exchange::AllGather;
  }
  /// Tokens split over the DP attention replicas (ep).
  bool tokensSplit() const { return place.tokensSplit; }

  /// Reads the plan of the decode step `func` (helix.plan, the layouts of
  /// its ops, helix.model); emits a diagnostic and fails when it is not
  /// planned IR.
  static mlir::FailureOr<ShardPlan> read(mlir::func::FuncOp func);
};

using Axes = llvm::SmallVector<int16_t>;

/// A device grid the global view uses: its symbol and shape (4 axes).
struct GridDecl {
  std::string name;
  std::array<int64_t, 4> shape;
};

class GlobalView {
public:
  GlobalView(mlir::OpBuilder &b, const ShardPlan &plan);

  mlir::OpBuilder &b;
  /// The plan of the ops being built: the whole plan's, or, in a per-layer
  /// plan, the op's own layout's (select).
  ShardPlan plan;
  /// Their grids; replicated values use @helix_attn whatever is selected.
  mlir::FlatSymbolRefAttr attnGrid, ffnGrid;
  mlir::Location loc;
  int64_t stage = 0; // pipeline stage of the ops being built

  /// Per-layer plans: lower `op` on the grids of its own layout (ops
  /// without one, and uniform plans: the plan's @helix_attn, @helix_ffn).
  void select(mlir::Operation *op);
  /// The grids used so far, @helix_attn and @helix_ffn first.
  const std::vector<GridDecl> &grids() const { return declared; }

  /// Axes of a grid, those of size 1 dropped.
  Axes attn(std::initializer_list<int16_t> axes) const;
  Axes ffn(std::initializer_list<int16_t> axes) const;
  int64_t size(mlir::FlatSymbolRefAttr grid,
               llvm::ArrayRef<int16_t> axes) const;

  /// The encoding of a value of the current stage: null for a replicated
  /// value without pipeline stages; replicated values use @helix_attn.
  mlir::Attribute dist(mlir::FlatSymbolRefAttr grid, llvm::ArrayRef<Axes> split,
                       llvm::ArrayRef<int16_t> partial = {}) const;
  mlir::RankedTensorType type(llvm::ArrayRef<int64_t> shape, mlir::Type elem,
                              mlir::Attribute dist) const;
  mlir::RankedTensorType replicated(llvm::ArrayRef<int64_t> shape,
                                    mlir::Type elem) const;
  /// The same tensor type with `dist`.
  static mlir::RankedTensorType withDist(mlir::Type type, mlir::Attribute dist);

  /// The checkpoint tensor `name` (stored as `shape`, seen as `view`, or
  /// `shape` when empty) split over `split`.
  mlir::Value weight(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                     llvm::ArrayRef<int64_t> view, mlir::Type elem,
                     mlir::FlatSymbolRefAttr grid, llvm::ArrayRef<Axes> split);
  mlir::Value weight(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                     mlir::Type elem) {
    return weight(name, shape, {}, elem, attnGrid, {});
  }
  /// The box [offsets, offsets + box) of the view `view` of checkpoint
  /// tensor `name` (stored as `shape`) split over `split`: a part of a
  /// fused tensor (each rank's slice of the box starts at the box's offset).
  mlir::Value weightBox(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                        llvm::ArrayRef<int64_t> view,
                        llvm::ArrayRef<int64_t> offsets,
                        llvm::ArrayRef<int64_t> box, mlir::Type elem,
                        mlir::FlatSymbolRefAttr grid,
                        llvm::ArrayRef<Axes> split);

  /// Collectives over `axes` of `grid` (size-1 axes already dropped): the
  /// result's distribution is the input's after the collective; no axes,
  /// no op.
  mlir::Value allReduce(mlir::Value v, mlir::FlatSymbolRefAttr grid,
                        const Axes &axes);
  mlir::Value allGather(mlir::Value v, mlir::FlatSymbolRefAttr grid,
                        const Axes &axes, int64_t dim);
  mlir::Value reduceScatter(mlir::Value v, mlir::FlatSymbolRefAttr grid,
                            const Axes &axes, int64_t dim);
  mlir::Value allSlice(mlir::Value v, mlir::FlatSymbolRefAttr grid,
                       const Axes &axes, int64_t dim);
  mlir::Value allToAll(mlir::Value v, mlir::FlatSymbolRefAttr grid,
                       const Axes &axes, int64_t splitDim, int64_t concatDim);
  /// Moves `v` from pipeline stage `from` to `from + 1`.
  mlir::Value sendRecv(mlir::Value v, int64_t from);

private:
  mlir::Value collective(mlir::helix::CollectiveKind kind, mlir::Value v,
                         mlir::FlatSymbolRefAttr grid, const Axes &axes,
                         mlir::Attribute resultDist,
                         llvm::ArrayRef<mlir::NamedAttribute> extra);
  /// The grid of `name` with `shape`, declared on first use.
  mlir::FlatSymbolRefAttr grid(const std::string &name,
                               const std::array<int64_t, 4> &shape);
  const std::array<int64_t, 4> &shapeOf(mlir::FlatSymbolRefAttr grid) const;

  const ShardPlan base;
  mlir::FlatSymbolRefAttr replicatedGrid;
  std::vector<GridDecl> declared;
};

/// The split lists and partial axes of a value (empty when replicated).
struct ValueDist {
  llvm::SmallVector<Axes> split;
  Axes partial;
};
ValueDist distOf(mlir::Value v);

} // namespace helix::sharding

#endif // HELIX_LIB_TRANSFORMS_GLOBALVIEW_H
