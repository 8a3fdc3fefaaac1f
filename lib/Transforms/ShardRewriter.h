//===- ShardRewriter.h - Model IR ops to sharded global view ----*- C++ -*-===//
//
// Private to lib/Transforms. helix-insert-collectives walks the planned
// decode step op by op; each model op has a rewriter that builds its
// sharded algorithm (ShardAttention.cpp, ShardFFN.cpp, ShardStream.cpp)
// through the shared state below.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_TRANSFORMS_SHARDREWRITER_H
#define HELIX_LIB_TRANSFORMS_SHARDREWRITER_H

#include "GlobalView.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace helix::sharding {

struct ShardRewriter {
  ShardRewriter(GlobalView &g, mlir::Type act) : g(g), act(act) {}

  GlobalView &g;
  mlir::Type act;      // activation (and weight) element type
  mlir::IRMapping map; // model IR value -> global-view value
  mlir::Value rowBase; // tp-pp: first cache row of the micro-batch
  /// MLA: the kv_b_proj weight of a layer's projection, keyed by the q it
  /// produced; the attention's W_UV reads it.
  llvm::DenseMap<mlir::Value, mlir::Value> latentUpProj;

  /// The global-view value of `old`, moved to the current stage through
  /// send_recv when it was produced on an earlier one.
  mlir::Value get(mlir::Value old);
  void set(mlir::Value old, mlir::Value now) { map.map(old, now); }

  /// Grid axes the batch is split over (DP attention).
  Axes batchAxes() const;
  /// Where a value crosses into a layout that needs it whole: the
  /// collectives that make it replicated (all-reduce its partial sums,
  /// all-gather its split dimensions) or, for the residual stream, only
  /// split over the batch as the stream is.
  mlir::Value replicate(mlir::Value v);
  mlir::Value toStream(mlir::Value v);
  /// The step's positions (or any per-request vector), batch-split like the
  /// stream.
  mlir::Value streamPositions(mlir::Value old);

  mlir::FailureOr<int64_t> stageOfOp(mlir::Operation *op);

private:
  mlir::Value gather(mlir::Value v, bool keepBatch);
  llvm::DenseMap<std::pair<mlir::Value, int64_t>, mlir::Value> moved;
  llvm::DenseMap<std::pair<mlir::Value, int64_t>, mlir::Value> sliced;
};

/// Pipeline stage of a global-view value (-1: every stage).
int64_t stageOfValue(mlir::Value v);

mlir::LogicalResult shardEmbed(ShardRewriter &r, mlir::helix::EmbedOp op);
mlir::LogicalResult shardNorm(ShardRewriter &r, mlir::helix::RMSNormOp op);
mlir::LogicalResult shardAdd(ShardRewriter &r, mlir::helix::AddOp op);
mlir::LogicalResult shardLMHead(ShardRewriter &r, mlir::helix::LMHeadOp op);
mlir::LogicalResult shardQKV(ShardRewriter &r, mlir::helix::QKVProjOp op);
mlir::LogicalResult shardAttention(ShardRewriter &r,
                                   mlir::helix::AttentionOp op);
mlir::LogicalResult shardLinear(ShardRewriter &r, mlir::helix::LinearOp op);
/// DeepSeek Sparse Attention (ShardAttention.cpp): the indexer's candidates
/// per KV shard, gathered and merged into the exact top-k, and the MLA
/// partials over the selected tokens.
mlir::LogicalResult shardIndexer(ShardRewriter &r,
                                 mlir::helix::DSAIndexerOp op);
mlir::LogicalResult shardSparseAttention(ShardRewriter &r,
                                         mlir::helix::SparseAttentionOp op);
/// A Gated DeltaNet layer (ShardRecurrent.cpp): its heads over TPA.
mlir::LogicalResult shardLinearAttention(ShardRewriter &r,
                                         mlir::helix::LinearAttentionOp op);
mlir::LogicalResult shardFFN(ShardRewriter &r, mlir::helix::FFNOp op);
mlir::LogicalResult shardMoE(ShardRewriter &r, mlir::helix::MoEOp op);
/// The MTP drafter (ShardDraft.cpp): the concatenation of the normalized
/// embedding and hidden state, and eh_proj over it.
bool isDraftProjection(mlir::helix::LinearOp op);
mlir::LogicalResult shardDraftProjection(ShardRewriter &r,
                                         mlir::helix::LinearOp op);
mlir::LogicalResult shardConcat(ShardRewriter &r, mlir::tensor::ConcatOp op);

} // namespace helix::sharding

#endif // HELIX_LIB_TRANSFORMS_SHARDREWRITER_H
