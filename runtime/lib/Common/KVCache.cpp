//===- KVCache.cpp - Round-robin KV placement and local caches ------------===//

#include "helix/Runtime/KVCache.h"
#include "helix/Runtime/Backend.h"
#include "helix/Runtime/Context.h"
#include "helix/Runtime/Error.h"

#include <algorithm>

namespace helix {
namespace rt {

KVPlacement::KVPlacement(int64_t kvpSize, int64_t kvpRank, int64_t blockTokens)
    : kvpSize(kvpSize), kvpRank(kvpRank), blockTokens(blockTokens) {
  check(kvpSize >= 1 && kvpRank >= 0 && kvpRank < kvpSize && blockTokens >= 1,
        "KVPlacement: expected 0 <= kvpRank < kvpSize and blockTokens >= 1, "
        "got kvpSize " +
            std::to_string(kvpSize) + ", kvpRank " + std::to_string(kvpRank) +
            ", blockTokens " + std::to_string(blockTokens));
}

int64_t KVPlacement::owner(int64_t position) const {
  return (position / blockTokens) % kvpSize;
}

int64_t KVPlacement::localSlot(int64_t position) const {
  if (owner(position) != kvpRank)
    return -1;
  int64_t block = position / blockTokens;
  return (block / kvpSize) * blockTokens + position % blockTokens;
}

int64_t KVPlacement::localCount(int64_t length) const {
  if (length <= 0)
    return 0;
  int64_t blocks = length / blockTokens, rem = length % blockTokens;
  int64_t full = blocks / kvpSize + (blocks % kvpSize > kvpRank ? 1 : 0);
  return full * blockTokens + (blocks % kvpSize == kvpRank ? rem : 0);
}

int64_t KVPlacement::positionOfSlot(int64_t slot) const {
  return ((slot / blockTokens) * kvpSize + kvpRank) * blockTokens +
         slot % blockTokens;
}

std::vector<int64_t>
KVPlacement::appendSlots(const std::vector<int64_t> &positions) const {
  std::vector<int64_t> slots(positions.size());
  for (size_t r = 0; r < positions.size(); ++r)
    slots[r] = localSlot(positions[r]);
  return slots;
}

void KVPlacement::attendRange(const std::vector<int64_t> &contextLengths,
                              int64_t window, std::vector<int64_t> &begin,
                              std::vector<int64_t> &end) const {
  begin.resize(contextLengths.size());
  end.resize(contextLengths.size());
  for (size_t r = 0; r < contextLengths.size(); ++r) {
    int64_t len = contextLengths[r];
    int64_t first = window > 0 ? std::max<int64_t>(0, len - window) : 0;
    begin[r] = localCount(first);
    end[r] = localCount(len);
  }
}

KVCache KVCache::rows(int64_t begin, int64_t end) const {
  KVCache c = *this;
  c.config.batch = end - begin;
  c.keys = keys.rows(begin, end);
  if (values.defined())
    c.values = values.rows(begin, end);
  return c;
}

KVCache makeKVCache(Context &ctx, const KVCacheConfig &config) {
  check(config.batch >= 1 && config.capacity >= 0 && config.heads >= 1 &&
            config.keyDim >= 1 && config.valueDim >= 1,
        "makeKVCache: batch, heads, keyDim and valueDim must be positive");
  check(!config.valueInKey || config.valueDim <= config.keyDim,
        "makeKVCache: valueInKey needs valueDim <= keyDim");
  KVCache c;
  c.config = config;
  c.keys =
      ctx.zeros({config.batch, config.capacity, config.heads, config.keyDim});
  if (!config.valueInKey)
    c.values = ctx.zeros(
        {config.batch, config.capacity, config.heads, config.valueDim});
  return c;
}

} // namespace rt
} // namespace helix
