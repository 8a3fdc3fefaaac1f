//===- PartialsLayout.h - Where partial attentions lie ----------*- C++ -*-===//
//
// The exact log-sum-exp combine reads S partial attentions per (request,
// head). Two layouts hold them: the one attention() writes (values and LSEs
// in tensors of their own) and the one helix.attention_partial sends
// through the all-to-all (each head's values followed by its LSE). The
// combine kernel reads either in place, so neither needs a layout kernel.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_PARTIALSLAYOUT_H
#define HELIX_RUNTIME_PARTIALSLAYOUT_H

#include <cstdint>

namespace helix {
namespace rt {

/// Value i of shard s for (request b, head h) is at
///   values[b * batchStride + s * shardStride + h * headStride + i],
/// its log-sum-exp at
///   lse[b * lseBatchStride + s * lseShardStride + h * lseHeadStride].
struct PartialsLayout {
  int64_t batch = 0, shards = 0, heads = 0, dim = 0;
  int64_t batchStride = 0, shardStride = 0, headStride = 0;
  int64_t lseBatchStride = 0, lseShardStride = 0, lseHeadStride = 0;

  /// Values [B, S, h, d] and LSEs [B, S, h], each contiguous.
  static PartialsLayout separate(int64_t B, int64_t S, int64_t h, int64_t d) {
    return {B, S, h, d, S * h * d, h * d, d, S * h, h, 1};
  }
  /// The all-to-all's packing [S, B, h, d + 1]: each head's d values, then
  /// its LSE (the LSE pointer is the values' plus d).
  static PartialsLayout packed(int64_t S, int64_t B, int64_t h, int64_t d) {
    int64_t head = d + 1, request = h * head, shard = B * request;
    return {B, S, h, d, request, shard, head, request, shard, head};
  }
  /// The values' extent in floats (from their first element), and the
  /// LSEs'.
  int64_t valuesSpan() const {
    return (batch - 1) * batchStride + (shards - 1) * shardStride +
           (heads - 1) * headStride + dim;
  }
  int64_t lseSpan() const {
    return (batch - 1) * lseBatchStride + (shards - 1) * lseShardStride +
           (heads - 1) * lseHeadStride + 1;
  }
};

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_PARTIALSLAYOUT_H
