//===- CodegenAttention.cpp - KV placement and attention of rank IR -------===//
//
// helix.kv_slots (the #helix.kv_placement arithmetic), the packed partial
// attention of helix.attention_partial (with ring slots for sliding-window
// shards) and its exact recombination, helix.lse_combine.
//
//===----------------------------------------------------------------------===//

#include "helix/Runtime/Codegen.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace helix {
namespace rt {
namespace cg {

namespace {

/// Positions below `n` that KVP rank `r` holds.
int64_t ownedBelow(int64_t n, int64_t r, int64_t block, int64_t kvp) {
  int64_t round = block * kvp;
  return (n / round) * block +
         std::min(block, std::max<int64_t>(0, n % round - r * block));
}

} // namespace

std::tuple<Ints, Ints> kvSlots(const Ints &positions, int64_t block,
                               int64_t kvp, int64_t capacity, int64_t window,
                               int64_t rankOffset, int64_t ranks) {
  int64_t B = static_cast<int64_t>(positions.data.size());
  Ints slots{{ranks, B}, {}}, spans{{ranks, B, 2}, {}};
  for (int64_t i = 0; i < ranks; ++i) {
    int64_t r = rankOffset + i;
    for (int64_t b = 0; b < B; ++b) {
      int64_t p = positions.data[b];
      int64_t end = ownedBelow(p + 1, r, block, kvp);
      int64_t begin =
          window > 0
              ? ownedBelow(std::max<int64_t>(0, p + 1 - window), r, block, kvp)
              : 0;
      bool mine = (p / block) % kvp == r;
      slots.data.push_back(mine ? (end - 1) % capacity : -1);
      spans.data.push_back(begin);
      spans.data.push_back(end);
    }
  }
  return {slots, spans};
}

Tensor attentionPartial(Context &ctx, const Tensor &q, const Tensor &k,
                        const Tensor &v, KVCache cache, const Tensor &wUV,
                        const Ints &slots, const Ints &spans, int64_t rowBase,
                        int64_t batchOffset, int64_t headSplit, float scale) {
  int64_t B = q.dim(0), Hq = q.dim(1);
  check(slots.data.size() == static_cast<size_t>(B) &&
            spans.data.size() == static_cast<size_t>(2 * B),
        "attention_partial: expected the slots and spans of one KV shard "
        "for " +
            std::to_string(B) + " rows");
  int64_t row0 = rowBase + batchOffset;
  check(row0 >= 0 && row0 + B <= cache.config.batch,
        "attention_partial: rows [" + std::to_string(row0) + ", " +
            std::to_string(row0 + B) + ") outside the " +
            std::to_string(cache.config.batch) + " rows of the KV shard");
  KVCache c = cache.rows(row0, row0 + B);
  kvAppend(ctx, c, k, v.defined() ? &v : nullptr, slots.data);

  // The entries a row holds are local indices [begin, end), stored in a
  // ring of `capacity` slots: one or two slot ranges.
  int64_t cap = c.config.capacity;
  std::vector<int64_t> b1(B), e1(B), b2(B, 0), e2(B, 0);
  bool wraps = false;
  for (int64_t r = 0; r < B; ++r) {
    int64_t begin = spans.data[2 * r], n = spans.data[2 * r + 1] - begin;
    check(n >= 0 && n <= cap, "attention_partial: row " + std::to_string(r) +
                                  " holds " + std::to_string(n) +
                                  " entries, more than the " +
                                  std::to_string(cap) + " slots of its shard");
    b1[r] = n ? begin % cap : 0;
    e1[r] = std::min(cap, b1[r] + n);
    e2[r] = b1[r] + n - e1[r];
    wraps = wraps || e2[r] > 0;
  }
  AttentionPartial part = rt::attentionPartial(ctx, q, c, scale, b1, e1);
  Tensor out = part.out, lse = part.lse;
  if (wraps) {
    AttentionPartial rest = rt::attentionPartial(ctx, q, c, scale, b2, e2);
    int64_t d = out.dim(2);
    Tensor both = concatLast(ctx, out.view({B, 1, Hq * d}),
                             rest.out.view({B, 1, Hq * d}));
    Tensor bothLse =
        concatLast(ctx, lse.view({B, 1, Hq}), rest.lse.view({B, 1, Hq}));
    out =
        rt::lseCombine(ctx, both.view({B, 2, Hq, d}), bothLse.view({B, 2, Hq}));
    lse = rt::logAddExp(ctx, lse, rest.lse);
  }
  if (wUV.defined())
    out = headMatmul(ctx, out, wUV); // MLA: latent -> v_head_dim
  int64_t vd = out.dim(2), s = headSplit;
  check(s >= 1 && vd % s == 0,
        "attention_partial: head_split " + std::to_string(s) +
            " does not divide the value dimension " + std::to_string(vd));
  Tensor l = lse.view({B, Hq, 1}), rep = l;
  for (int64_t i = 1; i < s; ++i)
    rep = concatLast(ctx, rep, l);
  Tensor packed =
      concatLast(ctx, out.view({B, Hq * s, vd / s}), rep.view({B, Hq * s, 1}));
  return packed.view({1, B, Hq * s, vd / s + 1});
}

Tensor lseCombine(Context &ctx, const Tensor &packed, const Tensor &sinks) {
  int64_t P = packed.dim(0), B = packed.dim(1), Hs = packed.dim(2),
          d = packed.dim(3) - 1;
  Tensor t = packed.view({P, B, Hs * (d + 1)});
  if (P > 1 && B > 1)
    t = swapAxes01(ctx, t);
  t = t.view({B, P, Hs, d + 1});
  Tensor partials = sliceLast(ctx, t, 0, d);
  Tensor lse = sliceLast(ctx, t, d, 1).view({B, P, Hs});
  Tensor out =
      rt::lseCombine(ctx, partials, lse, sinks.defined() ? &sinks : nullptr);
  return out.view({B, Hs * d});
}

} // namespace cg
} // namespace rt
} // namespace helix
