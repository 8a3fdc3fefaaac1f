//===- CudaKernels.h - Launchers of the CUDA kernels (internal) -*- C++ -*-===//
//
// Plain C++ declarations of the kernel launchers in CudaKernels.cu, so the
// backend (CudaBackend.cpp) is ordinary C++. All pointers are device
// pointers; every launcher queues work on `stream` and returns at once,
// with the number of kernels it launched (Backend::traffic counts them).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_LIB_CUDAKERNELS_H
#define HELIX_RUNTIME_LIB_CUDAKERNELS_H

#include "helix/Common/AttentionSplits.h"
#include "helix/Runtime/NumberFormats.h"
#include "helix/Runtime/PartialsLayout.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

namespace helix {
namespace rt {
namespace cuda {

/// out[b, :] = row tokens[b] - vocabBegin of table [vocab, hidden] (f32 or
/// BF16), zeros for tokens outside this shard.
int embedding(const void *table, DType dtype, int64_t vocab, int64_t hidden,
              const int64_t *tokens, int64_t batch, int64_t vocabBegin,
              float *out, cudaStream_t stream);
/// w [dim] in `wtype` (F32 or BF16: a checkpoint's norm weight read as
/// stored, no decode kernel).
int rmsNorm(const float *x, const void *w, int64_t rows, int64_t dim, float eps,
            float *out, cudaStream_t stream, DType wtype = DType::F32);
/// Rows of `width` values: rmsNorm of the first `dim`, the rest copied.
int rmsNormPrefix(const float *x, const void *w, int64_t rows, int64_t width,
                  int64_t dim, float eps, float *out, cudaStream_t stream,
                  DType wtype = DType::F32);
/// sum = a + b, out = rmsNorm(sum) (rows of `dim`), one kernel: the same
/// arithmetic as add() then rmsNorm().
int addRmsNorm(const float *a, const float *b, const void *w, int64_t rows,
               int64_t dim, float eps, float *sum, float *out,
               cudaStream_t stream, DType wtype = DType::F32);
/// out[m, n] += bias[n].
int addBias(float *out, const float *bias, int64_t rows, int64_t cols,
            cudaStream_t stream);
int rope(float *x, int64_t batch, int64_t heads, int64_t dim,
         const int64_t *positions, const float *invFreq, int64_t half,
         float attentionFactor, int64_t offset, bool interleaved,
         cudaStream_t stream);
/// dst[b, slots[b], h, :] = encodeKV(src[b, h, :]) for slots[b] >= 0
/// (scales: the F4E2M1 cache's block scales, else null).
int kvStore(void *dst, uint8_t *scales, const float *src, DType dtype,
            int64_t batch, int64_t capacity, int64_t heads, int64_t dim,
            const int64_t *slots, cudaStream_t stream);
/// Where ropeKvStore appends: the cache (keys [batch, capacity, kHeads,
/// keyDim], values likewise or null for a value-in-key cache, the F4E2M1
/// scales or null) and the new values v [batch, kHeads, valueDim] (null
/// with a value-in-key cache).
struct KVStoreTarget {
  void *keys;
  uint8_t *keyScales;
  void *values;
  uint8_t *valueScales;
  const float *v;
  DType dtype;
  int64_t capacity, keyDim, valueDim;
  const int64_t *slots;
};
/// rope() on q [batch, qHeads, dim] and k [batch, kHeads, dim], then, with
/// a cache, kvStore() of the roped k and of v at `slots`: one kernel, the
/// same results as those launches.
int ropeKvStore(float *q, int64_t qHeads, float *k, int64_t kHeads,
                int64_t batch, int64_t dim, const int64_t *positions,
                const float *invFreq, int64_t half, float attentionFactor,
                int64_t offset, bool interleaved, const KVStoreTarget *cache,
                cudaStream_t stream);

/// Split-K decode attention: helix/Common/AttentionSplits.h (the rule the
/// cost model counts kernels by).
using ::helix::attentionSplits;
using ::helix::kMaxAttentionSplits;
using ::helix::kMinKeysPerSplit;
/// Floats of workspace attention() needs for `splits` > 1.
inline int64_t attentionWorkspace(int splits, int64_t batch, int64_t qHeads,
                                  int64_t valueDim) {
  return splits > 1 ? int64_t(splits) * batch * qHeads * (valueDim + 1) : 0;
}

/// Whether attention() streams K and V with 128-bit loads (its vectorized
/// path): an F32 / BF16 / F8E4M3 / F4E2M1 cache whose key and value heads
/// are whole 16-byte chunks (keyDim and valueDim times the format's bits a
/// multiple of 128: head dims 128 and DeepSeek's 576 / 512 in every
/// format), at most 128 chunks per value head (the block's threads), and
/// 16-byte aligned K and V. Otherwise it reads K/V element by element.
bool attentionVectorized(DType dtype, int64_t keyDim, int64_t valueDim,
                         bool valueInKey, const void *keys, const void *values);

/// K/V stored in `dtype` (NumberFormats.h); values == nullptr: the value
/// is the first valueDim entries of the key. `splits` > 1: split-K, the
/// parts' outputs in `workspace` (attentionWorkspace floats), then merged.
/// piece = 0: out [batch, qHeads, valueDim] and lse [batch, qHeads].
/// piece > 0: out is helix.attention_partial's packing [batch, qHeads *
/// valueDim / piece, piece + 1] (each piece of a head's values, then its
/// LSE), lse unused: the result needs no layout kernel.
int attention(const float *q, const void *keys, const uint8_t *keyScales,
              const void *values, const uint8_t *valueScales, DType dtype,
              int64_t batch, int64_t qHeads, int64_t kvHeads, int64_t keyDim,
              int64_t valueDim, int64_t capacity, const int64_t *begin,
              const int64_t *end, float scale, float *out, float *lse,
              int splits, float *workspace, cudaStream_t stream,
              int64_t piece = 0);
/// out[i] = decoded element i of q times its block scale (desc null: no
/// scales); `base` is q's first element in its storage.
int dequantize(const void *q, DType dtype, int64_t n, int64_t base,
               const BlockScaleDesc *desc, float *out, cudaStream_t stream);
/// The most rows of x the GEMM path streams resident weights for
/// (linearResident re-reads the weights once per 8 rows, so up to 8
/// times); more rows, a prefill-sized M, decode the weights to f32 once and
/// use cuBLAS, where extra bytes (4 per value written and read) matter less
/// than math. Decode steps have M = the step's rows.
constexpr int64_t kStreamingGemmMaxRows = 64;

/// out[m, n] = sum_k x[m, k] W[n, k] (+ bias[n]) for x [M, K] f32 and W
/// [N, K] read as stored: element (n, k) is element first + n K + k of `w`
/// in `dtype`, scaled by `desc` (null: no scales) at element scaleBase +
/// first + n K + k (scaleBase: w's first element in its storage). The
/// weights move once, in their format: no f32 copy.
int linearResident(const float *x, int64_t M, int64_t K, const void *w,
                   DType dtype, int64_t first, int64_t scaleBase,
                   const BlockScaleDesc *desc, int64_t N, const float *bias,
                   float *out, cudaStream_t stream);
/// Per-head GEMM (MLA's W_UK and W_UV) with the weights read as stored:
/// out [B, H, N] = x_h [B, A] times W_h, W [H, A, N] (transposeW) or its
/// transpose from [H, N, A], in `dtype` with block scales at element
/// scaleBase + index (desc null: none). Decode-sized B (up to
/// kStreamingGemmMaxRows): no f32 copy of the weight.
int headMatmulResident(const float *x, int64_t B, int64_t H, int64_t A,
                       const void *w, DType dtype, int64_t scaleBase,
                       const BlockScaleDesc *desc, int64_t N, bool transposeW,
                       float *out, cudaStream_t stream);
/// One weight of linearResidentParts: out [M, N] = x . W^T (+ bias), W
/// the [N, K] matrix from element `first` of `w` as linearResident reads it.
struct LinearPart {
  const void *w = nullptr;
  DType dtype = DType::F32;
  int64_t first = 0, scaleBase = 0;
  const BlockScaleDesc *desc = nullptr;
  int64_t N = 0;
  const float *bias = nullptr;
  float *out = nullptr;
};
constexpr int kMaxLinearParts = 3;
/// linearResident of one x by up to kMaxLinearParts weights in one launch
/// (the blocks of each weight's columns side by side in the grid): q, k
/// and v, or gate and up, as one fused projection.
int linearResidentParts(const float *x, int64_t M, int64_t K,
                        const LinearPart *parts, int count,
                        cudaStream_t stream);
/// The exact LSE combine of l.shards partial attentions per (request,
/// head), read in place in either layout (PartialsLayout.h), into out
/// [batch, heads, dim]; sinks (optional) join each head's denominator.
int lseCombine(const float *values, const float *lse, const PartialsLayout &l,
               const float *sinks, float *out, cudaStream_t stream);
/// kind: 0 SiLU, 1 GELU (erf), 2 GELU (tanh), 3 gpt-oss clamped SwiGLU,
/// 4 a sigmoid gate (sigmoid(gate) * up).
/// liveRows (device, optional): only the first *liveRows rows of rowLen.
/// gateDiv: element i of up takes gate element i / gateDiv (1: the same
/// shape; a row's length: one gate value per row, broadcast).
int gated(const float *gate, const float *up, int64_t n, int kind, float alpha,
          float limit, float *out, cudaStream_t stream,
          const int64_t *liveRows = nullptr, int64_t rowLen = 0,
          int64_t gateDiv = 1);
int add(const float *a, const float *b, int64_t n, float *out,
        cudaStream_t stream);
/// out = log(exp(a) + exp(b)) (in double; -inf where both are).
int logAddExp(const float *a, const float *b, int64_t n, float *out,
              cudaStream_t stream);
int swapAxes01(const float *x, int64_t a, int64_t b, int64_t c, float *out,
               cudaStream_t stream);
int sliceColumns(const float *x, int64_t rows, int64_t cols, int64_t begin,
                 int64_t count, float *out, cudaStream_t stream);
int concatColumns(const float *a, const float *b, int64_t rows, int64_t ca,
                  int64_t cb, float *out, cudaStream_t stream);
int sumLeading(const float *x, int64_t s, int64_t n, float *out,
               cudaStream_t stream);
/// out[i, :] = x[rows[i], :] for i < n (live, device, optional: only for
/// i < *live).
int gatherRows(const float *x, int64_t cols, const int64_t *rows, int64_t n,
               float *out, cudaStream_t stream, const int64_t *live = nullptr);

//===-- Long-context layers: Gated DeltaNet, DeepSeek Sparse Attention ----===//

/// A small weight read as stored: F32 or BF16 (no scales).
struct WeightRef {
  const void *data = nullptr;
  DType dtype = DType::F32;
};

/// gatedDeltaNet's arguments (Ops.h, gatedDeltaNetStep): proj [batch,
/// keyHeads (2 keyDim + 2 r valueDim)], ba [batch, keyHeads 2 r], state
/// [batch, stateValues] (updated), positions [batch] (0: a zero state),
/// out [batch, valueHeads valueDim].
struct GatedDeltaNetArgs {
  const float *proj = nullptr, *ba = nullptr;
  WeightRef convQ, convK, convV, aLog, dtBias, norm;
  float *state = nullptr;
  const int64_t *positions = nullptr;
  int64_t batch = 0, keyHeads = 0, valueHeads = 0, keyDim = 0, valueDim = 0,
          convKernel = 0;
  float eps = 1e-6f;
  float *out = nullptr;
};
/// One block per (key head, request): the convolution of the key head's
/// channels (q, k, its value heads' v), the L2 norms, the gated delta rule
/// of its value heads (a thread per column of each state), the gated
/// RMSNorm. One launch.
int gatedDeltaNet(const GatedDeltaNetArgs &a, cudaStream_t stream);

/// indexerPrepare's arguments (Ops.h): q [batch, heads, dim] and weights
/// [batch, heads] updated in place; key [batch, dim]; the index cache
/// [batch, capacity (dim + 1)] written at slots[b] >= 0.
struct IndexerPrepareArgs {
  float *q = nullptr;
  const float *key = nullptr;
  WeightRef normWeight, normBias;
  float normEps = 1e-6f;
  float *weights = nullptr;
  float weightScale = 1.0f;
  float *cache = nullptr;
  int64_t capacity = 0;
  const int64_t *slots = nullptr, *positions = nullptr;
  const float *invFreq = nullptr;
  int64_t half = 0; // RoPE pairs
  float attentionFactor = 1.0f;
  bool interleaved = false;
  int64_t batch = 0, heads = 0, dim = 0;
};
/// One block per request: the key's LayerNorm and RoPE, its append, q's
/// RoPE, the head weights' scale. One launch.
int indexerPrepare(const IndexerPrepareArgs &a, cudaStream_t stream);

/// 64-bit words of workspace indexerTopK needs: a key per slot of every
/// row (the scores), then topK per row (the selection).
inline int64_t indexerTopKWorkspace(int64_t batch, int64_t capacity,
                                    int64_t topK) {
  return batch * (capacity + topK);
}
/// The scores of entries [begin[b], end[b]) of each row of the index cache
/// (slot = entry % capacity) -- sum_h weights[b, h] relu(q[b, h] . key) --
/// and their top-k by (score descending, position ascending) into out
/// [batch, topK, 2] (score, position; padding (-inf, -1)). Two launches:
/// the scores (a thread per entry, capacity-sized grid) and the selection
/// (a block per row: a bitwise radix select of the topK-th best, then the
/// chosen ones in order).
int indexerTopK(const float *q, const float *weights, const float *cache,
                int64_t batch, int64_t heads, int64_t dim, int64_t capacity,
                const int64_t *begin, const int64_t *end, int64_t topK,
                uint64_t *workspace, float *out, cudaStream_t stream);

/// dst[b, i] = src[b, slots[b dstCapacity + i]] for slots >= 0: KV entries
/// (every head; keys, values unless null, the F4E2M1 scales unless null)
/// copied as stored. Caches [batch, capacity, heads, dim].
struct KVGatherArgs {
  const uint8_t *keys = nullptr, *keyScales = nullptr, *values = nullptr,
                *valueScales = nullptr;
  uint8_t *dstKeys = nullptr, *dstKeyScales = nullptr, *dstValues = nullptr,
          *dstValueScales = nullptr;
  DType dtype = DType::F32;
  int64_t batch = 0, capacity = 0, dstCapacity = 0, heads = 0, keyDim = 0,
          valueDim = 0;
  const int64_t *slots = nullptr;
};
int kvGather(const KVGatherArgs &a, cudaStream_t stream);

//===-- MoE on the device: route, dispatch, grouped GEMM, combine ---------===//

/// RouterConfig (Ops.h) as kernel data, for E experts.
struct RouterParams {
  int64_t experts = 0, topK = 1, groups = 1, topkGroups = 1;
  bool sigmoid = false, groupMax = false, normTopkProb = false;
  double scaling = 1.0;
};
/// indices / weights [batch, topK] from logits [batch, E] and the optional
/// correction bias [E]: routeHost's algorithm (Ops.cpp) in double, one
/// block per token. Dynamic shared memory: moeRouteSharedBytes.
int moeRoute(const float *logits, const float *correctionBias, int64_t batch,
             const RouterParams &p, int32_t *indices, float *weights,
             cudaStream_t stream);
size_t moeRouteSharedBytes(const RouterParams &p);
/// Groups the routed pairs of indices [batch, k] by local expert [first,
/// first + experts): offsets [experts + 1] (offsets[experts]: rows routed
/// here), rows [batch k] (the token of each dispatched row, the first
/// offsets[experts] valid), slotOf [batch k] (each pair's dispatched row or
/// -1), stats [2] (optional: experts with rows, rows). One block, no
/// atomics, no host round trip.
int moeDispatch(const int32_t *indices, int64_t batch, int64_t k, int64_t first,
                int64_t experts, int64_t *offsets, int64_t *rows,
                int64_t *slotOf, int64_t *stats, cudaStream_t stream);
/// The grouped expert GEMM, one launch: rows [offsets[e], offsets[e+1]) of
/// x [*, K] times expert e's W [N, K] (element e N K on of `w`, read as
/// stored like linearResident, scales at scaleBase + element), plus bias
/// row e of bias [experts, N] (optional), into the same rows of out [*, N].
int linearGrouped(const float *x, int64_t K, const void *w, DType dtype,
                  int64_t scaleBase, const BlockScaleDesc *desc,
                  int64_t experts, int64_t N, const float *bias,
                  const int64_t *offsets, float *out, cudaStream_t stream);
/// out[b, :] = sum_j weights[b, j] y[slotOf[b k + j], :] over the pairs
/// with a row here (j in order), 0 when none has.
int moeCombine(const float *y, const int64_t *slotOf, const float *weights,
               int64_t batch, int64_t k, int64_t cols, float *out,
               cudaStream_t stream);

} // namespace cuda
} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_CUDAKERNELS_H
