//===- CudaKernels.cu - The CUDA backend's kernels ------------------------===//
//
// Straightforward f32 kernels for decode (small batches): one block per row
// or per (row, head), block-wide reductions in shared memory. GEMMs over
// f32 weights go through cuBLAS (CudaBackend.cpp); weights kept in a
// quantized or BF16 format are read as stored by linearResident.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"

#include <algorithm>
#include <cuda_runtime.h>
#include <math_constants.h>

namespace helix {
namespace rt {
namespace cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kAttentionThreads = 128;

unsigned blocksFor(int64_t n, int threads = kThreads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

/// op over `v` of every thread of the block (`none`: op's identity, for
/// the lanes of missing warps); every thread gets the result.
template <class T, class Op>
__device__ T blockCombine(T v, T none, T *scratch, const Op &op) {
  for (int o = 16; o > 0; o >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int warps = (blockDim.x + 31) >> 5;
  __syncthreads(); // scratch may still be read by a previous reduction
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : none;
  for (int o = 16; o > 0; o >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Sum (or max) of `v` over the block; every thread gets the result.
template <bool Max> __device__ float blockReduce(float v, float *scratch) {
  return blockCombine(
      v, Max ? -CUDART_INF_F : 0.0f, scratch,
      [](float a, float b) { return Max ? fmaxf(a, b) : a + b; });
}

/// The rows of the tokens in this vocabulary shard, decoded from the
/// table's format (f32 or BF16: only the rows read move).
__global__ void embeddingKernel(const void *table, DType dtype, int64_t vocab,
                                int64_t hidden, const int64_t *tokens,
                                int64_t vocabBegin, float *out) {
  int64_t b = blockIdx.x;
  int64_t t = tokens[b] - vocabBegin;
  bool mine = t >= 0 && t < vocab;
  for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x)
    out[b * hidden + i] =
        mine ? fmt::decodeElement(dtype, table, t * hidden + i) : 0.0f;
}

/// out = x * rsqrt(mean(x^2) + eps) * w for the block's row of `dim`
/// values (x already in global memory; each thread reads back what it
/// wrote, or the input).
__device__ void normRow(const float *xr, const void *w, DType wtype,
                        int64_t dim, float eps, float *out, float *scratch) {
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x)
    ss += xr[i] * xr[i];
  ss = blockReduce<false>(ss, scratch);
  float inv = rsqrtf(ss / dim + eps);
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x)
    out[i] = xr[i] * inv * fmt::decodeElement(wtype, w, i);
}

__global__ void rmsNormKernel(const float *x, const void *w, DType wtype,
                              int64_t dim, float eps, float *out) {
  __shared__ float scratch[32];
  normRow(x + blockIdx.x * dim, w, wtype, dim, eps, out + blockIdx.x * dim,
          scratch);
}

/// Rows of `width` values: the first `dim` normed, the rest copied.
__global__ void rmsNormPrefixKernel(const float *x, const void *w, DType wtype,
                                    int64_t width, int64_t dim, float eps,
                                    float *out) {
  __shared__ float scratch[32];
  int64_t row = blockIdx.x * width;
  normRow(x + row, w, wtype, dim, eps, out + row, scratch);
  for (int64_t i = dim + threadIdx.x; i < width; i += blockDim.x)
    out[row + i] = x[row + i];
}

/// The residual add and the next norm in one pass over the row: sum = a + b
/// (written), out = rmsNorm(sum); the same arithmetic as addKernel then
/// rmsNormKernel.
__global__ void addRmsNormKernel(const float *a, const float *b, const void *w,
                                 DType wtype, int64_t dim, float eps,
                                 float *sum, float *out) {
  __shared__ float scratch[32];
  int64_t row = blockIdx.x * dim;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x)
    sum[row + i] = a[row + i] + b[row + i];
  normRow(sum + row, w, wtype, dim, eps, out + row, scratch);
}

__global__ void addBiasKernel(float *out, const float *bias, int64_t rows,
                              int64_t cols) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < rows * cols)
    out[i] += bias[i % cols];
}

/// RoPE pair f of one head (`v`: its first element + offset) at `position`.
__device__ inline void rotatePair(float *v, int64_t f, int64_t half,
                                  float invFreq, int64_t position, float factor,
                                  bool interleaved) {
  float angle = invFreq * static_cast<float>(position);
  float c = static_cast<float>(cos(static_cast<double>(angle)) * factor);
  float s = static_cast<float>(sin(static_cast<double>(angle)) * factor);
  float *p1 = interleaved ? v + 2 * f : v + f;
  float *p2 = interleaved ? v + 2 * f + 1 : v + f + half;
  float x1 = *p1, x2 = *p2;
  *p1 = x1 * c - x2 * s;
  *p2 = x2 * c + x1 * s;
}

/// What RoPE needs (the same for q and k).
struct RopeArgs {
  const int64_t *positions;
  const float *invFreq;
  int64_t half;
  float factor;
  int64_t offset;
  bool interleaved;
};

__global__ void ropeKernel(float *x, int64_t batch, int64_t heads, int64_t dim,
                           RopeArgs r) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= batch * heads * r.half)
    return;
  int64_t f = i % r.half, bh = i / r.half, b = bh / heads;
  rotatePair(x + bh * dim + r.offset, f, r.half, r.invFreq[f], r.positions[b],
             r.factor, r.interleaved);
}

/// Head h of batch row b of a new K (or V) [batch, heads, dim] encoded into
/// its slot of the cache [batch, capacity, heads, dim] (NumberFormats.h,
/// docs/quantization.md).
__device__ inline void storeHead(uint8_t *dst, uint8_t *scales,
                                 const float *src, DType dtype,
                                 int64_t capacity, int64_t heads, int64_t dim,
                                 int64_t b, int64_t slot, int64_t h) {
  int64_t at = ((b * capacity + slot) * heads + h) * dim;
  fmt::encodeKV(
      dtype, src + (b * heads + h) * dim, dim, dst + dtypeBytes(dtype, at),
      scales ? scales + (at / dim) * fmt::kvScalesPerHead(dim) : nullptr);
}

/// One block per batch row: each head of the row's new K (or V) encoded
/// into its slot.
__global__ void kvStoreKernel(uint8_t *dst, uint8_t *scales, const float *src,
                              DType dtype, int64_t capacity, int64_t heads,
                              int64_t dim, const int64_t *slots) {
  int64_t b = blockIdx.x;
  int64_t slot = slots[b];
  if (slot < 0)
    return;
  for (int64_t h = threadIdx.x; h < heads; h += blockDim.x)
    storeHead(dst, scales, src, dtype, capacity, heads, dim, b, slot, h);
}

/// The cache side of ropeKvStoreKernel (keys null: RoPE only).
struct KVAppendArgs {
  uint8_t *keys, *keyScales, *values, *valueScales;
  const float *v; // the new values (null: the cache keeps them in the keys)
  DType dtype;
  int64_t capacity, keyDim, valueDim;
  const int64_t *slots;
};

/// One block per batch row: RoPE on the row's q and k heads in place (as
/// ropeKernel), then, with a cache, the row's roped k heads and its v heads
/// encoded at its slot (as kvStoreKernel): RoPE and the KV append of a
/// decode step in one launch.
__global__ void ropeKvStoreKernel(float *q, int64_t qHeads, float *k,
                                  int64_t kHeads, int64_t dim, RopeArgs r,
                                  KVAppendArgs kv) {
  int64_t b = blockIdx.x, pairs = (qHeads + kHeads) * r.half;
  for (int64_t i = threadIdx.x; i < pairs; i += blockDim.x) {
    int64_t f = i % r.half, h = i / r.half;
    float *head = h < qHeads ? q + (b * qHeads + h) * dim
                             : k + (b * kHeads + h - qHeads) * dim;
    rotatePair(head + r.offset, f, r.half, r.invFreq[f], r.positions[b],
               r.factor, r.interleaved);
  }
  if (!kv.keys)
    return;
  int64_t slot = kv.slots[b];
  __syncthreads(); // the roped k of every head, before it is encoded
  if (slot < 0)
    return;
  int64_t heads = kv.v ? 2 * kHeads : kHeads;
  for (int64_t h = threadIdx.x; h < heads; h += blockDim.x) {
    if (h < kHeads)
      storeHead(kv.keys, kv.keyScales, k, kv.dtype, kv.capacity, kHeads,
                kv.keyDim, b, slot, h);
    else
      storeHead(kv.values, kv.valueScales, kv.v, kv.dtype, kv.capacity, kHeads,
                kv.valueDim, b, slot, h - kHeads);
  }
}

/// Value i of the KV head of `dim` values whose first element is element
/// `at` of `base`.
__device__ inline float kvValue(const uint8_t *base, const uint8_t *scales,
                                DType dtype, int64_t at, int64_t dim,
                                int64_t i) {
  return fmt::decodeKV(
      dtype, base + dtypeBytes(dtype, at),
      scales ? scales + (at / dim) * fmt::kvScalesPerHead(dim) : nullptr, i);
}

/// attentionKernel's arguments. values / valueScales / valueStride are
/// resolved by the launcher (MLA: the keys, stride keyDim); `vectorized`:
/// attentionVectorized() holds, the 128-bit path runs.
struct AttentionArgs {
  const float *q;
  const uint8_t *keys, *keyScales, *values, *valueScales;
  DType dtype;
  int64_t qHeads, kvHeads, keyDim, valueDim, valueStride, capacity;
  const int64_t *begin, *end;
  float scale;
  float *out, *lse;
  /// Where a row's results go: out + row * outStride. piece = 0: valueDim
  /// values, the LSE at lse + row * lseStride. piece > 0: the packing of
  /// helix.attention_partial, each `piece` values followed by a copy of
  /// the row's LSE (value i at i + i / piece).
  int64_t outStride, lseStride, piece;
  bool vectorized;
};

/// Value i of a row's result, and its LSE, where AttentionArgs says.
/// (i < valueDim: 32-bit arithmetic, no 64-bit division in the hot loop.)
__device__ inline void putValue(int64_t piece, float *o, int64_t i, float v) {
  unsigned p = static_cast<unsigned>(piece), j = static_cast<unsigned>(i);
  o[p ? j + j / p : j] = v;
}
__device__ inline void putLse(int64_t piece, int64_t valueDim, float *o,
                              float *lse, float v) {
  if (!piece) {
    *lse = v;
    return;
  }
  for (int64_t j = 0; j < valueDim / piece; ++j)
    o[j * (piece + 1) + piece] = v;
}

/// Values of format D in one 16-byte chunk of a KV row.
template <DType D> constexpr int chunkValues() {
  return D == DType::F32      ? 4
         : D == DType::BF16   ? 8
         : D == DType::F8E4M3 ? 16
                              : 32;
}

/// Calls f(i, value) for the chunkValues<D>() values of chunk `c`, a
/// 16-byte load, in order; `scales`: the chunk's two NVFP4 scales (F4E2M1
/// only). Element order as stored: the first element in the low bits of
/// c.x (little-endian, as the codecs). Each value is used as it is
/// decoded (no array of them: registers).
template <DType D, class F>
__device__ inline void forEachValue(const uint4 &c, const uint8_t *scales,
                                    const F &f) {
  constexpr int n = chunkValues<D>(), perWord = n / 4;
  const uint32_t w[4] = {c.x, c.y, c.z, c.w};
  float s0 = 1.0f, s1 = 1.0f;
  if constexpr (D == DType::F4E2M1) {
    s0 = fmt::e4m3ToFloat(scales[0]);
    s1 = fmt::e4m3ToFloat(scales[1]);
  }
#pragma unroll
  for (int i = 0; i < n; ++i) {
    uint32_t word = w[i / perWord];
    int k = i % perWord;
    if constexpr (D == DType::F32)
      f(i, fmt::bitsToFloat(word));
    else if constexpr (D == DType::BF16)
      f(i, fmt::bf16ToFloat(static_cast<uint16_t>(word >> (16 * k))));
    else if constexpr (D == DType::F8E4M3)
      f(i, fmt::e4m3ToFloat(static_cast<uint8_t>(word >> (8 * k))));
    else
      f(i, fmt::e2m1ToFloat(static_cast<uint8_t>((word >> (4 * k)) & 15u)) *
               (i < 16 ? s0 : s1));
  }
}

/// Row `t` of the KV head `kvh` of batch row `b` in a cache of `dim`-value
/// heads stored `stride` values apart: its 16-byte chunks and, for NVFP4,
/// its scales (two per chunk).
struct KVRow {
  const uint4 *chunks;
  const uint8_t *scales;
};
__device__ inline KVRow kvRow(const uint8_t *base, const uint8_t *scales,
                              DType dtype, int64_t stride, int64_t capacity,
                              int64_t heads, int64_t b, int64_t t,
                              int64_t kvh) {
  int64_t at = ((b * capacity + t) * heads + kvh) * stride;
  return {reinterpret_cast<const uint4 *>(base + dtypeBytes(dtype, at)),
          scales ? scales + (at / stride) * fmt::kvScalesPerHead(stride)
                 : nullptr};
}

/// The 128-bit path (attentionVectorized): K and V rows read 16 bytes per
/// lane per load. Scores: a group of lanes (a power of two, up to a warp)
/// per key, each lane over the key's chunks, summed by shuffles. Values:
/// valueDim / chunkValues lanes per value row, blockDim / that many rows
/// at once, each thread accumulating its chunk of the output over its rows
/// in registers; the row groups are summed through `p` at the end.
template <DType D>
__device__ void attendVectorized(const AttentionArgs &a, int64_t b, int64_t kvh,
                                 int64_t lo, int64_t hi, const float *qs,
                                 float *p, float *scratch, float *o,
                                 float *lse) {
  constexpr int V = chunkValues<D>();
  const int tid = threadIdx.x, nt = blockDim.x;
  int64_t keyChunks = a.keyDim / V;
  int group = 1;
  while (group < 32 && group < keyChunks)
    group <<= 1;
  int sub = tid % group, keysAtOnce = nt / group, slot = tid / group;
  int vc = static_cast<int>(a.valueDim / V); // <= blockDim (the launcher)
  int rowsAtOnce = nt / vc, vrow = tid / vc, vchunk = tid % vc;
  float acc[V];
#pragma unroll
  for (int i = 0; i < V; ++i)
    acc[i] = 0.0f;
  float m = -CUDART_INF_F, l = 0.0f;
  for (int64_t t0 = lo; t0 < hi; t0 += nt) {
    int n = static_cast<int>(min(static_cast<int64_t>(nt), hi - t0));
    for (int j0 = 0; j0 < n; j0 += keysAtOnce) { // the same for the block
      int j = j0 + slot;
      float d = 0.0f;
      if (j < n) {
        KVRow k = kvRow(a.keys, a.keyScales, D, a.keyDim, a.capacity, a.kvHeads,
                        b, t0 + j, kvh);
        for (int64_t c = sub; c < keyChunks; c += group) {
          const float *qc = qs + c * V;
          forEachValue<D>(k.chunks[c], k.scales ? k.scales + 2 * c : nullptr,
                          [&](int i, float x) { d += qc[i] * x; });
        }
      }
      for (int off = group / 2; off > 0; off >>= 1)
        d += __shfl_xor_sync(0xffffffffu, d, off);
      if (sub == 0 && j < n)
        p[j] = d * a.scale;
    }
    __syncthreads();
    float s = tid < n ? p[tid] : -CUDART_INF_F;
    float cm = blockReduce<true>(s, scratch);
    float nm = fmaxf(m, cm);
    float e = tid < n ? __expf(s - nm) : 0.0f;
    p[tid] = e;
    float ps = blockReduce<false>(e, scratch);
    float corr = m == -CUDART_INF_F ? 0.0f : __expf(m - nm);
#pragma unroll
    for (int i = 0; i < V; ++i)
      acc[i] *= corr;
    if (vrow < rowsAtOnce)
      for (int j = vrow; j < n; j += rowsAtOnce) {
        KVRow r = kvRow(a.values, a.valueScales, D, a.valueStride, a.capacity,
                        a.kvHeads, b, t0 + j, kvh);
        float pj = p[j];
        forEachValue<D>(r.chunks[vchunk],
                        r.scales ? r.scales + 2 * vchunk : nullptr,
                        [&](int i, float x) { acc[i] += pj * x; });
      }
    l = l * corr + ps;
    m = nm;
    __syncthreads(); // p is rewritten by the next chunk's scores
  }
  // The row groups' partial sums, one value of the chunk at a time. In the
  // packing every `piece` values are followed by an LSE slot: the chunk's
  // values shift by one more at each piece boundary they cross (one
  // division per thread, none per value).
  const int piece = static_cast<int>(a.piece), first = vchunk * V;
  float *oc = o + first + (piece ? first / piece : 0);
  int toNext = piece ? piece - first % piece : V, shift = 0;
#pragma unroll
  for (int i = 0; i < V; ++i) {
    p[tid] = acc[i];
    __syncthreads();
    if (vrow == 0) {
      float sum = 0.0f;
      for (int r = 0; r < rowsAtOnce; ++r)
        sum += p[r * vc + vchunk];
      oc[i + shift] = l > 0.0f ? sum / l : 0.0f;
    }
    if (i + 1 == toNext) {
      ++shift;
      toNext += piece;
    }
    __syncthreads();
  }
  if (tid == 0)
    putLse(a.piece, a.valueDim, o, lse, l > 0.0f ? m + logf(l) : -CUDART_INF_F);
}

/// Any layout: one thread per key for the scores, one per value dimension
/// for the accumulation (in shared memory), K/V decoded element by element.
__device__ void attendScalar(const AttentionArgs &a, int64_t b, int64_t kvh,
                             int64_t lo, int64_t hi, const float *qs,
                             float *acc, float *p, float *scratch, float *o,
                             float *lse) {
  for (int64_t i = threadIdx.x; i < a.valueDim; i += blockDim.x)
    acc[i] = 0.0f;
  float m = -CUDART_INF_F, l = 0.0f;
  for (int64_t t0 = lo; t0 < hi; t0 += blockDim.x) {
    int64_t t = t0 + threadIdx.x;
    float s = -CUDART_INF_F;
    if (t < hi) {
      int64_t at = ((b * a.capacity + t) * a.kvHeads + kvh) * a.keyDim;
      float d = 0.0f;
      for (int64_t i = 0; i < a.keyDim; ++i)
        d += qs[i] * kvValue(a.keys, a.keyScales, a.dtype, at, a.keyDim, i);
      s = d * a.scale;
    }
    float cm = blockReduce<true>(s, scratch);
    float nm = fmaxf(m, cm);
    float e = t < hi ? __expf(s - nm) : 0.0f;
    p[threadIdx.x] = e;
    float ps = blockReduce<false>(e, scratch);
    float corr = m == -CUDART_INF_F ? 0.0f : __expf(m - nm);
    int64_t n = min(static_cast<int64_t>(blockDim.x), hi - t0);
    __syncthreads();
    for (int64_t i = threadIdx.x; i < a.valueDim; i += blockDim.x) {
      float x = acc[i] * corr;
      for (int64_t j = 0; j < n; ++j)
        x += p[j] * kvValue(a.values, a.valueScales, a.dtype,
                            ((b * a.capacity + t0 + j) * a.kvHeads + kvh) *
                                a.valueStride,
                            a.valueStride, i);
      acc[i] = x;
    }
    l = l * corr + ps;
    m = nm;
    __syncthreads();
  }
  for (int64_t i = threadIdx.x; i < a.valueDim; i += blockDim.x)
    putValue(a.piece, o, i, l > 0.0f ? acc[i] / l : 0.0f);
  if (threadIdx.x == 0)
    putLse(a.piece, a.valueDim, o, lse, l > 0.0f ? m + logf(l) : -CUDART_INF_F);
}

/// One block per (head, row, split): online softmax over the split's part
/// of the row's slot range (blockIdx.z of gridDim.z equal parts; one split:
/// the whole range) in chunks of blockDim slots, K/V decoded from their
/// stored format. Writes the split's output and log-sum-exp at [split, row,
/// head]. Dynamic shared memory: q [keyDim], acc [valueDim], p [blockDim].
__global__ void attentionKernel(AttentionArgs a) {
  extern __shared__ float smem[];
  __shared__ float scratch[32];
  float *qs = smem, *acc = smem + a.keyDim, *p = acc + a.valueDim;
  int64_t h = blockIdx.x, b = blockIdx.y, split = blockIdx.z;
  int64_t kvh = h / (a.qHeads / a.kvHeads);
  int64_t per = (a.end[b] - a.begin[b] + gridDim.z - 1) / gridDim.z;
  int64_t lo = a.begin[b] + split * per, hi = min(a.end[b], lo + per);
  const float *qv = a.q + (b * a.qHeads + h) * a.keyDim;
  for (int64_t i = threadIdx.x; i < a.keyDim; i += blockDim.x)
    qs[i] = qv[i];
  __syncthreads();
  int64_t row = (split * gridDim.y + b) * a.qHeads + h;
  float *o = a.out + row * a.outStride,
        *lse = a.piece ? nullptr : a.lse + row * a.lseStride;
  if (a.vectorized) {
    switch (a.dtype) {
    case DType::F32:
      return attendVectorized<DType::F32>(a, b, kvh, lo, hi, qs, p, scratch, o,
                                          lse);
    case DType::BF16:
      return attendVectorized<DType::BF16>(a, b, kvh, lo, hi, qs, p, scratch, o,
                                           lse);
    case DType::F8E4M3:
      return attendVectorized<DType::F8E4M3>(a, b, kvh, lo, hi, qs, p, scratch,
                                             o, lse);
    case DType::F4E2M1:
      return attendVectorized<DType::F4E2M1>(a, b, kvh, lo, hi, qs, p, scratch,
                                             o, lse);
    default:
      break;
    }
  }
  attendScalar(a, b, kvh, lo, hi, qs, acc, p, scratch, o, lse);
}

/// Merges the splits of split-K attention: for each (row, head), the
/// splits' outputs weighted by exp(lse_s - max) and their log-sum-exp
/// (a split without keys has lse -inf and weight 0).
__global__ void splitCombineKernel(const float *partials, const float *plse,
                                   int64_t splits, int64_t rows, int64_t dim,
                                   float *out, float *lse, int64_t outStride,
                                   int64_t lseStride, int64_t piece) {
  int64_t r = blockIdx.x;
  float m = -CUDART_INF_F;
  for (int64_t s = 0; s < splits; ++s)
    m = fmaxf(m, plse[s * rows + r]);
  float denom = 0.0f;
  if (m != -CUDART_INF_F)
    for (int64_t s = 0; s < splits; ++s)
      denom += __expf(plse[s * rows + r] - m);
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    float a = 0.0f;
    if (denom > 0.0f)
      for (int64_t s = 0; s < splits; ++s) {
        float w = __expf(plse[s * rows + r] - m);
        if (w > 0.0f)
          a += w * partials[(s * rows + r) * dim + i];
      }
    putValue(piece, out + r * outStride, i, denom > 0.0f ? a / denom : 0.0f);
  }
  if (threadIdx.x == 0)
    putLse(piece, dim, out + r * outStride,
           piece ? nullptr : lse + r * lseStride,
           denom > 0.0f ? m + logf(denom) : -CUDART_INF_F);
}

/// out[i] = decode(q[i]) * scale(i): resident weights for f32 kernels.
__global__ void dequantizeKernel(const void *q, DType dtype, int64_t n,
                                 int64_t base, BlockScaleDesc desc, bool scaled,
                                 float *out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float v = fmt::decodeElement(dtype, q, i);
    out[i] = scaled ? desc.apply(v, base + i) : v;
  }
}

/// Rows of x one block of linearResidentKernel computes (its accumulators).
constexpr int kLinearRows = 8;
constexpr int kLinearThreads = 128; // 4 warps, 4 output columns per block
constexpr int kLinearWarps = kLinearThreads / 32;

/// The block scales of one weight row (elements e0 .. e0 + K - 1 of a
/// quantized tensor, all in one row of one matrix): the scale of element
/// e0 + k is `scales[grid + (col + k) / blockCols]`, times `global`. The
/// divisions of BlockScaleDesc::apply are done once a row, one a chunk.
struct RowScales {
  int64_t grid = 0, col = 0;
  float global = 1.0f;
  bool ok = false; // false: the row crosses a matrix row (use apply())
};
__device__ inline RowScales rowScales(const BlockScaleDesc &d, int64_t e0,
                                      int64_t K) {
  RowScales s;
  int64_t per = d.rows * d.cols;
  int64_t m = e0 / per, rc = e0 - m * per;
  int64_t r = rc / d.cols, c = rc - r * d.cols;
  s.ok = c + K <= d.cols;
  s.grid = (m * d.gridRows + (r + d.rowOrigin) / d.blockRows) * d.gridCols;
  s.col = c + d.colOrigin;
  s.global = d.globals ? d.globals[m] : 1.0f;
  return s;
}

/// Value k of the chunkValues<D>() / 4 values of format D in a 32-bit word
/// of a chunk (the first in the low bits, as the codecs store them).
template <DType D> __device__ inline float wordValue(uint32_t word, int k) {
  if constexpr (D == DType::F32)
    return fmt::bitsToFloat(word);
  else if constexpr (D == DType::BF16)
    return fmt::bf16ToFloat(static_cast<uint16_t>(word >> (16 * k)));
  else if constexpr (D == DType::F8E4M3)
    return fmt::e4m3ToFloat(static_cast<uint8_t>(word >> (8 * k)));
  else
    return fmt::e2m1ToFloat(static_cast<uint8_t>((word >> (4 * k)) & 15u));
}

/// A warp's column of a weight-streaming GEMM for weights of format D whose
/// rows are whole 16-byte chunks (chunkValues<D>() values): each lane reads
/// chunks c, c + 32, ... (two loads in flight) and takes each a 32-bit word
/// at a time (1 to 8 values, few registers): decoded once, scaled as
/// BlockScaleDesc::apply does ((v * block) * global) with the word's block
/// scale (`rs`: a row whose words each lie in one block), multiplied by the
/// x rows, read 8 or 16 bytes at a time when aligned. The same products,
/// summed in the same order, as decoding element by element.
template <DType D>
__device__ void
linearColumnChunks(const float *x, int64_t m0, int rows, int64_t K,
                   const uint4 *wr, const BlockScaleDesc &desc, bool scaled,
                   const RowScales &rs, float acc[kLinearRows]) {
  constexpr int V = chunkValues<D>(), P = V / 4; // values a chunk, a word
  const int lane = threadIdx.x & 31;
  const int64_t chunks = K / V;
  const bool xVec =
      P > 1 && (reinterpret_cast<uintptr_t>(x + m0 * K) & 15) == 0;
  const float global = desc.globals ? rs.global : 1.0f;
  auto chunk = [&](const uint4 &q, int64_t c) {
    const int64_t k0 = c * V;
    const uint32_t words[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int wi = 0; wi < 4; ++wi) {
      float bs = 1.0f;
      if (scaled)
        bs = fmt::scaleToFloat(desc.type, desc.scales,
                               rs.grid +
                                   static_cast<uint32_t>(rs.col + k0 + wi * P) /
                                       static_cast<uint32_t>(desc.blockCols));
      float w[P];
#pragma unroll
      for (int k = 0; k < P; ++k) {
        float v = wordValue<D>(words[wi], k);
        if (scaled) {
          float t = v * bs;
          v = desc.globals ? t * global : t;
        }
        w[k] = v;
      }
#pragma unroll
      for (int r = 0; r < kLinearRows; ++r) {
        if (r >= rows)
          break;
        const float *xr = x + (m0 + r) * K + k0 + wi * P;
        float a = acc[r];
        if (xVec) {
#pragma unroll
          for (int j = 0; j < P / 2; ++j) {
            float2 xv = reinterpret_cast<const float2 *>(xr)[j];
            a += w[2 * j] * xv.x;
            a += w[2 * j + 1] * xv.y;
          }
        } else {
#pragma unroll
          for (int k = 0; k < P; ++k)
            a += w[k] * xr[k];
        }
        acc[r] = a;
      }
    }
  };
  int64_t c = lane;
  for (; c + 32 < chunks; c += 64) {
    uint4 q0 = wr[c], q1 = wr[c + 32];
    chunk(q0, c);
    chunk(q1, c + 32);
  }
  if (c < chunks)
    chunk(wr[c], c);
}

/// One warp's share of a weight-streaming GEMM: rows [m0, m0 + rows) of x
/// (rows <= kLinearRows) times row `row` of W (element `row` of `w` in
/// `dtype`, K values, scaled by `desc` at element scaleBase + row + k),
/// plus `bias`, into column n of out (N columns). The warp's lanes stride
/// over k; each weight element is read once.
__device__ void linearColumn(const float *x, int64_t m0, int rows, int64_t K,
                             const void *w, DType dtype, int64_t row,
                             int64_t scaleBase, const BlockScaleDesc &desc,
                             bool scaled, int64_t N, int64_t n, float bias,
                             float *out) {
  int lane = threadIdx.x & 31;
  float acc[kLinearRows];
#pragma unroll
  for (int r = 0; r < kLinearRows; ++r)
    acc[r] = 0.0f;
  // Rows that start and end on 16-byte boundaries, whose words each lie in
  // one scale block: 128-bit loads, the format's decoder inlined
  // (linearColumnChunks). Others: element by element.
  const uint8_t *wb = static_cast<const uint8_t *>(w);
  int64_t bits = static_cast<int64_t>(dtypeBits(dtype));
  bool chunked = (K * bits) % 128 == 0 && (row * bits) % 128 == 0 &&
                 (reinterpret_cast<uintptr_t>(wb) & 15) == 0;
  RowScales rs;
  if (chunked && scaled) {
    int64_t perWord = 32 / bits;
    rs = rowScales(desc, scaleBase + row, K);
    chunked = rs.ok && perWord > 0 && rs.col % perWord == 0 &&
              desc.blockCols % perWord == 0;
  }
  const uint4 *wr = reinterpret_cast<const uint4 *>(wb + row * bits / 8);
  switch (chunked ? dtype : DType::U8) {
  case DType::F32:
    linearColumnChunks<DType::F32>(x, m0, rows, K, wr, desc, scaled, rs, acc);
    break;
  case DType::BF16:
    linearColumnChunks<DType::BF16>(x, m0, rows, K, wr, desc, scaled, rs, acc);
    break;
  case DType::F8E4M3:
    linearColumnChunks<DType::F8E4M3>(x, m0, rows, K, wr, desc, scaled, rs,
                                      acc);
    break;
  case DType::F4E2M1:
    linearColumnChunks<DType::F4E2M1>(x, m0, rows, K, wr, desc, scaled, rs,
                                      acc);
    break;
  default:
    for (int64_t k = lane; k < K; k += 32) {
      float v = fmt::decodeElement(dtype, w, row + k);
      if (scaled)
        v = desc.apply(v, scaleBase + row + k);
#pragma unroll
      for (int r = 0; r < kLinearRows; ++r)
        if (r < rows)
          acc[r] += v * x[(m0 + r) * K + k];
    }
  }
#pragma unroll
  for (int r = 0; r < kLinearRows; ++r) {
    if (r >= rows) // the same for the whole warp
      break;
    float a = acc[r];
    for (int o = 16; o > 0; o >>= 1)
      a += __shfl_xor_sync(0xffffffffu, a, o);
    if (lane == 0)
      out[(m0 + r) * N + n] = a + bias;
  }
}

/// out[m, n] = sum_k x[m, k] W[n, k] (+ bias[n]) with W read as stored:
/// element (n, k) is element first + n K + k of `w` in `dtype`, times its
/// block scale (desc, for element scaleBase + first + n K + k). One warp
/// per output column n; blockIdx.y picks kLinearRows rows of x.
__global__ void linearResidentKernel(const float *x, int64_t M, int64_t K,
                                     const void *w, DType dtype, int64_t first,
                                     int64_t scaleBase, BlockScaleDesc desc,
                                     bool scaled, int64_t N, const float *bias,
                                     float *out) {
  int64_t n =
      blockIdx.x * static_cast<int64_t>(kLinearWarps) + (threadIdx.x >> 5);
  if (n >= N)
    return; // the whole warp: n is the same for its lanes
  int64_t m0 = blockIdx.y * static_cast<int64_t>(kLinearRows);
  int rows = static_cast<int>(min(static_cast<int64_t>(kLinearRows), M - m0));
  linearColumn(x, m0, rows, K, w, dtype, first + n * K, scaleBase, desc, scaled,
               N, n, bias ? bias[n] : 0.0f, out);
}

/// Per-head GEMM with the weights read as stored: out[b, h, n] = sum_a
/// x[b, h, a] W_h(a, n), W_h element (a, n) at h A N + a N + n
/// (transposed, [H, A, N]) or h N A + n A + a ([H, N, A]), times its block
/// scale (desc, element scaleBase + that index). One warp per (n, h),
/// blockIdx.z picks kLinearRows rows of x.
__global__ void headMatmulResidentKernel(const float *x, int64_t B, int64_t H,
                                         int64_t A, const void *w, DType dtype,
                                         int64_t scaleBase, BlockScaleDesc desc,
                                         bool scaled, int64_t N,
                                         bool transposeW, float *out) {
  int64_t n =
      blockIdx.x * static_cast<int64_t>(kLinearWarps) + (threadIdx.x >> 5);
  int64_t h = blockIdx.y;
  if (n >= N)
    return; // the whole warp
  int lane = threadIdx.x & 31;
  int64_t b0 = blockIdx.z * static_cast<int64_t>(kLinearRows);
  int rows = static_cast<int>(min(static_cast<int64_t>(kLinearRows), B - b0));
  float acc[kLinearRows];
#pragma unroll
  for (int r = 0; r < kLinearRows; ++r)
    acc[r] = 0.0f;
  for (int64_t a = lane; a < A; a += 32) {
    int64_t e = transposeW ? (h * A + a) * N + n : (h * N + n) * A + a;
    float v = fmt::decodeElement(dtype, w, e);
    if (scaled)
      v = desc.apply(v, scaleBase + e);
#pragma unroll
    for (int r = 0; r < kLinearRows; ++r)
      if (r < rows)
        acc[r] += v * x[((b0 + r) * H + h) * A + a];
  }
#pragma unroll
  for (int r = 0; r < kLinearRows; ++r) {
    if (r >= rows)
      break;
    float t = acc[r];
    for (int o = 16; o > 0; o >>= 1)
      t += __shfl_xor_sync(0xffffffffu, t, o);
    if (lane == 0)
      out[((b0 + r) * H + h) * N + n] = t;
  }
}

/// linearResidentParts' weights, by value for the kernel: part i owns
/// blocks [firstBlock[i], firstBlock[i + 1]) of the grid's x dimension.
struct LinearParts {
  struct Part {
    const void *w;
    DType dtype;
    int64_t first, scaleBase;
    BlockScaleDesc desc;
    bool scaled;
    int64_t N;
    const float *bias;
    float *out;
  } part[kMaxLinearParts];
  int64_t firstBlock[kMaxLinearParts + 1];
  int count;
};

/// linearResidentKernel over several weights: each block finds its part.
__global__ void linearPartsKernel(const float *x, int64_t M, int64_t K,
                                  LinearParts ps) {
  int i = 0;
  while (i + 1 < ps.count && blockIdx.x >= ps.firstBlock[i + 1])
    ++i;
  const LinearParts::Part &p = ps.part[i];
  int64_t n = (blockIdx.x - ps.firstBlock[i]) * int64_t(kLinearWarps) +
              (threadIdx.x >> 5);
  if (n >= p.N)
    return; // the whole warp
  int64_t m0 = blockIdx.y * static_cast<int64_t>(kLinearRows);
  int rows = static_cast<int>(min(static_cast<int64_t>(kLinearRows), M - m0));
  linearColumn(x, m0, rows, K, p.w, p.dtype, p.first + n * K, p.scaleBase,
               p.desc, p.scaled, p.N, n, p.bias ? p.bias[n] : 0.0f, p.out);
}

/// The grouped expert GEMM: expert e = blockIdx.y multiplies rows
/// [offsets[e], offsets[e + 1]) of x by its matrix (element e N K of `w`
/// on, [N, K], with bias row e of `bias` [E, N]); the row ranges come from
/// the device (moeDispatchKernel), so one launch covers every local expert
/// whatever the routing. A block of an expert without rows does nothing.
__global__ void linearGroupedKernel(const float *x, int64_t K, const void *w,
                                    DType dtype, int64_t scaleBase,
                                    BlockScaleDesc desc, bool scaled, int64_t N,
                                    const float *bias, const int64_t *offsets,
                                    float *out) {
  int64_t n =
      blockIdx.x * static_cast<int64_t>(kLinearWarps) + (threadIdx.x >> 5);
  int64_t e = blockIdx.y;
  if (n >= N)
    return;
  int64_t lo = offsets[e], hi = offsets[e + 1];
  float b = bias ? bias[e * N + n] : 0.0f;
  for (int64_t m0 = lo; m0 < hi; m0 += kLinearRows)
    linearColumn(
        x, m0,
        static_cast<int>(min(static_cast<int64_t>(kLinearRows), hi - m0)), K, w,
        dtype, (e * N + n) * K, scaleBase, desc, scaled, N, n, b, out);
}

/// The largest (v, at) of the warp, ties to the lower `at`: shuffles of
/// the value and the index (every lane gets the result).
__device__ inline void warpArgmax(double &v, int &at) {
  for (int o = 16; o > 0; o >>= 1) {
    double ov = __shfl_xor_sync(0xffffffffu, v, o);
    int oi = __shfl_xor_sync(0xffffffffu, at, o);
    if (ov > v || (ov == v && oi < at)) {
      v = ov;
      at = oi;
    }
  }
}

/// Softmax or sigmoid scores of one token's router logits, the correction
/// bias added for the choice only, grouped selection, top-k: routeHost's
/// algorithm (Ops.cpp) in double, one block per token. Ties go to the
/// lower expert, as routeHost's stable sorts. Dynamic shared memory:
/// score [E], choice [E], group score [G] doubles, then kept [G] and
/// chosen [k] ints.
__global__ void moeRouteKernel(const float *logits, const float *bias,
                               RouterParams p, int32_t *indices,
                               float *weights) {
  extern __shared__ double route[];
  __shared__ double dscratch[32];
  __shared__ int iscratch[32];
  const int tid = threadIdx.x, nt = blockDim.x;
  int64_t E = p.experts, G = p.groups, b = blockIdx.x;
  double *score = route, *choice = route + E, *gscore = choice + E;
  int *kept = reinterpret_cast<int *>(gscore + G), *chosen = kept + G;
  const float *l = logits + b * E;
  auto sum = [](double x, double y) { return x + y; };
  auto most = [](double x, double y) { return x > y ? x : y; };
  double m = -CUDART_INF_F;
  for (int64_t e = tid; e < E; e += nt)
    m = most(m, double(l[e]));
  m = blockCombine(m, double(-CUDART_INF_F), dscratch, most);
  double z = 0;
  for (int64_t e = tid; e < E; e += nt) {
    double x =
        p.sigmoid ? 1.0 / (1.0 + exp(-double(l[e]))) : exp(double(l[e]) - m);
    score[e] = x;
    z += x;
  }
  z = p.sigmoid ? 1.0 : blockCombine(z, 0.0, dscratch, sum);
  for (int64_t e = tid; e < E; e += nt) {
    score[e] /= z;
    choice[e] = score[e] + (bias ? double(bias[e]) : 0.0);
  }
  __syncthreads();
  if (G > 1) {
    int64_t per = E / G;
    for (int64_t g = tid; g < G; g += nt) { // the group's best one or two
      double v0 = -CUDART_INF_F, v1 = -CUDART_INF_F;
      for (int64_t e = g * per; e < (g + 1) * per; ++e) {
        double c = choice[e];
        if (c > v0) {
          v1 = v0;
          v0 = c;
        } else if (c > v1) {
          v1 = c;
        }
      }
      gscore[g] = p.groupMax || per < 2 ? v0 : v0 + v1;
      kept[g] = 0;
    }
    __syncthreads();
    if (tid == 0)
      for (int64_t i = 0; i < p.topkGroups; ++i) {
        int64_t best = -1;
        for (int64_t g = 0; g < G; ++g)
          if (!kept[g] && (best < 0 || gscore[g] > gscore[best]))
            best = g;
        kept[best] = 1;
      }
    __syncthreads();
    for (int64_t e = tid; e < E; e += nt)
      if (!kept[e / per])
        choice[e] = 0.0; // as Hugging Face's masked_fill(..., 0.0)
    __syncthreads();
  }
  double picked = 0;
  for (int64_t i = 0; i < p.topK; ++i) {
    double v = -CUDART_INF_F;
    int at = 1 << 30;
    for (int64_t e = tid; e < E; e += nt)
      if (choice[e] > v) { // first (lowest) expert of this thread on ties
        v = choice[e];
        at = static_cast<int>(e);
      }
    // Block argmax, ties to the lower expert.
    warpArgmax(v, at);
    int lane = tid & 31, warp = tid >> 5, warps = (nt + 31) >> 5;
    __syncthreads();
    if (lane == 0) {
      dscratch[warp] = v;
      iscratch[warp] = at;
    }
    __syncthreads();
    v = lane < warps ? dscratch[lane] : -CUDART_INF_F;
    at = lane < warps ? iscratch[lane] : 1 << 30;
    warpArgmax(v, at);
    if (tid == 0) {
      chosen[i] = at;
      picked += score[at];
      choice[at] = -CUDART_INF_F; // taken
    }
    __syncthreads();
  }
  if (tid == 0)
    for (int64_t i = 0; i < p.topK; ++i) {
      double w = score[chosen[i]];
      if (p.normTopkProb)
        w /= picked + 1e-20;
      indices[b * p.topK + i] = chosen[i];
      weights[b * p.topK + i] = static_cast<float>(w * p.scaling);
    }
}

/// One block: the (token, j) pairs of indices [pairs = B k] routed to the
/// local experts [first, first + E) grouped by expert, in pair order within
/// an expert: offsets [E + 1] (offsets[E]: the rows routed here), rows[r]
/// the token of dispatched row r, slotOf[pair] its dispatched row or -1;
/// stats (optional): experts with rows, rows. No atomics: thread e counts
/// and places expert e's pairs.
__global__ void moeDispatchKernel(const int32_t *indices, int64_t pairs,
                                  int64_t k, int64_t first, int64_t E,
                                  int64_t *offsets, int64_t *rows,
                                  int64_t *slotOf, int64_t *stats) {
  const int tid = threadIdx.x, nt = blockDim.x;
  for (int64_t e = tid; e < E; e += nt) {
    int64_t n = 0;
    for (int64_t i = 0; i < pairs; ++i)
      n += indices[i] - first == e;
    offsets[e + 1] = n;
  }
  __syncthreads();
  if (tid == 0) {
    int64_t used = 0;
    offsets[0] = 0;
    for (int64_t e = 0; e < E; ++e) {
      used += offsets[e + 1] > 0;
      offsets[e + 1] += offsets[e];
    }
    if (stats) {
      stats[0] = used;
      stats[1] = offsets[E];
    }
  }
  __syncthreads();
  for (int64_t i = tid; i < pairs; i += nt) {
    int64_t e = indices[i] - first;
    if (e < 0 || e >= E)
      slotOf[i] = -1;
  }
  for (int64_t e = tid; e < E; e += nt) {
    int64_t at = offsets[e];
    for (int64_t i = 0; i < pairs; ++i)
      if (indices[i] - first == e) {
        rows[at] = i / k;
        slotOf[i] = at++;
      }
  }
}

/// out[b, :] = sum over the pairs (b, j) routed here, j in order, of their
/// weight times their dispatched row of y; 0 when none is.
__global__ void moeCombineKernel(const float *y, const int64_t *slotOf,
                                 const float *weights, int64_t k, int64_t cols,
                                 float *out) {
  int64_t b = blockIdx.x;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
    float a = 0.0f;
    for (int64_t j = 0; j < k; ++j) {
      int64_t r = slotOf[b * k + j];
      if (r >= 0)
        a += weights[b * k + j] * y[r * cols + i];
    }
    out[b * cols + i] = a;
  }
}

__global__ void lseCombineKernel(const float *values, const float *lse,
                                 PartialsLayout l, const float *sinks,
                                 float *out) {
  int64_t bh = blockIdx.x, b = bh / l.heads, h = bh % l.heads;
  const float *v = values + b * l.batchStride + h * l.headStride;
  const float *ls = lse + b * l.lseBatchStride + h * l.lseHeadStride;
  float m = sinks ? sinks[h] : -CUDART_INF_F;
  for (int64_t s = 0; s < l.shards; ++s)
    m = fmaxf(m, ls[s * l.lseShardStride]);
  float *o = out + bh * l.dim;
  if (m == -CUDART_INF_F) {
    for (int64_t i = threadIdx.x; i < l.dim; i += blockDim.x)
      o[i] = 0.0f;
    return;
  }
  float denom = sinks ? expf(sinks[h] - m) : 0.0f;
  for (int64_t s = 0; s < l.shards; ++s) {
    float e = ls[s * l.lseShardStride];
    denom += e == -CUDART_INF_F ? 0.0f : expf(e - m);
  }
  for (int64_t i = threadIdx.x; i < l.dim; i += blockDim.x) {
    float a = 0.0f;
    for (int64_t s = 0; s < l.shards; ++s) {
      float e = ls[s * l.lseShardStride];
      if (e != -CUDART_INF_F)
        a += expf(e - m) * v[s * l.shardStride + i];
    }
    o[i] = a / denom;
  }
}

/// liveRows (optional): only the first *liveRows rows of rowLen values
/// (the MoE rows routed here).
__global__ void gatedKernel(const float *gate, const float *up, int64_t n,
                            int kind, float alpha, float limit,
                            const int64_t *liveRows, int64_t rowLen,
                            int64_t gateDiv, float *out) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n || (liveRows && i >= *liveRows * rowLen))
    return;
  float g = gate[i / gateDiv], u = up[i], a;
  switch (kind) {
  case 0:
    a = g / (1.0f + expf(-g)) * u;
    break;
  case 1:
    a = 0.5f * g * (1.0f + erff(g * 0.70710678118654752f)) * u;
    break;
  case 2:
    a = 0.5f * g *
        (1.0f + tanhf(0.79788456080286536f * (g + 0.044715f * g * g * g))) * u;
    break;
  case 4: // Activation::Sigmoid: a sigmoid gate
    a = u / (1.0f + expf(-g));
    break;
  default:
    g = fminf(g, limit);
    u = fmaxf(fminf(u, limit), -limit);
    a = (u + 1.0f) * (g / (1.0f + expf(-alpha * g)));
  }
  out[i] = a;
}

__global__ void logAddExpKernel(const float *a, const float *b, int64_t n,
                                float *out) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n)
    return;
  float x = a[i], y = b[i];
  if (x == -CUDART_INF_F || y == -CUDART_INF_F) {
    out[i] = x == -CUDART_INF_F ? y : x;
    return;
  }
  double m = fmax(double(x), double(y));
  out[i] = static_cast<float>(m + log(exp(x - m) + exp(y - m)));
}

__global__ void addKernel(const float *a, const float *b, int64_t n,
                          float *out) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    out[i] = a[i] + b[i];
}

__global__ void swapKernel(const float *x, int64_t A, int64_t B, int64_t C,
                           float *out) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= A * B * C)
    return;
  int64_t c = i % C, ab = i / C, b = ab % B, a = ab / B;
  out[(b * A + a) * C + c] = x[i];
}

__global__ void sliceKernel(const float *x, int64_t rows, int64_t cols,
                            int64_t begin, int64_t count, float *out) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < rows * count)
    out[i] = x[(i / count) * cols + begin + i % count];
}

__global__ void concatKernel(const float *a, const float *b, int64_t rows,
                             int64_t ca, int64_t cb, float *out) {
  int64_t w = ca + cb;
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= rows * w)
    return;
  int64_t r = i / w, c = i % w;
  out[i] = c < ca ? a[r * ca + c] : b[r * cb + c - ca];
}

__global__ void sumLeadingKernel(const float *x, int64_t S, int64_t n,
                                 float *out) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n)
    return;
  float s = 0.0f;
  for (int64_t j = 0; j < S; ++j)
    s += x[j * n + i];
  out[i] = s;
}

/// live (optional): only rows below *live.
__global__ void gatherRowsKernel(const float *x, int64_t cols,
                                 const int64_t *rows, const int64_t *live,
                                 float *out) {
  if (live && blockIdx.x >= *live)
    return;
  int64_t r = rows[blockIdx.x];
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x)
    out[blockIdx.x * cols + i] = x[r * cols + i];
}

//===-- Long-context layers: Gated DeltaNet, DeepSeek Sparse Attention ----===//

constexpr int kRecurrentThreads = 128;
/// The most dynamic shared memory without opt-in: the indexer's scores
/// keep a row's q and head weights there when they fit, else read them
/// from global memory.
constexpr size_t kMaxDynamicShared = 48 * 1024;

__device__ inline float weightAt(const WeightRef &w, int64_t i) {
  return fmt::decodeElement(w.dtype, w.data, i);
}
__device__ inline float siluOf(float x) { return x / (1.0f + expf(-x)); }
/// torch's softplus: log1p(exp(x)), x itself above 20.
__device__ inline float softplusOf(float x) {
  return x > 20.0f ? x : log1pf(expf(x));
}

/// One block per (key head, request) of a Gated DeltaNet decode step: its
/// channels' causal convolution (a thread per channel: the K - 1 stored
/// inputs and the new one, SiLU; the new input shifted into the state),
/// the L2 norms of q and k, then for each of its r value heads the gated
/// delta rule (a thread per column of the head's state S [dk, dv]: decay,
/// kv_mem, delta, the rank-one update, o = S^T q) and the gated RMSNorm.
/// The blocks of a request own disjoint parts of its state row (the states
/// of their value heads, the convolution rows of their channels); a fresh
/// request (position 0) reads zeros and overwrites all of them. Dynamic
/// shared memory: the convolved channels [2 dk + r dv], o [dv].
__global__ void gatedDeltaNetKernel(GatedDeltaNetArgs a) {
  extern __shared__ float gdn[];
  __shared__ float scratch[32];
  const int tid = threadIdx.x, nt = blockDim.x;
  const int64_t kh = blockIdx.x, b = blockIdx.y;
  const int64_t Hk = a.keyHeads, Hv = a.valueHeads, r = Hv / Hk, dk = a.keyDim,
                dv = a.valueDim, K = a.convKernel, W = K - 1;
  const int64_t perHead = 2 * dk + 2 * r * dv, channels = 2 * dk + r * dv;
  const int64_t states = Hv * dk * dv;
  const int64_t values = states + (2 * Hk * dk + Hv * dv) * W;
  const float *pr = a.proj + (b * Hk + kh) * perHead;
  const float *g2 = a.ba + (b * Hk + kh) * 2 * r;
  float *st = a.state + b * values;
  const bool fresh = a.positions[b] == 0;
  float *conv = gdn, *o = gdn + channels;
  for (int64_t lc = tid; lc < channels; lc += nt) {
    const WeightRef &cw = lc < dk ? a.convQ : lc < 2 * dk ? a.convK : a.convV;
    int64_t row = lc < dk       ? kh * dk + lc
                  : lc < 2 * dk ? kh * dk + lc - dk
                                : kh * r * dv + lc - 2 * dk;
    int64_t channel = lc < dk       ? row
                      : lc < 2 * dk ? Hk * dk + row
                                    : 2 * Hk * dk + row;
    float *window = st + states + channel * W;
    float in = pr[lc], acc = 0.0f;
    for (int64_t t = 0; t < W; ++t)
      acc += weightAt(cw, row * K + t) * (fresh ? 0.0f : window[t]);
    acc += weightAt(cw, row * K + W) * in;
    for (int64_t t = 0; t + 1 < W; ++t)
      window[t] = fresh ? 0.0f : window[t + 1];
    if (W > 0)
      window[W - 1] = in;
    conv[lc] = siluOf(acc);
  }
  __syncthreads();
  float qs = 0.0f, ks = 0.0f;
  for (int64_t i = tid; i < dk; i += nt) {
    qs += conv[i] * conv[i];
    ks += conv[dk + i] * conv[dk + i];
  }
  qs = blockReduce<false>(qs, scratch);
  ks = blockReduce<false>(ks, scratch);
  const float qScale = rsqrtf(qs + 1e-6f) * rsqrtf(static_cast<float>(dk));
  const float kScale = rsqrtf(ks + 1e-6f);
  const float *qv = conv, *kv = conv + dk;
  for (int64_t j = 0; j < r; ++j) {
    int64_t h = kh * r + j;
    float beta = 1.0f / (1.0f + expf(-g2[j]));
    float decay = expf(-expf(weightAt(a.aLog, h)) *
                       softplusOf(g2[r + j] + weightAt(a.dtBias, h)));
    float *S = st + h * dk * dv;
    const float *v = conv + 2 * dk + j * dv;
    float ss = 0.0f;
    for (int64_t c = tid; c < dv; c += nt) {
      float mem = 0.0f;
      for (int64_t i = 0; i < dk; ++i)
        mem += (fresh ? 0.0f : S[i * dv + c]) * decay * (kv[i] * kScale);
      float delta = (v[c] - mem) * beta, oc = 0.0f;
      for (int64_t i = 0; i < dk; ++i) {
        float sn =
            (fresh ? 0.0f : S[i * dv + c]) * decay + (kv[i] * kScale) * delta;
        S[i * dv + c] = sn;
        oc += sn * (qv[i] * qScale);
      }
      o[c] = oc;
      ss += oc * oc;
    }
    ss = blockReduce<false>(ss, scratch);
    float inv = rsqrtf(ss / static_cast<float>(dv) + a.eps);
    const float *z = pr + 2 * dk + r * dv + j * dv;
    for (int64_t c = tid; c < dv; c += nt)
      a.out[(b * Hv + h) * dv + c] =
          o[c] * inv * weightAt(a.norm, c) * siluOf(z[c]);
  }
}

/// One block per request: the new index key LayerNormed (in shared
/// memory), RoPE on it and on the request's q heads, the head weights
/// scaled, then the key and its position written at the request's slot.
/// Dynamic shared memory: the key [dim].
__global__ void indexerPrepareKernel(IndexerPrepareArgs a) {
  extern __shared__ float ikey[];
  __shared__ float scratch[32];
  const int tid = threadIdx.x, nt = blockDim.x;
  const int64_t b = blockIdx.x, D = a.dim;
  const float *kr = a.key + b * D;
  float sum = 0.0f;
  for (int64_t i = tid; i < D; i += nt)
    sum += kr[i];
  float mean = blockReduce<false>(sum, scratch) / static_cast<float>(D);
  float var = 0.0f;
  for (int64_t i = tid; i < D; i += nt)
    var += (kr[i] - mean) * (kr[i] - mean);
  float inv = rsqrtf(blockReduce<false>(var, scratch) / static_cast<float>(D) +
                     a.normEps);
  for (int64_t i = tid; i < D; i += nt)
    ikey[i] = (kr[i] - mean) * inv * weightAt(a.normWeight, i) +
              weightAt(a.normBias, i);
  __syncthreads(); // the normed key, before its pairs rotate
  const int64_t position = a.positions[b];
  for (int64_t i = tid; i < (a.heads + 1) * a.half; i += nt) {
    int64_t f = i % a.half, h = i / a.half;
    float *head = h < a.heads ? a.q + (b * a.heads + h) * D : ikey;
    rotatePair(head, f, a.half, a.invFreq[f], position, a.attentionFactor,
               a.interleaved);
  }
  for (int64_t h = tid; h < a.heads; h += nt)
    a.weights[b * a.heads + h] *= a.weightScale;
  __syncthreads(); // the roped key, before it is stored
  const int64_t slot = a.slots[b];
  if (slot < 0)
    return;
  float *dst = a.cache + (b * a.capacity + slot) * (D + 1);
  for (int64_t i = tid; i < D; i += nt)
    dst[i] = ikey[i];
  if (tid == 0)
    dst[D] = static_cast<float>(position);
}

/// An index score and its position as one key that orders them: a larger
/// key is a higher score, then a lower position (keys of one row's
/// entries are distinct). -0 counts as +0.
__device__ inline uint64_t indexKey(float score, int64_t position) {
  uint32_t u = fmt::floatToBits(score == 0.0f ? 0.0f : score);
  uint32_t o = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  return (static_cast<uint64_t>(o) << 32) |
         static_cast<uint64_t>(~static_cast<uint32_t>(position));
}
__device__ inline float indexKeyScore(uint64_t key) {
  uint32_t o = static_cast<uint32_t>(key >> 32);
  return fmt::bitsToFloat((o & 0x80000000u) ? (o & 0x7fffffffu) : ~o);
}
__device__ inline int64_t indexKeyPosition(uint64_t key) {
  return static_cast<int64_t>(~static_cast<uint32_t>(key));
}

/// A thread per entry i < end[b] - begin[b] of row b = blockIdx.y (slot
/// (begin[b] + i) % capacity): its score sum_h w_h relu(q_h . key) as an
/// index key at keys[b capacity + i]. `shared`: the row's q [heads dim]
/// and weights [heads] in dynamic shared memory first.
__global__ void indexScoresKernel(const float *q, const float *weights,
                                  const float *cache, int64_t heads,
                                  int64_t dim, int64_t capacity,
                                  const int64_t *begin, const int64_t *end,
                                  bool shared, uint64_t *keys) {
  extern __shared__ float iq[];
  const int tid = threadIdx.x, nt = blockDim.x;
  const int64_t b = blockIdx.y, n = end[b] - begin[b];
  const int64_t first = static_cast<int64_t>(blockIdx.x) * nt;
  if (first >= n)
    return; // the whole block (the grid is sized by the capacity)
  const float *qb = q + b * heads * dim, *wb = weights + b * heads;
  if (shared) {
    for (int64_t i = tid; i < heads * dim; i += nt)
      iq[i] = qb[i];
    for (int64_t h = tid; h < heads; h += nt)
      iq[heads * dim + h] = wb[h];
    __syncthreads();
    qb = iq;
    wb = iq + heads * dim;
  }
  const int64_t i = first + tid;
  if (i >= n)
    return;
  const float *k =
      cache + (b * capacity + (begin[b] + i) % capacity) * (dim + 1);
  float s = 0.0f;
  for (int64_t h = 0; h < heads; ++h) {
    float d = 0.0f;
    for (int64_t j = 0; j < dim; ++j)
      d += qb[h * dim + j] * k[j];
    s += wb[h] * fmaxf(d, 0.0f);
  }
  keys[b * capacity + i] = indexKey(s, static_cast<int64_t>(k[dim]));
}

/// One block per row: the topK best of the row's index keys -- the
/// topK-th largest found bit by bit from the top (a count per bit), the
/// keys at or above it compacted in order of their chunks (a scan of the
/// threads' counts), each then written at its rank among them -- as
/// (score, position), the rest (-inf, -1). No atomics.
__global__ void indexSelectKernel(const uint64_t *keys, int64_t capacity,
                                  const int64_t *begin, const int64_t *end,
                                  int64_t topK, uint64_t *chosenAll,
                                  float *out) {
  __shared__ long long lscratch[32];
  __shared__ int64_t offsets[kThreads];
  const int tid = threadIdx.x, nt = blockDim.x;
  const int64_t b = blockIdx.x, n = end[b] - begin[b];
  const uint64_t *kb = keys + b * capacity;
  uint64_t *chosen = chosenAll + b * topK;
  const int64_t sel = min(n, topK);
  uint64_t kth = 0; // every key is above 0
  if (n > topK) {
    uint64_t prefix = 0;
    long long need = topK;
    for (int bit = 63; bit >= 0; --bit) {
      uint64_t one = static_cast<uint64_t>(1) << bit;
      uint64_t cand = prefix | one, mask = ~(one - 1);
      long long c = 0;
      for (int64_t i = tid; i < n; i += nt)
        c += (kb[i] & mask) == cand;
      c = blockCombine(c, 0LL, lscratch,
                       [](long long x, long long y) { return x + y; });
      if (c >= need)
        prefix = cand;
      else
        need -= c;
    }
    kth = prefix;
  }
  const int64_t per = (n + nt - 1) / nt;
  const int64_t lo = min(n, tid * per), hi = min(n, lo + per);
  int64_t mine = 0;
  for (int64_t i = lo; i < hi; ++i)
    mine += kb[i] >= kth;
  offsets[tid] = mine;
  __syncthreads();
  if (tid == 0) {
    int64_t run = 0;
    for (int t = 0; t < nt; ++t) {
      int64_t c = offsets[t];
      offsets[t] = run;
      run += c;
    }
  }
  __syncthreads();
  int64_t at = offsets[tid];
  for (int64_t i = lo; i < hi; ++i)
    if (kb[i] >= kth)
      chosen[at++] = kb[i];
  __syncthreads(); // every chosen key, before the ranks
  for (int64_t i = tid; i < sel; i += nt) {
    uint64_t k = chosen[i];
    int64_t rank = 0;
    for (int64_t j = 0; j < sel; ++j)
      rank += chosen[j] > k;
    float *o = out + (b * topK + rank) * 2;
    o[0] = indexKeyScore(k);
    o[1] = static_cast<float>(indexKeyPosition(k));
  }
  for (int64_t i = sel + tid; i < topK; i += nt) {
    out[(b * topK + i) * 2] = -CUDART_INF_F;
    out[(b * topK + i) * 2 + 1] = -1.0f;
  }
}

/// One block per (entry i, row b) of the destination: the source entry at
/// slots[b dstCapacity + i] (every head), its bytes as stored.
__global__ void kvGatherKernel(KVGatherArgs a) {
  const int tid = threadIdx.x, nt = blockDim.x;
  const int64_t i = blockIdx.x, b = blockIdx.y;
  const int64_t slot = a.slots[b * a.dstCapacity + i];
  if (slot < 0)
    return;
  auto copy = [&](const uint8_t *src, uint8_t *dst, int64_t n, DType dt) {
    int64_t bytes = static_cast<int64_t>(dtypeBytes(dt, n));
    const uint8_t *s = src + dtypeBytes(dt, (b * a.capacity + slot) * n);
    uint8_t *d = dst + dtypeBytes(dt, (b * a.dstCapacity + i) * n);
    for (int64_t j = tid; j < bytes; j += nt)
      d[j] = s[j];
  };
  copy(a.keys, a.dstKeys, a.heads * a.keyDim, a.dtype);
  if (a.values)
    copy(a.values, a.dstValues, a.heads * a.valueDim, a.dtype);
  if (a.keyScales)
    copy(a.keyScales, a.dstKeyScales, a.heads * fmt::kvScalesPerHead(a.keyDim),
         DType::U8);
  if (a.valueScales)
    copy(a.valueScales, a.dstValueScales,
         a.heads * fmt::kvScalesPerHead(a.valueDim), DType::U8);
}

} // namespace

int embedding(const void *table, DType dtype, int64_t vocab, int64_t hidden,
              const int64_t *tokens, int64_t batch, int64_t vocabBegin,
              float *out, cudaStream_t stream) {
  embeddingKernel<<<batch, kThreads, 0, stream>>>(table, dtype, vocab, hidden,
                                                  tokens, vocabBegin, out);
  return 1;
}

int rmsNorm(const float *x, const void *w, int64_t rows, int64_t dim, float eps,
            float *out, cudaStream_t stream, DType wtype) {
  rmsNormKernel<<<rows, kThreads, 0, stream>>>(x, w, wtype, dim, eps, out);
  return 1;
}

int rmsNormPrefix(const float *x, const void *w, int64_t rows, int64_t width,
                  int64_t dim, float eps, float *out, cudaStream_t stream,
                  DType wtype) {
  rmsNormPrefixKernel<<<rows, kThreads, 0, stream>>>(x, w, wtype, width, dim,
                                                     eps, out);
  return 1;
}

int addRmsNorm(const float *a, const float *b, const void *w, int64_t rows,
               int64_t dim, float eps, float *sum, float *out,
               cudaStream_t stream, DType wtype) {
  addRmsNormKernel<<<rows, kThreads, 0, stream>>>(a, b, w, wtype, dim, eps, sum,
                                                  out);
  return 1;
}

int addBias(float *out, const float *bias, int64_t rows, int64_t cols,
            cudaStream_t stream) {
  addBiasKernel<<<blocksFor(rows * cols), kThreads, 0, stream>>>(out, bias,
                                                                 rows, cols);
  return 1;
}

int rope(float *x, int64_t batch, int64_t heads, int64_t dim,
         const int64_t *positions, const float *invFreq, int64_t half,
         float attentionFactor, int64_t offset, bool interleaved,
         cudaStream_t stream) {
  int64_t n = batch * heads * half;
  RopeArgs r{positions, invFreq, half, attentionFactor, offset, interleaved};
  ropeKernel<<<blocksFor(n), kThreads, 0, stream>>>(x, batch, heads, dim, r);
  return 1;
}

int kvStore(void *dst, uint8_t *scales, const float *src, DType dtype,
            int64_t batch, int64_t capacity, int64_t heads, int64_t dim,
            const int64_t *slots, cudaStream_t stream) {
  kvStoreKernel<<<batch, 32, 0, stream>>>(static_cast<uint8_t *>(dst), scales,
                                          src, dtype, capacity, heads, dim,
                                          slots);
  return 1;
}

int ropeKvStore(float *q, int64_t qHeads, float *k, int64_t kHeads,
                int64_t batch, int64_t dim, const int64_t *positions,
                const float *invFreq, int64_t half, float attentionFactor,
                int64_t offset, bool interleaved, const KVStoreTarget *cache,
                cudaStream_t stream) {
  RopeArgs r{positions, invFreq, half, attentionFactor, offset, interleaved};
  KVAppendArgs kv{};
  if (cache)
    kv = {static_cast<uint8_t *>(cache->keys),
          cache->keyScales,
          static_cast<uint8_t *>(cache->values),
          cache->valueScales,
          cache->v,
          cache->dtype,
          cache->capacity,
          cache->keyDim,
          cache->valueDim,
          cache->slots};
  ropeKvStoreKernel<<<batch, kThreads, 0, stream>>>(q, qHeads, k, kHeads, dim,
                                                    r, kv);
  return 1;
}

bool attentionVectorized(DType dtype, int64_t keyDim, int64_t valueDim,
                         bool valueInKey, const void *keys,
                         const void *values) {
  int64_t bits = static_cast<int64_t>(dtypeBits(dtype));
  auto aligned = [](const void *p) {
    return (reinterpret_cast<uintptr_t>(p) & 15) == 0;
  };
  bool format = dtype == DType::F32 || dtype == DType::BF16 ||
                dtype == DType::F8E4M3 || dtype == DType::F4E2M1;
  return format && (keyDim * bits) % 128 == 0 && (valueDim * bits) % 128 == 0 &&
         valueDim * bits / 128 <= kAttentionThreads && aligned(keys) &&
         (valueInKey || aligned(values));
}

int attention(const float *q, const void *keys, const uint8_t *keyScales,
              const void *values, const uint8_t *valueScales, DType dtype,
              int64_t batch, int64_t qHeads, int64_t kvHeads, int64_t keyDim,
              int64_t valueDim, int64_t capacity, const int64_t *begin,
              const int64_t *end, float scale, float *out, float *lse,
              int splits, float *workspace, cudaStream_t stream,
              int64_t piece) {
  int threads = kAttentionThreads;
  size_t smem = (keyDim + valueDim + threads) * sizeof(float);
  splits = std::max(1, splits);
  int64_t rows = batch * qHeads;
  AttentionArgs a;
  a.q = q;
  a.keys = static_cast<const uint8_t *>(keys);
  a.keyScales = keyScales;
  a.values = values ? static_cast<const uint8_t *>(values) : a.keys;
  a.valueScales = values ? valueScales : keyScales;
  a.dtype = dtype;
  a.qHeads = qHeads;
  a.kvHeads = kvHeads;
  a.keyDim = keyDim;
  a.valueDim = valueDim;
  a.valueStride = values ? valueDim : keyDim;
  a.capacity = capacity;
  a.begin = begin;
  a.end = end;
  a.scale = scale;
  a.out = splits > 1 ? workspace : out;
  a.lse = splits > 1 ? workspace + splits * rows * valueDim : lse;
  // The packing: each row's valueDim values with an LSE after every piece.
  int64_t outStride = piece ? valueDim + valueDim / piece : valueDim;
  a.outStride = splits > 1 ? valueDim : outStride;
  a.lseStride = 1;
  a.piece = splits > 1 ? 0 : piece;
  a.vectorized =
      attentionVectorized(dtype, keyDim, valueDim, !values, keys, values);
  dim3 grid(static_cast<unsigned>(qHeads), static_cast<unsigned>(batch),
            static_cast<unsigned>(splits));
  attentionKernel<<<grid, threads, smem, stream>>>(a);
  unsigned combineBlocks = static_cast<unsigned>(rows);
  if (splits > 1)
    splitCombineKernel<<<combineBlocks, 128, 0, stream>>>(
        a.out, a.lse, splits, rows, valueDim, out, lse, outStride, 1, piece);
  return splits > 1 ? 2 : 1;
}

int dequantize(const void *q, DType dtype, int64_t n, int64_t base,
               const BlockScaleDesc *desc, float *out, cudaStream_t stream) {
  if (n == 0)
    return 0;
  BlockScaleDesc d = desc ? *desc : BlockScaleDesc();
  int64_t blocks = std::min<int64_t>(blocksFor(n), 65535);
  dequantizeKernel<<<blocks, kThreads, 0, stream>>>(q, dtype, n, base, d,
                                                    desc != nullptr, out);
  return 1;
}

int linearResident(const float *x, int64_t M, int64_t K, const void *w,
                   DType dtype, int64_t first, int64_t scaleBase,
                   const BlockScaleDesc *desc, int64_t N, const float *bias,
                   float *out, cudaStream_t stream) {
  if (M == 0 || N == 0)
    return 0;
  BlockScaleDesc d = desc ? *desc : BlockScaleDesc();
  dim3 grid(static_cast<unsigned>((N + kLinearWarps - 1) / kLinearWarps),
            static_cast<unsigned>((M + kLinearRows - 1) / kLinearRows));
  linearResidentKernel<<<grid, kLinearThreads, 0, stream>>>(
      x, M, K, w, dtype, first, scaleBase, d, desc != nullptr, N, bias, out);
  return 1;
}

int headMatmulResident(const float *x, int64_t B, int64_t H, int64_t A,
                       const void *w, DType dtype, int64_t scaleBase,
                       const BlockScaleDesc *desc, int64_t N, bool transposeW,
                       float *out, cudaStream_t stream) {
  if (B == 0 || H == 0 || N == 0)
    return 0;
  BlockScaleDesc d = desc ? *desc : BlockScaleDesc();
  dim3 grid(static_cast<unsigned>((N + kLinearWarps - 1) / kLinearWarps),
            static_cast<unsigned>(H),
            static_cast<unsigned>((B + kLinearRows - 1) / kLinearRows));
  headMatmulResidentKernel<<<grid, kLinearThreads, 0, stream>>>(
      x, B, H, A, w, dtype, scaleBase, d, desc != nullptr, N, transposeW, out);
  return 1;
}

int linearResidentParts(const float *x, int64_t M, int64_t K,
                        const LinearPart *parts, int count,
                        cudaStream_t stream) {
  if (M == 0 || count <= 0)
    return 0;
  LinearParts ps{};
  ps.count = count;
  int64_t blocks = 0;
  for (int i = 0; i < count; ++i) {
    const LinearPart &p = parts[i];
    ps.part[i] = {p.w,
                  p.dtype,
                  p.first,
                  p.scaleBase,
                  p.desc ? *p.desc : BlockScaleDesc(),
                  p.desc != nullptr,
                  p.N,
                  p.bias,
                  p.out};
    ps.firstBlock[i] = blocks;
    blocks += (p.N + kLinearWarps - 1) / kLinearWarps;
  }
  ps.firstBlock[count] = blocks;
  if (blocks == 0)
    return 0;
  dim3 grid(static_cast<unsigned>(blocks),
            static_cast<unsigned>((M + kLinearRows - 1) / kLinearRows));
  linearPartsKernel<<<grid, kLinearThreads, 0, stream>>>(x, M, K, ps);
  return 1;
}

int lseCombine(const float *values, const float *lse, const PartialsLayout &l,
               const float *sinks, float *out, cudaStream_t stream) {
  lseCombineKernel<<<l.batch * l.heads, 128, 0, stream>>>(values, lse, l, sinks,
                                                          out);
  return 1;
}

int gated(const float *gate, const float *up, int64_t n, int kind, float alpha,
          float limit, float *out, cudaStream_t stream, const int64_t *liveRows,
          int64_t rowLen, int64_t gateDiv) {
  gatedKernel<<<blocksFor(n), kThreads, 0, stream>>>(
      gate, up, n, kind, alpha, limit, liveRows, rowLen, gateDiv, out);
  return 1;
}

int add(const float *a, const float *b, int64_t n, float *out,
        cudaStream_t stream) {
  addKernel<<<blocksFor(n), kThreads, 0, stream>>>(a, b, n, out);
  return 1;
}

int logAddExp(const float *a, const float *b, int64_t n, float *out,
              cudaStream_t stream) {
  if (n == 0)
    return 0;
  logAddExpKernel<<<blocksFor(n), kThreads, 0, stream>>>(a, b, n, out);
  return 1;
}

int swapAxes01(const float *x, int64_t a, int64_t b, int64_t c, float *out,
               cudaStream_t stream) {
  swapKernel<<<blocksFor(a * b * c), kThreads, 0, stream>>>(x, a, b, c, out);
  return 1;
}

int sliceColumns(const float *x, int64_t rows, int64_t cols, int64_t begin,
                 int64_t count, float *out, cudaStream_t stream) {
  sliceKernel<<<blocksFor(rows * count), kThreads, 0, stream>>>(
      x, rows, cols, begin, count, out);
  return 1;
}

int concatColumns(const float *a, const float *b, int64_t rows, int64_t ca,
                  int64_t cb, float *out, cudaStream_t stream) {
  concatKernel<<<blocksFor(rows * (ca + cb)), kThreads, 0, stream>>>(
      a, b, rows, ca, cb, out);
  return 1;
}

int sumLeading(const float *x, int64_t s, int64_t n, float *out,
               cudaStream_t stream) {
  sumLeadingKernel<<<blocksFor(n), kThreads, 0, stream>>>(x, s, n, out);
  return 1;
}

int gatherRows(const float *x, int64_t cols, const int64_t *rows, int64_t n,
               float *out, cudaStream_t stream, const int64_t *live) {
  if (n == 0)
    return 0;
  gatherRowsKernel<<<n, kThreads, 0, stream>>>(x, cols, rows, live, out);
  return 1;
}

int linearGrouped(const float *x, int64_t K, const void *w, DType dtype,
                  int64_t scaleBase, const BlockScaleDesc *desc,
                  int64_t experts, int64_t N, const float *bias,
                  const int64_t *offsets, float *out, cudaStream_t stream) {
  if (experts == 0 || N == 0)
    return 0;
  BlockScaleDesc d = desc ? *desc : BlockScaleDesc();
  dim3 grid(static_cast<unsigned>((N + kLinearWarps - 1) / kLinearWarps),
            static_cast<unsigned>(experts));
  linearGroupedKernel<<<grid, kLinearThreads, 0, stream>>>(
      x, K, w, dtype, scaleBase, d, desc != nullptr, N, bias, offsets, out);
  return 1;
}

size_t moeRouteSharedBytes(const RouterParams &p) {
  return (2 * p.experts + p.groups) * sizeof(double) +
         (p.groups + p.topK) * sizeof(int);
}

int moeRoute(const float *logits, const float *correctionBias, int64_t batch,
             const RouterParams &p, int32_t *indices, float *weights,
             cudaStream_t stream) {
  if (batch == 0)
    return 0;
  size_t smem = moeRouteSharedBytes(p);
  moeRouteKernel<<<batch, kThreads, smem, stream>>>(logits, correctionBias, p,
                                                    indices, weights);
  return 1;
}

int moeDispatch(const int32_t *indices, int64_t batch, int64_t k, int64_t first,
                int64_t experts, int64_t *offsets, int64_t *rows,
                int64_t *slotOf, int64_t *stats, cudaStream_t stream) {
  moeDispatchKernel<<<1, kThreads, 0, stream>>>(
      indices, batch * k, k, first, experts, offsets, rows, slotOf, stats);
  return 1;
}

int moeCombine(const float *y, const int64_t *slotOf, const float *weights,
               int64_t batch, int64_t k, int64_t cols, float *out,
               cudaStream_t stream) {
  if (batch == 0)
    return 0;
  moeCombineKernel<<<batch, kThreads, 0, stream>>>(y, slotOf, weights, k, cols,
                                                   out);
  return 1;
}

int gatedDeltaNet(const GatedDeltaNetArgs &a, cudaStream_t stream) {
  if (a.batch == 0)
    return 0;
  int64_t r = a.valueHeads / a.keyHeads;
  size_t smem =
      static_cast<size_t>(2 * a.keyDim + r * a.valueDim + a.valueDim) *
      sizeof(float);
  dim3 grid(static_cast<unsigned>(a.keyHeads), static_cast<unsigned>(a.batch));
  gatedDeltaNetKernel<<<grid, kRecurrentThreads, smem, stream>>>(a);
  return 1;
}

int indexerPrepare(const IndexerPrepareArgs &a, cudaStream_t stream) {
  if (a.batch == 0)
    return 0;
  size_t smem = static_cast<size_t>(a.dim) * sizeof(float);
  indexerPrepareKernel<<<a.batch, kRecurrentThreads, smem, stream>>>(a);
  return 1;
}

int indexerTopK(const float *q, const float *weights, const float *cache,
                int64_t batch, int64_t heads, int64_t dim, int64_t capacity,
                const int64_t *begin, const int64_t *end, int64_t topK,
                uint64_t *workspace, float *out, cudaStream_t stream) {
  if (batch == 0)
    return 0;
  uint64_t *keys = workspace, *chosen = workspace + batch * capacity;
  size_t qBytes = static_cast<size_t>(heads * dim + heads) * sizeof(float);
  bool shared = qBytes <= kMaxDynamicShared;
  dim3 grid(blocksFor(std::max<int64_t>(capacity, 1)),
            static_cast<unsigned>(batch));
  indexScoresKernel<<<grid, kThreads, shared ? qBytes : 0, stream>>>(
      q, weights, cache, heads, dim, capacity, begin, end, shared, keys);
  indexSelectKernel<<<batch, kThreads, 0, stream>>>(keys, capacity, begin, end,
                                                    topK, chosen, out);
  return 2;
}

int kvGather(const KVGatherArgs &a, cudaStream_t stream) {
  if (a.batch == 0 || a.dstCapacity == 0)
    return 0;
  dim3 grid(static_cast<unsigned>(a.dstCapacity),
            static_cast<unsigned>(a.batch));
  kvGatherKernel<<<grid, kAttentionThreads, 0, stream>>>(a);
  return 1;
}

} // namespace cuda
} // namespace rt
} // namespace helix
