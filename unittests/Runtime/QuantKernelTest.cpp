//===- QuantKernelTest.cpp - Ops on resident BF16 / FP8 / FP4 data --------===//
//
// The backend's side of docs/quantization.md: weights uploaded in their
// resident format (with block scales) and KV caches in bf16 / fp8 / NVFP4
// give what the same ops give on the decoded values. Runs on the CPU
// backend (HelixRuntimeTests) and on CUDA (HelixRuntimeCudaTests, label
// gpu, skipped without a device). The codecs themselves are checked
// against hand-computed values in QuantFormatsTest.
//
//===----------------------------------------------------------------------===//

#include "NaiveMath.h"
#include "TestUtil.h"

#include "helix/Runtime/Quant.h"

using namespace helix::rt;
using namespace helix::rt::test;

namespace {

HostTensor host(std::vector<int64_t> shape, uint64_t seed) {
  HostTensor t;
  t.shape = shape;
  t.data = randomVector(static_cast<size_t>(shapeNumel(shape)), seed);
  return t;
}

/// x [M, K] . w [N, K]^T in double.
std::vector<double> matmulT(const std::vector<float> &x,
                            const std::vector<float> &w, int64_t M, int64_t K,
                            int64_t N) {
  std::vector<double> out(M * N, 0.0);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k)
        out[m * N + n] += double(x[m * K + k]) * w[n * K + k];
  return out;
}

// M = 3: a decode step (CUDA: the weight-streaming kernel); M = 70: over
// kStreamingGemmMaxRows (CUDA: decoded to f32 for cuBLAS).
class QuantLinear : public ::testing::TestWithParam<int64_t> {};
INSTANTIATE_TEST_SUITE_P(Rows, QuantLinear, ::testing::Values(3, 70));

TEST_P(QuantLinear, LinearOnEveryResidentFormat) {
  HELIX_NEED_CONTEXT(ctx);
  const int64_t M = GetParam(), K = 64, N = 40;
  HostTensor w = host({N, K}, 1);
  std::vector<float> x = randomVector(M * K, 2);
  Tensor xt = ctx->upload(x, {M, K});
  for (const QuantHost &q :
       {toBF16(w), quantizeFP8Block(w, "w"), quantizeFP8Block(w, "w", 16),
        quantizeFP8Tensor(w, "w"), quantizeNVFP4(w, "w"),
        quantizeMXFP4(w, "w")}) {
    SCOPED_TRACE(q.describe());
    Tensor wt = ctx->uploadResident(q);
    EXPECT_EQ(wt.dtype(), q.dtype);
    EXPECT_EQ(wt.bytes(), q.data.size());
    // The op decodes the weight; the result is that of the decoded values.
    std::vector<float> decoded = dequantize(q).data;
    expectNear(ctx->download(linear(*ctx, xt, wt)),
               matmulT(x, decoded, M, K, N));
    expectNear(ctx->download(dequantize(*ctx, wt)), decoded, 0);
  }
}

TEST_P(QuantLinear, SeveralWeightsInOneCall) {
  HELIX_NEED_CONTEXT(ctx);
  // q, k and v (or gate and up) of one x: linearMany gives exactly what a
  // linear() each gives (on CUDA up to 64 rows: one launch over the three
  // weights' columns, every resident format, with and without biases).
  const int64_t M = GetParam(), K = 64;
  const std::vector<int64_t> Ns = {40, 8, 24};
  std::vector<float> x = randomVector(M * K, 12);
  Tensor xt = ctx->upload(x, {M, K});
  for (int format = 0; format < 3; ++format) {
    std::vector<Tensor> ws, bs;
    for (size_t i = 0; i < Ns.size(); ++i) {
      HostTensor w = host({Ns[i], K}, 20 + i);
      QuantHost q = format == 0   ? toBF16(w)
                    : format == 1 ? quantizeFP8Block(w, "w", 16)
                                  : quantizeNVFP4(w, "w");
      ws.push_back(ctx->uploadResident(q));
      bs.push_back(ctx->upload(randomVector(Ns[i], 30 + i), {Ns[i]}));
    }
    SCOPED_TRACE(dtypeName(ws[0].dtype()));
    for (bool withBias : {false, true}) {
      std::vector<const Tensor *> biases;
      for (size_t i = 0; i < Ns.size(); ++i)
        biases.push_back(withBias && i != 1 ? &bs[i] : nullptr);
      std::vector<Tensor> outs = linearMany(*ctx, xt, ws, biases);
      ASSERT_EQ(outs.size(), Ns.size());
      for (size_t i = 0; i < Ns.size(); ++i) {
        ASSERT_EQ(outs[i].shape(), (std::vector<int64_t>{M, Ns[i]}));
        std::vector<float> want =
            ctx->download(linear(*ctx, xt, ws[i], biases[i]));
        std::vector<float> got = ctx->download(outs[i]);
        for (size_t j = 0; j < got.size(); ++j)
          ASSERT_EQ(got[j], want[j]) << "weight " << i << " element " << j;
      }
    }
  }
  EXPECT_THROW(linearMany(*ctx, xt, {}, {}), std::exception);
}

TEST(QuantKernels, HeadMatmulOnResidentWeights) {
  HELIX_NEED_CONTEXT(ctx);
  // MLA's W_UK ([H, A, N], transposed) and W_UV ([H, N, A]) per head, in
  // every resident format, 3 rows (CUDA: the weight read as stored, one
  // kernel) and 70 (decoded to f32 for cuBLAS): the result of the decoded
  // values.
  const int64_t H = 3, A = 32, N = 48;
  for (int64_t B : {int64_t(3), int64_t(70)})
    for (bool transposeW : {true, false}) {
      HostTensor w = host(transposeW ? std::vector<int64_t>{H, A, N}
                                     : std::vector<int64_t>{H, N, A},
                          40);
      std::vector<float> x = randomVector(B * H * A, 41);
      Tensor xt = ctx->upload(x, {B, H, A});
      for (const QuantHost &q :
           {toBF16(w), quantizeFP8Block(w, "w", 16), quantizeNVFP4(w, "w")}) {
        SCOPED_TRACE(q.describe() + (transposeW ? " transposed" : "") +
                     " rows " + std::to_string(B));
        std::vector<float> d = dequantize(q).data;
        Tensor wt = ctx->uploadResident(q);
        std::vector<float> got =
            ctx->download(headMatmul(*ctx, xt, wt, transposeW));
        std::vector<double> want = naive::headMatmul(
            x, B, H, A, N, transposeW, [&](int64_t e) { return d[e]; });
        expectNear(got, want);
      }
    }
}

TEST(QuantKernels, RowsOfAResidentWeightKeepTheirScales) {
  HELIX_NEED_CONTEXT(ctx);
  // Rows [6, 30) of an NVFP4 and an FP8 weight: the view's first element is
  // element 6 * K of the storage, and its scales are found from there.
  const int64_t K = 48, N = 32;
  HostTensor w = host({N, K}, 3);
  for (const QuantHost &q :
       {quantizeNVFP4(w, "w"), quantizeFP8Block(w, "w", 16)}) {
    SCOPED_TRACE(q.describe());
    Tensor rows = ctx->uploadResident(q).rows(6, 30);
    std::vector<float> decoded = dequantize(q).data;
    std::vector<float> want(decoded.begin() + 6 * K, decoded.begin() + 30 * K);
    expectNear(ctx->download(dequantize(*ctx, rows)), want, 0);
  }
}

TEST(QuantKernels, ExpertsOnFP4Weights) {
  HELIX_NEED_CONTEXT(ctx);
  // Two local experts of three, NVFP4 gate/up/down: the same result as on
  // their decoded values in f32.
  const int64_t B = 2, H = 32, I = 16, E = 2, k = 2;
  ExpertWeights q, f;
  HostTensor gate = host({E, I, H}, 4), up = host({E, I, H}, 5),
             down = host({E, H, I}, 6);
  q.gate = ctx->uploadResident(quantizeNVFP4(gate, "gate"));
  q.up = ctx->uploadResident(quantizeNVFP4(up, "up"));
  q.down = ctx->uploadResident(quantizeNVFP4(down, "down"));
  f.gate = ctx->upload(dequantize(quantizeNVFP4(gate, "gate")).data, {E, I, H});
  f.up = ctx->upload(dequantize(quantizeNVFP4(up, "up")).data, {E, I, H});
  f.down = ctx->upload(dequantize(quantizeNVFP4(down, "down")).data, {E, H, I});
  Tensor x = ctx->upload(randomVector(B * H, 7), {B, H});
  Routing r;
  r.indices = ctx->uploadInt({1, 2, 2, 0}, {B, k});
  r.weights = ctx->upload({0.75f, 0.25f, 0.5f, 0.5f}, {B, k});
  Activation act = Activation::fromName("silu");
  expectNear(ctx->download(moeExperts(*ctx, x, r, q, 1, act)),
             ctx->download(moeExperts(*ctx, x, r, f, 1, act)));
}

/// K/V as the cache stores them: encoded and decoded per head
/// (NumberFormats.h, the rule of docs/quantization.md).
std::vector<float> storedKV(DType dtype, const std::vector<float> &x,
                            int64_t dim) {
  std::vector<float> out(x.size());
  std::vector<uint8_t> bytes(x.size() * 4), scales(x.size());
  for (size_t h = 0; h < x.size() / dim; ++h) {
    fmt::encodeKV(dtype, x.data() + h * dim, dim, bytes.data(), scales.data());
    for (int64_t i = 0; i < dim; ++i)
      out[h * dim + i] = fmt::decodeKV(dtype, bytes.data(), scales.data(), i);
  }
  return out;
}

/// The cache lengths AttentionOverEveryKVFormat covers. Under
/// AddressSanitizer the CUDA emulation runs a std::thread per CUDA thread
/// (docs/cuda-on-cpu.md) and filling 600 slots takes minutes; the split-K
/// case runs in every other build (the normal one's cuda-emu label, and
/// natively on a GPU).
static std::vector<int64_t> attentionCacheLengths() {
#if defined(HELIX_TEST_CUDA) && defined(__SANITIZE_ADDRESS__)
  return {6};
#else
  return {6, 600};
#endif
}

TEST(QuantKernels, AttentionOverEveryKVFormat) {
  HELIX_NEED_CONTEXT(ctx);
  // GQA with head dims of 24 (an NVFP4 head ends in an 8-value block) and
  // MLA's latent of 40 values; 6 slots, and 600 (the CUDA backend then
  // splits the long row's keys in two, split-K, and merges the parts).
  for (int64_t cap : attentionCacheLengths())
    for (DType dtype :
         {DType::F32, DType::BF16, DType::F8E4M3, DType::F4E2M1}) {
      for (bool mla : {false, true}) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + (mla ? " MLA" : " GQA") +
                     " " + std::to_string(cap) + " slots");
        int64_t B = 2, Hq = 4, Kh = mla ? 1 : 2, kd = mla ? 40 : 24,
                vd = mla ? 32 : 24;
        KVCacheConfig c{B, cap, Kh, kd, vd, mla};
        c.dtype = dtype;
        KVCache cache = makeKVCache(*ctx, c);
        std::vector<std::vector<float>> ks, vs;
        for (int64_t s = 0; s < cap; ++s) {
          std::vector<float> k = randomVector(B * Kh * kd, 100 + s);
          std::vector<float> v = randomVector(B * Kh * vd, 200 + s);
          Tensor kt = ctx->upload(k, {B, Kh, kd}),
                 vt = ctx->upload(v, {B, Kh, vd});
          kvAppend(*ctx, cache, kt, mla ? nullptr : &vt, {s, s});
          ks.push_back(storedKV(dtype, k, kd));
          vs.push_back(storedKV(dtype, v, vd));
        }
        auto q = randomVector(B * Hq * kd, 10);
        AttentionPartial p = attentionPartial(*ctx, ctx->upload(q, {B, Hq, kd}),
                                              cache, 0.25f, {0, 2}, {cap, 5});
        auto out = ctx->download(p.out), lse = ctx->download(p.lse);
        int64_t begin[2] = {0, 2}, end[2] = {cap, 5};
        for (int64_t b = 0; b < B; ++b)
          for (int64_t h = 0; h < Hq; ++h) {
            int64_t kvh = h / (Hq / Kh);
            std::vector<const float *> keys, values;
            for (int64_t s = begin[b]; s < end[b]; ++s) {
              keys.push_back(ks[s].data() + (b * Kh + kvh) * kd);
              values.push_back(mla ? keys.back()
                                   : vs[s].data() + (b * Kh + kvh) * vd);
            }
            double l;
            auto want = naiveAttention(q.data() + (b * Hq + h) * kd, kd, keys,
                                       values, vd, 0.25, &l);
            for (int64_t i = 0; i < vd; ++i)
              EXPECT_NEAR(out[(b * Hq + h) * vd + i], want[i], 1e-5);
            EXPECT_NEAR(lse[b * Hq + h], l, 1e-5);
          }
        // The same kernel writing helix.attention_partial's packing (each
        // of a head's s pieces, then its LSE) gives the same numbers there.
        for (int64_t split : {int64_t(1), int64_t(2)}) {
          int64_t piece = vd / split;
          Tensor packed =
              attentionPacked(*ctx, ctx->upload(q, {B, Hq, kd}), cache, 0.25f,
                              {0, 2}, {cap, 5}, split);
          ASSERT_EQ(packed.shape(),
                    (std::vector<int64_t>{B, Hq * split, piece + 1}));
          auto got = ctx->download(packed);
          for (int64_t bh = 0; bh < B * Hq; ++bh)
            for (int64_t j = 0; j < split; ++j) {
              const float *row = got.data() + (bh * split + j) * (piece + 1);
              for (int64_t i = 0; i < piece; ++i)
                EXPECT_EQ(row[i], out[bh * vd + j * piece + i]);
              EXPECT_EQ(row[piece], lse[bh]) << "split " << split;
            }
        }
      }
    }
}

TEST(QuantKernels, MemoryIsCountedByKind) {
  HELIX_NEED_CONTEXT(ctx);
  MemoryUse before = ctx->memoryUse();
  auto live = [&](MemoryKind k) {
    int i = static_cast<int>(k);
    return ctx->memoryUse().live[i] - before.live[i];
  };
  HostTensor w = host({64, 32}, 8);
  QuantHost q = quantizeNVFP4(w, "w");
  Tensor t = ctx->uploadResident(q);
  // 2048 values: 1024 bytes of E2M1, 128 E4M3 scales and one f32 global.
  EXPECT_EQ(live(MemoryKind::Weights), 1024);
  EXPECT_EQ(live(MemoryKind::Scales), 128 + 4);
  KVCacheConfig c{2, 8, 1, 40, 32, true};
  c.dtype = DType::F4E2M1;
  KVCache cache = makeKVCache(*ctx, c);
  // 2 x 8 x 40 values at half a byte, and ceil(40 / 16) = 3 scales each.
  EXPECT_EQ(live(MemoryKind::KVCache), 2 * 8 * 20 + 2 * 8 * 3);
  cache = KVCache();
  t = Tensor();
  EXPECT_EQ(live(MemoryKind::Weights), 0);
  EXPECT_EQ(live(MemoryKind::Scales), 0);
  EXPECT_EQ(live(MemoryKind::KVCache), 0);
}

TEST(QuantKernels, OddFP4HeadsAreRefused) {
  HELIX_NEED_CONTEXT(ctx);
  KVCacheConfig c{1, 4, 1, 15, 15, false};
  c.dtype = DType::F4E2M1;
  EXPECT_THROW(makeKVCache(*ctx, c), Error);
}

} // namespace
