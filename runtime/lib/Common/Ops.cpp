//===- Ops.cpp - Shape checks, allocation and dispatch of the ops ---------===//

#include "helix/Runtime/Ops.h"
#include "helix/Runtime/Backend.h"
#include "helix/Runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace helix {
namespace rt {

static void need(bool cond, const char *op, const std::string &what) {
  if (!cond)
    throw Error(std::string(op) + ": " + what);
}

static void needF32(const Tensor &t, const char *op, const char *name) {
  need(t.defined(), op, std::string(name) + " is undefined");
  need(t.dtype() == DType::F32, op,
       std::string(name) + " " + t.str() + " must be f32");
}

static void needRank(const Tensor &t, int rank, const char *op,
                     const char *name) {
  needF32(t, op, name);
  need(t.rank() == rank, op,
       std::string(name) + " " + t.str() + " must have rank " +
           std::to_string(rank));
}

/// `t` in f32: resident BF16 / FP8 / FP4 weights are decoded (with their
/// block scales) into a workspace tensor for the kernel that reads them.
static Tensor f32Of(Context &ctx, const Tensor &t) {
  if (!t.defined() || t.dtype() == DType::F32 || t.dtype() == DType::I32)
    return t;
  need(t.dtype() == DType::BF16 || t.scales() != nullptr, "dequantize",
       "tensor " + t.str() + " has no block scales");
  Tensor out = ctx.empty(t.shape());
  ctx.backend().dequantize(t, out);
  return out;
}

Tensor dequantize(Context &ctx, const Tensor &t) { return f32Of(ctx, t); }

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

Activation Activation::fromName(const std::string &name) {
  Activation a;
  if (name == "silu" || name == "swish")
    a.kind = SiLU;
  else if (name == "gelu")
    a.kind = GELU;
  else if (name == "gelu_pytorch_tanh" || name == "gelu_new" ||
           name == "gelu_fast")
    a.kind = GELUTanh;
  else
    throw Error("activation: unsupported hidden_act \"" + name +
                "\" (supported: silu, gelu, gelu_pytorch_tanh, gelu_new)");
  return a;
}

Activation Activation::sigmoidGate() {
  Activation a;
  a.kind = Sigmoid;
  return a;
}

Activation Activation::gptOss(float limit, float alpha) {
  Activation a;
  a.kind = GptOssSwiGLU;
  a.limit = limit;
  a.alpha = alpha;
  return a;
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

Tensor embedding(Context &ctx, const Tensor &tableIn,
                 const std::vector<int64_t> &tokens, int64_t vocabBegin) {
  // A BF16 table is read as stored where the backend reads resident
  // weights (only the looked-up rows move).
  Tensor table = tableIn.dtype() == DType::BF16 && !tableIn.scales() &&
                         ctx.backend().readsResidentWeights()
                     ? tableIn
                     : f32Of(ctx, tableIn);
  need(table.rank() == 2, "embedding",
       "table " + table.str() + " must have rank 2");
  need(!tokens.empty(), "embedding", "no tokens");
  Tensor out = ctx.empty({static_cast<int64_t>(tokens.size()), table.dim(1)});
  ctx.backend().embedding(table, tokens, vocabBegin, out);
  return out;
}

/// The norm weight, checked against x: it covers x's last dimension, or
/// with `prefix` a leading part of it.
static Tensor normWeight(Context &ctx, const Tensor &x, const Tensor &weightIn,
                         const char *op, bool prefix = false) {
  // A backend that reads resident weights reads a BF16 norm weight as
  // stored (no decode kernel per call); anything else is decoded to f32.
  bool asStored = weightIn.defined() && weightIn.dtype() == DType::BF16 &&
                  ctx.backend().readsResidentWeights();
  Tensor weight = asStored ? weightIn : f32Of(ctx, weightIn);
  needF32(x, op, "x");
  if (!asStored)
    needF32(weight, op, "weight");
  need(weight.rank() == 1, op, "weight " + weight.str() + " must have rank 1");
  need(x.rank() >= 1 &&
           (prefix ? weight.dim(0) >= 1 && weight.dim(0) <= x.dim(-1)
                   : x.dim(-1) == weight.dim(0)),
       op,
       "last dimension of x " + x.str() +
           (prefix ? " must hold weight " : " must match weight ") +
           weight.str());
  return weight;
}

Tensor rmsNorm(Context &ctx, const Tensor &x, const Tensor &weightIn,
               float eps) {
  Tensor weight = normWeight(ctx, x, weightIn, "rmsNorm");
  Tensor out = ctx.empty(x.shape());
  ctx.backend().rmsNorm(x, weight, eps, out);
  return out;
}

Tensor rmsNormPrefix(Context &ctx, const Tensor &x, const Tensor &weightIn,
                     float eps) {
  Tensor weight = normWeight(ctx, x, weightIn, "rmsNormPrefix", true);
  Tensor out = ctx.empty(x.shape());
  ctx.backend().rmsNormPrefix(x, weight, eps, out);
  return out;
}

AddNorm addRmsNorm(Context &ctx, const Tensor &a, const Tensor &b,
                   const Tensor &weightIn, float eps) {
  Tensor weight = normWeight(ctx, a, weightIn, "addRmsNorm");
  needF32(b, "addRmsNorm", "b");
  need(a.shape() == b.shape(), "addRmsNorm",
       "a " + a.str() + " and b " + b.str() + " differ");
  AddNorm r{ctx.empty(a.shape()), ctx.empty(a.shape())};
  ctx.backend().addRmsNorm(a, b, weight, eps, r.sum, r.normed);
  return r;
}

void Backend::addRmsNorm(const Tensor &a, const Tensor &b, const Tensor &weight,
                         float eps, Tensor &sum, Tensor &out) {
  add(a, b, sum);
  rmsNorm(sum, weight, eps, out);
}

/// A weight as the backend takes it: as stored when it reads resident
/// formats, else decoded to f32.
static Tensor weightFor(Context &ctx, const Tensor &w, const char *op,
                        const char *name, int rank) {
  if (!ctx.backend().readsResidentWeights() || !w.defined() ||
      w.dtype() == DType::F32) {
    Tensor f = f32Of(ctx, w);
    if (f.defined())
      needRank(f, rank, op, name);
    return f;
  }
  need(w.dtype() == DType::BF16 || w.scales() != nullptr, op,
       std::string(name) + " " + w.str() + " has no block scales");
  need(w.rank() == rank, op,
       std::string(name) + " " + w.str() + " must have rank " +
           std::to_string(rank));
  return w;
}

Tensor linear(Context &ctx, const Tensor &x, const Tensor &weightIn,
              const Tensor *biasIn) {
  Tensor weight = weightFor(ctx, weightIn, "linear", "weight", 2);
  Tensor biasF32 = biasIn ? f32Of(ctx, *biasIn) : Tensor();
  const Tensor *bias = biasIn ? &biasF32 : nullptr;
  needRank(x, 2, "linear", "x");
  need(x.dim(1) == weight.dim(1), "linear",
       "x " + x.str() + " and weight " + weight.str() +
           " disagree on the input dimension");
  if (bias && bias->defined()) {
    needRank(*bias, 1, "linear", "bias");
    need(bias->dim(0) == weight.dim(0), "linear",
         "bias " + bias->str() + " does not match weight " + weight.str());
  } else {
    bias = nullptr;
  }
  Tensor out = ctx.empty({x.dim(0), weight.dim(0)});
  ctx.backend().linear(x, weight, bias, out);
  return out;
}

std::vector<Tensor> linearMany(Context &ctx, const Tensor &x,
                               const std::vector<Tensor> &weightsIn,
                               const std::vector<const Tensor *> &biasesIn) {
  need(!weightsIn.empty() && biasesIn.size() == weightsIn.size(), "linearMany",
       "expected one bias (or none) per weight");
  needRank(x, 2, "linearMany", "x");
  std::vector<Tensor> weights, biases, outs;
  std::vector<const Tensor *> biasPtrs;
  for (size_t i = 0; i < weightsIn.size(); ++i) {
    Tensor w = weightFor(ctx, weightsIn[i], "linearMany", "weight", 2);
    need(x.dim(1) == w.dim(1), "linearMany",
         "x " + x.str() + " and weight " + w.str() +
             " disagree on the input dimension");
    Tensor b = biasesIn[i] ? f32Of(ctx, *biasesIn[i]) : Tensor();
    if (b.defined()) {
      needRank(b, 1, "linearMany", "bias");
      need(b.dim(0) == w.dim(0), "linearMany",
           "bias " + b.str() + " does not match weight " + w.str());
    }
    weights.push_back(w);
    biases.push_back(b);
    outs.push_back(ctx.empty({x.dim(0), w.dim(0)}));
  }
  for (const Tensor &b : biases)
    biasPtrs.push_back(b.defined() ? &b : nullptr);
  ctx.backend().linearMany(x, weights, biasPtrs, outs);
  return outs;
}

Tensor headMatmul(Context &ctx, const Tensor &x, const Tensor &wIn,
                  bool transposeW) {
  // A backend that reads resident weights takes them as stored (as
  // linear's weights); otherwise they are decoded to f32 here.
  bool asStored = wIn.defined() && wIn.dtype() != DType::F32 &&
                  ctx.backend().readsResidentWeights();
  Tensor w = asStored ? wIn : f32Of(ctx, wIn);
  needRank(x, 3, "headMatmul", "x");
  if (!asStored)
    needF32(w, "headMatmul", "w");
  need(w.rank() == 3, "headMatmul", "w " + w.str() + " must have rank 3");
  int64_t a = transposeW ? w.dim(1) : w.dim(2);
  int64_t b = transposeW ? w.dim(2) : w.dim(1);
  need(x.dim(1) == w.dim(0) && x.dim(2) == a, "headMatmul",
       "x " + x.str() + " does not match w " + w.str() +
           (transposeW ? " (transposed)" : ""));
  Tensor out = ctx.empty({x.dim(0), x.dim(1), b});
  ctx.backend().headMatmul(x, w, transposeW, out);
  return out;
}

/// Checks applyRope's arguments; returns the sequence length the
/// positions need (the RoPE table's).
static int64_t checkRope(const Tensor &x, const std::vector<int64_t> &positions,
                         const Rope &rope, int64_t offset, const char *op) {
  needRank(x, 3, op, "x");
  int64_t rd = rope.config().rotaryDim;
  need(static_cast<int64_t>(positions.size()) == x.dim(0), op,
       std::to_string(positions.size()) + " positions for x " + x.str());
  need(offset >= 0 && offset + rd <= x.dim(2), op,
       "dims [" + std::to_string(offset) + ", " + std::to_string(offset + rd) +
           ") outside x " + x.str());
  int64_t seqLen = 0;
  for (int64_t p : positions) {
    need(p >= 0, op, "negative position");
    seqLen = std::max(seqLen, p + 1);
  }
  return seqLen;
}

void applyRope(Context &ctx, Tensor &x, const std::vector<int64_t> &positions,
               const Rope &rope, int64_t offset) {
  int64_t seqLen = checkRope(x, positions, rope, offset, "applyRope");
  ctx.backend().rope(x, positions, rope.invFreq(seqLen), rope.attentionFactor(),
                     offset, rope.config().interleaved);
}

static void checkKvAppend(const KVCache &cache, const Tensor &k,
                          const Tensor *&v, const std::vector<int64_t> &slots);

void ropeKvAppend(Context &ctx, Tensor &q, Tensor &k, const Tensor *v,
                  KVCache *cache, const std::vector<int64_t> &slots,
                  const std::vector<int64_t> &positions, const Rope &rope,
                  int64_t offset) {
  int64_t seqLen = checkRope(q, positions, rope, offset, "ropeKvAppend");
  checkRope(k, positions, rope, offset, "ropeKvAppend");
  need(q.dim(0) == k.dim(0) && q.dim(2) == k.dim(2), "ropeKvAppend",
       "q " + q.str() + " and k " + k.str() + " differ in batch or head dim");
  if (cache)
    checkKvAppend(*cache, k, v, slots);
  ctx.backend().ropeKvAppend(q, k, v, cache, slots, positions,
                             rope.invFreq(seqLen), rope.attentionFactor(),
                             offset, rope.config().interleaved);
}

void Backend::ropeKvAppend(Tensor &q, Tensor &k, const Tensor *v,
                           KVCache *cache, const std::vector<int64_t> &slots,
                           const std::vector<int64_t> &positions,
                           const std::vector<float> &invFreq,
                           float attentionFactor, int64_t offset,
                           bool interleaved) {
  rope(q, positions, invFreq, attentionFactor, offset, interleaved);
  rope(k, positions, invFreq, attentionFactor, offset, interleaved);
  if (cache)
    kvAppend(*cache, k, v, slots);
}

void kvAppend(Context &ctx, KVCache &cache, const Tensor &k, const Tensor *v,
              const std::vector<int64_t> &slots) {
  checkKvAppend(cache, k, v, slots);
  ctx.backend().kvAppend(cache, k, v, slots);
}

/// kvAppend's checks; v becomes null for a value-in-key cache.
static void checkKvAppend(const KVCache &cache, const Tensor &k,
                          const Tensor *&v, const std::vector<int64_t> &slots) {
  const KVCacheConfig &c = cache.config;
  needRank(k, 3, "kvAppend", "k");
  need(k.dim(0) == c.batch && k.dim(1) == c.heads && k.dim(2) == c.keyDim,
       "kvAppend",
       "k " + k.str() + " does not match the cache [batch " +
           std::to_string(c.batch) + ", heads " + std::to_string(c.heads) +
           ", keyDim " + std::to_string(c.keyDim) + "]");
  if (c.valueInKey) {
    need(v == nullptr || !v->defined(), "kvAppend",
         "the cache keeps values in its keys (MLA); pass no v");
    v = nullptr;
  } else {
    need(v && v->defined(), "kvAppend", "v is required");
    needRank(*v, 3, "kvAppend", "v");
    need(v->dim(0) == c.batch && v->dim(1) == c.heads &&
             v->dim(2) == c.valueDim,
         "kvAppend", "v " + v->str() + " does not match the cache");
  }
  need(static_cast<int64_t>(slots.size()) == c.batch, "kvAppend",
       std::to_string(slots.size()) + " slots for a batch of " +
           std::to_string(c.batch));
  for (size_t r = 0; r < slots.size(); ++r)
    need(slots[r] >= -1 && slots[r] < c.capacity, "kvAppend",
         "row " + std::to_string(r) + ": slot " + std::to_string(slots[r]) +
             " outside the local capacity " + std::to_string(c.capacity));
}

static void checkAttention(const Tensor &q, const KVCache &cache,
                           const std::vector<int64_t> &slotBegin,
                           const std::vector<int64_t> &slotEnd) {
  const KVCacheConfig &c = cache.config;
  needRank(q, 3, "attentionPartial", "q");
  need(q.dim(0) == c.batch, "attentionPartial",
       "q " + q.str() + " and the cache disagree on the batch (" +
           std::to_string(c.batch) + ")");
  need(q.dim(2) == c.keyDim, "attentionPartial",
       "q " + q.str() + " head dim differs from the cache keyDim " +
           std::to_string(c.keyDim));
  need(q.dim(1) % c.heads == 0, "attentionPartial",
       std::to_string(q.dim(1)) + " query heads are not a multiple of " +
           std::to_string(c.heads) + " KV heads");
  need(static_cast<int64_t>(slotBegin.size()) == c.batch &&
           static_cast<int64_t>(slotEnd.size()) == c.batch,
       "attentionPartial", "slot ranges must have one entry per row");
  for (int64_t r = 0; r < c.batch; ++r)
    need(0 <= slotBegin[r] && slotBegin[r] <= slotEnd[r] &&
             slotEnd[r] <= c.capacity,
         "attentionPartial",
         "row " + std::to_string(r) + ": slots [" +
             std::to_string(slotBegin[r]) + ", " + std::to_string(slotEnd[r]) +
             ") outside the local capacity " + std::to_string(c.capacity));
}

AttentionPartial attentionPartial(Context &ctx, const Tensor &q,
                                  const KVCache &cache, float scale,
                                  const std::vector<int64_t> &slotBegin,
                                  const std::vector<int64_t> &slotEnd) {
  checkAttention(q, cache, slotBegin, slotEnd);
  const KVCacheConfig &c = cache.config;
  AttentionPartial res;
  res.out = ctx.empty({c.batch, q.dim(1), c.valueDim});
  res.lse = ctx.empty({c.batch, q.dim(1)});
  ctx.backend().attention(q, cache, scale, slotBegin, slotEnd, res.out, res.lse,
                          0);
  return res;
}

Tensor attentionPacked(Context &ctx, const Tensor &q, const KVCache &cache,
                       float scale, const std::vector<int64_t> &slotBegin,
                       const std::vector<int64_t> &slotEnd, int64_t headSplit) {
  checkAttention(q, cache, slotBegin, slotEnd);
  const KVCacheConfig &c = cache.config;
  need(headSplit >= 1 && c.valueDim % headSplit == 0, "attentionPacked",
       "head_split " + std::to_string(headSplit) +
           " does not divide the value dimension " +
           std::to_string(c.valueDim));
  int64_t piece = c.valueDim / headSplit;
  Tensor packed = ctx.empty({c.batch, q.dim(1) * headSplit, piece + 1});
  Tensor none;
  ctx.backend().attention(q, cache, scale, slotBegin, slotEnd, packed, none,
                          piece);
  return packed;
}

static Tensor combineIn(Context &ctx, const Tensor &values, const Tensor &lse,
                        const PartialsLayout &layout, const Tensor *sinksIn) {
  Tensor sinksF32 = sinksIn ? f32Of(ctx, *sinksIn) : Tensor();
  const Tensor *sinks = sinksIn ? &sinksF32 : nullptr;
  if (sinks && sinks->defined()) {
    needRank(*sinks, 1, "lseCombine", "sinks");
    need(sinks->dim(0) == layout.heads, "lseCombine",
         "sinks " + sinks->str() + " must have one entry per head (" +
             std::to_string(layout.heads) + ")");
  } else {
    sinks = nullptr;
  }
  Tensor out = ctx.empty({layout.batch, layout.heads, layout.dim});
  ctx.backend().lseCombine(values, lse, layout, sinks, out);
  return out;
}

Tensor lseCombine(Context &ctx, const Tensor &partials, const Tensor &lse,
                  const Tensor *sinks) {
  needRank(partials, 4, "lseCombine", "partials");
  needRank(lse, 3, "lseCombine", "lse");
  need(lse.dim(0) == partials.dim(0) && lse.dim(1) == partials.dim(1) &&
           lse.dim(2) == partials.dim(2),
       "lseCombine",
       "lse " + lse.str() + " does not match partials " + partials.str() +
           " ([B, S, h] vs [B, S, h, d])");
  needF32(partials, "lseCombine", "partials");
  needF32(lse, "lseCombine", "lse");
  return combineIn(ctx, partials, lse,
                   PartialsLayout::separate(partials.dim(0), partials.dim(1),
                                            partials.dim(2), partials.dim(3)),
                   sinks);
}

Tensor lseCombinePacked(Context &ctx, const Tensor &packed,
                        const Tensor *sinks) {
  needRank(packed, 4, "lseCombinePacked", "packed");
  needF32(packed, "lseCombinePacked", "packed");
  int64_t S = packed.dim(0), B = packed.dim(1), H = packed.dim(2),
          d = packed.dim(3) - 1;
  need(d >= 1, "lseCombinePacked",
       "packed " + packed.str() + " holds no values before its LSE column");
  int64_t n = packed.numel();
  Tensor flat = packed.view({n});
  return combineIn(ctx, flat, flat.rows(d, n),
                   PartialsLayout::packed(S, B, H, d), sinks);
}

Tensor gatedActivation(Context &ctx, const Tensor &gate, const Tensor &up,
                       const Activation &act) {
  needF32(gate, "gatedActivation", "gate");
  needF32(up, "gatedActivation", "up");
  // Or one gate value per row of up ([.., 1]), broadcast over the row.
  bool perRow = gate.rank() == up.rank() && up.rank() >= 1 &&
                gate.dim(-1) == 1 && gate.numel() * up.dim(-1) == up.numel();
  need(gate.shape() == up.shape() || perRow, "gatedActivation",
       "gate " + gate.str() + " and up " + up.str() +
           " differ (a gate broadcasts with one value per row)");
  Tensor out = ctx.empty(up.shape());
  ctx.backend().gatedActivation(gate, up, act, out);
  return out;
}

/// The router configuration's checks for `experts` experts.
static void checkRouter(const RouterConfig &cfg, int64_t experts) {
  int64_t k = cfg.topK, G = cfg.numGroups;
  need(k >= 1 && k <= experts, "moeRoute",
       "top-k " + std::to_string(k) + " outside 1.." + std::to_string(experts));
  need(G >= 1 && experts % G == 0 && cfg.topkGroups >= 1 && cfg.topkGroups <= G,
       "moeRoute",
       "bad grouping: " + std::to_string(experts) + " experts, n_group " +
           std::to_string(G) + ", topk_group " +
           std::to_string(cfg.topkGroups));
}

void routeHost(const float *logits, int64_t batch, int64_t experts,
               const RouterConfig &cfg, const float *bias,
               std::vector<int32_t> &indices, std::vector<float> &weights) {
  checkRouter(cfg, experts);
  int64_t k = cfg.topK, G = cfg.numGroups;
  indices.assign(batch * k, 0);
  weights.assign(batch * k, 0.0f);
  std::vector<double> scores(experts), choice(experts);
  std::vector<int64_t> order(experts);
  for (int64_t b = 0; b < batch; ++b) {
    const float *l = logits + b * experts;
    if (cfg.scoring == RouterConfig::Softmax) {
      double m = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t e = 0; e < experts; ++e)
        m = std::max(m, static_cast<double>(l[e]));
      for (int64_t e = 0; e < experts; ++e)
        sum += scores[e] = std::exp(l[e] - m);
      for (int64_t e = 0; e < experts; ++e)
        scores[e] /= sum;
    } else {
      for (int64_t e = 0; e < experts; ++e)
        scores[e] = 1.0 / (1.0 + std::exp(-static_cast<double>(l[e])));
    }
    for (int64_t e = 0; e < experts; ++e)
      choice[e] = scores[e] + (bias ? bias[e] : 0.0);
    if (G > 1) {
      int64_t per = experts / G;
      std::vector<double> groupScore(G);
      for (int64_t g = 0; g < G; ++g) {
        std::vector<double> v(choice.begin() + g * per,
                              choice.begin() + (g + 1) * per);
        std::sort(v.begin(), v.end(), std::greater<double>());
        groupScore[g] = cfg.groupScore == RouterConfig::GroupMax || per < 2
                            ? v[0]
                            : v[0] + v[1];
      }
      std::vector<int64_t> gorder(G);
      std::iota(gorder.begin(), gorder.end(), 0);
      std::stable_sort(gorder.begin(), gorder.end(), [&](int64_t x, int64_t y) {
        return groupScore[x] > groupScore[y];
      });
      std::vector<bool> keep(G, false);
      for (int64_t i = 0; i < cfg.topkGroups; ++i)
        keep[gorder[i]] = true;
      for (int64_t e = 0; e < experts; ++e)
        if (!keep[e / per])
          choice[e] = 0.0; // as Hugging Face's masked_fill(..., 0.0)
    }
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) {
      return choice[x] > choice[y];
    });
    double sum = 0;
    for (int64_t i = 0; i < k; ++i)
      sum += scores[order[i]];
    for (int64_t i = 0; i < k; ++i) {
      double w = scores[order[i]];
      if (cfg.normTopkProb)
        w /= sum + 1e-20;
      indices[b * k + i] = static_cast<int32_t>(order[i]);
      weights[b * k + i] = static_cast<float>(w * cfg.routedScalingFactor);
    }
  }
}

Routing moeRoute(Context &ctx, const Tensor &logits, const RouterConfig &config,
                 const Tensor *correctionBiasIn) {
  Tensor biasF32 = correctionBiasIn ? f32Of(ctx, *correctionBiasIn) : Tensor();
  const Tensor *correctionBias = correctionBiasIn ? &biasF32 : nullptr;
  needRank(logits, 2, "moeRoute", "logits");
  int64_t B = logits.dim(0), E = logits.dim(1);
  checkRouter(config, E);
  if (correctionBias && correctionBias->defined()) {
    needRank(*correctionBias, 1, "moeRoute", "correctionBias");
    need(correctionBias->dim(0) == E, "moeRoute",
         "correction bias " + correctionBias->str() + " must have " +
             std::to_string(E) + " entries");
  } else {
    correctionBias = nullptr;
  }
  Routing r;
  r.indices = ctx.empty({B, config.topK}, DType::I32);
  r.weights = ctx.empty({B, config.topK});
  ctx.backend().moeRoute(logits, config, correctionBias, r);
  return r;
}

void Backend::moeRoute(const Tensor &logits, const RouterConfig &config,
                       const Tensor *correctionBias, Routing &out) {
  int64_t B = logits.dim(0), E = logits.dim(1);
  std::vector<float> l(B * E), bias(correctionBias ? E : 0);
  download(l.data(), logits.f32(), l.size() * sizeof(float));
  if (correctionBias)
    download(bias.data(), correctionBias->f32(), bias.size() * sizeof(float));
  std::vector<int32_t> idx;
  std::vector<float> w;
  routeHost(l.data(), B, E, config, correctionBias ? bias.data() : nullptr, idx,
            w);
  upload(out.indices.raw(), idx.data(), idx.size() * sizeof(int32_t));
  upload(out.weights.raw(), w.data(), w.size() * sizeof(float));
}

void Backend::moeExpertsRouted(const Tensor &x, const Routing &routing,
                               const ExpertWeights &experts,
                               int64_t firstExpert, const Activation &act,
                               bool addDownBias, Tensor &out) {
  std::vector<int32_t> idx(routing.indices.numel());
  std::vector<float> wt(routing.weights.numel());
  download(idx.data(), routing.indices.raw(), idx.size() * sizeof(int32_t));
  download(wt.data(), routing.weights.f32(), wt.size() * sizeof(float));
  moeExperts(x, idx, wt, routing.indices.dim(1), experts, firstExpert, act,
             addDownBias, out);
}

Tensor moeExperts(Context &ctx, const Tensor &x, const Routing &routing,
                  const ExpertWeights &resident, int64_t firstExpert,
                  const Activation &act, bool addDownBias) {
  ExpertWeights w;
  w.gate = weightFor(ctx, resident.gate, "moeExperts", "gate", 3);
  w.up = weightFor(ctx, resident.up, "moeExperts", "up", 3);
  w.down = weightFor(ctx, resident.down, "moeExperts", "down", 3);
  w.gateBias = f32Of(ctx, resident.gateBias);
  w.upBias = f32Of(ctx, resident.upBias);
  w.downBias = f32Of(ctx, resident.downBias);
  needRank(x, 2, "moeExperts", "x");
  int64_t E = w.gate.dim(0), I = w.gate.dim(1), H = x.dim(1);
  need(w.gate.dim(2) == H && w.up.shape() == w.gate.shape() &&
           w.down.dim(0) == E && w.down.dim(1) == H && w.down.dim(2) == I,
       "moeExperts",
       "expert weights gate " + w.gate.str() + ", up " + w.up.str() +
           ", down " + w.down.str() + " do not fit x " + x.str());
  if (w.gateBias.defined() || w.upBias.defined())
    need(w.gateBias.defined() && w.upBias.defined() &&
             w.gateBias.shape() == std::vector<int64_t>{E, I} &&
             w.upBias.shape() == std::vector<int64_t>{E, I},
         "moeExperts", "gate/up biases must both be [E_local, I_local]");
  if (w.downBias.defined())
    need(w.downBias.shape() == std::vector<int64_t>{E, H}, "moeExperts",
         "down bias " + w.downBias.str() + " must be [E_local, H]");
  need(routing.indices.defined() && routing.indices.dtype() == DType::I32 &&
           routing.indices.rank() == 2 && routing.indices.dim(0) == x.dim(0),
       "moeExperts", "routing indices must be i32 [B, k]");
  need(routing.weights.defined() &&
           routing.weights.shape() == routing.indices.shape(),
       "moeExperts", "routing weights must match the indices");
  need(firstExpert >= 0, "moeExperts", "negative first expert");
  Tensor out = ctx.empty({x.dim(0), H});
  ctx.backend().moeExpertsRouted(x, routing, w, firstExpert, act, addDownBias,
                                 out);
  return out;
}

//===----------------------------------------------------------------------===//
// Long-context layers
//===----------------------------------------------------------------------===//

/// A layer's small weight (convolution taps, gates, norm weights) as the
/// backend takes it: BF16 as stored where it reads resident weights, else
/// f32; of `shape` (or, with `alt`, of that shape).
static Tensor smallWeight(Context &ctx, const Tensor &wIn, const char *op,
                          const char *name, const std::vector<int64_t> &shape,
                          const std::vector<int64_t> &alt = {}) {
  need(wIn.defined(), op, std::string(name) + " is undefined");
  bool asStored = wIn.dtype() == DType::BF16 && !wIn.scales() &&
                  ctx.backend().readsResidentWeights();
  Tensor w = asStored ? wIn : f32Of(ctx, wIn);
  if (!asStored)
    needF32(w, op, name);
  need(w.shape() == shape || (!alt.empty() && w.shape() == alt), op,
       std::string(name) + " " + w.str() + " must be " + shapeString(shape) +
           (alt.empty() ? "" : " or " + shapeString(alt)));
  return w.view(shape);
}

/// Positions of a batch of `rows`: one each, none negative.
static void needPositions(const std::vector<int64_t> &positions, int64_t rows,
                          const char *op) {
  need(static_cast<int64_t>(positions.size()) == rows, op,
       std::to_string(positions.size()) + " positions for " +
           std::to_string(rows) + " rows");
  for (int64_t p : positions)
    need(p >= 0, op, "negative position " + std::to_string(p));
}

Tensor gatedDeltaNetStep(Context &ctx, const Tensor &proj, const Tensor &ba,
                         const GatedDeltaNetWeights &wIn, Tensor &state,
                         const std::vector<int64_t> &positions,
                         const GatedDeltaNetDims &d, float eps) {
  const char *op = "gatedDeltaNetStep";
  need(d.keyHeads >= 1 && d.valueHeads >= 1 && d.keyDim >= 1 &&
           d.valueDim >= 1 && d.convKernel >= 1,
       op,
       "key heads, value heads, their dims and the convolution kernel must "
       "be positive");
  need(d.valueHeads % d.keyHeads == 0, op,
       std::to_string(d.valueHeads) + " value heads are not a multiple of " +
           std::to_string(d.keyHeads) + " key heads");
  int64_t r = d.ratio(), Hk = d.keyHeads, Hv = d.valueHeads;
  needRank(proj, 2, op, "proj");
  int64_t B = proj.dim(0);
  int64_t perHead = 2 * d.keyDim + 2 * r * d.valueDim;
  need(proj.dim(1) == Hk * perHead, op,
       "proj " + proj.str() + " must hold " + std::to_string(Hk) +
           " key heads of q, k, v, z (" + std::to_string(perHead) +
           " values each)");
  needRank(ba, 2, op, "ba");
  need(ba.dim(0) == B && ba.dim(1) == Hk * 2 * r, op,
       "ba " + ba.str() + " must be [" + std::to_string(B) + ", " +
           std::to_string(Hk * 2 * r) + "] (b and a of every value head)");
  int64_t K = d.convKernel, qkC = Hk * d.keyDim, vC = Hv * d.valueDim;
  GatedDeltaNetWeights w;
  w.convQ = smallWeight(ctx, wIn.convQ, op, "convQ", {qkC, K}, {qkC, 1, K});
  w.convK = smallWeight(ctx, wIn.convK, op, "convK", {qkC, K}, {qkC, 1, K});
  w.convV = smallWeight(ctx, wIn.convV, op, "convV", {vC, K}, {vC, 1, K});
  w.aLog = smallWeight(ctx, wIn.aLog, op, "aLog", {Hv});
  w.dtBias = smallWeight(ctx, wIn.dtBias, op, "dtBias", {Hv});
  w.normWeight =
      smallWeight(ctx, wIn.normWeight, op, "normWeight", {d.valueDim});
  needRank(state, 2, op, "state");
  need(state.dim(0) == B && state.dim(1) == d.stateValues(), op,
       "state " + state.str() + " must be [" + std::to_string(B) + ", " +
           std::to_string(d.stateValues()) + "] (" + std::to_string(Hv) +
           " states of " + std::to_string(d.keyDim) + " x " +
           std::to_string(d.valueDim) + ", then " +
           std::to_string(d.convChannels()) + " channels of " +
           std::to_string(K - 1) + " convolution inputs)");
  needPositions(positions, B, op);
  Tensor out = ctx.empty({B, Hv * d.valueDim});
  ctx.backend().gatedDeltaNet(proj, ba, w, state, positions, d, eps, out);
  return out;
}

/// The slots of an index cache [B, capacity (headDim + 1)].
static int64_t indexCapacity(const Tensor &cache, int64_t B, int64_t headDim,
                             const char *op) {
  needRank(cache, 2, op, "index cache");
  int64_t per = indexSlotValues(headDim);
  need(cache.dim(0) == B && cache.dim(1) % per == 0, op,
       "index cache " + cache.str() + " must be [" + std::to_string(B) +
           ", capacity x " + std::to_string(per) + "] (a key of " +
           std::to_string(headDim) + " and its position per slot)");
  return cache.dim(1) / per;
}

void indexerPrepare(Context &ctx, Tensor &q, const Tensor &key,
                    const Tensor &normWeightIn, const Tensor &normBiasIn,
                    float normEps, Tensor &weights, float weightScale,
                    Tensor &cache, const std::vector<int64_t> &slots,
                    const std::vector<int64_t> &positions, const Rope &rope) {
  const char *op = "indexerPrepare";
  needRank(q, 3, op, "q");
  int64_t B = q.dim(0), heads = q.dim(1), D = q.dim(2);
  needRank(key, 2, op, "key");
  need(key.dim(0) == B && key.dim(1) == D, op,
       "key " + key.str() + " does not match q " + q.str() + " ([B, headDim])");
  needRank(weights, 2, op, "weights");
  need(weights.dim(0) == B && weights.dim(1) == heads, op,
       "weights " + weights.str() + " must have one per head of q " + q.str());
  Tensor nw = smallWeight(ctx, normWeightIn, op, "normWeight", {D});
  Tensor nb = smallWeight(ctx, normBiasIn, op, "normBias", {D});
  int64_t capacity = indexCapacity(cache, B, D, op);
  int64_t rd = rope.config().rotaryDim;
  need(rd <= D, op,
       "rotary dim " + std::to_string(rd) + " exceeds the head dim " +
           std::to_string(D));
  needPositions(positions, B, op);
  need(static_cast<int64_t>(slots.size()) == B, op,
       std::to_string(slots.size()) + " slots for " + std::to_string(B) +
           " rows");
  for (size_t b = 0; b < slots.size(); ++b)
    need(slots[b] >= -1 && slots[b] < capacity, op,
         "row " + std::to_string(b) + ": slot " + std::to_string(slots[b]) +
             " outside the index cache's " + std::to_string(capacity) +
             " slots");
  int64_t seqLen = 0;
  for (int64_t p : positions)
    seqLen = std::max(seqLen, p + 1);
  ctx.backend().indexerPrepare(
      q, key, nw, nb, normEps, weights, weightScale, cache, slots, positions,
      rope.invFreq(seqLen), rope.attentionFactor(), rope.config().interleaved);
}

Tensor indexerTopK(Context &ctx, const Tensor &q, const Tensor &weights,
                   const Tensor &cache, const std::vector<int64_t> &begin,
                   const std::vector<int64_t> &end, int64_t topK) {
  const char *op = "indexerTopK";
  needRank(q, 3, op, "q");
  int64_t B = q.dim(0), heads = q.dim(1), D = q.dim(2);
  needRank(weights, 2, op, "weights");
  need(weights.dim(0) == B && weights.dim(1) == heads, op,
       "weights " + weights.str() + " must have one per head of q " + q.str());
  int64_t capacity = indexCapacity(cache, B, D, op);
  need(topK >= 1, op, "top-k " + std::to_string(topK) + " must be positive");
  need(static_cast<int64_t>(begin.size()) == B &&
           static_cast<int64_t>(end.size()) == B,
       op, "entry ranges must have one entry per row");
  for (int64_t b = 0; b < B; ++b)
    need(begin[b] >= 0 && begin[b] <= end[b] && end[b] - begin[b] <= capacity,
         op,
         "row " + std::to_string(b) + ": entries [" + std::to_string(begin[b]) +
             ", " + std::to_string(end[b]) + ") are more than the " +
             std::to_string(capacity) + " slots of the index cache");
  Tensor out = ctx.empty({B, topK, 2});
  ctx.backend().indexerTopK(q, weights, cache, begin, end, topK, out);
  return out;
}

std::vector<int64_t> topkMerge(Context &ctx, const Tensor &candidates,
                               int64_t topK) {
  const char *op = "topkMerge";
  needRank(candidates, 4, op, "candidates");
  need(candidates.dim(3) == 2, op,
       "candidates " + candidates.str() +
           " must be [ranks, B, k, 2] (score, position)");
  need(topK >= 1, op, "top-k " + std::to_string(topK) + " must be positive");
  int64_t P = candidates.dim(0), B = candidates.dim(1), k = candidates.dim(2);
  std::vector<float> c = ctx.download(candidates);
  std::vector<int64_t> out(B * topK, -1);
  std::vector<std::pair<float, int64_t>> row;
  for (int64_t b = 0; b < B; ++b) {
    row.clear();
    for (int64_t p = 0; p < P; ++p)
      for (int64_t i = 0; i < k; ++i) {
        const float *e = c.data() + ((p * B + b) * k + i) * 2;
        if (e[1] >= 0)
          row.push_back({e[0], static_cast<int64_t>(e[1])});
      }
    std::sort(row.begin(), row.end(), [](const auto &x, const auto &y) {
      return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    for (int64_t i = 0; i < topK && i < static_cast<int64_t>(row.size()); ++i)
      out[b * topK + i] = row[i].second;
  }
  return out;
}

KVCache kvGather(Context &ctx, const KVCache &src,
                 const std::vector<int64_t> &slots, int64_t capacity) {
  const KVCacheConfig &c = src.config;
  need(capacity >= 1, "kvGather",
       "capacity " + std::to_string(capacity) + " must be positive");
  need(static_cast<int64_t>(slots.size()) == c.batch * capacity, "kvGather",
       std::to_string(slots.size()) + " slots for " + std::to_string(c.batch) +
           " rows of " + std::to_string(capacity));
  for (size_t i = 0; i < slots.size(); ++i)
    need(slots[i] >= -1 && slots[i] < c.capacity, "kvGather",
         "row " + std::to_string(i / capacity) + ": slot " +
             std::to_string(slots[i]) + " outside the " +
             std::to_string(c.capacity) + " slots of the cache");
  KVCache dst;
  dst.config = c;
  dst.config.capacity = capacity;
  int64_t B = c.batch, H = c.heads;
  dst.keys = ctx.empty({B, capacity, H, c.keyDim}, c.dtype);
  if (!c.valueInKey)
    dst.values = ctx.empty({B, capacity, H, c.valueDim}, c.dtype);
  if (src.keyScales.defined())
    dst.keyScales =
        ctx.empty({B, capacity, H, fmt::kvScalesPerHead(c.keyDim)}, DType::U8);
  if (src.valueScales.defined())
    dst.valueScales = ctx.empty(
        {B, capacity, H, fmt::kvScalesPerHead(c.valueDim)}, DType::U8);
  ctx.backend().kvGather(src, slots, dst);
  return dst;
}

Tensor add(Context &ctx, const Tensor &a, const Tensor &b) {
  needF32(a, "add", "a");
  needF32(b, "add", "b");
  need(a.shape() == b.shape(), "add",
       "a " + a.str() + " and b " + b.str() + " differ");
  Tensor out = ctx.empty(a.shape());
  ctx.backend().add(a, b, out);
  return out;
}

Tensor logAddExp(Context &ctx, const Tensor &a, const Tensor &b) {
  needF32(a, "logAddExp", "a");
  needF32(b, "logAddExp", "b");
  need(a.shape() == b.shape(), "logAddExp",
       "a " + a.str() + " and b " + b.str() + " differ");
  Tensor out = ctx.empty(a.shape());
  ctx.backend().logAddExp(a, b, out);
  return out;
}

void Backend::logAddExp(const Tensor &a, const Tensor &b, Tensor &out) {
  std::vector<float> x(a.numel()), y(b.numel());
  download(x.data(), a.f32(), x.size() * sizeof(float));
  download(y.data(), b.f32(), y.size() * sizeof(float));
  const float ninf = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == ninf || y[i] == ninf) {
      x[i] = x[i] == ninf ? y[i] : x[i];
      continue;
    }
    double m = std::max(x[i], y[i]);
    x[i] = static_cast<float>(
        m + std::log(std::exp(x[i] - m) + std::exp(y[i] - m)));
  }
  upload(out.raw(), x.data(), x.size() * sizeof(float));
}

void addInPlace(Context &ctx, Tensor &a, const Tensor &b) {
  needF32(a, "addInPlace", "a");
  needF32(b, "addInPlace", "b");
  need(a.shape() == b.shape(), "addInPlace",
       "a " + a.str() + " and b " + b.str() + " differ");
  ctx.backend().add(a, b, a);
}

Tensor swapAxes01(Context &ctx, const Tensor &x) {
  needRank(x, 3, "swapAxes01", "x");
  Tensor out = ctx.empty({x.dim(1), x.dim(0), x.dim(2)});
  ctx.backend().swapAxes01(x, x.dim(0), x.dim(1), x.dim(2), out);
  return out;
}

Tensor sliceLast(Context &ctx, const Tensor &x, int64_t begin, int64_t count) {
  needF32(x, "sliceLast", "x");
  need(x.rank() >= 1 && begin >= 0 && count >= 0 && begin + count <= x.dim(-1),
       "sliceLast",
       "[" + std::to_string(begin) + ", " + std::to_string(begin + count) +
           ") outside the last dimension of " + x.str());
  std::vector<int64_t> shape = x.shape();
  shape.back() = count;
  Tensor out = ctx.empty(shape);
  int64_t cols = x.dim(-1);
  ctx.backend().sliceColumns(x, x.numel() / (cols ? cols : 1), cols, begin,
                             count, out);
  return out;
}

Tensor concatLast(Context &ctx, const Tensor &a, const Tensor &b) {
  needF32(a, "concatLast", "a");
  needF32(b, "concatLast", "b");
  std::vector<int64_t> sa = a.shape(), sb = b.shape();
  need(a.rank() >= 1 && a.rank() == b.rank() &&
           std::equal(sa.begin(), sa.end() - 1, sb.begin()),
       "concatLast",
       "a " + a.str() + " and b " + b.str() +
           " differ before the last dimension");
  std::vector<int64_t> shape = sa;
  shape.back() = sa.back() + sb.back();
  Tensor out = ctx.empty(shape);
  int64_t rows = a.numel() / (sa.back() ? sa.back() : 1);
  if (sa.back() == 0)
    rows = b.numel() / (sb.back() ? sb.back() : 1);
  ctx.backend().concatColumns(a, b, rows, sa.back(), sb.back(), out);
  return out;
}

Tensor sumLeading(Context &ctx, const Tensor &x) {
  needF32(x, "sumLeading", "x");
  need(x.rank() >= 2, "sumLeading", "x " + x.str() + " needs rank >= 2");
  std::vector<int64_t> shape(x.shape().begin() + 1, x.shape().end());
  Tensor out = ctx.empty(shape);
  ctx.backend().sumLeading(x, x.dim(0), shapeNumel(shape), out);
  return out;
}

Tensor clone(Context &ctx, const Tensor &x) {
  need(x.defined(), "clone", "undefined tensor");
  Tensor out = ctx.empty(x.shape(), x.dtype());
  if (x.bytes())
    ctx.backend().copy(out.raw(), x.raw(), x.bytes());
  return out;
}

void copyInto(Context &ctx, Tensor &dst, const Tensor &src) {
  need(dst.defined() && src.defined() && dst.shape() == src.shape() &&
           dst.dtype() == src.dtype(),
       "copyInto", "dst " + dst.str() + " and src " + src.str() + " differ");
  if (src.bytes())
    ctx.backend().copy(dst.raw(), src.raw(), src.bytes());
}

std::vector<int64_t> argmax(Context &ctx, const Tensor &logits) {
  needRank(logits, 2, "argmax", "logits");
  std::vector<float> l = ctx.download(logits);
  int64_t B = logits.dim(0), V = logits.dim(1);
  need(V > 0, "argmax", "empty vocabulary");
  std::vector<int64_t> out(B);
  for (int64_t b = 0; b < B; ++b) {
    const float *row = l.data() + b * V;
    int64_t best = 0;
    for (int64_t v = 1; v < V; ++v)
      if (row[v] > row[best])
        best = v;
    out[b] = best;
  }
  return out;
}

} // namespace rt
} // namespace helix
