//===- KernelTest.cpp - Every op against naive math -----------------------===//

#include "TestUtil.h"

#include <algorithm>
#include <limits>
#include <numeric>

using namespace helix::rt;
using namespace helix::rt::test;

namespace {

TEST(Kernels, EmbeddingVocabParallel) {
  HELIX_NEED_CONTEXT(ctx);
  int64_t V = 6, H = 5;
  auto table = randomVector(V * H, 1);
  Tensor t = ctx->upload(table, {V, H});
  // This rank holds vocabulary rows [10, 16): tokens outside give zeros.
  Tensor out = embedding(*ctx, t, {12, 3, 15, 10}, 10);
  std::vector<double> want(4 * H, 0.0);
  int64_t rows[4] = {2, -1, 5, 0};
  for (int b = 0; b < 4; ++b)
    for (int64_t i = 0; i < H; ++i)
      want[b * H + i] = rows[b] < 0 ? 0.0 : table[rows[b] * H + i];
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{4, H}));
  expectNear(ctx->download(out), want, 0);
}

TEST(Kernels, RmsNorm) {
  HELIX_NEED_CONTEXT(ctx);
  int64_t R = 3, D = 7;
  auto x = randomVector(R * D, 2), w = randomVector(D, 3);
  Tensor out =
      rmsNorm(*ctx, ctx->upload(x, {R, D}), ctx->upload(w, {D}), 1e-5f);
  std::vector<double> want(R * D);
  for (int64_t r = 0; r < R; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < D; ++i)
      ss += x[r * D + i] * x[r * D + i];
    for (int64_t i = 0; i < D; ++i)
      want[r * D + i] = x[r * D + i] / std::sqrt(ss / D + 1e-5) * w[i];
  }
  expectNear(ctx->download(out), want);
  // QK-norm shape: per head over the last dimension.
  Tensor q =
      rmsNorm(*ctx, ctx->upload(x, {1, R, D}), ctx->upload(w, {D}), 1e-5f);
  expectNear(ctx->download(q), want);
  EXPECT_THROW(rmsNorm(*ctx, ctx->upload(x, {D, R}), ctx->upload(w, {D}), 0),
               Error);
}

TEST(Kernels, LinearWithBias) {
  HELIX_NEED_CONTEXT(ctx);
  int64_t M = 3, K = 17, N = 5;
  auto x = randomVector(M * K, 4), w = randomVector(N * K, 5),
       b = randomVector(N, 6);
  Tensor bias = ctx->upload(b, {N});
  Tensor out =
      linear(*ctx, ctx->upload(x, {M, K}), ctx->upload(w, {N, K}), &bias);
  std::vector<double> want(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = b[n];
      for (int64_t k = 0; k < K; ++k)
        s += static_cast<double>(x[m * K + k]) * w[n * K + k];
      want[m * N + n] = s;
    }
  expectNear(ctx->download(out), want);
  Tensor none;
  Tensor noBias =
      linear(*ctx, ctx->upload(x, {M, K}), ctx->upload(w, {N, K}), &none);
  auto nb = ctx->download(noBias);
  for (int64_t i = 0; i < M * N; ++i)
    EXPECT_NEAR(nb[i], want[i] - b[i % N], 1e-4);
  EXPECT_THROW(linear(*ctx, ctx->upload(x, {M, K}), ctx->upload(w, {K, N})),
               Error);
}

TEST(Kernels, HeadMatmulBothForms) {
  HELIX_NEED_CONTEXT(ctx);
  int64_t B = 2, H = 3, A = 4, N = 5;
  auto x = randomVector(B * H * A, 7), w = randomVector(H * N * A, 8);
  Tensor xt = ctx->upload(x, {B, H, A});
  Tensor o1 = headMatmul(*ctx, xt, ctx->upload(w, {H, N, A}));
  Tensor o2 = headMatmul(*ctx, xt, ctx->upload(w, {H, A, N}), true);
  std::vector<double> w1(B * H * N), w2(B * H * N);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t n = 0; n < N; ++n) {
        double s1 = 0, s2 = 0;
        for (int64_t a = 0; a < A; ++a) {
          s1 += x[(b * H + h) * A + a] * w[(h * N + n) * A + a];
          s2 += x[(b * H + h) * A + a] * w[(h * A + a) * N + n];
        }
        w1[(b * H + h) * N + n] = s1;
        w2[(b * H + h) * N + n] = s2;
      }
  expectNear(ctx->download(o1), w1);
  expectNear(ctx->download(o2), w2);
}

void checkRope(Context &ctx, bool interleaved) {
  int64_t B = 2, H = 2, D = 12, off = 2, rd = 8;
  RopeConfig rc;
  rc.theta = 10000;
  rc.rotaryDim = rd;
  rc.interleaved = interleaved;
  Rope rope(rc);
  auto x = randomVector(B * H * D, 9);
  Tensor t = ctx.upload(x, {B, H, D});
  std::vector<int64_t> pos = {3, 41};
  applyRope(ctx, t, pos, rope, off);
  std::vector<double> want(x.begin(), x.end());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < rd / 2; ++i) {
        double f = 1.0 / std::pow(10000.0, 2.0 * i / rd);
        double ang = f * pos[b];
        int64_t a = interleaved ? 2 * i : i,
                c = interleaved ? 2 * i + 1 : i + rd / 2;
        size_t base = (b * H + h) * D + off;
        double x1 = x[base + a], x2 = x[base + c];
        want[base + a] = x1 * std::cos(ang) - x2 * std::sin(ang);
        want[base + c] = x2 * std::cos(ang) + x1 * std::sin(ang);
      }
  expectNear(ctx.download(t), want, 1e-5);
}

TEST(Kernels, RopeHalfSplit) {
  HELIX_NEED_CONTEXT(ctx);
  checkRope(*ctx, false);
}

TEST(Kernels, RopeInterleaved) {
  HELIX_NEED_CONTEXT(ctx);
  checkRope(*ctx, true);
}

// The residual add and the next norm as one op: what add then rmsNorm give.
TEST(Kernels, AddRmsNormIsAddThenNorm) {
  HELIX_NEED_CONTEXT(ctx);
  int64_t R = 3, D = 7;
  auto a = randomVector(R * D, 12), b = randomVector(R * D, 13),
       w = randomVector(D, 14);
  Tensor ta = ctx->upload(a, {R, D}), tb = ctx->upload(b, {R, D}),
         tw = ctx->upload(w, {D});
  AddNorm r = addRmsNorm(*ctx, ta, tb, tw, 1e-5f);
  Tensor sum = add(*ctx, ta, tb);
  Tensor normed = rmsNorm(*ctx, sum, tw, 1e-5f);
  std::vector<float> s = ctx->download(sum), n = ctx->download(normed);
  expectNear(ctx->download(r.sum), std::vector<double>(s.begin(), s.end()), 0);
  expectNear(ctx->download(r.normed), std::vector<double>(n.begin(), n.end()),
             0);
  EXPECT_THROW(addRmsNorm(*ctx, ta, ctx->upload(a, {D, R}), tw, 1e-5f), Error);
}

// MLA's compressed KV [latent | k_pe]: the latent normed, k_pe kept, in
// one op; the same numbers as a norm of the slice next to the copied tail.
TEST(Kernels, RmsNormPrefixNormsTheLatentKeepsTheRest) {
  HELIX_NEED_CONTEXT(ctx);
  int64_t R = 3, W = 300, D = 256; // more values than a block's threads
  auto x = randomVector(R * W, 15), w = randomVector(D, 16);
  Tensor tx = ctx->upload(x, {R, 1, W}), tw = ctx->upload(w, {D});
  std::vector<float> got = ctx->download(rmsNormPrefix(*ctx, tx, tw, 1e-6f));
  std::vector<float> head = ctx->download(
      rmsNorm(*ctx, sliceLast(*ctx, tx.view({R, W}), 0, D), tw, 1e-6f));
  ASSERT_EQ(got.size(), size_t(R * W));
  for (int64_t r = 0; r < R; ++r)
    for (int64_t i = 0; i < W; ++i)
      EXPECT_EQ(got[r * W + i], i < D ? head[r * D + i] : x[r * W + i])
          << "row " << r << " value " << i;
  EXPECT_THROW(rmsNormPrefix(*ctx, tx,
                             ctx->upload(randomVector(W + 1, 17), {W + 1}),
                             1e-6f),
               Error);
}

// RoPE on q and k and the KV append as one op: what applyRope, applyRope
// and kvAppend give (q, k, and the attention over the appended keys).
TEST(Kernels, RopeKvAppendIsRopeThenAppend) {
  HELIX_NEED_CONTEXT(ctx);
  int64_t B = 2, Hq = 4, Kh = 2, D = 12, cap = 3;
  RopeConfig rc;
  rc.theta = 10000;
  rc.rotaryDim = 8;
  Rope rope(rc);
  auto q = randomVector(B * Hq * D, 15), k = randomVector(B * Kh * D, 16),
       v = randomVector(B * Kh * D, 17);
  std::vector<int64_t> pos = {3, 41}, slots = {1, -1};
  std::vector<std::vector<float>> got, want;
  for (bool fused : {true, false}) {
    KVCache cache = makeKVCache(*ctx, {B, cap, Kh, D, D, false});
    Tensor tq = ctx->upload(q, {B, Hq, D}), tk = ctx->upload(k, {B, Kh, D}),
           tv = ctx->upload(v, {B, Kh, D});
    if (fused) {
      ropeKvAppend(*ctx, tq, tk, &tv, &cache, slots, pos, rope, 2);
    } else {
      applyRope(*ctx, tq, pos, rope, 2);
      applyRope(*ctx, tk, pos, rope, 2);
      kvAppend(*ctx, cache, tk, &tv, slots);
    }
    AttentionPartial p =
        attentionPartial(*ctx, tq, cache, 0.3f, {0, 0}, {2, 0});
    auto &out = fused ? got : want;
    out = {ctx->download(tq), ctx->download(tk), ctx->download(p.out),
           ctx->download(p.lse)};
  }
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], want[i]) << i; // row 1's lse: -inf in both
  Tensor tq = ctx->upload(q, {B, Hq, D}), k6 = ctx->upload(k, {B, Kh * 2, 6});
  EXPECT_THROW(ropeKvAppend(*ctx, tq, k6, nullptr, nullptr, {}, pos, rope),
               Error);
}

// naiveAttention: TestUtil.h.

TEST(Kernels, KVAppendAndGQAAttention) {
  HELIX_NEED_CONTEXT(ctx);
  int64_t B = 2, Hq = 4, Kh = 2, kd = 8, vd = 6, cap = 5;
  KVCache cache = makeKVCache(*ctx, {B, cap, Kh, kd, vd, false});
  std::vector<std::vector<float>> ks, vs;
  for (int64_t s = 0; s < cap; ++s) {
    ks.push_back(randomVector(B * Kh * kd, 100 + s));
    vs.push_back(randomVector(B * Kh * vd, 200 + s));
    Tensor k = ctx->upload(ks.back(), {B, Kh, kd});
    Tensor v = ctx->upload(vs.back(), {B, Kh, vd});
    // Row 1 skips slot 3 (another rank owns that position).
    kvAppend(*ctx, cache, k, &v, {s, s == 3 ? -1 : s});
  }
  auto q = randomVector(B * Hq * kd, 10);
  std::vector<int64_t> begin = {1, 0}, end = {4, 0}; // row 1: empty range
  AttentionPartial p = attentionPartial(*ctx, ctx->upload(q, {B, Hq, kd}),
                                        cache, 0.3f, begin, end);
  auto out = ctx->download(p.out), lse = ctx->download(p.lse);
  for (int64_t h = 0; h < Hq; ++h) {
    int64_t kvh = h / 2;
    std::vector<const float *> keys, values;
    for (int64_t s = begin[0]; s < end[0]; ++s) {
      keys.push_back(ks[s].data() + (0 * Kh + kvh) * kd);
      values.push_back(vs[s].data() + (0 * Kh + kvh) * vd);
    }
    double l;
    auto want =
        naiveAttention(q.data() + h * kd, kd, keys, values, vd, 0.3, &l);
    for (int64_t i = 0; i < vd; ++i)
      EXPECT_NEAR(out[h * vd + i], want[i], 1e-5);
    EXPECT_NEAR(lse[h], l, 1e-5);
    // The empty row: zero output, lse = -inf.
    EXPECT_TRUE(std::isinf(lse[Hq + h]) && lse[Hq + h] < 0);
    for (int64_t i = 0; i < vd; ++i)
      EXPECT_EQ(out[(Hq + h) * vd + i], 0.0f);
  }
  EXPECT_THROW(attentionPartial(*ctx, ctx->upload(q, {B, Hq, kd}), cache, 1.0f,
                                {0, 0}, {cap + 1, 0}),
               Error);
}

TEST(Kernels, MLALatentAttentionValueInKey) {
  HELIX_NEED_CONTEXT(ctx);
  // MLA absorbed form: one cached latent (R) + rope key (rd); value = latent.
  int64_t B = 1, Hq = 3, R = 6, rd = 2, cap = 4;
  KVCache cache = makeKVCache(*ctx, {B, cap, 1, R + rd, R, true});
  std::vector<std::vector<float>> ks;
  for (int64_t s = 0; s < cap; ++s) {
    ks.push_back(randomVector(R + rd, 300 + s));
    kvAppend(*ctx, cache, ctx->upload(ks.back(), {1, 1, R + rd}), nullptr, {s});
  }
  auto q = randomVector(Hq * (R + rd), 11);
  AttentionPartial p = attentionPartial(*ctx, ctx->upload(q, {B, Hq, R + rd}),
                                        cache, 0.5f, {0}, {cap});
  auto out = ctx->download(p.out);
  std::vector<const float *> keys;
  for (auto &k : ks)
    keys.push_back(k.data());
  for (int64_t h = 0; h < Hq; ++h) {
    auto want = naiveAttention(q.data() + h * (R + rd), R + rd, keys, keys, R,
                               0.5, nullptr);
    for (int64_t i = 0; i < R; ++i)
      EXPECT_NEAR(out[h * R + i], want[i], 1e-5);
  }
}

TEST(Kernels, LseCombineIsExactWithSinks) {
  HELIX_NEED_CONTEXT(ctx);
  // Split 7 keys over S = 3 shards (one empty); the combination of the
  // partials equals attention over all keys, with a sink in the softmax.
  int64_t H = 2, kd = 4, vd = 3, S = 3, T = 7;
  std::vector<std::vector<float>> keys, vals;
  for (int64_t t = 0; t < T; ++t) {
    keys.push_back(randomVector(H * kd, 400 + t));
    vals.push_back(randomVector(H * vd, 500 + t));
  }
  auto q = randomVector(H * kd, 12);
  std::vector<float> sinks = {0.7f, -1.3f};
  int64_t shardOf[7] = {0, 0, 2, 0, 2, 2, 2}; // shard 1 stays empty
  std::vector<float> partials(S * H * vd), lses(S * H);
  std::vector<double> want(H * vd);
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t s = 0; s < S; ++s) {
      std::vector<const float *> k, v;
      for (int64_t t = 0; t < T; ++t)
        if (shardOf[t] == s) {
          k.push_back(keys[t].data() + h * kd);
          v.push_back(vals[t].data() + h * vd);
        }
      double l = -std::numeric_limits<double>::infinity();
      std::vector<double> o(vd, 0.0);
      if (!k.empty())
        o = naiveAttention(q.data() + h * kd, kd, k, v, vd, 1.0, &l);
      lses[s * H + h] = static_cast<float>(l);
      for (int64_t i = 0; i < vd; ++i)
        partials[(s * H + h) * vd + i] = static_cast<float>(o[i]);
    }
    std::vector<const float *> k, v;
    for (int64_t t = 0; t < T; ++t) {
      k.push_back(keys[t].data() + h * kd);
      v.push_back(vals[t].data() + h * vd);
    }
    double sink = sinks[h];
    auto o =
        naiveAttention(q.data() + h * kd, kd, k, v, vd, 1.0, nullptr, &sink);
    std::copy(o.begin(), o.end(), want.begin() + h * vd);
  }
  Tensor sinkT = ctx->upload(sinks, {H});
  Tensor out = lseCombine(*ctx, ctx->upload(partials, {1, S, H, vd}),
                          ctx->upload(lses, {1, S, H}), &sinkT);
  expectNear(ctx->download(out), want, 1e-5);
}

TEST(Kernels, GatedActivations) {
  HELIX_NEED_CONTEXT(ctx);
  std::vector<float> g = {-9.0f, -1.0f, 0.0f, 0.5f, 3.0f, 8.0f},
                     u = {0.3f, -2.0f, 1.0f, 9.0f, -8.0f, 1.5f};
  Tensor gt = ctx->upload(g, {2, 3}), ut = ctx->upload(u, {2, 3});
  auto check = [&](const Activation &a, auto f) {
    std::vector<double> want;
    for (size_t i = 0; i < g.size(); ++i)
      want.push_back(f(static_cast<double>(g[i]), static_cast<double>(u[i])));
    expectNear(ctx->download(gatedActivation(*ctx, gt, ut, a)), want, 1e-5);
  };
  check(Activation::fromName("silu"),
        [](double x, double y) { return x / (1 + std::exp(-x)) * y; });
  check(Activation::fromName("gelu"), [](double x, double y) {
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))) * y;
  });
  check(Activation::fromName("gelu_pytorch_tanh"), [](double x, double y) {
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))) *
           y;
  });
  check(Activation::gptOss(7.0f), [](double x, double y) {
    x = std::min(x, 7.0);
    y = std::max(-7.0, std::min(y, 7.0));
    return (y + 1) * x / (1 + std::exp(-1.702 * x));
  });
  EXPECT_THROW(Activation::fromName("relu2"), Error);
}

TEST(Kernels, RouterSoftmaxTopkNormalized) {
  HELIX_NEED_CONTEXT(ctx);
  std::vector<float> logits = {0.1f, 2.0f, -1.0f, 1.5f, 0.0f, 3.0f, 0.2f, 0.1f};
  RouterConfig c;
  c.topK = 2;
  c.normTopkProb = true;
  Routing r = moeRoute(*ctx, ctx->upload(logits, {2, 4}), c);
  auto idx = ctx->downloadInt(r.indices);
  auto w = ctx->download(r.weights);
  EXPECT_EQ(idx, (std::vector<int32_t>{1, 3, 1, 2}));
  double e1 = std::exp(2.0), e3 = std::exp(1.5);
  EXPECT_NEAR(w[0], e1 / (e1 + e3), 1e-6);
  EXPECT_NEAR(w[1], e3 / (e1 + e3), 1e-6);
  EXPECT_NEAR(w[2] + w[3], 1.0, 1e-6);
}

TEST(Kernels, RouterSigmoidGroupedWithCorrectionBias) {
  HELIX_NEED_CONTEXT(ctx);
  // 8 experts in 4 groups; top-2 groups by the sum of their two best biased
  // scores; top-2 experts inside; weights from unbiased scores, normalized
  // and scaled (DeepSeek-V3).
  std::vector<float> logits = {1.0f, 0.9f, -2.0f, -2.0f,
                               0.0f, 3.0f, -1.0f, 0.5f};
  std::vector<float> bias = {0, 0, 0, 0, 0, -5.0f, 0, 0};
  RouterConfig c;
  c.scoring = RouterConfig::Sigmoid;
  c.topK = 2;
  c.numGroups = 4;
  c.topkGroups = 2;
  c.normTopkProb = true;
  c.routedScalingFactor = 2.5;
  Tensor b = ctx->upload(bias, {8});
  Routing r = moeRoute(*ctx, ctx->upload(logits, {1, 8}), c, &b);
  auto idx = ctx->downloadInt(r.indices);
  auto w = ctx->download(r.weights);
  // Group sums (biased): g0 = s(1)+s(.9), g1 = ~0, g2 = s(0)+s(3)-5,
  // g3 = s(-1)+s(.5): groups 0 and 3 win; experts 0 and 1.
  EXPECT_EQ(idx, (std::vector<int32_t>{0, 1}));
  auto sg = [](double x) { return 1 / (1 + std::exp(-x)); };
  double s0 = sg(1.0), s1 = sg(0.9);
  EXPECT_NEAR(w[0], 2.5 * s0 / (s0 + s1), 1e-6);
  EXPECT_NEAR(w[1], 2.5 * s1 / (s0 + s1), 1e-6);
  // Group max (DeepSeek-V2 group_limited_greedy), no bias: groups 2 (max
  // s(3)) and 0; experts 5 and 0.
  c.groupScore = RouterConfig::GroupMax;
  c.normTopkProb = false;
  r = moeRoute(*ctx, ctx->upload(logits, {1, 8}), c);
  EXPECT_EQ(ctx->downloadInt(r.indices), (std::vector<int32_t>{5, 0}));
  EXPECT_NEAR(ctx->download(r.weights)[0], 2.5 * sg(3.0), 1e-6);
}

TEST(Kernels, MoEExpertsLocalSliceWithBiases) {
  HELIX_NEED_CONTEXT(ctx);
  int64_t B = 3, H = 5, El = 2, I = 4, first = 2, K = 2;
  auto x = randomVector(B * H, 20), g = randomVector(El * I * H, 21),
       u = randomVector(El * I * H, 22), d = randomVector(El * H * I, 23),
       gb = randomVector(El * I, 24), ub = randomVector(El * I, 25),
       db = randomVector(El * H, 26);
  ExpertWeights w;
  w.gate = ctx->upload(g, {El, I, H});
  w.up = ctx->upload(u, {El, I, H});
  w.down = ctx->upload(d, {El, H, I});
  w.gateBias = ctx->upload(gb, {El, I});
  w.upBias = ctx->upload(ub, {El, I});
  w.downBias = ctx->upload(db, {El, H});
  // Experts 2 and 3 are local; 0 and 5 belong to other ranks.
  std::vector<int32_t> idx = {2, 0, 3, 2, 5, 0};
  std::vector<float> wt = {0.6f, 0.4f, 0.7f, 0.3f, 0.9f, 0.1f};
  Routing r{ctx->uploadInt(idx, {B, K}), ctx->upload(wt, {B, K})};
  Activation act = Activation::fromName("silu");
  for (bool addBias : {true, false}) {
    Tensor out =
        moeExperts(*ctx, ctx->upload(x, {B, H}), r, w, first, act, addBias);
    std::vector<double> want(B * H, 0.0);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t k = 0; k < K; ++k) {
        int64_t e = idx[b * K + k] - first;
        if (e < 0 || e >= El)
          continue;
        std::vector<double> h(I);
        for (int64_t i = 0; i < I; ++i) {
          double gs = gb[e * I + i], us = ub[e * I + i];
          for (int64_t j = 0; j < H; ++j) {
            gs += x[b * H + j] * g[(e * I + i) * H + j];
            us += x[b * H + j] * u[(e * I + i) * H + j];
          }
          h[i] = gs / (1 + std::exp(-gs)) * us;
        }
        for (int64_t j = 0; j < H; ++j) {
          double s = addBias ? db[e * H + j] : 0.0;
          for (int64_t i = 0; i < I; ++i)
            s += h[i] * d[(e * H + j) * I + i];
          want[b * H + j] += wt[b * K + k] * s;
        }
      }
    expectNear(ctx->download(out), want, 1e-5);
  }
}

TEST(Kernels, LayoutOps) {
  HELIX_NEED_CONTEXT(ctx);
  std::vector<float> x(2 * 3 * 4);
  std::iota(x.begin(), x.end(), 0.0f);
  Tensor t = ctx->upload(x, {2, 3, 4});
  auto sw = ctx->download(swapAxes01(*ctx, t));
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        EXPECT_EQ(sw[(b * 2 + a) * 4 + c], x[(a * 3 + b) * 4 + c]);
  Tensor s = sliceLast(*ctx, t, 1, 2);
  EXPECT_EQ(s.shape(), (std::vector<int64_t>{2, 3, 2}));
  auto sv = ctx->download(s);
  EXPECT_EQ(sv[0], 1.0f);
  EXPECT_EQ(sv[1], 2.0f);
  EXPECT_EQ(sv[2], 5.0f);
  Tensor c = concatLast(*ctx, s, sliceLast(*ctx, t, 0, 1));
  auto cv = ctx->download(c);
  EXPECT_EQ(c.dim(2), 3);
  EXPECT_EQ(cv[0], 1.0f);
  EXPECT_EQ(cv[2], 0.0f);
  EXPECT_EQ(cv[5], 4.0f);
  auto sum = ctx->download(sumLeading(*ctx, t));
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(sum[i], x[i] + x[12 + i]);
  auto added = ctx->download(add(*ctx, t, t));
  EXPECT_EQ(added[5], 10.0f);
  Tensor d = clone(*ctx, t);
  addInPlace(*ctx, d, t);
  EXPECT_EQ(ctx->download(d)[23], 46.0f);
  Tensor dst = ctx->zeros({2, 3, 4});
  Tensor rows = dst.rows(1, 2);
  copyInto(*ctx, rows, t.rows(0, 1));
  auto dv = ctx->download(dst);
  EXPECT_EQ(dv[0], 0.0f);
  EXPECT_EQ(dv[12], 0.0f);
  EXPECT_EQ(dv[13], 1.0f);
  EXPECT_THROW(sliceLast(*ctx, t, 3, 2), Error);
  EXPECT_THROW(add(*ctx, t, s), Error);
}

TEST(Kernels, ArgmaxFirstOnTies) {
  HELIX_NEED_CONTEXT(ctx);
  std::vector<float> l = {0, 3, 3, 1, -1, -2, -0.5f, -3};
  EXPECT_EQ(argmax(*ctx, ctx->upload(l, {2, 4})), (std::vector<int64_t>{1, 2}));
}

TEST(Kernels, SingleRankCommunicator) {
  HELIX_NEED_CONTEXT(ctx);
  // Without mpirun, a one-member group works locally.
  if (ctx->worldSize() != 1)
    GTEST_SKIP();
  std::vector<float> x = {1, 2, 3, 4};
  Tensor t = ctx->upload(x, {2, 2});
  Communicator &w = ctx->world();
  w.allReduceSum(t);
  expectNear(ctx->download(t), x, 0);
  expectNear(ctx->download(w.allToAll(t, 1)), x, 0);
  EXPECT_EQ(w.allGather(t).shape(), (std::vector<int64_t>{1, 2, 2}));
  EXPECT_THROW(ctx->group({0, 1}), Error);
}

} // namespace
