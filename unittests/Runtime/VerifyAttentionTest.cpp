//===- VerifyAttentionTest.cpp - Attention of a speculative verify step ---===//
//
// cg::attentionPartial over K + 1 query rows per request (helix compile
// --mtp): every row's packed output (partial attention and LSE) must be
// what decoding its position alone, after the request's earlier rows, gives
// -- on one KV head (the read-once path) and on two (one pass per query),
// on two KVP ranks that each hold part of the new positions.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "helix/Runtime/Codegen.h"

namespace helix {
namespace rt {
namespace {

using test::randomVector;

struct Case {
  int64_t heads; // KV heads (query heads: 2 per KV head)
  int64_t kvpRank;
};

class VerifyAttention : public ::testing::TestWithParam<Case> {};

TEST_P(VerifyAttention, RowsMatchDecodingEachPositionAlone) {
  HELIX_NEED_CONTEXT(ctx);
  const Case c = GetParam();
  const int64_t B = 2, q = 3, K = c.heads, Hq = 2 * K, D = 8, block = 2,
                kvp = 2, capacity = 16;
  KVCacheConfig cfg;
  cfg.batch = B;
  cfg.capacity = capacity;
  cfg.heads = K;
  cfg.keyDim = D;
  cfg.valueDim = D;
  KVCache once = makeKVCache(*ctx, cfg), alone = makeKVCache(*ctx, cfg);
  // Request r is at position p[r]; its rows feed p[r] .. p[r] + 2.
  std::vector<int64_t> p = {5, 2};
  auto tensor = [&](int64_t rows, int64_t heads, uint64_t seed) {
    return ctx->upload(randomVector(rows * heads * D, seed), {rows, heads, D});
  };
  float scale = 0.3f;
  // The earlier positions, one step at a time in both caches.
  for (int64_t t = 0; t < 5; ++t) {
    cg::Ints pos{{B}, {std::min(t, p[0] - 1), std::min(t, p[1] - 1)}};
    auto [slots, spans] =
        cg::kvSlots(pos, block, kvp, capacity, 0, c.kvpRank, 1);
    Tensor qt = tensor(B, Hq, 100 + t), kt = tensor(B, K, 200 + t),
           vt = tensor(B, K, 300 + t);
    for (KVCache *cache : {&once, &alone})
      cg::attentionPartial(*ctx, qt, kt, vt, *cache, Tensor(), slots, spans, 0,
                           0, 1, scale);
  }
  // The verify step: rows r * q + j at p[r] + j.
  cg::Ints pos{{B * q}, {}};
  for (int64_t r = 0; r < B; ++r)
    for (int64_t j = 0; j < q; ++j)
      pos.data.push_back(p[r] + j);
  auto [slots, spans] = cg::kvSlots(pos, block, kvp, capacity, 0, c.kvpRank, 1);
  Tensor qv = tensor(B * q, Hq, 7), kv = tensor(B * q, K, 8),
         vv = tensor(B * q, K, 9);
  std::vector<float> got = ctx->download(cg::attentionPartial(
      *ctx, qv, kv, vv, once, Tensor(), slots, spans, 0, 0, 1, scale, q));
  // Decoding the positions one at a time: row j of every request.
  int64_t width = Hq * (D + 1);
  ASSERT_EQ(got.size(), static_cast<size_t>(B * q * width));
  std::vector<float> hq = ctx->download(qv), hk = ctx->download(kv),
                     hv = ctx->download(vv);
  for (int64_t j = 0; j < q; ++j) {
    auto rowsOf = [&](const std::vector<float> &h, int64_t heads) {
      std::vector<float> out;
      for (int64_t r = 0; r < B; ++r)
        out.insert(out.end(), h.begin() + (r * q + j) * heads * D,
                   h.begin() + (r * q + j + 1) * heads * D);
      return ctx->upload(out, {B, heads, D});
    };
    cg::Ints pj{{B}, {p[0] + j, p[1] + j}};
    auto [s1, sp1] = cg::kvSlots(pj, block, kvp, capacity, 0, c.kvpRank, 1);
    std::vector<float> want = ctx->download(
        cg::attentionPartial(*ctx, rowsOf(hq, Hq), rowsOf(hk, K), rowsOf(hv, K),
                             alone, Tensor(), s1, sp1, 0, 0, 1, scale));
    for (int64_t r = 0; r < B; ++r)
      for (int64_t i = 0; i < width; ++i) {
        float g = got[(r * q + j) * width + i], w = want[r * width + i];
        if (std::isinf(w))
          EXPECT_EQ(g, w) << "request " << r << " row " << j << " value " << i;
        else
          EXPECT_NEAR(g, w, 1e-5 * (1 + std::fabs(w)))
              << "request " << r << " row " << j << " value " << i;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Heads, VerifyAttention,
                         ::testing::Values(Case{1, 0}, Case{1, 1}, Case{2, 0},
                                           Case{2, 1}),
                         [](const ::testing::TestParamInfo<Case> &i) {
                           return "kv_heads" + std::to_string(i.param.heads) +
                                  "_kvp_rank" + std::to_string(i.param.kvpRank);
                         });

} // namespace
} // namespace rt
} // namespace helix
