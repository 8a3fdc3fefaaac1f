//===- KVCache.h - Local KV shard and round-robin placement -----*- C++ -*-===//
//
// Each rank holds only its shard of the KV cache. Helix appends KV entries
// round-robin over the KVP ranks in blocks of `blockTokens` positions
// (16 in the paper): positions [0, 16) go to KVP rank 0, [16, 32) to rank 1,
// ..., wrapping around. KVPlacement maps global positions to the owner and
// the local slot; the mapping is monotonic, so the positions a row may
// attend to (its whole context, or its sliding window) are a contiguous
// range of local slots.
//
// KVCache: keys [batch, capacity, heads, keyDim] and values
// [batch, capacity, heads, valueDim]. With `valueInKey` (MLA's absorbed
// form) only keys are stored: the cached latent followed by the RoPE key,
// and the value is the first `valueDim` entries of the key.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_KVCACHE_H
#define HELIX_RUNTIME_KVCACHE_H

#include "helix/Runtime/Tensor.h"

#include <cstdint>
#include <vector>

namespace helix {
namespace rt {

class Context;

struct KVPlacement {
  int64_t kvpSize = 1;
  int64_t kvpRank = 0;
  int64_t blockTokens = 16;

  KVPlacement() = default;
  KVPlacement(int64_t kvpSize, int64_t kvpRank, int64_t blockTokens = 16);

  /// KVP rank that stores `position`.
  int64_t owner(int64_t position) const;
  /// Local slot of `position` on this rank, or -1 if another rank owns it.
  int64_t localSlot(int64_t position) const;
  /// Number of positions in [0, length) stored on this rank: the local slots
  /// of those positions are [0, localCount(length)).
  int64_t localCount(int64_t length) const;
  /// Global position of local slot `slot`.
  int64_t positionOfSlot(int64_t slot) const;
  /// Local slots needed for positions [0, maxContext).
  int64_t capacity(int64_t maxContext) const { return localCount(maxContext); }

  /// Per-row slots for appending `positions` (-1 where another rank owns it).
  std::vector<int64_t> appendSlots(const std::vector<int64_t> &positions) const;
  /// Per-row local slot ranges [begin, end) a query at context length
  /// `contextLengths[r]` (positions 0 .. len-1, the current one included)
  /// attends to; `window` > 0 restricts to the last `window` positions.
  void attendRange(const std::vector<int64_t> &contextLengths, int64_t window,
                   std::vector<int64_t> &begin,
                   std::vector<int64_t> &end) const;
};

struct KVCacheConfig {
  int64_t batch = 0;
  int64_t capacity = 0; // local slots per row
  int64_t heads = 0;    // local KV heads (1 for MLA)
  int64_t keyDim = 0;
  int64_t valueDim = 0;
  bool valueInKey = false; // MLA: value = keys[..., :valueDim]
  /// Stored format (docs/quantization.md): F32, BF16, F8E4M3 (per-tensor
  /// scale 1) or F4E2M1 (NVFP4: an E4M3 scale per 16 values of a head).
  DType dtype = DType::F32;
};

struct KVCache {
  KVCacheConfig config;
  Tensor keys;   // [batch, capacity, heads, keyDim]
  Tensor values; // [batch, capacity, heads, valueDim]; undefined if valueInKey
  /// F4E2M1 caches: the E4M3 scales, [batch, capacity, heads, dim / 16] U8.
  Tensor keyScales, valueScales;

  /// Rows [begin, end) of the batch (for HOP-B chunks), sharing memory.
  KVCache rows(int64_t begin, int64_t end) const;
};

/// Allocates a zeroed cache on the context's backend.
KVCache makeKVCache(Context &ctx, const KVCacheConfig &config);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_KVCACHE_H
