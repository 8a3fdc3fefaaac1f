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
  if (keyScales.defined())
    c.keyScales = keyScales.rows(begin, end);
  if (valueScales.defined())
    c.valueScales = valueScales.rows(begin, end);
  return c;
}

KVCache makeKVCache(Context &ctx, const KVCacheConfig &config) {
  check(config.batch >= 1 && config.capacity >= 0 && config.heads >= 1 &&
            config.keyDim >= 1 && config.valueDim >= 1,
        "makeKVCache: batch, heads, keyDim and valueDim must be positive");
  check(!config.valueInKey || config.valueDim <= config.keyDim,
        "makeKVCache: valueInKey needs valueDim <= keyDim");
  DType dt = config.dtype;
  check(dt == DType::F32 || dt == DType::BF16 || dt == DType::F8E4M3 ||
            dt == DType::F4E2M1,
        std::string("makeKVCache: unsupported KV format ") + dtypeName(dt));
  if (dt == DType::F4E2M1)
    check(config.keyDim % 2 == 0 &&
              (config.valueInKey || config.valueDim % 2 == 0),
          "makeKVCache: an FP4 KV cache packs two values per byte and needs "
          "even head dimensions, got keyDim " +
              std::to_string(config.keyDim) + ", valueDim " +
              std::to_string(config.valueDim));
  Context::MemoryScope scope = ctx.memoryScope(MemoryKind::KVCache);
  KVCache c;
  c.config = config;
  int64_t B = config.batch, T = config.capacity, H = config.heads;
  c.keys = ctx.zeros({B, T, H, config.keyDim}, dt);
  if (!config.valueInKey)
    c.values = ctx.zeros({B, T, H, config.valueDim}, dt);
  if (dt == DType::F4E2M1) {
    c.keyScales =
        ctx.zeros({B, T, H, fmt::kvScalesPerHead(config.keyDim)}, DType::U8);
    if (!config.valueInKey)
      c.valueScales = ctx.zeros(
          {B, T, H, fmt::kvScalesPerHead(config.valueDim)}, DType::U8);
  }
  return c;
}

} // namespace rt
} // namespace helix
