//===- Ops.h - The runtime's op-level API -----------------------*- C++ -*-===//
//
// One function per op, each taking the Context first. Generated host code
// calls them one at a time; the Context's backend (CPU or CUDA) runs them.
// Every function checks its shapes and throws Error naming the op and the
// offending tensor. Outputs are new tensors unless the name says "InPlace"
// or the op says it updates an argument.
//
// Layout conventions (row-major, batch first):
//   activations [B, H]; per-head tensors [B, heads, dim];
//   weights as Hugging Face stores nn.Linear: [out, in].
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_OPS_H
#define HELIX_RUNTIME_OPS_H

#include "helix/Runtime/Context.h"
#include "helix/Runtime/KVCache.h"
#include "helix/Runtime/Rope.h"
#include "helix/Runtime/Tensor.h"

#include <string>
#include <vector>

namespace helix {
namespace rt {

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

struct Activation {
  /// Sigmoid: sigmoid(gate) * up, the sigmoid gates of Qwen3-Next's
  /// attention output and shared expert (not a hidden_act).
  enum Kind { SiLU, GELU, GELUTanh, GptOssSwiGLU, Sigmoid };
  Kind kind = SiLU;
  float alpha = 1.702f; // GptOssSwiGLU: gate * sigmoid(alpha * gate)
  float limit = 7.0f;   // GptOssSwiGLU: clamp of gate (above) and up (both)

  /// From a Hugging Face hidden_act: silu/swish, gelu, gelu_pytorch_tanh,
  /// gelu_new. Throws Error otherwise.
  static Activation fromName(const std::string &hiddenAct);
  static Activation gptOss(float limit = 7.0f, float alpha = 1.702f);
  static Activation sigmoidGate();
};

struct RouterConfig {
  enum Scoring { Softmax, Sigmoid };
  enum GroupScore { GroupMax, GroupSumTop2 };
  Scoring scoring = Softmax;
  int64_t topK = 1;
  int64_t numGroups = 1;  // n_group (1: no grouped routing)
  int64_t topkGroups = 1; // topk_group
  /// GroupSumTop2: DeepSeek-V3 (noaux_tc); GroupMax: DeepSeek-V2
  /// (group_limited_greedy).
  GroupScore groupScore = GroupSumTop2;
  bool normTopkProb = false;
  double routedScalingFactor = 1.0;
};

/// Top-k routing of B tokens: indices [B, k] (i32, global expert ids) and
/// weights [B, k] (f32), sorted by descending selection score.
struct Routing {
  Tensor indices;
  Tensor weights;
};

/// The experts this rank holds, each sliced to this rank's share of the
/// expert intermediate dimension (TPF): gate/up [E_local, I_local, H],
/// down [E_local, H, I_local]; optional biases gate/up [E_local, I_local],
/// down [E_local, H] (gpt-oss).
struct ExpertWeights {
  Tensor gate, up, down;
  Tensor gateBias, upBias, downBias;
};

/// Partial attention over a local KV shard: out [B, heads, valueDim] is the
/// softmax-normalized output over the shard, lse [B, heads] the natural-log
/// sum of exp of the scaled scores (-inf and out = 0 for an empty range).
struct AttentionPartial {
  Tensor out;
  Tensor lse;
};

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

/// Rows of `table` [V_local, H] for `tokens`; tokens outside
/// [vocabBegin, vocabBegin + V_local) give zero rows (vocab-parallel
/// embedding: all-reduce the result). -> [B, H]
Tensor embedding(Context &ctx, const Tensor &table,
                 const std::vector<int64_t> &tokens, int64_t vocabBegin = 0);

/// RMSNorm over the last dimension: x * rsqrt(mean(x^2) + eps) * weight.
/// x [..., D], weight [D]. Also QK-norm: x [B, heads, headDim].
Tensor rmsNorm(Context &ctx, const Tensor &x, const Tensor &weight, float eps);

/// x [..., W]: RMSNorm over the first D = weight.dim(0) values of the last
/// dimension, the remaining W - D values unchanged, in one kernel (no
/// slice and concatenation).
Tensor rmsNormPrefix(Context &ctx, const Tensor &x, const Tensor &weight,
                     float eps);

/// a + b and its RMSNorm: the residual stream after a block and the next
/// block's normalized input (one kernel on the CUDA backend).
struct AddNorm {
  Tensor sum;
  Tensor normed;
};
AddNorm addRmsNorm(Context &ctx, const Tensor &a, const Tensor &b,
                   const Tensor &weight, float eps);

/// x [M, K] . weight[N, K]^T (+ bias [N]) -> [M, N]. GEMM (cuBLAS on CUDA).
/// Row- or column-parallel slices are just smaller weights; add a
/// row-parallel layer's bias on one rank only (or after the all-reduce).
Tensor linear(Context &ctx, const Tensor &x, const Tensor &weight,
              const Tensor *bias = nullptr);

/// linear() of one x by several weights (their biases, each may be null)
/// at once: q, k and v of an attention layer, gate and up of an FFN. The
/// CUDA backend runs them as one kernel launch where it streams the
/// weights as stored (one weight-streaming GEMM over their columns).
std::vector<Tensor> linearMany(Context &ctx, const Tensor &x,
                               const std::vector<Tensor> &weights,
                               const std::vector<const Tensor *> &biases);

/// Per-head matrix product: x [B, h, a], w [h, b, a] -> [B, h, b]
/// (x . w^T per head); with transposeW, w [h, a, b] -> x . w.
/// MLA absorbs W_UK into the query and applies W_UV with it.
Tensor headMatmul(Context &ctx, const Tensor &x, const Tensor &w,
                  bool transposeW = false);

/// RoPE on dims [offset, offset + rotaryDim) of every head of x [B, h, d],
/// in place; positions [B].
void applyRope(Context &ctx, Tensor &x, const std::vector<int64_t> &positions,
               const Rope &rope, int64_t offset = 0);

/// applyRope on q [B, hq, d] and k [B, hk, d] (the same positions and
/// dims), then, with a cache, kvAppend(k, v) at `slots`: one kernel on the
/// CUDA backend. `cache` null: RoPE on both only.
void ropeKvAppend(Context &ctx, Tensor &q, Tensor &k, const Tensor *v,
                  KVCache *cache, const std::vector<int64_t> &slots,
                  const std::vector<int64_t> &positions, const Rope &rope,
                  int64_t offset = 0);

/// Writes k [B, heads, keyDim] (and v [B, heads, valueDim] unless the cache
/// is valueInKey) at local slot slots[r] of each row; rows with slot -1 are
/// skipped (another KVP rank owns that position).
void kvAppend(Context &ctx, KVCache &cache, const Tensor &k, const Tensor *v,
              const std::vector<int64_t> &slots);

/// Decode attention of q [B, Hq, keyDim] over local slots
/// [slotBegin[r], slotEnd[r]) of each row (GQA: query head i reads KV head
/// i / (Hq / heads); MHA, MQA and MLA's absorbed latent as special cases).
/// `scale` multiplies q.k.
AttentionPartial attentionPartial(Context &ctx, const Tensor &q,
                                  const KVCache &cache, float scale,
                                  const std::vector<int64_t> &slotBegin,
                                  const std::vector<int64_t> &slotEnd);
/// The same attention written straight into helix.attention_partial's
/// packing [B, h * s, d / s + 1] for head split s: each of a head's s
/// pieces of d / s values followed by the head's LSE. One kernel (two with
/// split-K), no layout kernel.
Tensor attentionPacked(Context &ctx, const Tensor &q, const KVCache &cache,
                       float scale, const std::vector<int64_t> &slotBegin,
                       const std::vector<int64_t> &slotEnd, int64_t headSplit);

/// Exact recombination of S partial attentions: partials [B, S, h, d],
/// lse [B, S, h] -> [B, h, d], weighting shard s by exp(lse_s - max). With
/// sinks [h] (gpt-oss), exp(sink) joins the softmax denominator once.
Tensor lseCombine(Context &ctx, const Tensor &partials, const Tensor &lse,
                  const Tensor *sinks = nullptr);
/// The same combine over packed [S, B, h, d + 1] (each head's d values,
/// then its LSE: helix.attention_partial's all-to-all layout), read in
/// place: one kernel, no layout kernels.
Tensor lseCombinePacked(Context &ctx, const Tensor &packed,
                        const Tensor *sinks = nullptr);

/// act(gate) * up elementwise (GptOssSwiGLU: clamped, (up + 1) * glu); a
/// gate of one value per row ([.., 1]) broadcasts over up's rows.
Tensor gatedActivation(Context &ctx, const Tensor &gate, const Tensor &up,
                       const Activation &act);

/// Router: scores (softmax or sigmoid of logits [B, E]), optional
/// correction bias [E] added for selection only (DeepSeek-V3
/// e_score_correction_bias), grouped top-k, normalization and scaling.
/// Replicated: every rank routes every token.
Routing moeRoute(Context &ctx, const Tensor &logits, const RouterConfig &config,
                 const Tensor *correctionBias = nullptr);

/// sum over the routed experts in [firstExpert, firstExpert + E_local) of
/// weight * expert(x), each expert computed on this rank's intermediate
/// slice: x [B, H] -> partial [B, H]. The down bias is added only when
/// `addDownBias` (one TPF rank per expert). Sum partials over the ranks.
Tensor moeExperts(Context &ctx, const Tensor &x, const Routing &routing,
                  const ExpertWeights &experts, int64_t firstExpert,
                  const Activation &act, bool addDownBias = true);

//===----------------------------------------------------------------------===//
// Long-context layers: Gated DeltaNet, DeepSeek Sparse Attention
//===----------------------------------------------------------------------===//

/// A Gated DeltaNet layer's shape on this rank (Qwen3-Next): keyHeads key
/// heads of keyDim, valueHeads value heads of valueDim (r = valueHeads /
/// keyHeads value heads per key head), a depthwise causal convolution of
/// convKernel taps.
struct GatedDeltaNetDims {
  int64_t keyHeads = 0, valueHeads = 0, keyDim = 0, valueDim = 0,
          convKernel = 0;
  /// Value heads per key head.
  int64_t ratio() const { return keyHeads ? valueHeads / keyHeads : 0; }
  /// Channels of the convolution: all q, all k, all v.
  int64_t convChannels() const {
    return 2 * keyHeads * keyDim + valueHeads * valueDim;
  }
  /// Values of one request's state row: the SSM states S_h [keyDim,
  /// valueDim] of the value heads, then the convolution state
  /// [convChannels, convKernel - 1] (oldest input first).
  int64_t stateValues() const {
    return valueHeads * keyDim * valueDim + convChannels() * (convKernel - 1);
  }
};

/// The small weights of a Gated DeltaNet layer: the depthwise convolution
/// of the q, k and v channels ([keyHeads keyDim, K], [keyHeads keyDim, K],
/// [valueHeads valueDim, K]; tap K - 1 multiplies the newest input),
/// A_log and dt_bias [valueHeads], the gated norm's weight [valueDim].
struct GatedDeltaNetWeights {
  Tensor convQ, convK, convV, aLog, dtBias, normWeight;
};

/// One decode step of a Gated DeltaNet layer after its projections
/// (Hugging Face's Qwen3NextGatedDeltaNet, the recurrent path): proj [B,
/// keyHeads (2 keyDim + 2 r valueDim)] (per key head: q, k, v of its r
/// value heads, z of them), ba [B, keyHeads 2 r] (per key head: b, a of its
/// r value heads); state [B, stateValues()] f32, row b the request's
/// (updated in place; positions[b] == 0: it starts from zeros). The
/// convolution with SiLU, the L2-normalised q (times keyDim^-1/2) and k, the
/// gated delta rule, the gated RMSNorm (eps) -> [B, valueHeads valueDim].
/// One kernel on the CUDA backend.
Tensor gatedDeltaNetStep(Context &ctx, const Tensor &proj, const Tensor &ba,
                         const GatedDeltaNetWeights &weights, Tensor &state,
                         const std::vector<int64_t> &positions,
                         const GatedDeltaNetDims &dims, float eps);

/// The values per slot of an index cache of `headDim` keys: the key, then
/// its position (as a float).
inline int64_t indexSlotValues(int64_t headDim) { return headDim + 1; }

/// DeepSeek Sparse Attention's lightning indexer, the new token's part, in
/// place: q [B, heads, headDim] roped on its first rope.rotaryDim values;
/// key [B, headDim] (x . wk^T) LayerNormed (normWeight, normBias [headDim],
/// normEps; mean-centred, biased variance) and roped likewise, then
/// written with its position at slot slots[b] (-1: another rank's) of row
/// b of the index cache [B, capacity (headDim + 1)]; weights [B, heads]
/// multiplied by weightScale. One kernel on the CUDA backend.
void indexerPrepare(Context &ctx, Tensor &q, const Tensor &key,
                    const Tensor &normWeight, const Tensor &normBias,
                    float normEps, Tensor &weights, float weightScale,
                    Tensor &cache, const std::vector<int64_t> &slots,
                    const std::vector<int64_t> &positions, const Rope &rope);

/// The indexer's scores and top-k over the cached index keys of each row:
/// entries [begin[b], end[b]) of row b (slot = entry % capacity, a ring),
/// score sum_h weights[b, h] relu(q[b, h] . key) -> [B, topK, 2]: (score,
/// position) of the best topK by score (descending), then position
/// (ascending); padded with (-inf, -1). Two kernels on the CUDA backend
/// (the scores, the selection).
Tensor indexerTopK(Context &ctx, const Tensor &q, const Tensor &weights,
                   const Tensor &cache, const std::vector<int64_t> &begin,
                   const std::vector<int64_t> &end, int64_t topK);

/// The top-k of several ranks' candidates [P, B, k, 2] (as indexerTopK
/// gives them): per row, every candidate with a position (>= 0), by score
/// (descending), then position (ascending), the first topK positions ->
/// host [B * topK], padded with -1. The candidates are downloaded: the
/// same list on every rank that has the same candidates.
std::vector<int64_t> topkMerge(Context &ctx, const Tensor &candidates,
                               int64_t topK);

/// A scratch cache [B, capacity] of `src`'s layout and format whose row b
/// holds src's entries at slots[b * capacity + i] (-1: none; entries
/// copied as stored, with their scales) from i = 0: the selected entries
/// of a sparse attention, attended over [0, n_b). Entries without a slot
/// are undefined.
KVCache kvGather(Context &ctx, const KVCache &src,
                 const std::vector<int64_t> &slots, int64_t capacity);

/// `t` decoded into f32 (resident BF16 / FP8 / FP4 with block scales);
/// `t` itself when it is f32 or i32. The ops taking weights call it.
Tensor dequantize(Context &ctx, const Tensor &t);

/// log(exp(a) + exp(b)) elementwise (same shape; -inf where both are):
/// the log-sum-exp of two partial attentions over one query's keys.
Tensor logAddExp(Context &ctx, const Tensor &a, const Tensor &b);

/// Elementwise a + b (same shape).
Tensor add(Context &ctx, const Tensor &a, const Tensor &b);
/// a += b (same shape).
void addInPlace(Context &ctx, Tensor &a, const Tensor &b);
/// x [a, b, c] -> [b, a, c].
Tensor swapAxes01(Context &ctx, const Tensor &x);
/// x[..., begin : begin + count] as a new tensor.
Tensor sliceLast(Context &ctx, const Tensor &x, int64_t begin, int64_t count);
/// Concatenation along the last dimension (other dimensions equal).
Tensor concatLast(Context &ctx, const Tensor &a, const Tensor &b);
/// x [S, ...] -> sum over the first dimension [...].
Tensor sumLeading(Context &ctx, const Tensor &x);
/// A copy in new memory.
Tensor clone(Context &ctx, const Tensor &x);
/// Copies src into dst (same shape and dtype; dst may be a rows() view).
void copyInto(Context &ctx, Tensor &dst, const Tensor &src);

/// Greedy sampling: index of the largest logit of each row (the first one
/// on ties). logits [B, V] -> host ids.
std::vector<int64_t> argmax(Context &ctx, const Tensor &logits);

/// Host routing used by the backends (exposed for tests): logits [B, E]
/// row-major -> indices / weights [B, k].
void routeHost(const float *logits, int64_t batch, int64_t experts,
               const RouterConfig &config, const float *correctionBias,
               std::vector<int32_t> &indices, std::vector<float> &weights);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_OPS_H
