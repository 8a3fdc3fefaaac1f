//===- CudaEmuCases.h - The CUDA kernels against naive math -----*- C++ -*-===//
//
// Each case calls launchers of runtime/lib/CUDA/CudaKernels.cu, compiled as
// host C++ and run on CPU threads (CudaEmu.h, docs/cuda-on-cpu.md), with
// host pointers, and computes the same result naively in double. Shared by
// the gtest suite (CudaEmuTest.cpp) and the ThreadSanitizer run
// (CudaEmuTsan.cpp). K/V and weights are decoded with NumberFormats.h, the
// codecs the kernels use (tested on their own in QuantFormatsTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_UNITTESTS_RUNTIME_CUDAEMUCASES_H
#define HELIX_UNITTESTS_RUNTIME_CUDAEMUCASES_H

#include "CudaKernels.h"
#include "MoeRouting.h"
#include "NaiveMath.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace helix {
namespace rt {
namespace cudaemu_test {

/// What a launcher computed and what it should have; `error`:
/// cudaGetLastError() after its launches.
struct Result {
  std::string what;
  std::vector<float> got;
  std::vector<double> want;
  double tol = 1e-5;
  cudaError_t error = cudaSuccess;
};

constexpr double kInf = std::numeric_limits<double>::infinity();

inline std::vector<float> randn(size_t n, uint64_t seed, float scale = 1) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

/// The first i with |got - want| > tol * (1 + |want|) (infinities equal
/// themselves), got.size() on a size mismatch, -1 when all match.
inline int64_t mismatch(const Result &r) {
  if (r.got.size() != r.want.size())
    return static_cast<int64_t>(r.got.size());
  for (size_t i = 0; i < r.got.size(); ++i) {
    double g = r.got[i], w = r.want[i];
    if (std::isinf(w) ? g != w
                      : !(std::fabs(g - w) <= r.tol * (1 + std::fabs(w))))
      return static_cast<int64_t>(i);
  }
  return -1;
}

inline Result finish(std::string what, std::vector<float> got,
                     std::vector<double> want, double tol = 1e-5) {
  Result r{std::move(what), std::move(got), std::move(want), tol,
           cudaGetLastError()};
  return r;
}

inline std::vector<double> widen(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

/// The table in f32, or in BF16 as stored (the kernel decodes the rows).
inline Result embedding(bool bf16 = false) {
  int64_t vocab = 7, hidden = 300, begin = 10;
  std::vector<int64_t> tokens = {10, 16, 3, 12, 17, 9};
  std::vector<float> table = randn(vocab * hidden, 1);
  std::vector<uint16_t> packed(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    packed[i] = fmt::floatToBf16(table[i]);
    if (bf16)
      table[i] = fmt::bf16ToFloat(packed[i]);
  }
  int64_t B = static_cast<int64_t>(tokens.size());
  std::vector<float> out(B * hidden, NAN);
  cuda::embedding(bf16 ? static_cast<const void *>(packed.data())
                       : table.data(),
                  bf16 ? DType::BF16 : DType::F32, vocab, hidden, tokens.data(),
                  B, begin, out.data(), nullptr);
  std::vector<double> want(B * hidden, 0.0);
  for (int64_t b = 0; b < B; ++b)
    if (tokens[b] >= begin && tokens[b] < begin + vocab)
      for (int64_t i = 0; i < hidden; ++i)
        want[b * hidden + i] = table[(tokens[b] - begin) * hidden + i];
  return finish(bf16 ? "embedding bf16" : "embedding", out, want, 0);
}

/// bf16: the weight stored as BF16 and read as stored (the checkpoint's
/// norm weights on the CUDA backend), against the rounded values.
inline Result rmsNorm(int64_t dim, bool bf16 = false) {
  int64_t rows = 3;
  float eps = 1e-5f;
  std::vector<float> x = randn(rows * dim, 2), w = randn(dim, 3);
  std::vector<uint16_t> packed(dim);
  for (int64_t i = 0; i < dim; ++i) {
    packed[i] = fmt::floatToBf16(w[i]);
    if (bf16)
      w[i] = fmt::bf16ToFloat(packed[i]);
  }
  std::vector<float> out(rows * dim, NAN);
  cuda::rmsNorm(
      x.data(), bf16 ? static_cast<const void *>(packed.data()) : w.data(),
      rows, dim, eps, out.data(), nullptr, bf16 ? DType::BF16 : DType::F32);
  std::vector<double> want = naive::rmsNormRows(x, w, rows, dim, dim, eps);
  return finish(std::string(bf16 ? "rmsNorm bf16 weight" : "rmsNorm") +
                    " dim " + std::to_string(dim),
                out, want, 1e-5);
}

/// rmsNormPrefix: rows of 300 values, the first 256 normed, the rest
/// copied (MLA's [latent | k_pe]), against naive math.
inline Result rmsNormPrefix() {
  int64_t rows = 3, width = 300, dim = 256;
  float eps = 1e-6f;
  std::vector<float> x = randn(rows * width, 4), w = randn(dim, 5);
  std::vector<float> out(rows * width, NAN);
  cuda::rmsNormPrefix(x.data(), w.data(), rows, width, dim, eps, out.data(),
                      nullptr);
  std::vector<double> want = naive::rmsNormRows(x, w, rows, width, dim, eps);
  return finish("rmsNormPrefix", out, want, 1e-5);
}

/// The residual add and the next norm in one kernel: sum and normed rows
/// against naive math, and bit for bit what add then rmsNorm give.
inline std::vector<Result> addRmsNorm(int64_t dim) {
  int64_t rows = 3;
  float eps = 1e-5f;
  std::vector<float> a = randn(rows * dim, 70), b = randn(rows * dim, 71),
                     w = randn(dim, 72);
  std::vector<float> sum(rows * dim, NAN), out(rows * dim, NAN);
  cuda::addRmsNorm(a.data(), b.data(), w.data(), rows, dim, eps, sum.data(),
                   out.data(), nullptr);
  std::vector<double> wantSum(rows * dim), want(rows * dim);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < dim; ++i) {
      float x = a[r * dim + i] + b[r * dim + i]; // rounded to f32, as stored
      wantSum[r * dim + i] = x;
      ss += double(x) * x;
    }
    double inv = 1 / std::sqrt(ss / dim + eps);
    for (int64_t i = 0; i < dim; ++i)
      want[r * dim + i] = wantSum[r * dim + i] * inv * w[i];
  }
  std::vector<float> sum2(rows * dim, NAN), out2(rows * dim, NAN);
  cuda::add(a.data(), b.data(), rows * dim, sum2.data(), nullptr);
  cuda::rmsNorm(sum2.data(), w.data(), rows, dim, eps, out2.data(), nullptr);
  std::string at = " dim " + std::to_string(dim);
  std::vector<Result> rs;
  rs.push_back(finish("addRmsNorm sum" + at, sum, wantSum, 0));
  rs.push_back(finish("addRmsNorm normed" + at, out, want, 1e-5));
  std::vector<float> both = sum, both2 = sum2;
  both.insert(both.end(), out.begin(), out.end());
  both2.insert(both2.end(), out2.begin(), out2.end());
  rs.push_back(
      finish("addRmsNorm = add + rmsNorm" + at, both, widen(both2), 0));
  return rs;
}

/// addBias, add, swapAxes01, sliceColumns, concatColumns, sumLeading.
inline std::vector<Result> elementwise() {
  std::vector<Result> rs;
  {
    int64_t rows = 3, cols = 300;
    std::vector<float> out = randn(rows * cols, 4), bias = randn(cols, 5);
    std::vector<double> want(rows * cols);
    for (int64_t i = 0; i < rows * cols; ++i)
      want[i] = double(out[i]) + bias[i % cols];
    cuda::addBias(out.data(), bias.data(), rows, cols, nullptr);
    rs.push_back(finish("addBias", out, want));
  }
  {
    int64_t n = 1000;
    std::vector<float> a = randn(n, 6), b = randn(n, 7), out(n, NAN);
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i)
      want[i] = double(a[i]) + b[i];
    cuda::add(a.data(), b.data(), n, out.data(), nullptr);
    rs.push_back(finish("add", out, want));
  }
  {
    int64_t A = 3, B = 5, C = 7;
    std::vector<float> x = randn(A * B * C, 8), out(A * B * C, NAN);
    std::vector<double> want(A * B * C);
    for (int64_t a = 0; a < A; ++a)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t c = 0; c < C; ++c)
          want[(b * A + a) * C + c] = x[(a * B + b) * C + c];
    cuda::swapAxes01(x.data(), A, B, C, out.data(), nullptr);
    rs.push_back(finish("swapAxes01", out, want, 0));
  }
  {
    int64_t rows = 4, cols = 50, begin = 7, count = 20;
    std::vector<float> x = randn(rows * cols, 9), out(rows * count, NAN);
    std::vector<double> want(rows * count);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < count; ++c)
        want[r * count + c] = x[r * cols + begin + c];
    cuda::sliceColumns(x.data(), rows, cols, begin, count, out.data(), nullptr);
    rs.push_back(finish("sliceColumns", out, want, 0));
  }
  {
    int64_t rows = 4, ca = 30, cb = 9;
    std::vector<float> a = randn(rows * ca, 10), b = randn(rows * cb, 11);
    std::vector<float> out(rows * (ca + cb), NAN);
    std::vector<double> want;
    for (int64_t r = 0; r < rows; ++r) {
      want.insert(want.end(), a.begin() + r * ca, a.begin() + (r + 1) * ca);
      want.insert(want.end(), b.begin() + r * cb, b.begin() + (r + 1) * cb);
    }
    cuda::concatColumns(a.data(), b.data(), rows, ca, cb, out.data(), nullptr);
    rs.push_back(finish("concatColumns", out, want, 0));
  }
  {
    int64_t S = 3, n = 300;
    std::vector<float> x = randn(S * n, 12), out(n, NAN);
    std::vector<double> want(n, 0.0);
    for (int64_t s = 0; s < S; ++s)
      for (int64_t i = 0; i < n; ++i)
        want[i] += x[s * n + i];
    cuda::sumLeading(x.data(), S, n, out.data(), nullptr);
    rs.push_back(finish("sumLeading", out, want));
  }
  return rs;
}

/// RoPE on dims [offset, offset + 2 * half) of each head; the rest stays.
inline Result rope(bool interleaved) {
  int64_t batch = 2, heads = 3, dim = 20, offset = 4, half = 6;
  float factor = 1.25f;
  std::vector<int64_t> pos = {3, 1000};
  std::vector<float> invFreq(half);
  for (int64_t f = 0; f < half; ++f)
    invFreq[f] = static_cast<float>(std::pow(10000.0, -2.0 * f / (2 * half)));
  std::vector<float> x = randn(batch * heads * dim, 13);
  std::vector<double> want = widen(x);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t f = 0; f < half; ++f) {
        float angle = invFreq[f] * static_cast<float>(pos[b]); // as the kernel
        double c = std::cos(double(angle)) * factor,
               s = std::sin(double(angle)) * factor;
        int64_t base = (b * heads + h) * dim + offset;
        int64_t i1 = base + (interleaved ? 2 * f : f);
        int64_t i2 = base + (interleaved ? 2 * f + 1 : f + half);
        want[i1] = x[i1] * c - x[i2] * s;
        want[i2] = x[i2] * c + x[i1] * s;
      }
  cuda::rope(x.data(), batch, heads, dim, pos.data(), invFreq.data(), half,
             factor, offset, interleaved, nullptr);
  return finish(interleaved ? "rope interleaved" : "rope", x, want, 1e-5);
}

/// The bytes of a K/V cache (and its F4E2M1 scales) as floats.
inline std::vector<float> bytesOf(const std::vector<uint8_t> &a,
                                  const std::vector<uint8_t> &b) {
  std::vector<float> v(a.begin(), a.end());
  v.insert(v.end(), b.begin(), b.end());
  return v;
}

/// kvStore: rows written at their slots in `dtype`, byte for byte as
/// fmt::encodeKV on the host; slot -1 and every other slot untouched.
inline Result kvStore(DType dtype) {
  int64_t batch = 3, capacity = 5, heads = 3, dim = 40;
  std::vector<int64_t> slots = {2, -1, 4};
  bool f4 = dtype == DType::F4E2M1;
  int64_t perHead = fmt::kvScalesPerHead(dim);
  std::vector<uint8_t> cache(dtypeBytes(dtype, batch * capacity * heads * dim),
                             0xab),
      scales(f4 ? batch * capacity * heads * perHead : 0, 0xcd);
  std::vector<uint8_t> wantCache = cache, wantScales = scales;
  std::vector<float> src = randn(batch * heads * dim, 14, 2.0f);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads && slots[b] >= 0; ++h) {
      int64_t at = ((b * capacity + slots[b]) * heads + h) * dim;
      fmt::encodeKV(dtype, src.data() + (b * heads + h) * dim, dim,
                    wantCache.data() + dtypeBytes(dtype, at),
                    f4 ? wantScales.data() + at / dim * perHead : nullptr);
    }
  cuda::kvStore(cache.data(), f4 ? scales.data() : nullptr, src.data(), dtype,
                batch, capacity, heads, dim, slots.data(), nullptr);
  return finish(std::string("kvStore ") + dtypeName(dtype),
                bytesOf(cache, scales), widen(bytesOf(wantCache, wantScales)),
                0);
}

/// K and V appended in one launch, as CudaBackend::kvAppend does it:
/// ropeKvStore with no query heads and nothing to rotate, against kvStore
/// of k, then of v (every cache byte; slot -1 skipped).
inline Result kvStorePair(DType dtype) {
  int64_t batch = 3, heads = 2, dim = 40, capacity = 5;
  std::vector<int64_t> slots = {2, -1, 4};
  bool f4 = dtype == DType::F4E2M1;
  int64_t perHead = fmt::kvScalesPerHead(dim);
  std::vector<uint8_t> keys1(dtypeBytes(dtype, batch * capacity * heads * dim),
                             0xab),
      vals1 = keys1, ks1(f4 ? batch * capacity * heads * perHead : 0, 0xcd),
      vs1 = ks1;
  std::vector<uint8_t> keys2 = keys1, vals2 = vals1, ks2 = ks1, vs2 = vs1;
  std::vector<float> k = randn(batch * heads * dim, 76),
                     v = randn(batch * heads * dim, 77), k2 = k;
  cuda::kvStore(keys1.data(), f4 ? ks1.data() : nullptr, k.data(), dtype, batch,
                capacity, heads, dim, slots.data(), nullptr);
  cuda::kvStore(vals1.data(), f4 ? vs1.data() : nullptr, v.data(), dtype, batch,
                capacity, heads, dim, slots.data(), nullptr);
  cuda::KVStoreTarget target{keys2.data(), f4 ? ks2.data() : nullptr,
                             vals2.data(), f4 ? vs2.data() : nullptr,
                             v.data(),     dtype,
                             capacity,     dim,
                             dim,          slots.data()};
  int launches =
      cuda::ropeKvStore(nullptr, 0, k2.data(), heads, batch, dim, nullptr,
                        nullptr, 0, 1.0f, 0, false, &target, nullptr);
  cudaError_t error = cudaGetLastError();
  // The launch count first (1), k unchanged, then every cache byte.
  std::vector<float> got = {static_cast<float>(launches)}, want = {1.0f};
  got.insert(got.end(), k2.begin(), k2.end());
  want.insert(want.end(), k.begin(), k.end());
  for (const auto &p : {bytesOf(keys2, ks2), bytesOf(vals2, vs2)})
    got.insert(got.end(), p.begin(), p.end());
  for (const auto &p : {bytesOf(keys1, ks1), bytesOf(vals1, vs1)})
    want.insert(want.end(), p.begin(), p.end());
  Result r = finish("K and V in one launch = kvStore + kvStore " +
                        std::string(dtypeName(dtype)),
                    got, widen(want), 0);
  r.error = error;
  return r;
}

/// RoPE on q and k and the KV append in one kernel (ropeKvStore): q and k
/// against naive RoPE, and q, k and the cache bytes exactly what rope,
/// rope and kvStore (k, then v) give one launch at a time. GQA: 4 query
/// heads on 2 KV heads of 40 values, rotary dims [4, 16); slot -1 skipped.
/// valueInKey: no value cache. Without a cache: RoPE only.
inline std::vector<Result> ropeKvStore(DType dtype, bool valueInKey,
                                       bool withCache = true) {
  int64_t batch = 3, qHeads = 4, kHeads = 2, dim = 40, offset = 4, half = 6,
          capacity = 5;
  float factor = 1.25f;
  std::vector<int64_t> pos = {3, 1000, 17}, slots = {2, -1, 4};
  std::vector<float> invFreq(half);
  for (int64_t f = 0; f < half; ++f)
    invFreq[f] = static_cast<float>(std::pow(10000.0, -2.0 * f / (2 * half)));
  bool f4 = dtype == DType::F4E2M1;
  int64_t perHead = fmt::kvScalesPerHead(dim);
  auto fresh = [&](uint8_t fill) {
    return std::vector<uint8_t>(
        dtypeBytes(dtype, batch * capacity * kHeads * dim), fill);
  };
  auto freshScales = [&]() {
    return std::vector<uint8_t>(f4 ? batch * capacity * kHeads * perHead : 0,
                                0xcd);
  };
  std::vector<float> q = randn(batch * qHeads * dim, 73),
                     k = randn(batch * kHeads * dim, 74),
                     v = randn(batch * kHeads * dim, 75);
  // One launch at a time (the reference), then the fused kernel.
  std::vector<float> q1 = q, k1 = k, q2 = q, k2 = k;
  std::vector<uint8_t> keys1 = fresh(0xab), vals1 = fresh(0xab),
                       ks1 = freshScales(), vs1 = freshScales();
  std::vector<uint8_t> keys2 = keys1, vals2 = vals1, ks2 = ks1, vs2 = vs1;
  cuda::rope(q1.data(), batch, qHeads, dim, pos.data(), invFreq.data(), half,
             factor, offset, false, nullptr);
  cuda::rope(k1.data(), batch, kHeads, dim, pos.data(), invFreq.data(), half,
             factor, offset, false, nullptr);
  if (withCache) {
    cuda::kvStore(keys1.data(), f4 ? ks1.data() : nullptr, k1.data(), dtype,
                  batch, capacity, kHeads, dim, slots.data(), nullptr);
    if (!valueInKey)
      cuda::kvStore(vals1.data(), f4 ? vs1.data() : nullptr, v.data(), dtype,
                    batch, capacity, kHeads, dim, slots.data(), nullptr);
  }
  cuda::KVStoreTarget target{keys2.data(),
                             f4 ? ks2.data() : nullptr,
                             valueInKey ? nullptr : vals2.data(),
                             f4 && !valueInKey ? vs2.data() : nullptr,
                             valueInKey ? nullptr : v.data(),
                             dtype,
                             capacity,
                             dim,
                             dim,
                             slots.data()};
  cuda::ropeKvStore(q2.data(), qHeads, k2.data(), kHeads, batch, dim,
                    pos.data(), invFreq.data(), half, factor, offset, false,
                    withCache ? &target : nullptr, nullptr);
  cudaError_t fusedError = cudaGetLastError();
  // Naive RoPE of q (the rotation as rope() documents it).
  std::vector<double> wantQ = widen(q);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < qHeads; ++h)
      for (int64_t f = 0; f < half; ++f) {
        float angle = invFreq[f] * static_cast<float>(pos[b]);
        double c = std::cos(double(angle)) * factor,
               sn = std::sin(double(angle)) * factor;
        int64_t i1 = (b * qHeads + h) * dim + offset + f, i2 = i1 + half;
        wantQ[i1] = q[i1] * c - q[i2] * sn;
        wantQ[i2] = q[i2] * c + q[i1] * sn;
      }
  std::string at = std::string(dtypeName(dtype)) +
                   (valueInKey ? " value-in-key" : "") +
                   (withCache ? "" : " (no cache)");
  // q, roped k, then every cache byte: fused against one at a time.
  std::vector<float> got = q2, want = q1;
  got.insert(got.end(), k2.begin(), k2.end());
  want.insert(want.end(), k1.begin(), k1.end());
  for (const auto &p : {bytesOf(keys2, ks2), bytesOf(vals2, vs2)})
    got.insert(got.end(), p.begin(), p.end());
  for (const auto &p : {bytesOf(keys1, ks1), bytesOf(vals1, vs1)})
    want.insert(want.end(), p.begin(), p.end());
  std::vector<Result> rs = {
      finish("ropeKvStore q " + at, q2, wantQ, 1e-5),
      finish("ropeKvStore = rope + rope + kvStore " + at, got, widen(want), 0)};
  for (Result &r : rs)
    r.error = fusedError;
  return rs;
}

/// Head dims of an attention case: value-in-key caches use valueInKeyDim.
struct AttentionDims {
  const char *name;
  int64_t keyDim, valueDim, valueInKeyDim;
};
/// Whole 16-byte chunks in every format: the 128-bit path everywhere (f32
/// values: 24 chunks, 5 rows at once with 8 threads idle).
constexpr AttentionDims kAlignedDims{"64/96", 64, 96, 32};
/// Whole chunks in F32 and BF16 only (40 BF16 values: 5 chunks, 8 lanes
/// per key, 3 of them idle); element by element in FP8 and FP4.
constexpr AttentionDims kMixedDims{"40/24", 40, 24, 32};
/// No format has whole chunks: element by element everywhere (FP4: a last
/// scale block of 6 values).
constexpr AttentionDims kOddDims{"38/22", 38, 22, 30};
/// DeepSeek's MLA latent: 576-value keys (72 BF16 chunks: 3 per lane of a
/// warp-wide group, some lanes 2), the value its first 512 (64 chunks: 2
/// rows at once).
constexpr AttentionDims kMlaDims{"576/512", 576, 512, 512};

/// kvStore of each row's newest position, then attention over the cache
/// (GQA: 4 query heads on 2 KV heads; ranges of 3 chunks of 128, 1 chunk,
/// and empty; MLA dims: 1 KV head, 2 query heads, rows of 200, 93, 0).
/// valueInKey: no value cache, values are the keys' first valueDim
/// entries. Output: out then lse. `splits` > 1: split-K (rows of 300, 93
/// and 0 keys cut in that many parts, some empty), merged by the launcher.
/// The case's name says which path ran (attentionVectorized).
inline Result attention(DType dtype, bool valueInKey, int splits = 1,
                        const AttentionDims &dims = kMixedDims) {
  bool mla = dims.keyDim == kMlaDims.keyDim;
  int64_t batch = 3, qHeads = mla ? 2 : 4, kvHeads = mla ? 1 : 2,
          keyDim = dims.keyDim,
          valueDim = valueInKey ? dims.valueInKeyDim : dims.valueDim,
          capacity = 300;
  std::vector<int64_t> begin = {0, 7, 20}, end = {mla ? 200 : 300, 100, 20};
  bool f4 = dtype == DType::F4E2M1;
  auto cacheOf = [&](int64_t dim, uint64_t seed, std::vector<uint8_t> &bytes,
                     std::vector<uint8_t> &scales) {
    int64_t per = fmt::kvScalesPerHead(dim);
    bytes.assign(dtypeBytes(dtype, batch * capacity * kvHeads * dim), 0);
    scales.assign(f4 ? batch * capacity * kvHeads * per : 0, 0);
    std::vector<float> x = randn(batch * capacity * kvHeads * dim, seed);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = begin[b]; t + 1 < end[b]; ++t)
        for (int64_t h = 0; h < kvHeads; ++h) {
          int64_t at = ((b * capacity + t) * kvHeads + h) * dim;
          fmt::encodeKV(dtype, x.data() + at, dim,
                        bytes.data() + dtypeBytes(dtype, at),
                        f4 ? scales.data() + at / dim * per : nullptr);
        }
    // The newest position of each non-empty row through the kernel.
    std::vector<int64_t> slots(batch);
    for (int64_t b = 0; b < batch; ++b)
      slots[b] = end[b] > begin[b] ? end[b] - 1 : -1;
    std::vector<float> fresh = randn(batch * kvHeads * dim, seed + 1);
    cuda::kvStore(bytes.data(), f4 ? scales.data() : nullptr, fresh.data(),
                  dtype, batch, capacity, kvHeads, dim, slots.data(), nullptr);
  };
  std::vector<uint8_t> keys, keyScales, values, valueScales;
  cacheOf(keyDim, 15, keys, keyScales);
  if (!valueInKey)
    cacheOf(valueDim, 17, values, valueScales);
  std::vector<float> q = randn(batch * qHeads * keyDim, 19);
  float scale = 1.0f / std::sqrt(float(keyDim));
  std::vector<float> out(batch * qHeads * valueDim, NAN),
      lse(batch * qHeads, NAN),
      work(cuda::attentionWorkspace(splits, batch, qHeads, valueDim), NAN);
  cuda::attention(q.data(), keys.data(), f4 ? keyScales.data() : nullptr,
                  valueInKey ? nullptr : values.data(),
                  f4 && !valueInKey ? valueScales.data() : nullptr, dtype,
                  batch, qHeads, kvHeads, keyDim, valueDim, capacity,
                  begin.data(), end.data(), scale, out.data(), lse.data(),
                  splits, work.data(), nullptr);

  auto decoded = [&](const std::vector<uint8_t> &bytes,
                     const std::vector<uint8_t> &scales, int64_t dim, int64_t b,
                     int64_t t, int64_t h, int64_t i) {
    int64_t at = ((b * capacity + t) * kvHeads + h) * dim;
    return double(fmt::decodeKV(
        dtype, bytes.data() + dtypeBytes(dtype, at),
        f4 ? scales.data() + at / dim * fmt::kvScalesPerHead(dim) : nullptr,
        i));
  };
  std::vector<double> want(out.size(), 0.0), wantLse(lse.size(), -kInf);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < qHeads; ++h) {
      int64_t kvh = h / (qHeads / kvHeads);
      std::vector<double> s;
      for (int64_t t = begin[b]; t < end[b]; ++t) {
        double d = 0;
        for (int64_t i = 0; i < keyDim; ++i)
          d += q[(b * qHeads + h) * keyDim + i] *
               decoded(keys, keyScales, keyDim, b, t, kvh, i);
        s.push_back(d * scale);
      }
      if (s.empty())
        continue;
      double m = -kInf, l = 0;
      for (double v : s)
        m = std::max(m, v);
      for (double v : s)
        l += std::exp(v - m);
      for (int64_t i = 0; i < valueDim; ++i) {
        double a = 0;
        for (int64_t t = begin[b]; t < end[b]; ++t)
          a += std::exp(s[t - begin[b]] - m) *
               (valueInKey
                    ? decoded(keys, keyScales, keyDim, b, t, kvh, i)
                    : decoded(values, valueScales, valueDim, b, t, kvh, i));
        want[(b * qHeads + h) * valueDim + i] = a / l;
      }
      wantLse[b * qHeads + h] = m + std::log(l);
    }
  out.insert(out.end(), lse.begin(), lse.end());
  want.insert(want.end(), wantLse.begin(), wantLse.end());
  bool vectorized = cuda::attentionVectorized(
      dtype, keyDim, valueDim, valueInKey, keys.data(),
      valueInKey ? nullptr : values.data());
  return finish(std::string("attention ") + dtypeName(dtype) + " " + dims.name +
                    (valueInKey ? " value-in-key" : "") +
                    (splits > 1 ? " split " + std::to_string(splits) : "") +
                    (vectorized ? " (128-bit loads)" : " (element loads)"),
                out, want, 1e-4);
}

/// attention() writing helix.attention_partial's packing (piece > 0: each
/// `headSplit` piece of a head's values, then the head's LSE) against the
/// same launch writing values and LSEs apart, bit for bit (GQA, 4 query
/// heads on 2 KV heads, rows of 300, 93 and 0 keys; splits > 1: the split-K
/// merge writes the packing). With 96-value heads split in 2, FP4's 32-value
/// chunks straddle the pieces; FP8's and BF16's do not.
inline Result attentionPackedOut(DType dtype, int splits, int64_t headSplit,
                                 const AttentionDims &dims) {
  int64_t batch = 3, qHeads = 4, kvHeads = 2, keyDim = dims.keyDim,
          valueDim = dims.valueDim, capacity = 300,
          piece = valueDim / headSplit;
  std::vector<int64_t> begin = {0, 7, 20}, end = {300, 100, 20};
  bool f4 = dtype == DType::F4E2M1;
  auto cacheOf = [&](int64_t dim, uint64_t seed, std::vector<uint8_t> &bytes,
                     std::vector<uint8_t> &scales) {
    int64_t per = fmt::kvScalesPerHead(dim);
    bytes.assign(dtypeBytes(dtype, batch * capacity * kvHeads * dim), 0);
    scales.assign(f4 ? batch * capacity * kvHeads * per : 0, 0);
    std::vector<float> x = randn(batch * capacity * kvHeads * dim, seed);
    for (int64_t row = 0; row < batch * capacity * kvHeads; ++row)
      fmt::encodeKV(dtype, x.data() + row * dim, dim,
                    bytes.data() + dtypeBytes(dtype, row * dim),
                    f4 ? scales.data() + row * per : nullptr);
  };
  std::vector<uint8_t> keys, keyScales, values, valueScales;
  cacheOf(keyDim, 23, keys, keyScales);
  cacheOf(valueDim, 24, values, valueScales);
  std::vector<float> q = randn(batch * qHeads * keyDim, 25);
  float scale = 1.0f / std::sqrt(float(keyDim));
  auto run = [&](int64_t p, std::vector<float> &out, std::vector<float> &lse) {
    std::vector<float> work(
        cuda::attentionWorkspace(splits, batch, qHeads, valueDim), NAN);
    return cuda::attention(
        q.data(), keys.data(), f4 ? keyScales.data() : nullptr, values.data(),
        f4 ? valueScales.data() : nullptr, dtype, batch, qHeads, kvHeads,
        keyDim, valueDim, capacity, begin.data(), end.data(), scale, out.data(),
        p ? nullptr : lse.data(), splits, work.data(), nullptr, p);
  };
  std::vector<float> out(batch * qHeads * valueDim, NAN),
      lse(batch * qHeads, NAN), none;
  std::vector<float> packed(batch * qHeads * headSplit * (piece + 1), NAN);
  int separate = run(0, out, lse), launches = run(piece, packed, none);
  std::vector<double> want;
  for (int64_t bh = 0; bh < batch * qHeads; ++bh)
    for (int64_t j = 0; j < headSplit; ++j) {
      for (int64_t i = 0; i < piece; ++i)
        want.push_back(out[bh * valueDim + j * piece + i]);
      want.push_back(lse[bh]);
    }
  packed.push_back(float(launches)); // the same launches either way
  want.push_back(double(separate));
  return finish(std::string("attention packed ") + dtypeName(dtype) + " " +
                    dims.name + " head split " + std::to_string(headSplit) +
                    (splits > 1 ? " split " + std::to_string(splits) : ""),
                packed, want, 0);
}

/// Partial attention results of 3 shards merged by their LSEs; a shard
/// with no keys (-inf) and a (row, head) with none at all. Read in place
/// from separate values and LSEs, or from the all-to-all's packing (each
/// head's values, then its LSE: PartialsLayout::packed).
inline Result lseCombine(bool withSinks, bool packed = false) {
  int64_t batch = 2, shards = 3, heads = 2, dim = 50;
  std::vector<float> partials = randn(batch * shards * heads * dim, 20);
  std::vector<float> lse = randn(batch * shards * heads, 21, 3.0f);
  std::vector<float> sinks = randn(heads, 22);
  auto at = [&](int64_t b, int64_t s, int64_t h) {
    return (b * shards + s) * heads + h;
  };
  lse[at(0, 1, 0)] = -INFINITY;
  for (int64_t s = 0; s < shards; ++s)
    lse[at(1, s, 1)] = -INFINITY;
  PartialsLayout l = packed
                         ? PartialsLayout::packed(shards, batch, heads, dim)
                         : PartialsLayout::separate(batch, shards, heads, dim);
  std::vector<float> values(packed ? l.valuesSpan() + 1 : partials.size(), NAN),
      lses(packed ? 0 : lse.size(), NAN);
  float *lseAt = packed ? values.data() + dim : lses.data();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < shards; ++s)
      for (int64_t h = 0; h < heads; ++h) {
        int64_t v = b * l.batchStride + s * l.shardStride + h * l.headStride;
        for (int64_t i = 0; i < dim; ++i)
          values[v + i] = partials[at(b, s, h) * dim + i];
        lseAt[b * l.lseBatchStride + s * l.lseShardStride +
              h * l.lseHeadStride] = lse[at(b, s, h)];
      }
  std::vector<float> out(batch * heads * dim, NAN);
  cuda::lseCombine(values.data(), lseAt, l, withSinks ? sinks.data() : nullptr,
                   out.data(), nullptr);
  std::vector<double> want(out.size(), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      double m = withSinks ? sinks[h] : -kInf;
      for (int64_t s = 0; s < shards; ++s)
        m = std::max(m, double(lse[at(b, s, h)]));
      if (m == -kInf)
        continue;
      double denom = withSinks ? std::exp(sinks[h] - m) : 0;
      for (int64_t s = 0; s < shards; ++s)
        denom += std::exp(lse[at(b, s, h)] - m);
      for (int64_t i = 0; i < dim; ++i) {
        double a = 0;
        for (int64_t s = 0; s < shards; ++s)
          a += std::exp(lse[at(b, s, h)] - m) * partials[at(b, s, h) * dim + i];
        want[(b * heads + h) * dim + i] = a / denom;
      }
    }
  return finish(std::string(withSinks ? "lseCombine sinks" : "lseCombine") +
                    (packed ? " (packed)" : ""),
                out, want, 1e-5);
}

/// kind: 0 SiLU, 1 GELU (erf), 2 GELU (tanh), 3 gpt-oss clamped SwiGLU.
inline Result gated(int kind) {
  int64_t n = 600;
  float alpha = 1.702f, limit = 7.0f;
  std::vector<float> gate = randn(n, 23, 4.0f), up = randn(n, 24, 4.0f);
  std::vector<float> out(n, NAN);
  cuda::gated(gate.data(), up.data(), n, kind, alpha, limit, out.data(),
              nullptr);
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i) {
    double g = gate[i], u = up[i];
    switch (kind) {
    case 0:
      want[i] = g / (1 + std::exp(-g)) * u;
      break;
    case 1:
      want[i] = 0.5 * g * (1 + std::erf(g / std::sqrt(2.0))) * u;
      break;
    case 2:
      want[i] =
          0.5 * g *
          (1 + std::tanh(std::sqrt(2 / M_PI) * (g + 0.044715 * g * g * g))) * u;
      break;
    default:
      g = std::min(g, double(limit));
      u = std::max(std::min(u, double(limit)), -double(limit));
      want[i] = (u + 1) * g / (1 + std::exp(-alpha * g));
    }
  }
  return finish("gated kind " + std::to_string(kind), out, want, 1e-5);
}

/// A quantized tensor for dequantize: codes, block scales, globals.
struct Quantized {
  DType dtype;
  std::vector<uint8_t> codes, scales;
  std::vector<float> globals;
  BlockScaleDesc desc;
  int64_t matrices;
};

/// value(i) from first principles: element (m, r, c) lies in block
/// ((r + rowOrigin) / blockRows, (c + colOrigin) / blockCols) of matrix m;
/// decode * block scale * global, rounded to f32 as documented.
inline double naiveValue(const Quantized &t, int64_t i, bool scaled) {
  const BlockScaleDesc &d = t.desc;
  float v = fmt::decodeElement(t.dtype, t.codes.data(), i);
  if (!scaled)
    return v;
  int64_t m = i / (d.rows * d.cols), r = i / d.cols % d.rows, c = i % d.cols;
  int64_t br = (r + d.rowOrigin) / d.blockRows,
          bc = (c + d.colOrigin) / d.blockCols;
  float s = fmt::scaleToFloat(d.type, t.scales.data(),
                              (m * d.gridRows + br) * d.gridCols + bc);
  float x = v * s; // in f32, in this order (BlockScaleDesc::apply)
  return t.globals.empty() ? x : x * t.globals[m];
}

inline Quantized quantized(DType dtype, ScaleType st, int64_t matrices,
                           int64_t rows, int64_t cols, int64_t blockRows,
                           int64_t blockCols, int64_t rowOrigin,
                           int64_t colOrigin, bool globals, uint64_t seed) {
  Quantized t{dtype, {}, {}, {}, {}, matrices};
  int64_t n = matrices * rows * cols;
  std::vector<float> x = randn(n, seed, 2.0f);
  t.codes.resize(dtypeBytes(dtype, n));
  std::mt19937_64 rng(seed + 1);
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
    case DType::F32:
      std::memcpy(t.codes.data() + 4 * i, &x[i], 4);
      break;
    case DType::BF16: {
      uint16_t h = fmt::floatToBf16(x[i]);
      std::memcpy(t.codes.data() + 2 * i, &h, 2);
      break;
    }
    case DType::F8E4M3:
      t.codes[i] = fmt::floatToE4m3(x[i]);
      break;
    case DType::F4E2M1:
      t.codes[i / 2] |= fmt::floatToE2m1(x[i]) << (i % 2 ? 4 : 0);
      break;
    default:
      break;
    }
  }
  BlockScaleDesc &d = t.desc;
  d.type = st;
  d.rows = rows;
  d.cols = cols;
  d.blockRows = blockRows;
  d.blockCols = blockCols;
  d.rowOrigin = rowOrigin;
  d.colOrigin = colOrigin;
  d.gridRows = (rows + rowOrigin + blockRows - 1) / blockRows;
  d.gridCols = (cols + colOrigin + blockCols - 1) / blockCols;
  int64_t ns = matrices * d.gridRows * d.gridCols;
  t.scales.resize(ns * (st == ScaleType::F32 ? 4 : 1));
  for (int64_t i = 0; i < ns; ++i) {
    switch (st) {
    case ScaleType::F32: {
      float f = std::ldexp(1.0f + float(rng() % 100) / 100, int(rng() % 7) - 3);
      std::memcpy(t.scales.data() + 4 * i, &f, 4);
      break;
    }
    case ScaleType::E4M3:
      t.scales[i] = fmt::floatToE4m3(0.25f + float(rng() % 100) / 10);
      break;
    case ScaleType::E8M0:
      t.scales[i] = static_cast<uint8_t>(120 + rng() % 15);
      break;
    }
  }
  for (int64_t m = 0; globals && m < matrices; ++m)
    t.globals.push_back(0.75f * float(m + 1));
  d.scales = t.scales.data();
  d.globals = globals ? t.globals.data() : nullptr;
  return t;
}

/// The elements [from, n) of `t` through dequantize (`scaled` false: no
/// BlockScaleDesc); `from` must start a byte.
inline Result dequantize(const std::string &what, const Quantized &t,
                         int64_t from, bool scaled) {
  int64_t n = t.matrices * t.desc.rows * t.desc.cols - from;
  std::vector<float> out(n, NAN);
  cuda::dequantize(t.codes.data() + dtypeBytes(t.dtype, from), t.dtype, n, from,
                   scaled ? &t.desc : nullptr, out.data(), nullptr);
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i)
    want[i] = naiveValue(t, from + i, scaled);
  return finish("dequantize " + what, out, want, 0);
}

inline std::vector<Result> dequantizeAll() {
  std::vector<Result> rs;
  // MXFP8: E4M3 codes, E8M0 scales per 32 values of a row.
  rs.push_back(dequantize("mxfp8",
                          quantized(DType::F8E4M3, ScaleType::E8M0, 2, 4, 64, 1,
                                    32, 0, 0, false, 30),
                          0, true));
  // NVFP4: E2M1 codes, E4M3 scales per 16, a global per matrix; from the
  // second row on (a slice of rows).
  rs.push_back(dequantize("nvfp4 rows 1..",
                          quantized(DType::F4E2M1, ScaleType::E4M3, 2, 6, 32, 1,
                                    16, 0, 0, true, 31),
                          32, true));
  // BF16 with f32 scales on 2 x 8 blocks, the tensor starting inside a
  // block (row 1, column 3 of its first block).
  rs.push_back(dequantize(
      "bf16 2x8 blocks offset",
      quantized(DType::BF16, ScaleType::F32, 3, 5, 20, 2, 8, 1, 3, true, 32), 0,
      true));
  // No scales: plain decode.
  rs.push_back(dequantize(
      "f32 unscaled",
      quantized(DType::F32, ScaleType::F32, 1, 7, 100, 1, 1, 0, 0, false, 33),
      0, false));
  return rs;
}

/// linearResident: x [M, K] times matrix `matrix` of `t` (rows N = the
/// matrix's rows, K its columns) read as stored, with a bias; `fromRow`:
/// the weight view starts at that row (its pointer and scale base move).
inline Result linearResident(const std::string &what, const Quantized &t,
                             int64_t matrix, int64_t fromRow, int64_t M,
                             bool scaled) {
  const BlockScaleDesc &d = t.desc;
  int64_t K = d.cols, N = d.rows - fromRow;
  int64_t from = matrix * d.rows * K + fromRow * K; // the view's first element
  std::vector<float> x = randn(M * K, 50), bias = randn(N, 51), out(M * N, NAN);
  cuda::linearResident(
      x.data(), M, K, t.codes.data() + dtypeBytes(t.dtype, from), t.dtype, 0,
      from, scaled ? &d : nullptr, N, bias.data(), out.data(), nullptr);
  std::vector<double> want(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = bias[n];
      for (int64_t k = 0; k < K; ++k)
        acc += double(x[m * K + k]) * naiveValue(t, from + n * K + k, scaled);
      want[m * N + n] = acc;
    }
  return finish("linearResident " + what, out, want, 1e-4);
}

/// linearResidentParts: one x by three weights in different formats (q, k
/// and v of one projection), one launch, each part's rows and bias in its
/// own output, against naive math.
inline Result linearParts() {
  int64_t M = 3, K = 64;
  // Moved in, not copied: a Quantized's desc points into its own buffers.
  std::vector<Quantized> ts;
  ts.reserve(3);
  ts.push_back(quantized(DType::F8E4M3, ScaleType::F32, 1, 5, K, 128, 128, 0, 0,
                         false, 65));
  ts.push_back(quantized(DType::F4E2M1, ScaleType::E4M3, 1, 9, K, 1, 16, 0, 0,
                         true, 66));
  ts.push_back(
      quantized(DType::BF16, ScaleType::F32, 1, 6, K, 1, 1, 0, 0, false, 67));
  std::vector<float> x = randn(M * K, 68);
  std::vector<std::vector<float>> bias, out;
  std::vector<cuda::LinearPart> parts;
  for (size_t i = 0; i < ts.size(); ++i) {
    int64_t N = ts[i].desc.rows;
    bias.push_back(randn(N, 69 + i));
    out.push_back(std::vector<float>(M * N, NAN));
  }
  for (size_t i = 0; i < ts.size(); ++i) {
    bool scaled = ts[i].dtype != DType::BF16;
    parts.push_back({ts[i].codes.data(), ts[i].dtype, 0, 0,
                     scaled ? &ts[i].desc : nullptr, ts[i].desc.rows,
                     i == 1 ? nullptr : bias[i].data(), out[i].data()});
  }
  int launches = cuda::linearResidentParts(
      x.data(), M, K, parts.data(), static_cast<int>(parts.size()), nullptr);
  std::vector<float> got;
  std::vector<double> want;
  for (size_t i = 0; i < ts.size(); ++i) {
    int64_t N = ts[i].desc.rows;
    bool scaled = ts[i].dtype != DType::BF16;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = i == 1 ? 0.0 : bias[i][n];
        for (int64_t k = 0; k < K; ++k)
          acc += double(x[m * K + k]) * naiveValue(ts[i], n * K + k, scaled);
        want.push_back(acc);
        got.push_back(out[i][m * N + n]);
      }
  }
  // One launch: the count the backend adds to its traffic.
  got.push_back(float(launches));
  want.push_back(1.0);
  return finish("linearResidentParts fp8 + nvfp4 + bf16", got, want, 1e-4);
}

/// headMatmulResident: MLA's per-head GEMM on FP8 128 x 128 blocks, W
/// [H, N, A] or transposed [H, A, N] (as `quantized` matrices), 3 rows of x.
inline Result headMatmulResident(bool transposeW) {
  int64_t B = 3, H = 2, A = 40, N = 24;
  Quantized t = transposeW ? quantized(DType::F8E4M3, ScaleType::F32, H, A, N,
                                       128, 128, 0, 0, false, 90)
                           : quantized(DType::F8E4M3, ScaleType::F32, H, N, A,
                                       128, 128, 0, 0, false, 91);
  std::vector<float> x = randn(B * H * A, 92), out(B * H * N, NAN);
  cuda::headMatmulResident(x.data(), B, H, A, t.codes.data(), t.dtype, 0,
                           &t.desc, N, transposeW, out.data(), nullptr);
  std::vector<double> want =
      naive::headMatmul(x, B, H, A, N, transposeW,
                        [&](int64_t e) { return naiveValue(t, e, true); });
  return finish(std::string("headMatmulResident fp8") +
                    (transposeW ? " transposed" : ""),
                out, want, 1e-4);
}

inline std::vector<Result> linearResidentAll() {
  std::vector<Result> rs;
  rs.push_back(linearParts());
  rs.push_back(headMatmulResident(true));
  rs.push_back(headMatmulResident(false));
  // FP8 with 128 x 128 f32 block scales (DeepSeek), K not a multiple of
  // 32, N not of the 4 columns a block computes, M over one row chunk (8).
  rs.push_back(linearResident("fp8 128x128 blocks, expert 1",
                              quantized(DType::F8E4M3, ScaleType::F32, 2, 7,
                                        300, 128, 128, 0, 0, false, 60),
                              1, 0, 11, true));
  // FP8 rows of 256 values (16-byte aligned: the 128-bit load path).
  rs.push_back(linearResident("fp8 128x128 blocks, aligned rows",
                              quantized(DType::F8E4M3, ScaleType::F32, 1, 5,
                                        256, 128, 128, 0, 0, false, 64),
                              0, 1, 9, true));
  // NVFP4 with a global per matrix, a view starting at row 2.
  rs.push_back(linearResident("nvfp4 rows 2..",
                              quantized(DType::F4E2M1, ScaleType::E4M3, 2, 9,
                                        64, 1, 16, 0, 0, true, 61),
                              0, 2, 3, true));
  // MXFP4 (gpt-oss): E8M0 per 32 values.
  rs.push_back(linearResident("mxfp4",
                              quantized(DType::F4E2M1, ScaleType::E8M0, 1, 5,
                                        96, 1, 32, 0, 0, false, 62),
                              0, 0, 4, true));
  // BF16 without scales (the LM head), one row.
  rs.push_back(linearResident(
      "bf16 unscaled",
      quantized(DType::BF16, ScaleType::F32, 1, 6, 200, 1, 1, 0, 0, false, 63),
      0, 0, 1, false));
  return rs;
}

/// The device router against routeHost (Ops.cpp, the CPU backend's):
/// indices exactly, weights within 1e-6. `name` says which configuration.
inline Result moeRoute(const std::string &name, int64_t batch, int64_t E,
                       const RouterConfig &c, bool withBias, uint64_t seed,
                       bool equalLogits = false) {
  std::vector<float> logits = randn(batch * E, seed, 2.0f),
                     bias = randn(E, seed + 1, 0.5f);
  if (equalLogits)
    std::fill(logits.begin(), logits.end(), 0.25f);
  cuda::RouterParams p = cuda::routerParams(c, E);
  std::vector<int32_t> idx(batch * c.topK, -7);
  std::vector<float> w(batch * c.topK, NAN);
  cuda::moeRoute(logits.data(), withBias ? bias.data() : nullptr, batch, p,
                 idx.data(), w.data(), nullptr);
  cudaError_t e = cudaGetLastError();
  std::vector<int32_t> wantIdx;
  std::vector<float> wantW;
  routeHost(logits.data(), batch, E, c, withBias ? bias.data() : nullptr,
            wantIdx, wantW);
  std::vector<float> got(idx.begin(), idx.end());
  std::vector<double> want(wantIdx.begin(), wantIdx.end());
  // Indices exactly (as floats: small integers), then weights.
  std::vector<float> gotW = got;
  gotW.insert(gotW.end(), w.begin(), w.end());
  std::vector<double> wantAll = want;
  wantAll.insert(wantAll.end(), wantW.begin(), wantW.end());
  Result r = finish("moeRoute " + name, gotW, wantAll, 1e-6);
  r.error = e;
  for (size_t i = 0; i < idx.size(); ++i)
    if (idx[i] != wantIdx[i])
      r.got[i] = NAN; // an index differs: fail whatever the tolerance
  return r;
}

inline std::vector<Result> moeRouteAll() {
  std::vector<Result> rs;
  RouterConfig soft;
  soft.topK = 4;
  soft.normTopkProb = true;
  rs.push_back(moeRoute("softmax top-4 of 16", 5, 16, soft, false, 80));
  // All logits equal: every tie goes to the lower expert.
  rs.push_back(moeRoute("softmax ties", 2, 16, soft, false, 81, true));
  // DeepSeek-V3: sigmoid, correction bias (some negative choices, so a
  // masked group's 0 can win), 8 groups of 32, 4 kept by their top-2 sums,
  // top-8, normalized, scaled 2.5.
  RouterConfig ds;
  ds.scoring = RouterConfig::Sigmoid;
  ds.topK = 8;
  ds.numGroups = 8;
  ds.topkGroups = 4;
  ds.normTopkProb = true;
  ds.routedScalingFactor = 2.5;
  rs.push_back(moeRoute("sigmoid grouped 256 experts", 2, 256, ds, true, 82));
  // DeepSeek-V2's group max, no bias, no normalization.
  RouterConfig v2 = ds;
  v2.groupScore = RouterConfig::GroupMax;
  v2.normTopkProb = false;
  v2.numGroups = 4;
  v2.topkGroups = 1;
  v2.topK = 3;
  rs.push_back(moeRoute("sigmoid group max", 4, 32, v2, false, 83));
  return rs;
}

/// The device MoE expert path one kernel at a time: moeDispatch (offsets,
/// dispatched rows and each pair's row exactly as a host grouping),
/// gatherRows of the live rows, linearGrouped with FP8 128x128-scaled
/// expert weights and a bias per expert, and moeCombine, against naive
/// math. Local experts 2..4 of 6; token 3 routes nowhere here; expert 3
/// gets no row.
inline std::vector<Result> moeExpertPath() {
  int64_t B = 4, k = 2, first = 2, E = 3, H = 40, N = 24;
  std::vector<int32_t> idx = {2, 4, 0, 2, 4, 2, 1, 5};
  std::vector<float> wts = {0.5f, 0.25f, 0.75f, 1.5f, -1.0f, 2.0f, 0.3f, 0.7f};
  int64_t R = B * k;
  std::vector<int64_t> offsets(E + 1, -9), rows(R, -9), slotOf(R, -9),
      stats(2, -9);
  cuda::moeDispatch(idx.data(), B, k, first, E, offsets.data(), rows.data(),
                    slotOf.data(), stats.data(), nullptr);
  // The host grouping: pairs in order within each expert.
  std::vector<double> wantOff(E + 1, 0), wantRows, wantSlot(R, -1);
  for (int64_t e = 0; e < E; ++e) {
    for (int64_t i = 0; i < R; ++i)
      if (idx[i] - first == e) {
        wantSlot[i] = double(wantRows.size());
        wantRows.push_back(double(i / k));
      }
    wantOff[e + 1] = double(wantRows.size());
  }
  int64_t live = static_cast<int64_t>(wantRows.size());
  std::vector<Result> rs;
  std::vector<float> got(offsets.begin(), offsets.end());
  std::vector<double> want = wantOff;
  got.insert(got.end(), rows.begin(), rows.begin() + live);
  want.insert(want.end(), wantRows.begin(), wantRows.end());
  got.insert(got.end(), slotOf.begin(), slotOf.end());
  want.insert(want.end(), wantSlot.begin(), wantSlot.end());
  got.insert(got.end(), stats.begin(), stats.end());
  want.push_back(2); // experts 2 and 4 have rows
  want.push_back(double(live));
  rs.push_back(finish("moeDispatch", got, want, 0));

  std::vector<float> x = randn(B * H, 84), xe(R * H, NAN);
  cuda::gatherRows(x.data(), H, rows.data(), R, xe.data(), nullptr,
                   &offsets[E]);
  std::vector<double> wantX;
  for (int64_t r = 0; r < live; ++r)
    wantX.insert(wantX.end(), x.begin() + rows[r] * H,
                 x.begin() + (rows[r] + 1) * H);
  rs.push_back(finish("gatherRows (live rows)",
                      std::vector<float>(xe.begin(), xe.begin() + live * H),
                      wantX, 0));
  bool untouched = std::all_of(xe.begin() + live * H, xe.end(),
                               [](float v) { return std::isnan(v); });
  rs.push_back(finish("gatherRows leaves the rows past the live count",
                      {untouched ? 1.0f : 0.0f}, {1.0}, 0));

  // Expert weights [E, N, H], FP8 with 128 x 128 f32 blocks, one bias row
  // per expert.
  Quantized wq = quantized(DType::F8E4M3, ScaleType::F32, E, N, H, 128, 128, 0,
                           0, false, 85);
  std::vector<float> bias = randn(E * N, 86), y(R * N, NAN);
  cuda::linearGrouped(xe.data(), H, wq.codes.data(), wq.dtype, 0, &wq.desc, E,
                      N, bias.data(), offsets.data(), y.data(), nullptr);
  std::vector<double> wantY(live * N);
  for (int64_t e = 0; e < E; ++e)
    for (int64_t r = int64_t(wantOff[e]); r < int64_t(wantOff[e + 1]); ++r)
      for (int64_t n = 0; n < N; ++n) {
        double acc = bias[e * N + n];
        for (int64_t h = 0; h < H; ++h)
          acc +=
              double(xe[r * H + h]) * naiveValue(wq, (e * N + n) * H + h, true);
        wantY[r * N + n] = acc;
      }
  rs.push_back(finish("linearGrouped fp8 128x128 blocks",
                      std::vector<float>(y.begin(), y.begin() + live * N),
                      wantY, 1e-4));

  std::vector<float> out(B * N, NAN);
  cuda::moeCombine(y.data(), slotOf.data(), wts.data(), B, k, N, out.data(),
                   nullptr);
  std::vector<double> wantOut(B * N, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < k; ++j)
      if (wantSlot[b * k + j] >= 0)
        for (int64_t n = 0; n < N; ++n)
          wantOut[b * N + n] +=
              double(wts[b * k + j]) * y[int64_t(wantSlot[b * k + j]) * N + n];
  rs.push_back(finish("moeCombine", out, wantOut, 1e-6));
  return rs;
}

//===-- Long-context layers -----------------------------------------------===//

/// gatedDeltaNet: a request carrying a state and one starting (position 0)
/// from a state that is not zero; more channels (304) and state columns
/// (136) than the block's 128 threads; the norm weight in BF16 as stored.
/// The output and every state value against HF's algorithm in double.
inline Result gatedDeltaNet() {
  const naive::GdnShape s{2, 4, 16, 136, 4};
  const int64_t B = 2, r = s.ratio(), dk = s.keyDim, dv = s.valueDim,
                K = s.convKernel, P = s.keyHeads * (2 * dk + 2 * r * dv),
                BA = s.keyHeads * 2 * r, V = s.stateValues();
  const float eps = 1e-6f;
  std::vector<float> proj = randn(B * P, 80), ba = randn(B * BA, 81),
                     convQ = randn(s.keyHeads * dk * K, 82, 0.5f),
                     convK = randn(s.keyHeads * dk * K, 83, 0.5f),
                     convV = randn(s.valueHeads * dv * K, 84, 0.5f),
                     aLog = randn(s.valueHeads, 85, 0.5f),
                     dtBias = randn(s.valueHeads, 86, 0.5f),
                     state = randn(B * V, 87, 0.3f);
  std::vector<uint16_t> norm(dv);
  std::vector<double> normValues(dv);
  std::vector<float> nf = randn(dv, 88, 0.1f);
  for (int64_t i = 0; i < dv; ++i) {
    norm[i] = fmt::floatToBf16(1.0f + nf[i]);
    normValues[i] = fmt::bf16ToFloat(norm[i]);
  }
  std::vector<int64_t> positions = {7, 0};
  std::vector<double> conv = widen(convQ), wantOut, wantState;
  conv.insert(conv.end(), convK.begin(), convK.end());
  conv.insert(conv.end(), convV.begin(), convV.end());
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> st(state.begin() + b * V, state.begin() + (b + 1) * V);
    std::vector<double> pb(proj.begin() + b * P, proj.begin() + (b + 1) * P),
        bab(ba.begin() + b * BA, ba.begin() + (b + 1) * BA);
    std::vector<double> o =
        naive::gdnStep(s, pb, bab, conv, widen(aLog), widen(dtBias), normValues,
                       st, positions[b] == 0, eps);
    wantOut.insert(wantOut.end(), o.begin(), o.end());
    wantState.insert(wantState.end(), st.begin(), st.end());
  }
  std::vector<float> out(B * s.valueHeads * dv, NAN);
  cuda::GatedDeltaNetArgs a;
  a.proj = proj.data();
  a.ba = ba.data();
  a.convQ = {convQ.data(), DType::F32};
  a.convK = {convK.data(), DType::F32};
  a.convV = {convV.data(), DType::F32};
  a.aLog = {aLog.data(), DType::F32};
  a.dtBias = {dtBias.data(), DType::F32};
  a.norm = {norm.data(), DType::BF16};
  a.state = state.data();
  a.positions = positions.data();
  a.batch = B;
  a.keyHeads = s.keyHeads;
  a.valueHeads = s.valueHeads;
  a.keyDim = dk;
  a.valueDim = dv;
  a.convKernel = K;
  a.eps = eps;
  a.out = out.data();
  cuda::gatedDeltaNet(a, nullptr);
  out.insert(out.end(), state.begin(), state.end());
  wantOut.insert(wantOut.end(), wantState.begin(), wantState.end());
  return finish("gatedDeltaNet", out, wantOut, 1e-4);
}

/// indexerPrepare: the key LayerNormed and roped, written with its position
/// at its slot (slot -1: the cache untouched), q roped, the weights scaled.
inline Result indexerPrepare(bool interleaved) {
  const int64_t B = 2, heads = 3, D = 20, half = 4, capacity = 4, per = D + 1;
  const float eps = 1e-6f, factor = 1.25f, weightScale = 0.125f;
  std::vector<int64_t> positions = {5, 1000}, slots = {2, -1};
  std::vector<float> invFreq(half);
  for (int64_t f = 0; f < half; ++f)
    invFreq[f] = static_cast<float>(std::pow(10000.0, -2.0 * f / (2 * half)));
  std::vector<float> q = randn(B * heads * D, 90), key = randn(B * D, 91, 2.0f),
                     nw = randn(D, 92, 0.2f), nb = randn(D, 93, 0.2f),
                     weights = randn(B * heads, 94),
                     cache = randn(B * capacity * per, 95);
  std::vector<double> wantQ = widen(q), wantW = widen(weights),
                      wantCache = widen(cache);
  auto rot = [&](double *v, int64_t pos) {
    for (int64_t f = 0; f < half; ++f) {
      float angle = invFreq[f] * static_cast<float>(pos); // as the kernel
      double c = std::cos(double(angle)) * factor,
             sn = std::sin(double(angle)) * factor;
      int64_t i1 = interleaved ? 2 * f : f,
              i2 = interleaved ? 2 * f + 1 : f + half;
      double x1 = v[i1], x2 = v[i2];
      v[i1] = x1 * c - x2 * sn;
      v[i2] = x2 * c + x1 * sn;
    }
  };
  for (int64_t b = 0; b < B; ++b) {
    std::vector<double> k(key.begin() + b * D, key.begin() + (b + 1) * D);
    double mean = 0, var = 0;
    for (double v : k)
      mean += v / D;
    for (double v : k)
      var += (v - mean) * (v - mean) / D;
    for (int64_t i = 0; i < D; ++i)
      k[i] = (k[i] - mean) / std::sqrt(var + eps) * nw[i] + nb[i];
    rot(k.data(), positions[b]);
    for (int64_t h = 0; h < heads; ++h) {
      rot(wantQ.data() + (b * heads + h) * D, positions[b]);
      wantW[b * heads + h] *= weightScale;
    }
    if (slots[b] >= 0) {
      double *dst = wantCache.data() + (b * capacity + slots[b]) * per;
      std::copy(k.begin(), k.end(), dst);
      dst[D] = double(positions[b]);
    }
  }
  cuda::IndexerPrepareArgs a;
  a.q = q.data();
  a.key = key.data();
  a.normWeight = {nw.data(), DType::F32};
  a.normBias = {nb.data(), DType::F32};
  a.normEps = eps;
  a.weights = weights.data();
  a.weightScale = weightScale;
  a.cache = cache.data();
  a.capacity = capacity;
  a.slots = slots.data();
  a.positions = positions.data();
  a.invFreq = invFreq.data();
  a.half = half;
  a.attentionFactor = factor;
  a.interleaved = interleaved;
  a.batch = B;
  a.heads = heads;
  a.dim = D;
  cuda::indexerPrepare(a, nullptr);
  std::vector<float> got = q;
  got.insert(got.end(), weights.begin(), weights.end());
  got.insert(got.end(), cache.begin(), cache.end());
  std::vector<double> want = wantQ;
  want.insert(want.end(), wantW.begin(), wantW.end());
  want.insert(want.end(), wantCache.begin(), wantCache.end());
  return finish(interleaved ? "indexerPrepare interleaved" : "indexerPrepare",
                got, want, 1e-5);
}

/// indexerTopK: rows of more entries than the block's 256 threads (one
/// wrapping around the ring of 320 slots), with runs of equal keys (equal
/// scores: the lower position first) and entries scoring 0; a row of fewer
/// entries than topK (padding). (score, position) against a host sort of
/// the scores in double.
inline Result indexerTopK() {
  const int64_t B = 3, heads = 2, D = 8, capacity = 320, per = D + 1, topK = 40;
  std::vector<int64_t> begin = {0, 250, 3}, end = {300, 530, 8};
  std::vector<float> q = randn(B * heads * D, 96), w = randn(B * heads, 97),
                     cache = randn(B * capacity * per, 98);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t e = begin[b]; e < end[b]; ++e) {
      float *k = cache.data() + (b * capacity + e % capacity) * per;
      if (e % 7 == 3) // a run of one key: equal scores
        std::copy(cache.data() + (b * capacity + begin[b] % capacity) * per,
                  cache.data() + (b * capacity + begin[b] % capacity) * per + D,
                  k);
      k[D] = static_cast<float>(e * 3 + b); // positions, not slot order
    }
  std::vector<double> want;
  for (int64_t b = 0; b < B; ++b) {
    std::vector<std::pair<float, int64_t>> sc;
    for (int64_t e = begin[b]; e < end[b]; ++e) {
      const float *k = cache.data() + (b * capacity + e % capacity) * per;
      double s = 0;
      for (int64_t h = 0; h < heads; ++h) {
        double d = 0;
        for (int64_t i = 0; i < D; ++i)
          d += double(q[(b * heads + h) * D + i]) * k[i];
        s += w[b * heads + h] * std::max(0.0, d);
      }
      sc.push_back({static_cast<float>(s), static_cast<int64_t>(k[D])});
    }
    std::sort(sc.begin(), sc.end(), [](const auto &x, const auto &y) {
      return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    for (int64_t i = 0; i < topK; ++i) {
      bool has = i < static_cast<int64_t>(sc.size());
      want.push_back(has ? double(sc[i].first) : -kInf);
      want.push_back(has ? double(sc[i].second) : -1.0);
    }
  }
  std::vector<uint64_t> work(cuda::indexerTopKWorkspace(B, capacity, topK));
  std::vector<float> out(B * topK * 2, NAN);
  cuda::indexerTopK(q.data(), w.data(), cache.data(), B, heads, D, capacity,
                    begin.data(), end.data(), topK, work.data(), out.data(),
                    nullptr);
  return finish("indexerTopK", out, want, 1e-5);
}

/// kvGather: entries (every head, keys, values unless in the keys, F4E2M1
/// scales) copied as stored to their places; slot -1 leaves the place as
/// it was.
inline Result kvGather(DType dtype, bool valueInKey) {
  const int64_t B = 2, capacity = 9, dst = 4, heads = 2, kd = 40, vd = 24;
  bool f4 = dtype == DType::F4E2M1;
  auto bytes = [&](int64_t entries, int64_t dim, bool scales) {
    int64_t n = entries * heads * (scales ? fmt::kvScalesPerHead(dim) : dim);
    std::vector<float> f = randn(n, 99 + entries + dim);
    std::vector<uint8_t> v(scales ? n : dtypeBytes(dtype, n));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = static_cast<uint8_t>(int(f[i % f.size()] * 1000 + i) & 255);
    return v;
  };
  std::vector<uint8_t> k = bytes(B * capacity, kd, false),
                       v = bytes(B * capacity, vd, false),
                       ks = bytes(B * capacity, kd, true),
                       vs = bytes(B * capacity, vd, true);
  std::vector<uint8_t> dk(dtypeBytes(dtype, B * dst * heads * kd), 0xab),
      dv(dtypeBytes(dtype, B * dst * heads * vd), 0xab),
      dks(B * dst * heads * fmt::kvScalesPerHead(kd), 0xcd),
      dvs(B * dst * heads * fmt::kvScalesPerHead(vd), 0xcd);
  std::vector<int64_t> slots = {8, 0, -1, 3, /**/ -1, 5, 6, -1};
  auto want = [&](const std::vector<uint8_t> &src, std::vector<uint8_t> to,
                  int64_t n, DType dt) {
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < dst; ++i)
        if (int64_t s = slots[b * dst + i]; s >= 0)
          std::copy(src.begin() + dtypeBytes(dt, (b * capacity + s) * n),
                    src.begin() + dtypeBytes(dt, (b * capacity + s + 1) * n),
                    to.begin() + dtypeBytes(dt, (b * dst + i) * n));
    return to;
  };
  int64_t kps = heads * fmt::kvScalesPerHead(kd),
          vps = heads * fmt::kvScalesPerHead(vd);
  std::vector<uint8_t> wk = want(k, dk, heads * kd, dtype),
                       wv = valueInKey ? dv : want(v, dv, heads * vd, dtype),
                       wks = f4 ? want(ks, dks, kps, DType::U8) : dks,
                       wvs = f4 && !valueInKey ? want(vs, dvs, vps, DType::U8)
                                               : dvs;
  cuda::KVGatherArgs a;
  a.keys = k.data();
  a.keyScales = f4 ? ks.data() : nullptr;
  a.values = valueInKey ? nullptr : v.data();
  a.valueScales = f4 && !valueInKey ? vs.data() : nullptr;
  a.dstKeys = dk.data();
  a.dstKeyScales = f4 ? dks.data() : nullptr;
  a.dstValues = valueInKey ? nullptr : dv.data();
  a.dstValueScales = f4 && !valueInKey ? dvs.data() : nullptr;
  a.dtype = dtype;
  a.batch = B;
  a.capacity = capacity;
  a.dstCapacity = dst;
  a.heads = heads;
  a.keyDim = kd;
  a.valueDim = vd;
  a.slots = slots.data();
  cuda::kvGather(a, nullptr);
  auto all = [](std::initializer_list<const std::vector<uint8_t> *> parts) {
    std::vector<float> f;
    for (const std::vector<uint8_t> *p : parts)
      f.insert(f.end(), p->begin(), p->end());
    return f;
  };
  return finish(std::string("kvGather ") + dtypeName(dtype) +
                    (valueInKey ? " value in key" : ""),
                all({&dk, &dv, &dks, &dvs}), widen(all({&wk, &wv, &wks, &wvs})),
                0);
}

/// Every case (the ThreadSanitizer run takes them all).
inline std::vector<Result> allCases() {
  std::vector<Result> rs;
  auto add = [&](std::vector<Result> more) {
    for (Result &r : more)
      rs.push_back(std::move(r));
  };
  rs.push_back(embedding());
  rs.push_back(embedding(true));
  rs.push_back(rmsNorm(1000));
  rs.push_back(rmsNorm(40));
  rs.push_back(rmsNorm(1000, /*bf16=*/true));
  rs.push_back(rmsNormPrefix());
  add(addRmsNorm(1000));
  add(addRmsNorm(40));
  add(elementwise());
  rs.push_back(rope(false));
  rs.push_back(rope(true));
  add(ropeKvStore(DType::F32, false, false));
  for (DType t : {DType::F32, DType::BF16, DType::F8E4M3, DType::F4E2M1}) {
    rs.push_back(kvStore(t));
    rs.push_back(kvStorePair(t));
    add(ropeKvStore(t, false));
    add(ropeKvStore(t, true));
    // Both paths, split-K's merge (the gtest suite has every shape).
    rs.push_back(attention(t, false, 1, kAlignedDims));
    rs.push_back(attention(t, true, 3, kAlignedDims));
    rs.push_back(attention(t, true, 1, kOddDims));
  }
  // The packing written by the kernel: chunks straddling the pieces with
  // split-K's merge, and whole chunks (the gtest suite has every format).
  rs.push_back(attentionPackedOut(DType::F4E2M1, 3, 2, kAlignedDims));
  rs.push_back(attentionPackedOut(DType::BF16, 1, 2, kAlignedDims));
  rs.push_back(attention(DType::BF16, true, 1, kMlaDims));
  rs.push_back(lseCombine(false));
  rs.push_back(lseCombine(true));
  rs.push_back(lseCombine(false, /*packed=*/true));
  rs.push_back(lseCombine(true, /*packed=*/true));
  for (int kind = 0; kind < 4; ++kind)
    rs.push_back(gated(kind));
  add(dequantizeAll());
  add(linearResidentAll());
  add(moeRouteAll());
  add(moeExpertPath());
  rs.push_back(gatedDeltaNet());
  rs.push_back(indexerPrepare(false));
  rs.push_back(indexerPrepare(true));
  rs.push_back(indexerTopK());
  rs.push_back(kvGather(DType::BF16, true));
  rs.push_back(kvGather(DType::F4E2M1, false));
  return rs;
}

} // namespace cudaemu_test
} // namespace rt
} // namespace helix

#endif // HELIX_UNITTESTS_RUNTIME_CUDAEMUCASES_H
