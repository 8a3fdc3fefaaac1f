//===- TrafficCounts.h - Bytes as the CUDA kernels read them ----*- C++ -*-===//
//
// What a weight or a KV range costs in bytes as stored, with its block
// scales: the CUDA backend's traffic counts (Backend::traffic) and
// helix-bench-kernels --measure's achieved bandwidths use these.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_LIB_TRAFFICCOUNTS_H
#define HELIX_RUNTIME_LIB_TRAFFICCOUNTS_H

#include "helix/Runtime/KVCache.h"
#include "helix/Runtime/NumberFormats.h"

#include <cmath>

namespace helix {
namespace rt {

/// Bytes of `n` elements stored in `dtype`, with the block scales they use
/// (desc null: none).
inline double storedBytes(DType dtype, const BlockScaleDesc *desc, int64_t n) {
  double b = double(dtypeBytes(dtype, n));
  if (desc)
    b += std::ceil(double(n) / double(desc->blockRows * desc->blockCols)) *
         (desc->type == ScaleType::F32 ? 4.0 : 1.0);
  return b;
}

/// Bytes of `tokens` KV entries of a cache (keys and values, the NVFP4
/// scales: an E4M3 per 16 values).
inline double kvEntryBytes(const KVCacheConfig &c, double tokens) {
  int64_t per = c.keyDim + (c.valueInKey ? 0 : c.valueDim);
  double elems = tokens * double(c.heads * per);
  double b = elems * double(dtypeBits(c.dtype)) / 8;
  if (c.dtype == DType::F4E2M1)
    b += elems / 16;
  return b;
}

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_TRAFFICCOUNTS_H
