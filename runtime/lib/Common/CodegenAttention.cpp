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

/// log(exp(a) + exp(b)), -inf when both are.
float logAddExp(float a, float b) {
  const float ninf = -std::numeric_limits<float>::infinity();
  if (a == ninf)
    return b;
  if (b == ninf)
    return a;
  double m = std::max(a, b);
  return static_cast<float>(m + std::log(std::exp(a - m) + std::exp(b - m)));
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

/// One block of rows, each with its own cache row of `c`: appends k (and
/// v) at `slots`, attends q over `spans` (a ring of the shard's capacity
/// slots), applies W_UV for MLA, and packs [B, Hq * s, Dv / s + 1].
static Tensor packedAttention(Context &ctx, const Tensor &q, const Tensor &k,
                              const Tensor &v, KVCache c, const Tensor &wUV,
                              const std::vector<int64_t> &slots,
                              const std::vector<int64_t> &spans,
                              int64_t headSplit, float scale) {
  int64_t B = q.dim(0), Hq = q.dim(1);
  kvAppend(ctx, c, k, v.defined() ? &v : nullptr, slots);

  // The entries a row holds are local indices [begin, end), stored in a
  // ring of `capacity` slots: one or two slot ranges.
  int64_t cap = c.config.capacity;
  std::vector<int64_t> b1(B), e1(B), b2(B, 0), e2(B, 0);
  bool wraps = false;
  for (int64_t r = 0; r < B; ++r) {
    int64_t begin = spans[2 * r], n = spans[2 * r + 1] - begin;
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
    std::vector<float> l1 = ctx.download(lse), l2 = ctx.download(rest.lse);
    for (size_t i = 0; i < l1.size(); ++i)
      l1[i] = logAddExp(l1[i], l2[i]);
    lse = ctx.upload(l1, {B, Hq});
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
  return concatLast(ctx, out.view({B, Hq * s, vd / s}),
                    rep.view({B, Hq * s, 1}));
}

/// x [B * q, ...] request-major -> [q * B, ...]: query j of every request
/// in block j.
static Tensor queryMajor(Context &ctx, const Tensor &x, int64_t q) {
  int64_t rows = x.dim(0), rest = x.numel() / rows;
  std::vector<int64_t> shape = x.shape();
  return swapAxes01(ctx, x.view({rows / q, q, rest})).view(shape);
}

Tensor attentionPartial(Context &ctx, const Tensor &q, const Tensor &k,
                        const Tensor &v, KVCache cache, const Tensor &wUV,
                        const Ints &slots, const Ints &spans, int64_t rowBase,
                        int64_t batchOffset, int64_t headSplit, float scale,
                        int64_t queries) {
  int64_t R = q.dim(0);
  check(slots.data.size() == static_cast<size_t>(R) &&
            spans.data.size() == static_cast<size_t>(2 * R),
        "attention_partial: expected the slots and spans of one KV shard "
        "for " +
            std::to_string(R) + " rows");
  check(queries >= 1 && R % queries == 0 && batchOffset % queries == 0,
        "attention_partial: " + std::to_string(R) + " rows from " +
            std::to_string(batchOffset) + " are not whole requests of " +
            std::to_string(queries) + " queries");
  int64_t B = R / queries, row0 = rowBase + batchOffset / queries;
  check(row0 >= 0 && row0 + B <= cache.config.batch,
        "attention_partial: rows [" + std::to_string(row0) + ", " +
            std::to_string(row0 + B) + ") outside the " +
            std::to_string(cache.config.batch) + " rows of the KV shard");
  KVCache c = cache.rows(row0, row0 + B);
  if (queries == 1) {
    Tensor packed = packedAttention(ctx, q, k, v, c, wUV, slots.data,
                                    spans.data, headSplit, scale);
    return packed.view({1, R, packed.dim(1), packed.dim(2)});
  }
  // A verify step: block j holds every request's j-th query (the request's
  // rows are at consecutive positions). Block j appends its entries, then
  // attends within its spans, before block j + 1: each row sees the
  // request's earlier queries' entries and none of its later drafts'.
  Tensor qT = queryMajor(ctx, q, queries), kT = queryMajor(ctx, k, queries);
  Tensor vT = v.defined() ? queryMajor(ctx, v, queries) : Tensor();
  std::vector<Tensor> blocks;
  for (int64_t j = 0; j < queries; ++j) {
    std::vector<int64_t> bSlots, bSpans;
    for (int64_t r = 0; r < B; ++r) {
      int64_t i = r * queries + j;
      bSlots.push_back(slots.data[i]);
      bSpans.push_back(spans.data[2 * i]);
      bSpans.push_back(spans.data[2 * i + 1]);
    }
    blocks.push_back(packedAttention(
        ctx, qT.rows(j * B, (j + 1) * B), kT.rows(j * B, (j + 1) * B),
        vT.defined() ? vT.rows(j * B, (j + 1) * B) : Tensor(), c, wUV, bSlots,
        bSpans, headSplit, scale));
  }
  Tensor all = concat(ctx, 0, blocks); // [q * B, Hq * s, d + 1]
  int64_t w = all.dim(1), d = all.dim(2);
  Tensor back = swapAxes01(ctx, all.view({queries, B, w * d}));
  return back.view({1, R, w, d});
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
