//===- CodegenOps.cpp - Compute and layout ops of rank IR -----------------===//
//
// The rank-IR compute ops (norms, projections, FFNs, MoE) and the tensor
// dialect's slices and concatenations, each on the runtime's op-level API.
//
//===----------------------------------------------------------------------===//

#include "CodegenDetail.h"

#include <cmath>

namespace helix {
namespace rt {
namespace cg {

namespace {

const Tensor *opt(const Tensor &t) { return t.defined() ? &t : nullptr; }

int64_t product(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i)
    n *= shape[i];
  return n;
}

Activation activationFromName(const std::string &name) {
  // gpt-oss's clamped SwiGLU (swiglu_limit 7, the only value released).
  if (name == "swiglu")
    return Activation::gptOss();
  return Activation::fromName(name);
}

/// Rows [begin, begin + count) of dimension `axis`, as a new tensor.
Tensor sliceAxis(Context &ctx, const Tensor &x, size_t axis, int64_t begin,
                 int64_t count) {
  const std::vector<int64_t> &s = x.shape();
  if (begin == 0 && count == s[axis])
    return x;
  int64_t outer = product(s, 0, axis), inner = product(s, axis + 1, s.size());
  Tensor cols = sliceLast(ctx, x.view({outer, s[axis] * inner}), begin * inner,
                          count * inner);
  std::vector<int64_t> shape = s;
  shape[axis] = count;
  return cols.view(shape);
}

} // namespace

RopeConfig rope(const RopeSpec &spec) {
  return static_cast<const RopeConfig &>(spec);
}

float softmaxScale(const RopeConfig &config, int64_t headDim, bool mla) {
  double s = 1.0 / std::sqrt(static_cast<double>(headDim));
  if (mla)
    s *= Rope(config).softmaxScaleMultiplier();
  return static_cast<float>(s);
}

Tensor embedRows(Context &ctx, const Ints &tokens, const Tensor &table,
                 int64_t vocabOffset) {
  return embedding(ctx, table, tokens.data, vocabOffset);
}

Tensor norm(Context &ctx, const Tensor &x, const Tensor &weight, double eps) {
  return rmsNorm(ctx, x, weight, static_cast<float>(eps));
}

Tensor matmul(Context &ctx, const Tensor &x, const Tensor &weight,
              const Tensor &bias) {
  return linear(ctx, x, weight, opt(bias));
}

Tensor add(Context &ctx, const Tensor &a, const Tensor &b) {
  return rt::add(ctx, a, b);
}

std::tuple<Tensor, Tensor> addNorm(Context &ctx, const Tensor &a,
                                   const Tensor &b, const Tensor &weight,
                                   double eps) {
  AddNorm r = addRmsNorm(ctx, a, b, weight, static_cast<float>(eps));
  return {r.sum, r.normed};
}

Tensor groupSum(Context &ctx, const Tensor &x) { return sumLeading(ctx, x); }

Tensor gatedMlp(Context &ctx, const Tensor &x, const Tensor &wGate,
                const Tensor &wUp, const Tensor &wDown, const Tensor &bGate,
                const Tensor &bUp, const Tensor &bDown,
                const char *activation) {
  // Gate and up: one fused projection.
  std::vector<Tensor> gu =
      linearMany(ctx, x, {wGate, wUp}, {opt(bGate), opt(bUp)});
  Tensor h = gatedActivation(ctx, gu[0], gu[1], activationFromName(activation));
  return linear(ctx, h, wDown, opt(bDown));
}

std::tuple<Tensor, Tensor, Tensor>
qkv(Context &ctx, const Tensor &x, const Ints &positions, const Tensor &wq,
    const Tensor &wk, const Tensor &wv, const Tensor &bq, const Tensor &bk,
    const Tensor &bv, const Tensor &qNorm, const Tensor &kNorm, double normEps,
    const RopeConfig &ropeConfig) {
  int64_t B = x.dim(0);
  // Per-head weights [h, d, hidden] are the checkpoint's [h * d, hidden];
  // q, k and v are one fused projection.
  const Tensor *w3[3] = {&wq, &wk, &wv}, *b3[3] = {&bq, &bk, &bv};
  std::vector<Tensor> ws, bs(3);
  std::vector<const Tensor *> biases;
  for (int i = 0; i < 3; ++i) {
    int64_t h = w3[i]->dim(0), d = w3[i]->dim(1);
    ws.push_back(w3[i]->view({h * d, w3[i]->dim(2)}));
    if (b3[i]->defined())
      bs[i] = b3[i]->view({h * d});
    biases.push_back(opt(bs[i]));
  }
  std::vector<Tensor> qkvOut = linearMany(ctx, x, ws, biases);
  auto heads = [&](int i) {
    return qkvOut[i].view({B, w3[i]->dim(0), w3[i]->dim(1)});
  };
  Tensor q = heads(0), k = heads(1), v = heads(2);
  if (qNorm.defined()) {
    q = rmsNorm(ctx, q, qNorm, static_cast<float>(normEps));
    k = rmsNorm(ctx, k, kNorm, static_cast<float>(normEps));
  }
  // RoPE on q and k in one launch (the KV append is attention_partial's).
  ropeKvAppend(ctx, q, k, nullptr, nullptr, {}, positions.data,
               Rope(ropeConfig));
  return {q, k, v};
}

std::tuple<Tensor, Tensor> mlaQkv(Context &ctx, const Tensor &x,
                                  const Ints &positions, const Tensor &wqA,
                                  const Tensor &qNorm, const Tensor &wqB,
                                  const Tensor &wkvA, const Tensor &kvNorm,
                                  const Tensor &wUK, int64_t ropeDim,
                                  const RopeConfig &ropeConfig) {
  // DeepseekV3RMSNorm's default eps on the low-rank norms.
  const float lowRankEps = 1e-6f;
  int64_t B = x.dim(0), nH = wqB.dim(0), qk = wqB.dim(1), R = kvNorm.dim(0);
  int64_t nope = qk - ropeDim;
  Tensor wq = wqB.view({nH * qk, wqB.dim(2)});
  // q_a and kv_a read the same x: one fused projection where both exist.
  Tensor q, kva;
  if (wqA.defined()) {
    std::vector<Tensor> a = linearMany(ctx, x, {wqA, wkvA}, {nullptr, nullptr});
    q = linear(ctx, rmsNorm(ctx, a[0], qNorm, lowRankEps), wq);
    kva = a[1];
  } else {
    std::vector<Tensor> a = linearMany(ctx, x, {wq, wkvA}, {nullptr, nullptr});
    q = a[0];
    kva = a[1];
  }
  q = q.view({B, nH, qk});
  Tensor qLat =
      headMatmul(ctx, sliceLast(ctx, q, 0, nope), wUK, /*transposeW=*/true);
  Tensor qFull = concatLast(ctx, qLat, sliceLast(ctx, q, nope, ropeDim));
  // kv_a's output is the key's layout already ([latent | k_pe]): the latent
  // normed in place of a slice, a norm and a concatenation.
  check(kva.dim(1) == R + ropeDim,
        "mla_qkv: kv_a gives " + std::to_string(kva.dim(1)) +
            " values, expected the latent and the RoPE part (" +
            std::to_string(R + ropeDim) + ")");
  Tensor key =
      rmsNormPrefix(ctx, kva, kvNorm, lowRankEps).view({B, 1, R + ropeDim});
  // RoPE on the rope parts of both (dims [R, R + ropeDim)) in one launch.
  ropeKvAppend(ctx, qFull, key, nullptr, nullptr, {}, positions.data,
               Rope(ropeConfig), /*offset=*/R);
  return {qFull, key};
}

std::tuple<Tensor, Tensor> moeRouter(Context &ctx, const Tensor &x,
                                     const Tensor &weight, const Tensor &bias,
                                     bool logitBias, bool sigmoid, int64_t topK,
                                     int64_t groups, int64_t topkGroups,
                                     const char *groupScore, bool normTopkProb,
                                     double routedScaling) {
  RouterConfig c;
  c.scoring = sigmoid ? RouterConfig::Sigmoid : RouterConfig::Softmax;
  c.topK = topK;
  c.normTopkProb = normTopkProb;
  c.routedScalingFactor = routedScaling;
  std::string score = groupScore;
  if (!score.empty()) {
    c.numGroups = groups;
    c.topkGroups = topkGroups;
    c.groupScore =
        score == "max" ? RouterConfig::GroupMax : RouterConfig::GroupSumTop2;
  }
  Tensor logits = linear(ctx, x, weight, logitBias ? opt(bias) : nullptr);
  Routing r = moeRoute(ctx, logits, c, logitBias ? nullptr : opt(bias));
  return {r.weights, r.indices};
}

Tensor moeExperts(Context &ctx, const Tensor &x, const Tensor &weights,
                  const Tensor &ids, const Tensor &gate, const Tensor &up,
                  const Tensor &down, const Tensor &gateBias,
                  const Tensor &upBias, const Tensor &downBias,
                  const Tensor &sharedGate, const Tensor &sharedUp,
                  const Tensor &sharedDown, const Tensor &sharedExpertGate,
                  int64_t expertOffset, const char *activation, bool fused,
                  bool groupDim) {
  Activation act = activationFromName(activation);
  ExpertWeights w;
  auto half = [](const Tensor &t, int64_t i) {
    std::vector<int64_t> s(t.shape().begin() + 1, t.shape().end());
    return t.rows(i, i + 1).view(s);
  };
  if (fused) {
    w.gate = half(gate, 0);
    w.up = half(gate, 1);
    if (gateBias.defined()) {
      w.gateBias = half(gateBias, 0);
      w.upBias = half(gateBias, 1);
    }
  } else {
    w.gate = gate;
    w.up = up;
    w.gateBias = gateBias;
    w.upBias = upBias;
  }
  w.down = down;
  w.downBias = downBias;
  Routing r{ids, weights};
  Tensor y = rt::moeExperts(ctx, x, r, w, expertOffset, act,
                            /*addDownBias=*/downBias.defined());
  if (sharedGate.defined()) {
    std::vector<Tensor> gu =
        linearMany(ctx, x, {sharedGate, sharedUp}, {nullptr, nullptr});
    Tensor h = gatedActivation(ctx, gu[0], gu[1], act);
    Tensor out = linear(ctx, h, sharedDown);
    // The rank's slice of the shared output times the token's gate (one
    // scalar per token: it commutes with the sum over the slices).
    if (sharedExpertGate.defined())
      out = gatedActivation(ctx, linear(ctx, x, sharedExpertGate), out,
                            Activation::sigmoidGate());
    addInPlace(ctx, y, out);
  }
  if (groupDim)
    y = y.view({1, y.dim(0), y.dim(1)});
  return y;
}

static Tensor sliceTensor(Context &ctx, const Tensor &x,
                          const std::vector<int64_t> &offsets,
                          const std::vector<int64_t> &sizes) {
  check(offsets.size() == x.shape().size() && sizes.size() == offsets.size(),
        "slice: offsets and sizes do not match " + x.str());
  Tensor y = x;
  for (size_t d = 0; d < sizes.size(); ++d) {
    check(offsets[d] >= 0 &&
              offsets[d] + sizes[d] <= x.dim(static_cast<int>(d)),
          "slice: dimension " + std::to_string(d) + " outside " + x.str());
    if (d == 0 && sizes[0] != x.dim(0))
      y = y.rows(offsets[0], offsets[0] + sizes[0]);
    else
      y = sliceAxis(ctx, y, d, offsets[d], sizes[d]);
  }
  return y;
}

static Ints sliceInts(const Ints &x, const std::vector<int64_t> &offsets,
                      const std::vector<int64_t> &sizes) {
  size_t r = x.shape.size();
  check(offsets.size() == r && sizes.size() == r,
        "slice: offsets and sizes do not match the host tensor");
  Ints y;
  y.shape = sizes;
  int64_t n = product(sizes, 0, r);
  y.data.reserve(n);
  std::vector<int64_t> idx(r, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t flat = 0;
    for (size_t d = 0; d < r; ++d)
      flat = flat * x.shape[d] + offsets[d] + idx[d];
    y.data.push_back(x.data[flat]);
    for (size_t d = r; d-- > 0;) {
      if (++idx[d] < sizes[d])
        break;
      idx[d] = 0;
    }
  }
  return y;
}

Tensor slice(Context &ctx, const Tensor &x, Dims offsets, Dims sizes) {
  return sliceTensor(ctx, x, offsets, sizes);
}

Ints slice(Context &, const Ints &x, Dims offsets, Dims sizes) {
  return sliceInts(x, offsets, sizes);
}

Tensor sliceAxisOf(Context &ctx, const Tensor &x, int64_t axis, int64_t begin,
                   int64_t count) {
  std::vector<int64_t> offsets(x.shape().size(), 0), sizes = x.shape();
  offsets[axis] = begin;
  sizes[axis] = count;
  return sliceTensor(ctx, x, offsets, sizes);
}

Ints sliceAxisOf(const Ints &x, int64_t axis, int64_t begin, int64_t count) {
  std::vector<int64_t> offsets(x.shape.size(), 0), sizes = x.shape;
  offsets[axis] = begin;
  sizes[axis] = count;
  return sliceInts(x, offsets, sizes);
}

Tensor concat(Context &ctx, int64_t dim, const std::vector<Tensor> &parts) {
  check(!parts.empty(), "concat: no operands");
  std::vector<int64_t> shape = parts.front().shape();
  size_t d = static_cast<size_t>(dim);
  int64_t outer = product(shape, 0, d), total = 0;
  for (const Tensor &p : parts)
    total +=
        p.dim(static_cast<int>(d)) * product(p.shape(), d + 1, shape.size());
  // Rows of the [outer, total] result, one column block per part.
  Tensor out = ctx.empty({outer, total});
  if (outer == 1) {
    int64_t at = 0;
    for (const Tensor &p : parts) {
      Tensor dst = out.view({total}).rows(at, at + p.numel());
      copyInto(ctx, dst, p.view({p.numel()}));
      at += p.numel();
    }
  } else {
    Tensor acc;
    for (const Tensor &p : parts) {
      Tensor v = p.view({outer, p.numel() / outer});
      acc = acc.defined() ? concatLast(ctx, acc, v) : clone(ctx, v);
    }
    out = acc;
  }
  shape[d] = 0;
  for (const Tensor &p : parts)
    shape[d] += p.dim(static_cast<int>(d));
  return out.view(shape);
}

Tensor empty(Context &ctx, Dims shape) {
  return ctx.zeros(std::vector<int64_t>(shape));
}

} // namespace cg
} // namespace rt
} // namespace helix
