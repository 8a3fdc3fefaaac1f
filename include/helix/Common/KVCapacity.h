//===- KVCapacity.h - Token slots a KVP rank holds per request --*- C++ -*-===//
//
// How many KV slots one rank of the round-robin placement (paper 2.3:
// blocks of `block` tokens dealt to the `kvp` ranks in turn) needs per
// request: helix-kv-placement sizes the program's shards with it and the
// planner's memory terms count it. Header-only and dependency-free.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_KVCAPACITY_H
#define HELIX_COMMON_KVCAPACITY_H

#include <algorithm>
#include <cstdint>

namespace helix {

/// ceil(a / b) for a >= 0, b > 0, without the overflow of (a + b - 1) / b.
inline int64_t kvCeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/// Token slots one rank needs per request: its round-robin share of the
/// context (whole blocks), or of a window (window > 0: the ring holds the
/// window's blocks on this rank plus the one being filled). With context
/// and block at most 2^40 the result is at most 2 * context + 2 * block:
/// no overflow, and ceil(ceil(w / block) / kvp) = ceil(w / (block * kvp))
/// needs no product.
inline int64_t kvSlotsPerRank(int64_t context, int64_t window, int64_t block,
                              int64_t kvp) {
  int64_t full = kvCeilDiv(kvCeilDiv(context, block), kvp) * block;
  if (window <= 0)
    return full;
  int64_t ring =
      (kvCeilDiv(kvCeilDiv(std::min(window, context), block), kvp) + 1) * block;
  return std::min(full, ring);
}

} // namespace helix

#endif // HELIX_COMMON_KVCAPACITY_H
