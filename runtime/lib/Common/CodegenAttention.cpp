//===- CodegenAttention.cpp - KV placement and attention of rank IR -------===//
//
// helix.kv_slots (the #helix.kv_placement arithmetic), the packed partial
// attention of helix.attention_partial (with ring slots for sliding-window
// shards) and its exact recombination, helix.lse_combine.
//
//===----------------------------------------------------------------------===//

#include "CodegenDetail.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace helix {
namespace rt {
namespace cg {

int64_t ownedBelow(int64_t n, int64_t r, int64_t block, int64_t kvp) {
  int64_t round = block * kvp;
  return (n / round) * block +
         std::min(block, std::max<int64_t>(0, n % round - r * block));
}

namespace {

/// The exact softmax over the union of two sets of entries from their
/// partial attentions (out [B, H, d], lse [B, H]), on the device.
AttentionPartial mergePartials(Context &ctx, const AttentionPartial &a,
                               const AttentionPartial &b) {
  int64_t B = a.out.dim(0), H = a.out.dim(1), d = a.out.dim(2);
  Tensor both =
      concatLast(ctx, a.out.view({B, 1, H * d}), b.out.view({B, 1, H * d}));
  Tensor bothLse =
      concatLast(ctx, a.lse.view({B, 1, H}), b.lse.view({B, 1, H}));
  AttentionPartial m;
  m.out = rt::lseCombine(ctx, both.view({B, 2, H, d}), bothLse.view({B, 2, H}));
  m.lse = rt::logAddExp(ctx, a.lse, b.lse);
  return m;
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

/// The slot ranges of local entries [begin, end) of each row (spans:
/// begin, end per row) in a ring of the shard's capacity slots: [b1, e1),
/// and [b2, e2) where the range wraps around the ring.
struct SlotRanges {
  std::vector<int64_t> b1, e1, b2, e2;
  bool wraps = false;
};
static SlotRanges slotRanges(int64_t B, const KVCache &c,
                             const std::vector<int64_t> &spans) {
  int64_t cap = c.config.capacity;
  SlotRanges s;
  s.b1.resize(B);
  s.e1.resize(B);
  s.b2.assign(B, 0);
  s.e2.assign(B, 0);
  for (int64_t r = 0; r < B; ++r) {
    int64_t begin = spans[2 * r], n = spans[2 * r + 1] - begin;
    check(n >= 0 && n <= cap, "attention_partial: row " + std::to_string(r) +
                                  " holds " + std::to_string(n) +
                                  " entries, more than the " +
                                  std::to_string(cap) + " slots of its shard");
    s.b1[r] = n ? begin % cap : 0;
    s.e1[r] = std::min(cap, s.b1[r] + n);
    s.e2[r] = s.b1[r] + n - s.e1[r];
    s.wraps = s.wraps || s.e2[r] > 0;
  }
  return s;
}

/// Attention of q [B, Hq, D] over local entries [begin, end) of each row
/// (spans: begin, end per row) of `c`, stored in a ring of the shard's
/// capacity slots: one or two slot ranges, merged exactly.
static AttentionPartial attendSpans(Context &ctx, const Tensor &q,
                                    const KVCache &c,
                                    const std::vector<int64_t> &spans,
                                    float scale) {
  SlotRanges s = slotRanges(q.dim(0), c, spans);
  AttentionPartial part = rt::attentionPartial(ctx, q, c, scale, s.b1, s.e1);
  if (!s.wraps)
    return part;
  AttentionPartial rest = rt::attentionPartial(ctx, q, c, scale, s.b2, s.e2);
  return mergePartials(ctx, part, rest);
}

Tensor packPartial(Context &ctx, const AttentionPartial &part,
                   const Tensor &wUV, int64_t headSplit) {
  Tensor out = part.out;
  int64_t B = out.dim(0), Hq = out.dim(1);
  if (wUV.defined())
    out = headMatmul(ctx, out, wUV); // MLA: latent -> v_head_dim
  int64_t vd = out.dim(2), s = headSplit;
  check(s >= 1 && vd % s == 0,
        "attention_partial: head_split " + std::to_string(s) +
            " does not divide the value dimension " + std::to_string(vd));
  Tensor l = part.lse.view({B, Hq, 1}), rep = l;
  for (int64_t i = 1; i < s; ++i)
    rep = concatLast(ctx, rep, l);
  return concatLast(ctx, out.view({B, Hq * s, vd / s}),
                    rep.view({B, Hq * s, 1}));
}

/// x [B * q, ...] request-major -> [q * B, ...]: query j of every request
/// in block j (and back with the roles of B and q swapped).
static Tensor swapBlocks(Context &ctx, const Tensor &x, int64_t outer,
                         int64_t inner) {
  int64_t rows = x.dim(0), rest = x.numel() / rows;
  std::vector<int64_t> shape = x.shape();
  return swapAxes01(ctx, x.view({outer, inner, rest})).view(shape);
}

/// The spans of query j of every request (rows r * q + j).
static std::vector<int64_t> blockSpans(const Ints &spans, int64_t q, int64_t j,
                                       int64_t B) {
  std::vector<int64_t> out;
  for (int64_t r = 0; r < B; ++r) {
    out.push_back(spans.data[2 * (r * q + j)]);
    out.push_back(spans.data[2 * (r * q + j) + 1]);
  }
  return out;
}

/// Whether a verify step's attention can read each request's entries once:
/// one KV head (MLA's latent, MQA), every row of a request from the same
/// first entry and at or after its first row's position.
static bool readsOnce(const KVCache &c, const Ints &spans, int64_t q,
                      int64_t B) {
  if (c.config.heads != 1)
    return false;
  for (int64_t r = 0; r < B; ++r)
    for (int64_t j = 1; j < q; ++j) {
      const int64_t *first = &spans.data[2 * r * q], *row = first + 2 * j;
      if (row[0] != first[0] || row[1] < first[1])
        return false;
    }
  return true;
}

/// A verify step's attention, each request's entries read once: all q
/// queries of a request (as q * Hq heads of one row: one KV head serves
/// them all) over the entries its first query sees (positions up to its
/// own), then each query over the request's later entries up to its own
/// position (at most q - 1), merged exactly. [R, Hq, D] request-major.
static AttentionPartial attendOnce(Context &ctx, const Tensor &q,
                                   const KVCache &c, const Ints &spans,
                                   int64_t queries, float scale) {
  int64_t R = q.dim(0), Hq = q.dim(1), D = q.dim(2), B = R / queries;
  AttentionPartial common =
      attendSpans(ctx, q.view({B, queries * Hq, D}), c,
                  blockSpans(spans, queries, 0, B), scale);
  Tensor qT = swapBlocks(ctx, q, B, queries);
  std::vector<Tensor> outs, lses;
  for (int64_t j = 0; j < queries; ++j) {
    std::vector<int64_t> tail = blockSpans(spans, queries, j, B);
    for (int64_t r = 0; r < B; ++r)
      tail[2 * r] = spans.data[2 * r * queries + 1]; // after the first's
    AttentionPartial t =
        attendSpans(ctx, qT.rows(j * B, (j + 1) * B), c, tail, scale);
    outs.push_back(t.out);
    lses.push_back(t.lse);
  }
  AttentionPartial later{swapBlocks(ctx, concat(ctx, 0, outs), queries, B),
                         swapBlocks(ctx, concat(ctx, 0, lses), queries, B)};
  AttentionPartial first{common.out.view({R, Hq, common.out.dim(2)}),
                         common.lse.view({R, Hq})};
  return mergePartials(ctx, first, later);
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
  auto pack = [&](const AttentionPartial &part) {
    Tensor packed = packPartial(ctx, part, wUV, headSplit);
    return packed.view({1, R, packed.dim(1), packed.dim(2)});
  };
  if (queries == 1) {
    kvAppend(ctx, c, k, v.defined() ? &v : nullptr, slots.data);
    // The attention kernel writes the packing itself where nothing comes
    // between it and the all-to-all (no W_UV, one slot range per row).
    SlotRanges r = slotRanges(B, c, spans.data);
    if (!wUV.defined() && !r.wraps) {
      Tensor packed =
          rt::attentionPacked(ctx, q, c, scale, r.b1, r.e1, headSplit);
      return packed.view({1, R, packed.dim(1), packed.dim(2)});
    }
    return pack(attendSpans(ctx, q, c, spans.data, scale));
  }
  // A verify step: block j holds every request's j-th query (1:1 with the
  // cache rows); every block's entries are appended before any attends.
  Tensor kT = swapBlocks(ctx, k, B, queries);
  Tensor vT = v.defined() ? swapBlocks(ctx, v, B, queries) : Tensor();
  for (int64_t j = 0; j < queries; ++j) {
    std::vector<int64_t> blockSlots;
    for (int64_t r = 0; r < B; ++r)
      blockSlots.push_back(slots.data[r * queries + j]);
    Tensor vj = vT.defined() ? vT.rows(j * B, (j + 1) * B) : Tensor();
    kvAppend(ctx, c, kT.rows(j * B, (j + 1) * B), vj.defined() ? &vj : nullptr,
             blockSlots);
  }
  if (readsOnce(c, spans, queries, B))
    return pack(attendOnce(ctx, q, c, spans, queries, scale));
  // Otherwise (several KV heads, sliding windows): block j attends within
  // its rows' spans, the request's entries read once per query.
  Tensor qT = swapBlocks(ctx, q, B, queries);
  std::vector<Tensor> outs, lses;
  for (int64_t j = 0; j < queries; ++j) {
    AttentionPartial t = attendSpans(ctx, qT.rows(j * B, (j + 1) * B), c,
                                     blockSpans(spans, queries, j, B), scale);
    outs.push_back(t.out);
    lses.push_back(t.lse);
  }
  return pack({swapBlocks(ctx, concat(ctx, 0, outs), queries, B),
               swapBlocks(ctx, concat(ctx, 0, lses), queries, B)});
}

Tensor lseCombine(Context &ctx, const Tensor &packed, const Tensor &sinks) {
  int64_t B = packed.dim(1), Hs = packed.dim(2), d = packed.dim(3) - 1;
  // Read in place: no transpose, no slicing (PartialsLayout.h).
  Tensor out =
      rt::lseCombinePacked(ctx, packed, sinks.defined() ? &sinks : nullptr);
  return out.view({B, Hs * d});
}

} // namespace cg
} // namespace rt
} // namespace helix
