//===- KernelTable.h - The kernels each op of a decode step launches -*- C++
//-*-===//
//
// One table of the kernels a decode step launches, by op and by kind. The
// cost model reads it (each kernel pays its kind's fixed cost: lib/Cost,
// LayerCost.cpp and Prepare.cpp) and writes the counts by kind into
// plan.json (`kernels_by_kind`); the CUDA backend tags every launch with
// its kind (its traffic report: `traffic rank R kind K: launches N`); and
// `codegen_e2e.py --check-traffic` compares the two, kind by kind
// (docs/cost-model.md, "Kernels per op"). Header-only and dependency-free.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_KERNELTABLE_H
#define HELIX_COMMON_KERNELTABLE_H

#include <array>
#include <cstdint>
#include <initializer_list>
#include <utility>

namespace helix {

/// What a kernel does, as the table counts and the backend tags it.
enum class KernelKind : uint8_t {
  Norm,        // RMSNorm (a residual add fused before it, or not)
  Gemm,        // a weight-streaming GEMM or per-head BMM (one launch)
  Rope,        // rotary embedding of q and k
  KVAppend,    // the step's K and V written into the cache
  Attention,   // decode attention
  SplitMerge,  // the merge of decode attention's split-K parts
  Combine,     // the exact log-sum-exp combine of KVP partials
  Activation,  // a gated activation
  Route,       // MoE top-k routing
  Experts,     // the routed-expert block (one grouped-GEMM unit)
  Sum,         // a weighted sum or residual add not fused into a norm
  Embedding,   // the embedding rows of the new tokens
  Sampling,    // the pick of the next token from the logits
  Recurrent,   // a recurrent mixer's convolution, state update, gated norm
  Indexer,     // DSA's index-key preparation and top-k selection
  IndexScores, // DSA's scores of every index key (an attention-like kernel)
  Layout,      // activations moved between layouts (no math)
  Convert,     // a weight or activation converted to another format
};
inline constexpr int kNumKernelKinds = 18;

/// The kind's name in plan.json and in the backend's traffic report.
constexpr const char *kernelKindName(KernelKind k) {
  constexpr const char *names[kNumKernelKinds] = {
      "norm",         "gemm",      "rope",       "kv_append", "attention",
      "split_merge",  "combine",   "activation", "route",     "experts",
      "sum",          "embedding", "sampling",   "recurrent", "indexer",
      "index_scores", "layout",    "convert"};
  return names[static_cast<int>(k)];
}

/// Kernels by kind.
struct KernelCounts {
  std::array<uint32_t, kNumKernelKinds> n{};

  constexpr KernelCounts() = default;
  constexpr KernelCounts(
      std::initializer_list<std::pair<KernelKind, int>> counts) {
    for (const auto &[kind, count] : counts)
      n[static_cast<int>(kind)] += static_cast<uint32_t>(count);
  }
  constexpr int of(KernelKind k) const { return n[static_cast<int>(k)]; }
  constexpr int total() const {
    int t = 0;
    for (uint32_t v : n)
      t += v;
    return t;
  }
  constexpr KernelCounts &operator+=(const KernelCounts &o) {
    for (int i = 0; i < kNumKernelKinds; ++i)
      n[i] = static_cast<uint32_t>(n[i] + o.n[i]);
    return *this;
  }
  constexpr KernelCounts &operator*=(int64_t times) {
    for (uint32_t &v : n)
      v = static_cast<uint32_t>(v * times);
    return *this;
  }
  constexpr KernelCounts &add(KernelKind k, int count = 1) {
    n[static_cast<int>(k)] =
        static_cast<uint32_t>(n[static_cast<int>(k)] + count);
    return *this;
  }
  constexpr bool operator==(const KernelCounts &o) const {
    for (int i = 0; i < kNumKernelKinds; ++i)
      if (n[i] != o.n[i])
        return false;
    return true;
  }
};

constexpr KernelCounts operator+(KernelCounts a, const KernelCounts &b) {
  return a += b;
}
constexpr KernelCounts operator*(KernelCounts a, int64_t times) {
  return a *= times;
}

/// The table: per op of one layer (and of the step), what helix's
/// generated program launches, as the cost model prices it.
namespace kernels {
using K = KernelKind;

// --- The mixer's input projections (QKV) ---------------------------------
/// GQA / MHA: the norm (fused with the residual add before it), the QKV
/// GEMM (q, k and v in one launch), RoPE.
inline constexpr KernelCounts kGqaQkv{{K::Norm, 1}, {K::Gemm, 1}, {K::Rope, 1}};
/// MLA: the norm, the q_a + kv_a GEMM, the latent norms (one launch), the
/// q_b GEMM, the W_UK BMM with RoPE.
inline constexpr KernelCounts kMlaQkv{{K::Norm, 2}, {K::Gemm, 3}};
/// Gated DeltaNet: the norm, in_proj_qkvz and in_proj_ba.
inline constexpr KernelCounts kGatedDeltaNetQkv{{K::Norm, 1}, {K::Gemm, 2}};
/// KDA: the norm, q / k / v, the gates' two bottleneck halves, beta.
inline constexpr KernelCounts kKdaQkv{{K::Norm, 1}, {K::Gemm, 4}};
/// Mamba-2: the norm, in_proj.
inline constexpr KernelCounts kMambaQkv{{K::Norm, 1}, {K::Gemm, 1}};

// --- The mixer's core (per HOP-B slice where attention is sliced) --------
/// GQA: the KV append and decode attention (plus kSplitMerge where the
/// attention splits: helix/Common/AttentionSplits.h).
inline constexpr KernelCounts kGqaCore{{K::KVAppend, 1}, {K::Attention, 1}};
/// MLA: the same, and the W_UV BMM.
inline constexpr KernelCounts kMlaCore{
    {K::KVAppend, 1}, {K::Attention, 1}, {K::Gemm, 1}};
/// Gated attention (Qwen3.5): the sigmoid gate multiplies the outputs.
inline constexpr KernelCounts kOutputGate{{K::Activation, 1}};
/// Where decode attention splits its keys.
inline constexpr KernelCounts kSplitMerge{{K::SplitMerge, 1}};
/// A recurrent mixer: the convolution, the state update, the gated norm.
inline constexpr KernelCounts kRecurrentCore{{K::Recurrent, 3}};
/// DSA's indexer: its projections (wq_b, wk with weights_proj), the index
/// key's norm + RoPE + FP8 quantization + append (one launch), the scores
/// of every index key (an attention-like kernel), the top-k.
inline constexpr KernelCounts kIndexerProjections{{K::Gemm, 2},
                                                  {K::Indexer, 1}};
inline constexpr KernelCounts kIndexerScores{{K::IndexScores, 1}};
inline constexpr KernelCounts kIndexerTopK{{K::Indexer, 1}};

/// KVP > 1: one combine kernel (per HOP-B slice), reading the all-to-all's
/// packing in place.
inline constexpr KernelCounts kCombine{{K::Combine, 1}};
/// The output projection.
inline constexpr KernelCounts kOutProj{{K::Gemm, 1}};

// --- The FFN -------------------------------------------------------------
/// Dense: the norm, the gate-up GEMM (one launch), the gated activation,
/// the down GEMM.
inline constexpr KernelCounts kDenseFfn{
    {K::Norm, 1}, {K::Gemm, 2}, {K::Activation, 1}};
/// MoE: the norm, the router GEMM (BF16), top-k.
inline constexpr KernelCounts kMoeRouter{
    {K::Norm, 1}, {K::Gemm, 1}, {K::Route, 1}};
/// The routed-expert block, as engines run it and the grouped-GEMM curve
/// measures it: permute, gate-up, activation, down, finalize.
inline constexpr KernelCounts kMoeExperts{{K::Experts, 1}};
/// Shared experts: gate-up GEMM, activation, down GEMM.
inline constexpr KernelCounts kMoeShared{{K::Gemm, 2}, {K::Activation, 1}};
/// A latent MoE's down and up projections around the routed experts.
inline constexpr KernelCounts kMoeLatent{{K::Gemm, 2}};
/// The weighted sum of the expert outputs.
inline constexpr KernelCounts kMoeSum{{K::Sum, 1}};

// --- The step --------------------------------------------------------------
/// The embedding rows of the new tokens.
inline constexpr KernelCounts kEmbedding{{K::Embedding, 1}};
/// The final norm, the LM head (BF16, vocabulary-parallel), sampling.
inline constexpr KernelCounts kLmHead{
    {K::Norm, 1}, {K::Gemm, 1}, {K::Sampling, 1}};
/// MTP's draft projection: the two norms (embedding, hidden) and the eh
/// projection.
inline constexpr KernelCounts kDraftProjection{{K::Norm, 2}, {K::Gemm, 1}};

} // namespace kernels
} // namespace helix

#endif // HELIX_COMMON_KERNELTABLE_H
