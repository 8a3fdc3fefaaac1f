//===- LongContextTest.cpp - Recurrent and sparse layers ------------------===//
//
// The long-context layers' ops through the generated-code adapters
// (Codegen.h) against naive math in double: helix.gdn_step (a Gated
// DeltaNet decode step: two steps so the state carries, a request
// restarting at position 0, two value heads per key head, f32 and resident
// BF16 weights), helix.index_candidates + helix.topk_merge (the lightning
// indexer's selection, ties to the lower position, the cache split over two
// KVP ranks merging to the unsplit selection) and the sparse
// helix.attention_partial (equal to attentionPartial when everything is
// selected, in every KV format; a masked softmax otherwise). Runs on the
// CPU backend (HelixRuntimeTests), the CUDA backend on the emulation
// (HelixRuntimeCudaEmuTests) and on a device (HelixRuntimeCudaTests).
//
//===----------------------------------------------------------------------===//

#include "NaiveMath.h"
#include "TestUtil.h"

#include "helix/Runtime/Codegen.h"
#include "helix/Runtime/Quant.h"

#include <algorithm>
#include <map>

namespace helix {
namespace rt {
namespace {

using test::expectNear;
using test::randomVector;

/// A weight uploaded in f32 or as resident BF16, and the values the op
/// must see (BF16: rounded).
struct Weight {
  Tensor t;
  std::vector<double> values;
};
Weight weight(Context &ctx, std::vector<int64_t> shape, uint64_t seed,
              bool bf16, float scale = 1.0f, float offset = 0.0f) {
  HostTensor h;
  h.shape = shape;
  h.data = randomVector(static_cast<size_t>(shapeNumel(shape)), seed, scale);
  for (float &v : h.data)
    v += offset;
  Weight w;
  if (bf16) {
    QuantHost q = toBF16(h);
    w.t = ctx.uploadResident(q);
    std::vector<float> d = dequantize(q).data;
    w.values.assign(d.begin(), d.end());
  } else {
    w.t = ctx.upload(h.data, shape);
    w.values.assign(h.data.begin(), h.data.end());
  }
  return w;
}

/// x [M, K] . w [N, K]^T in double.
std::vector<double> matmulT(const std::vector<float> &x,
                            const std::vector<double> &w, int64_t M, int64_t K,
                            int64_t N) {
  std::vector<double> out(M * N, 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k)
        out[m * N + n] += double(x[m * K + k]) * w[n * K + k];
  return out;
}

/// expectNear, an infinity equal only to itself (an empty partial's LSE).
void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i]))
      ASSERT_EQ(got[i], want[i]) << "at " << i;
    else
      ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i])))
          << "at " << i;
  }
}

std::vector<double>
concat(std::initializer_list<const std::vector<double> *> v) {
  std::vector<double> out;
  for (const std::vector<double> *p : v)
    out.insert(out.end(), p->begin(), p->end());
  return out;
}

//===----------------------------------------------------------------------===//
// helix.gdn_step
//===----------------------------------------------------------------------===//

class GatedDeltaNet : public ::testing::TestWithParam<bool> {};
INSTANTIATE_TEST_SUITE_P(Weights, GatedDeltaNet, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &i) {
                           return std::string(i.param ? "BF16" : "F32");
                         });

// Four steps of two requests on rows 1 and 2 of a 4-row state shard:
// positions 0, 1, 2, 3 and 0, 1, 0, 1 (the second request restarts at
// step 3 from a non-zero state). Each step's output and, at the end, the
// state rows (SSM states, then the convolution inputs) against HF's
// algorithm in double; rows 0 and 3 stay zero.
TEST_P(GatedDeltaNet, StepsAgainstNaive) {
  HELIX_NEED_CONTEXT(ctx);
  const bool bf16 = GetParam();
  const naive::GdnShape s{2, 4, 8, 6, 4}; // r = 2, dk != dv
  const int64_t H = 24, B = 2, rows = 4, rowBase = 1, r = s.ratio(),
                dk = s.keyDim, dv = s.valueDim, K = s.convKernel,
                P = s.keyHeads * (2 * dk + 2 * r * dv), BA = s.keyHeads * 2 * r;
  const double eps = 1e-6;
  Weight wQKVZ = weight(*ctx, {P, H}, 1, bf16, 0.3f),
         wBA = weight(*ctx, {BA, H}, 2, bf16, 0.3f),
         convQ = weight(*ctx, {s.keyHeads * dk, K}, 3, bf16, 0.5f),
         convK = weight(*ctx, {s.keyHeads * dk, K}, 4, bf16, 0.5f),
         convV = weight(*ctx, {s.valueHeads * dv, K}, 5, bf16, 0.5f),
         aLog = weight(*ctx, {s.valueHeads}, 6, bf16, 0.5f),
         dtBias = weight(*ctx, {s.valueHeads}, 7, bf16, 0.5f),
         norm = weight(*ctx, {dv}, 8, bf16, 0.1f, 1.0f);
  std::vector<double> conv =
      concat({&convQ.values, &convK.values, &convV.values});
  cg::RankState rs;
  cg::allocState(*ctx, rs, rows, s.stateValues());
  Tensor state = cg::stateShard(rs, 0);
  EXPECT_EQ(state.shape(), (std::vector<int64_t>{rows, s.stateValues()}));
  std::vector<std::vector<double>> naiveState(
      B, std::vector<double>(s.stateValues(), 0.0));
  const std::vector<std::vector<int64_t>> steps = {
      {0, 0}, {1, 1}, {2, 0}, {3, 1}};
  for (size_t t = 0; t < steps.size(); ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    std::vector<float> x = randomVector(B * H, 100 + t);
    // The F32 case passes the projections per key head, as rank IR has
    // them ([hk, rows, H]); the BF16 case as the stored matrices.
    Tensor qkvz =
               bf16 ? wQKVZ.t : wQKVZ.t.view({s.keyHeads, P / s.keyHeads, H}),
           wba = bf16 ? wBA.t : wBA.t.view({s.keyHeads, 2 * r, H});
    Tensor y =
        cg::gdnStep(*ctx, ctx->upload(x, {B, H}), cg::Ints{{B}, steps[t]}, qkvz,
                    wba, convQ.t, convK.t, convV.t, aLog.t, dtBias.t, norm.t,
                    state, rowBase, s.keyHeads, s.valueHeads, dk, dv, K, eps);
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{B, s.valueHeads * dv}));
    std::vector<double> proj = matmulT(x, wQKVZ.values, B, H, P),
                        ba = matmulT(x, wBA.values, B, H, BA), want;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> pb(proj.begin() + b * P, proj.begin() + (b + 1) * P),
          bab(ba.begin() + b * BA, ba.begin() + (b + 1) * BA);
      std::vector<double> o =
          naive::gdnStep(s, pb, bab, conv, aLog.values, dtBias.values,
                         norm.values, naiveState[b], steps[t][b] == 0, eps);
      want.insert(want.end(), o.begin(), o.end());
    }
    expectNear(ctx->download(y), want, 1e-4);
  }
  std::vector<float> got = ctx->download(state);
  for (int64_t row = 0; row < rows; ++row) {
    SCOPED_TRACE("state row " + std::to_string(row));
    std::vector<float> g(got.begin() + row * s.stateValues(),
                         got.begin() + (row + 1) * s.stateValues());
    if (row < rowBase || row >= rowBase + B)
      expectNear(g, std::vector<double>(g.size(), 0.0), 0);
    else
      expectNear(g, naiveState[row - rowBase], 1e-4);
  }
}

TEST(GatedDeltaNetShapes, ClearErrors) {
  HELIX_NEED_CONTEXT(ctx);
  const int64_t H = 8, B = 1, dk = 4, dv = 4, K = 2;
  auto w = [&](std::vector<int64_t> shape) {
    return ctx->upload(randomVector(shapeNumel(shape), 9), shape);
  };
  Tensor x = w({B, H});
  Tensor state = ctx->zeros({2, 1 * dk * dv + (2 * dk + dv) * (K - 1)});
  cg::Ints pos{{B}, {0}};
  auto run = [&](const Tensor &st, int64_t rowBase, int64_t valueHeads) {
    int64_t r = valueHeads;
    return cg::gdnStep(*ctx, x, pos, w({2 * dk + 2 * r * dv, H}), w({2 * r, H}),
                       w({dk, K}), w({dk, K}), w({valueHeads * dv, K}),
                       w({valueHeads}), w({valueHeads}), w({dv}), st, rowBase,
                       1, valueHeads, dk, dv, K, 1e-6);
  };
  EXPECT_NO_THROW(run(state, 1, 1));
  EXPECT_THROW(run(state, 2, 1), Error); // rows [2, 3) of 2
  // The state width of one value head, with two.
  try {
    run(state, 0, 2);
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("state"), std::string::npos)
        << e.what();
  }
}

//===----------------------------------------------------------------------===//
// helix.index_candidates and helix.topk_merge
//===----------------------------------------------------------------------===//

TEST(TopkMerge, ByScoreThenPositionSkippingPadding) {
  HELIX_NEED_CONTEXT(ctx);
  const float ninf = -std::numeric_limits<float>::infinity();
  // [2 ranks, 2 rows, 3, 2]: ties across ranks go to the lower position.
  std::vector<float> c = {// rank 0, row 0; row 1
                          5, 7, 2, 3, ninf, -1, /**/ 1, 0, ninf, -1, ninf, -1,
                          // rank 1, row 0; row 1
                          5, 4, 2, 1, 1, 9, /**/ ninf, -1, ninf, -1, ninf, -1};
  cg::Ints sel = cg::topkMerge(*ctx, ctx->upload(c, {2, 2, 3, 2}), 4);
  EXPECT_EQ(sel.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(sel.data, (std::vector<int64_t>{4, 7, 1, 3, 0, -1, -1, -1}));
  EXPECT_THROW(cg::topkMerge(*ctx, ctx->upload(c, {2, 2, 2, 3}), 4), Error);
}

/// The indexer's weights and the naive selection.
struct Indexer {
  int64_t H = 16, qLora = 12, heads = 4, D = 16, rd = 8, topK = 6;
  double qNormEps = 1e-6;
  bool ties = false, interleaved = false;
  Weight wqA, qNorm, wqB, wk, kNormW, kNormB, wProj;
  RopeConfig rope;

  Indexer(Context &ctx, bool ties, bool interleaved)
      : ties(ties), interleaved(interleaved) {
    wqA = weight(ctx, {qLora, H}, 20, false, 0.4f);
    qNorm = weight(ctx, {qLora}, 21, false, 0.1f, 1.0f);
    {
      // ties: q's RoPE dims are zero, so a key's score does not depend on
      // its position: equal x, equal scores.
      HostTensor h;
      h.shape = {heads * D, qLora};
      h.data = randomVector(heads * D * qLora, 22, 0.4f);
      if (ties)
        for (int64_t hd = 0; hd < heads; ++hd)
          for (int64_t i = 0; i < rd; ++i)
            for (int64_t j = 0; j < qLora; ++j)
              h.data[(hd * D + i) * qLora + j] = 0.0f;
      wqB.t = ctx.upload(h.data, {heads, D, qLora}); // per head, as rank IR
      wqB.values.assign(h.data.begin(), h.data.end());
    }
    wk = weight(ctx, {D, H}, 23, false, 0.4f);
    kNormW = weight(ctx, {D}, 24, false, 0.2f, 1.0f);
    kNormB = weight(ctx, {D}, 25, false, 0.2f);
    wProj = weight(ctx, {heads, H}, 26, false, 0.5f);
    rope.theta = 10000;
    rope.rotaryDim = rd;
    rope.interleaved = interleaved;
  }

  /// RoPE of the first rd values of v at `pos` (the default frequencies).
  void ropeOf(double *v, int64_t pos) const {
    for (int64_t i = 0; i < rd / 2; ++i) {
      double f = 1.0 / std::pow(10000.0, 2.0 * i / rd), a = f * pos;
      int64_t p1 = interleaved ? 2 * i : i,
              p2 = interleaved ? 2 * i + 1 : i + rd / 2;
      double x1 = v[p1], x2 = v[p2];
      v[p1] = x1 * std::cos(a) - x2 * std::sin(a);
      v[p2] = x2 * std::cos(a) + x1 * std::sin(a);
    }
  }
  std::vector<double> key(const float *x, int64_t pos) const {
    std::vector<float> xv(x, x + H);
    std::vector<double> k = matmulT(xv, wk.values, 1, H, D);
    double mean = 0, var = 0;
    for (double v : k)
      mean += v / D;
    for (double v : k)
      var += (v - mean) * (v - mean) / D;
    for (int64_t i = 0; i < D; ++i)
      k[i] = (k[i] - mean) / std::sqrt(var + 1e-6) * kNormW.values[i] +
             kNormB.values[i];
    ropeOf(k.data(), pos);
    return k;
  }
  /// q [heads D] and the head weights of one token.
  void query(const float *x, int64_t pos, std::vector<double> &q,
             std::vector<double> &w) const {
    std::vector<float> xv(x, x + H);
    std::vector<double> a = matmulT(xv, wqA.values, 1, H, qLora);
    double ss = 0;
    for (double v : a)
      ss += v * v;
    std::vector<float> qr(qLora);
    for (int64_t i = 0; i < qLora; ++i)
      qr[i] = float(a[i] / std::sqrt(ss / qLora + qNormEps) * qNorm.values[i]);
    q = matmulT(qr, wqB.values, 1, qLora, heads * D);
    for (int64_t h = 0; h < heads; ++h)
      ropeOf(q.data() + h * D, pos);
    w = matmulT(xv, wProj.values, 1, H, heads);
    for (double &v : w)
      v /= std::sqrt(double(heads * D));
  }
};

/// One row's cached index keys (by position) in the naive model.
using NaiveCache = std::map<int64_t, std::vector<double>>;

struct IndexerCase {
  bool ties, interleaved;
};
class IndexCandidates : public ::testing::TestWithParam<IndexerCase> {};
INSTANTIATE_TEST_SUITE_P(
    Cases, IndexCandidates,
    ::testing::Values(IndexerCase{true, false}, IndexerCase{false, true}),
    [](const ::testing::TestParamInfo<IndexerCase> &i) {
      return std::string(i.param.ties ? "Ties" : "Distinct") +
             (i.param.interleaved ? "Interleaved" : "HalfSplit");
    });

// 24 decode steps of two requests (the second restarts at position 0 at
// step 3): every step, the selection merged from the unsplit cache, and
// from the cache split over two KVP ranks (blocks of 4 positions, index
// rows from batch offset 1), against the naive full-score top-k (by score,
// then the lower position).
TEST_P(IndexCandidates, SplitOverRanksMergesToTheNaiveSelection) {
  HELIX_NEED_CONTEXT(ctx);
  const IndexerCase c = GetParam();
  Indexer ix(*ctx, c.ties, c.interleaved);
  const int64_t B = 2, T = 24, block = 4, kvp = 2, H = ix.H, D = ix.D,
                topK = ix.topK, per = D + 1;
  const int64_t capAll = T, capRank = KVPlacement(kvp, 0, block).capacity(T);
  cg::RankState rs;
  cg::allocState(*ctx, rs, B, capAll * per);      // unsplit, rows 0..1
  cg::allocState(*ctx, rs, B + 1, capRank * per); // rank 0, rows 1..2
  cg::allocState(*ctx, rs, B + 1, capRank * per); // rank 1, rows 1..2
  // x: with ties, 4 distinct rows (every 4th step repeats a row's x).
  auto xOf = [&](int64_t step, int64_t b) {
    uint64_t seed = c.ties ? 300 + (step % 4) * 7 + b : 300 + step * 7 + b;
    return randomVector(H, seed);
  };
  std::vector<NaiveCache> naive(B);
  std::vector<int64_t> pos = {0, 0};
  int64_t tied = 0;
  for (int64_t t = 0; t < T; ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    if (t > 0) {
      pos[0] += 1;
      pos[1] = t == 3 ? 0 : pos[1] + 1;
    }
    std::vector<float> x;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<float> xb = xOf(t, b);
      x.insert(x.end(), xb.begin(), xb.end());
    }
    Tensor xt = ctx->upload(x, {B, H});
    cg::Ints positions{{B}, pos};
    auto candidates = [&](int64_t shard, int64_t k, int64_t rank,
                          int64_t capacity, int64_t batchOffset) {
      auto [slots, spans] =
          cg::kvSlots(positions, block, k, capacity, 0, rank, 1);
      return cg::indexCandidates(*ctx, xt, positions, ix.wqA.t, ix.qNorm.t,
                                 ix.wqB.t, ix.wk.t, ix.kNormW.t, ix.kNormB.t,
                                 ix.wProj.t, cg::stateShard(rs, shard), slots,
                                 spans, 0, batchOffset, ix.heads, D, ix.rd,
                                 topK, ix.qNormEps, ix.rope);
    };
    Tensor all = candidates(0, 1, 0, capAll, 0);
    ASSERT_EQ(all.shape(), (std::vector<int64_t>{1, B, topK, 2}));
    Tensor split = cg::concat(*ctx, 0, candidates(1, kvp, 0, capRank, 1),
                              candidates(2, kvp, 1, capRank, 1));
    cg::Ints want = cg::topkMerge(*ctx, all, topK);
    cg::Ints got = cg::topkMerge(*ctx, split, topK);
    EXPECT_EQ(got.data, want.data) << "split over 2 ranks";
    // The naive selection.
    std::vector<float> cand = ctx->download(all);
    for (int64_t b = 0; b < B; ++b) {
      if (pos[b] == 0)
        naive[b].clear();
      naive[b][pos[b]] = ix.key(x.data() + b * H, pos[b]);
      std::vector<double> q, w;
      ix.query(x.data() + b * H, pos[b], q, w);
      std::vector<std::pair<double, int64_t>> scored;
      for (const auto &[p, k] : naive[b]) {
        double s = 0;
        for (int64_t h = 0; h < ix.heads; ++h) {
          double d = 0;
          for (int64_t i = 0; i < D; ++i)
            d += q[h * D + i] * k[i];
          s += w[h] * std::max(0.0, d);
        }
        scored.push_back({s, p});
      }
      std::sort(scored.begin(), scored.end(), [](auto &l, auto &r) {
        return l.first != r.first ? l.first > r.first : l.second < r.second;
      });
      for (int64_t i = 0; i < topK; ++i) {
        bool has = i < static_cast<int64_t>(scored.size());
        EXPECT_EQ(want.data[b * topK + i], has ? scored[i].second : -1)
            << "row " << b << " pick " << i;
        const float *e = cand.data() + (b * topK + i) * 2;
        if (has) {
          EXPECT_NEAR(e[0], scored[i].first,
                      1e-4 * (1 + std::fabs(scored[i].first)));
          tied += i > 0 && scored[i].first == scored[i - 1].first;
        } else {
          EXPECT_EQ(e[0], -std::numeric_limits<float>::infinity());
          EXPECT_EQ(e[1], -1.0f);
        }
      }
    }
  }
  if (c.ties) {
    EXPECT_GT(tied, 10) << "the case should select among equal scores";
  }
}

TEST(IndexCandidatesShapes, ClearErrors) {
  HELIX_NEED_CONTEXT(ctx);
  Indexer ix(*ctx, false, false);
  const int64_t B = 1;
  Tensor x = ctx->upload(randomVector(B * ix.H, 1), {B, ix.H});
  cg::Ints pos{{B}, {0}}, slots{{1, B}, {0}}, spans{{1, B, 2}, {0, 1}};
  auto run = [&](const Tensor &cache, const cg::Ints &sp) {
    return cg::indexCandidates(*ctx, x, pos, ix.wqA.t, ix.qNorm.t, ix.wqB.t,
                               ix.wk.t, ix.kNormW.t, ix.kNormB.t, ix.wProj.t,
                               cache, slots, sp, 0, 0, ix.heads, ix.D, ix.rd,
                               ix.topK, ix.qNormEps, ix.rope);
  };
  EXPECT_NO_THROW(run(ctx->zeros({B, 4 * (ix.D + 1)}), spans));
  EXPECT_THROW(run(ctx->zeros({B, 4 * ix.D}), spans), Error); // no positions
  EXPECT_THROW(run(ctx->zeros({B, 4 * (ix.D + 1)}),
                   cg::Ints{{1, B, 2}, {0, 5}}), // 5 entries, 4 slots
               Error);
}

//===----------------------------------------------------------------------===//
// Sparse helix.attention_partial
//===----------------------------------------------------------------------===//

/// MLA's latent cache: one KV head of R latent + rd RoPE values; W_UV
/// [Hq, Dv, R].
struct Sparse {
  static constexpr int64_t B = 2, Hq = 4, R = 8, rd = 4, KD = R + rd, Dv = 6,
                           block = 4, kvp = 2, T = 20, split = 2;
  static constexpr float scale = 0.3f;
};

class SparseAttention : public ::testing::TestWithParam<DType> {};
INSTANTIATE_TEST_SUITE_P(Formats, SparseAttention,
                         ::testing::Values(DType::F32, DType::BF16,
                                           DType::F8E4M3, DType::F4E2M1),
                         [](const ::testing::TestParamInfo<DType> &i) {
                           return std::string(dtypeName(i.param));
                         });

// Every step of two requests on both KVP ranks: with every position
// selected (in some order, padded with -1), the sparse partial is
// attentionPartial's (the same entries gathered as stored, with their
// scales).
TEST_P(SparseAttention, EverythingSelectedIsAttentionPartial) {
  HELIX_NEED_CONTEXT(ctx);
  using S = Sparse;
  const DType dtype = GetParam();
  Tensor wUV =
      ctx->upload(randomVector(S::Hq * S::Dv * S::R, 40), {S::Hq, S::Dv, S::R});
  for (int64_t rank = 0; rank < S::kvp; ++rank) {
    SCOPED_TRACE("KVP rank " + std::to_string(rank));
    KVCacheConfig cfg;
    cfg.batch = S::B;
    cfg.capacity = KVPlacement(S::kvp, rank, S::block).capacity(S::T);
    cfg.heads = 1;
    cfg.keyDim = S::KD;
    cfg.valueDim = S::R;
    cfg.valueInKey = true;
    cfg.dtype = dtype;
    KVCache dense = makeKVCache(*ctx, cfg), sparse = makeKVCache(*ctx, cfg);
    for (int64_t t = 0; t < S::T; ++t) {
      SCOPED_TRACE("step " + std::to_string(t));
      cg::Ints pos{{S::B}, {t, std::max<int64_t>(0, t - 3)}};
      auto [slots, spans] =
          cg::kvSlots(pos, S::block, S::kvp, cfg.capacity, 0, rank, 1);
      Tensor q = ctx->upload(randomVector(S::B * S::Hq * S::KD, 50 + t),
                             {S::B, S::Hq, S::KD});
      Tensor k =
          ctx->upload(randomVector(S::B * S::KD, 70 + t), {S::B, 1, S::KD});
      // Row b selects positions pos[b], pos[b] - 1, ..., 0, then -1.
      cg::Ints selected{{S::B, S::T}, std::vector<int64_t>(S::B * S::T, -1)};
      for (int64_t b = 0; b < S::B; ++b)
        for (int64_t p = 0; p <= pos.data[b]; ++p)
          selected.data[b * S::T + p] = pos.data[b] - p;
      Tensor want =
          cg::attentionPartial(*ctx, q, k, Tensor(), dense, wUV, slots, spans,
                               0, 0, S::split, S::scale);
      Tensor got = cg::sparseAttentionPartial(*ctx, q, k, sparse, wUV, slots,
                                              selected, S::block, S::kvp, rank,
                                              0, 0, S::split, S::scale);
      ASSERT_EQ(got.shape(), want.shape());
      std::vector<float> w = ctx->download(want);
      expectClose(ctx->download(got), std::vector<double>(w.begin(), w.end()),
                  1e-5);
    }
  }
}

// A subset of the positions (some on the other rank, padding between), on
// rank 1, from batch offset 1 of a 3-row shard: a masked softmax over the
// selected positions this rank holds, W_UV, the packing; a row selecting
// nothing here gives zeros and LSE -inf. Without W_UV: the latent itself.
TEST(SparseAttentionSubset, MaskedSoftmax) {
  HELIX_NEED_CONTEXT(ctx);
  using S = Sparse;
  const int64_t rank = 1, rows = 3, offset = 1;
  std::vector<float> wuv = randomVector(S::Hq * S::Dv * S::R, 41);
  Tensor wUV = ctx->upload(wuv, {S::Hq, S::Dv, S::R});
  KVCacheConfig cfg;
  cfg.batch = rows;
  cfg.capacity = KVPlacement(S::kvp, rank, S::block).capacity(S::T);
  cfg.heads = 1;
  cfg.keyDim = S::KD;
  cfg.valueDim = S::R;
  cfg.valueInKey = true;
  KVCache cache = makeKVCache(*ctx, cfg);
  // keys[b][p]: what the naive model holds.
  std::vector<std::map<int64_t, std::vector<float>>> keys(S::B);
  std::vector<float> qLast;
  const int64_t last = 13;
  for (int64_t t = 0; t <= last; ++t) {
    cg::Ints pos{{S::B}, {t, t}};
    auto [slots, spans] =
        cg::kvSlots(pos, S::block, S::kvp, cfg.capacity, 0, rank, 1);
    std::vector<float> kv = randomVector(S::B * S::KD, 90 + t);
    qLast = randomVector(S::B * S::Hq * S::KD, 110 + t);
    Tensor q = ctx->upload(qLast, {S::B, S::Hq, S::KD});
    Tensor k = ctx->upload(kv, {S::B, 1, S::KD});
    for (int64_t b = 0; b < S::B; ++b)
      keys[b][t].assign(kv.begin() + b * S::KD, kv.begin() + (b + 1) * S::KD);
    // Row 0: positions on both ranks (4..7 and 12, 13 are rank 1's), the
    // current one included; row 1: rank 0's only.
    cg::Ints selected{{S::B, 8},
                      {13, 2, -1, 5, 12, 7, 0, -1, //
                       1, 3, 8, -1, -1, 10, 9, 0}};
    if (t < last) {
      cg::sparseAttentionPartial(*ctx, q, k, cache, wUV, slots, selected,
                                 S::block, S::kvp, rank, 0, offset, S::split,
                                 S::scale);
      continue;
    }
    for (bool withWUV : {true, false}) {
      SCOPED_TRACE(withWUV ? "with W_UV" : "latent");
      Tensor got = cg::sparseAttentionPartial(
          *ctx, q, k, cache, withWUV ? wUV : Tensor(), slots, selected,
          S::block, S::kvp, rank, 0, offset, S::split, S::scale);
      int64_t vd = withWUV ? S::Dv : S::R, piece = vd / S::split;
      ASSERT_EQ(got.shape(),
                (std::vector<int64_t>{1, S::B, S::Hq * S::split, piece + 1}));
      std::vector<double> want;
      for (int64_t b = 0; b < S::B; ++b)
        for (int64_t h = 0; h < S::Hq; ++h) {
          std::vector<const float *> ks;
          for (int64_t i = 0; i < 8; ++i) {
            int64_t p = selected.data[b * 8 + i];
            if (p >= 0 && (p / S::block) % S::kvp == rank)
              ks.push_back(keys[b][p].data());
          }
          double lse = -std::numeric_limits<double>::infinity();
          std::vector<double> lat(S::R, 0.0);
          if (!ks.empty())
            lat = test::naiveAttention(qLast.data() + (b * S::Hq + h) * S::KD,
                                       S::KD, ks, ks, S::R, S::scale, &lse);
          std::vector<double> out = lat;
          if (withWUV) {
            out.assign(S::Dv, 0.0);
            for (int64_t n = 0; n < S::Dv; ++n)
              for (int64_t a = 0; a < S::R; ++a)
                out[n] += lat[a] * wuv[(h * S::Dv + n) * S::R + a];
          }
          for (int64_t j = 0; j < S::split; ++j) {
            want.insert(want.end(), out.begin() + j * piece,
                        out.begin() + (j + 1) * piece);
            want.push_back(lse);
          }
        }
      expectClose(ctx->download(got), want, 1e-5);
    }
  }
}

TEST(SparseAttentionShapes, ClearErrors) {
  HELIX_NEED_CONTEXT(ctx);
  using S = Sparse;
  KVCacheConfig cfg;
  cfg.batch = 1;
  cfg.capacity = 8;
  cfg.heads = 1;
  cfg.keyDim = S::KD;
  cfg.valueDim = S::R;
  cfg.valueInKey = true;
  KVCache cache = makeKVCache(*ctx, cfg);
  Tensor q = ctx->zeros({1, S::Hq, S::KD}), k = ctx->zeros({1, 1, S::KD});
  cg::Ints slots{{1, 1}, {0}};
  EXPECT_NO_THROW(cg::sparseAttentionPartial(*ctx, q, k, cache, Tensor(), slots,
                                             cg::Ints{{1, 2}, {0, -1}}, 4, 2, 0,
                                             0, 0, 1, 1.0f));
  EXPECT_THROW(cg::sparseAttentionPartial(*ctx, q, k, cache, Tensor(), slots,
                                          cg::Ints{{0}, {}}, 4, 2, 0, 0, 0, 1,
                                          1.0f),
               Error); // nothing selected per row
  EXPECT_THROW(cg::sparseAttentionPartial(*ctx, q, k, cache, Tensor(), slots,
                                          cg::Ints{{1, 1}, {0}}, 4, 2, 2, 0, 0,
                                          1, 1.0f),
               Error); // KVP rank 2 of 2
  cfg.valueInKey = false;
  KVCache gqa = makeKVCache(*ctx, cfg);
  EXPECT_THROW(cg::sparseAttentionPartial(*ctx, q, k, gqa, Tensor(), slots,
                                          cg::Ints{{1, 1}, {0}}, 4, 2, 0, 0, 0,
                                          1, 1.0f),
               Error); // not a latent cache
}

} // namespace
} // namespace rt
} // namespace helix
