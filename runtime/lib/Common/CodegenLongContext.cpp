//===- CodegenLongContext.cpp - Recurrent and sparse layers of rank IR ----===//
//
// The long-context layers' rank-IR ops: recurrent-state shards
// (allocState / stateShard), helix.gdn_step (a Gated DeltaNet decode step),
// and DeepSeek Sparse Attention's helix.index_candidates (the lightning
// indexer on one KVP rank), helix.topk_merge (the selection every rank
// agrees on) and the sparse helix.attention_partial over the selected
// tokens (KV placement as CodegenAttention.cpp's kvSlots).
//
//===----------------------------------------------------------------------===//

#include "CodegenDetail.h"

#include <algorithm>
#include <cmath>

namespace helix {
namespace rt {
namespace cg {

//===----------------------------------------------------------------------===//
// Recurrent-state shards
//===----------------------------------------------------------------------===//

void allocState(Context &ctx, RankState &state, int64_t rows, int64_t values) {
  check(rows >= 1 && values >= 1,
        "state shard: rows and values must be positive, got [" +
            std::to_string(rows) + ", " + std::to_string(values) + "]");
  Context::MemoryScope scope = ctx.memoryScope(MemoryKind::KVCache);
  state.states.push_back(ctx.zeros({rows, values}));
}

Tensor stateShard(RankState &state, int64_t slot) {
  check(slot >= 0 && slot < static_cast<int64_t>(state.states.size()),
        "state shard " + std::to_string(slot) + " was not allocated (" +
            std::to_string(state.states.size()) + " are)");
  return state.states[slot];
}

namespace {

/// Rows [row0, row0 + n) of a state shard, checked.
Tensor stateRows(const Tensor &state, int64_t row0, int64_t n, const char *op) {
  check(state.defined() && state.rank() == 2 && state.dtype() == DType::F32,
        std::string(op) + ": the state shard " +
            (state.defined() ? state.str() : std::string("(undefined)")) +
            " must be an f32 [rows, values] tensor");
  check(row0 >= 0 && row0 + n <= state.dim(0),
        std::string(op) + ": rows [" + std::to_string(row0) + ", " +
            std::to_string(row0 + n) + ") outside the " +
            std::to_string(state.dim(0)) + " rows of the state shard");
  return state.rows(row0, row0 + n);
}

/// A projection weight as linear() takes it: rank-IR weights seen per head
/// ([heads, rows, H]: in_proj_qkvz per key head, the indexer's wq_b) as the
/// [heads rows, H] matrix they are stored as.
Tensor matrixOf(const Tensor &w) {
  return w.defined() && w.rank() == 3 ? w.view({w.dim(0) * w.dim(1), w.dim(2)})
                                      : w;
}

/// The batch of x [B, H], checked.
int64_t batchOf(const Tensor &x, const char *op) {
  check(x.defined() && x.rank() == 2,
        std::string(op) + ": x " +
            (x.defined() ? x.str() : std::string("(undefined)")) +
            " must be [B, H]");
  return x.dim(0);
}

} // namespace

//===----------------------------------------------------------------------===//
// Gated DeltaNet
//===----------------------------------------------------------------------===//

Tensor gdnStep(Context &ctx, const Tensor &x, const Ints &positions,
               const Tensor &wQKVZ, const Tensor &wBA, const Tensor &convQ,
               const Tensor &convK, const Tensor &convV, const Tensor &aLog,
               const Tensor &dtBias, const Tensor &normWeight,
               const Tensor &state, int64_t rowBase, int64_t keyHeads,
               int64_t valueHeads, int64_t keyDim, int64_t valueDim,
               int64_t convKernel, double eps) {
  const char *op = "gdn_step";
  int64_t B = batchOf(x, op);
  check(static_cast<int64_t>(positions.data.size()) == B,
        std::string(op) + ": " + std::to_string(positions.data.size()) +
            " positions for " + std::to_string(B) + " rows");
  Tensor rows = stateRows(state, rowBase, B, op);
  Tensor proj = linear(ctx, x, matrixOf(wQKVZ));
  Tensor ba = linear(ctx, x, matrixOf(wBA));
  GatedDeltaNetDims d;
  d.keyHeads = keyHeads;
  d.valueHeads = valueHeads;
  d.keyDim = keyDim;
  d.valueDim = valueDim;
  d.convKernel = convKernel;
  GatedDeltaNetWeights w{convQ, convK, convV, aLog, dtBias, normWeight};
  return gatedDeltaNetStep(ctx, proj, ba, w, rows, positions.data, d,
                           static_cast<float>(eps));
}

//===----------------------------------------------------------------------===//
// DeepSeek Sparse Attention
//===----------------------------------------------------------------------===//

Tensor indexCandidates(Context &ctx, const Tensor &x, const Ints &positions,
                       const Tensor &wqA, const Tensor &qNorm,
                       const Tensor &wqB, const Tensor &wk,
                       const Tensor &kNormWeight, const Tensor &kNormBias,
                       const Tensor &wProj, const Tensor &cache,
                       const Ints &slots, const Ints &spans, int64_t rowBase,
                       int64_t batchOffset, int64_t heads, int64_t headDim,
                       int64_t ropeDim, int64_t topK, double qNormEps,
                       const RopeConfig &rope) {
  const char *op = "index_candidates";
  // DeepSeek-V3.2's LayerNorm of the index key.
  const float keyNormEps = 1e-6f;
  int64_t B = batchOf(x, op);
  check(static_cast<int64_t>(positions.data.size()) == B &&
            static_cast<int64_t>(slots.data.size()) == B &&
            static_cast<int64_t>(spans.data.size()) == 2 * B,
        std::string(op) +
            ": expected the positions, slots and spans of one index shard "
            "for " +
            std::to_string(B) + " rows");
  check(heads >= 1 && headDim >= 1 && topK >= 1,
        std::string(op) + ": heads, head dim and top-k must be positive");
  RopeConfig rc = rope;
  if (rc.rotaryDim == 0)
    rc.rotaryDim = ropeDim;
  check(rc.rotaryDim == ropeDim && ropeDim <= headDim,
        std::string(op) + ": rope dim " + std::to_string(ropeDim) +
            " must be the RoPE's rotary dim (" + std::to_string(rc.rotaryDim) +
            ") and at most the head dim " + std::to_string(headDim));
  Tensor rows = stateRows(cache, rowBase + batchOffset, B, op);
  // q_a (where the model has a q LoRA), wk and weights_proj read the same
  // x: one fused projection.
  std::vector<Tensor> a =
      wqA.defined()
          ? linearMany(ctx, x, {wqA, wk, wProj}, {nullptr, nullptr, nullptr})
          : linearMany(ctx, x, {wk, wProj}, {nullptr, nullptr});
  Tensor qr = wqA.defined()
                  ? rmsNorm(ctx, a[0], qNorm, static_cast<float>(qNormEps))
                  : x;
  Tensor key = a[a.size() - 2], weights = a.back();
  Tensor q = linear(ctx, qr, matrixOf(wqB));
  check(q.dim(1) == heads * headDim && key.dim(1) == headDim &&
            weights.dim(1) == heads,
        std::string(op) + ": wqB gives " + std::to_string(q.dim(1)) + ", wk " +
            std::to_string(key.dim(1)) + " and wProj " +
            std::to_string(weights.dim(1)) + " values; expected " +
            std::to_string(heads) + " x " + std::to_string(headDim) + ", " +
            std::to_string(headDim) + " and " + std::to_string(heads));
  q = q.view({B, heads, headDim});
  float weightScale = static_cast<float>(
      1.0 / std::sqrt(static_cast<double>(heads) * double(headDim)));
  indexerPrepare(ctx, q, key, kNormWeight, kNormBias, keyNormEps, weights,
                 weightScale, rows, slots.data, positions.data, Rope(rc));
  std::vector<int64_t> begin(B), end(B);
  for (int64_t b = 0; b < B; ++b) {
    begin[b] = spans.data[2 * b];
    end[b] = spans.data[2 * b + 1];
  }
  Tensor candidates = indexerTopK(ctx, q, weights, rows, begin, end, topK);
  return candidates.view({1, B, topK, 2});
}

Ints topkMerge(Context &ctx, const Tensor &candidates, int64_t topK) {
  check(candidates.defined() && candidates.rank() == 4,
        "topk_merge: candidates " +
            (candidates.defined() ? candidates.str()
                                  : std::string("(undefined)")) +
            " must be [ranks, B, k, 2]");
  int64_t B = candidates.dim(1);
  return Ints{{B, topK}, rt::topkMerge(ctx, candidates, topK)};
}

Tensor sparseAttentionPartial(Context &ctx, const Tensor &q, const Tensor &k,
                              KVCache cache, const Tensor &wUV,
                              const Ints &slots, const Ints &selected,
                              int64_t block, int64_t kvp, int64_t kvpRank,
                              int64_t rowBase, int64_t batchOffset,
                              int64_t headSplit, float scale) {
  const char *op = "sparse attention_partial";
  check(q.defined() && q.rank() == 3,
        std::string(op) + ": q must be [B, heads, dim]");
  int64_t R = q.dim(0);
  check(static_cast<int64_t>(slots.data.size()) == R,
        std::string(op) + ": " + std::to_string(slots.data.size()) +
            " slots for " + std::to_string(R) + " rows");
  int64_t n = static_cast<int64_t>(selected.data.size());
  check(n >= R && n % R == 0,
        std::string(op) + ": " + std::to_string(n) +
            " selected positions are not the same number for each of " +
            std::to_string(R) + " rows");
  int64_t kSel = n / R;
  check(block >= 1 && kvp >= 1 && kvpRank >= 0 && kvpRank < kvp,
        std::string(op) + ": KV placement block " + std::to_string(block) +
            ", kvp " + std::to_string(kvp) + ", rank " +
            std::to_string(kvpRank));
  check(cache.config.valueInKey,
        std::string(op) +
            ": the cache keeps its values apart from its keys; sparse "
            "attention takes MLA's latent cache (values in the keys)");
  int64_t row0 = rowBase + batchOffset;
  check(row0 >= 0 && row0 + R <= cache.config.batch,
        std::string(op) + ": rows [" + std::to_string(row0) + ", " +
            std::to_string(row0 + R) + ") outside the " +
            std::to_string(cache.config.batch) + " rows of the KV shard");
  KVCache c = cache.rows(row0, row0 + R);
  kvAppend(ctx, c, k, nullptr, slots.data);
  // The local slots of the selected positions this rank holds, ascending
  // (with everything selected: the cache's order, attentionPartial's sums).
  int64_t cap = c.config.capacity;
  std::vector<int64_t> gather(R * kSel, -1), begin(R, 0), end(R, 0);
  std::vector<int64_t> mine;
  for (int64_t b = 0; b < R; ++b) {
    mine.clear();
    for (int64_t i = 0; i < kSel; ++i) {
      int64_t p = selected.data[b * kSel + i];
      if (p < 0 || (p / block) % kvp != kvpRank)
        continue;
      mine.push_back((ownedBelow(p + 1, kvpRank, block, kvp) - 1) % cap);
    }
    std::sort(mine.begin(), mine.end());
    mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
    std::copy(mine.begin(), mine.end(), gather.begin() + b * kSel);
    end[b] = static_cast<int64_t>(mine.size());
  }
  KVCache picked = kvGather(ctx, c, gather, kSel);
  if (!wUV.defined()) {
    Tensor packed =
        rt::attentionPacked(ctx, q, picked, scale, begin, end, headSplit);
    return packed.view({1, R, packed.dim(1), packed.dim(2)});
  }
  Tensor packed =
      packPartial(ctx, rt::attentionPartial(ctx, q, picked, scale, begin, end),
                  wUV, headSplit);
  return packed.view({1, R, packed.dim(1), packed.dim(2)});
}

Tensor outputGate(Context &ctx, const Tensor &attention, const Tensor &x,
                  const Tensor &wGate) {
  check(wGate.defined() && wGate.rank() == 3,
        "output_gate: w_gate must be [heads, head_dim, hidden]");
  int64_t B = batchOf(x, "output_gate");
  check(attention.defined() && attention.rank() == 2 && attention.dim(0) == B &&
            attention.dim(1) == wGate.dim(0) * wGate.dim(1),
        "output_gate: attention " + attention.str() + " does not match the " +
            std::to_string(wGate.dim(0)) + " heads of " +
            std::to_string(wGate.dim(1)) + " values of w_gate for " +
            std::to_string(B) + " rows");
  Tensor gate = rt::linear(ctx, x, matrixOf(wGate));
  return gatedActivation(ctx, gate, attention, Activation::sigmoidGate());
}

} // namespace cg
} // namespace rt
} // namespace helix
