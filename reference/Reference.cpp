//===- Reference.cpp - Unsharded plain-loops model reference --------------===//

#include "Reference.h"

#include "Formats.h"

#include "helix/Runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace helix {
namespace reference {

using rt::Error;
using Vec = std::vector<float>;

//===----------------------------------------------------------------------===//
// Math helpers (float storage, double accumulation)
//===----------------------------------------------------------------------===//

namespace {

/// y = W x (+ b), W [out, in] as nn.Linear stores it.
Vec matvec(const Mat &w, const Vec &x, const Mat *b = nullptr) {
  int64_t out = w.shape[0], in = w.shape[1];
  if (static_cast<int64_t>(x.size()) != in)
    throw Error("reference: matvec size mismatch");
  Vec y(out);
  for (int64_t o = 0; o < out; ++o) {
    double s = 0;
    const float *row = w.v.data() + o * in;
    for (int64_t i = 0; i < in; ++i)
      s += static_cast<double>(row[i]) * x[i];
    if (b && !b->empty())
      s += b->v[o];
    y[o] = static_cast<float>(s);
  }
  return y;
}

Vec rmsnorm(const float *x, int64_t n, const Mat &w, double eps) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i)
    ss += static_cast<double>(x[i]) * x[i];
  double r = 1.0 / std::sqrt(ss / n + eps);
  Vec y(n);
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<float>(w.v[i] * static_cast<float>(x[i] * r));
  return y;
}

Vec rmsnorm(const Vec &x, const Mat &w, double eps) {
  return rmsnorm(x.data(), static_cast<int64_t>(x.size()), w, eps);
}

double act(const std::string &name, double x) {
  if (name == "silu" || name == "swish")
    return x / (1 + std::exp(-x));
  if (name == "gelu")
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (name == "gelu_pytorch_tanh" || name == "gelu_new" || name == "gelu_fast")
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  throw Error("reference: unsupported activation " + name);
}

/// RoPE inverse frequencies and cos/sin scale, after Hugging Face's
/// modeling_rope_utils.
struct RopeTable {
  std::vector<double> inv;
  double attnFactor = 1.0;
};

double yarnGetMscale(double scale, double mscale) {
  return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

RopeTable ropeFor(const RopeSpec &r, int64_t dim, int64_t maxPos,
                  int64_t seqLen) {
  RopeTable t;
  double base = r.theta;
  if (r.scaling == "dynamic" && seqLen > maxPos)
    base = base * std::pow(r.factor * seqLen / maxPos - (r.factor - 1),
                           static_cast<double>(dim) / (dim - 2));
  for (int64_t i = 0; i < dim; i += 2)
    t.inv.push_back(1.0 / std::pow(base, static_cast<double>(i) / dim));
  const std::string &s = r.scaling;
  if (s.empty() || s == "default" || s == "dynamic")
    return t;
  if (s == "linear") {
    for (double &f : t.inv)
      f = f / r.factor;
    return t;
  }
  if (s == "llama3") {
    double old = r.originalMaxPosition;
    double lowW = old / r.lowFreqFactor, highW = old / r.highFreqFactor;
    for (double &f : t.inv) {
      double wl = 2 * M_PI / f;
      if (wl < highW)
        continue;      // high frequency: kept
      if (wl > lowW) { // low frequency: scaled
        f = f / r.factor;
        continue;
      }
      double smooth =
          (old / wl - r.lowFreqFactor) / (r.highFreqFactor - r.lowFreqFactor);
      f = (1 - smooth) * f / r.factor + smooth * f;
    }
    return t;
  }
  if (s == "yarn") {
    double orig = r.originalMaxPosition > 0 ? r.originalMaxPosition : maxPos;
    t.attnFactor = (r.mscale != 0 && r.mscaleAllDim != 0)
                       ? yarnGetMscale(r.factor, r.mscale) /
                             yarnGetMscale(r.factor, r.mscaleAllDim)
                       : yarnGetMscale(r.factor, 1.0);
    auto corrDim = [&](double rot) {
      return dim * std::log(orig / (rot * 2 * M_PI)) / (2 * std::log(r.theta));
    };
    double lo = std::max(0.0, std::floor(corrDim(r.betaFast)));
    double hi =
        std::min(static_cast<double>(dim - 1), std::ceil(corrDim(r.betaSlow)));
    if (lo == hi)
      hi += 0.001;
    for (size_t i = 0; i < t.inv.size(); ++i) {
      double ramp = std::min(1.0, std::max(0.0, (i - lo) / (hi - lo)));
      double extrap = t.inv[i], interp = t.inv[i] / r.factor;
      // inv = interp * ramp + extrap * (1 - ramp)
      t.inv[i] = interp * ramp + extrap * (1 - ramp);
    }
    return t;
  }
  throw Error("reference: RoPE scaling \"" + s + "\" is not supported");
}

/// Rotates v[0..dim) in place: half-split (rotate_half) or interleaved
/// pairs, as HF's float32 cos/sin.
void rotate(float *v, int64_t dim, const RopeTable &t, int64_t pos,
            bool interleaved) {
  int64_t half = dim / 2;
  std::vector<float> out(dim);
  for (int64_t i = 0; i < half; ++i) {
    float ang = static_cast<float>(t.inv[i]) * static_cast<float>(pos);
    float c =
        static_cast<float>(std::cos(static_cast<double>(ang)) * t.attnFactor);
    float s =
        static_cast<float>(std::sin(static_cast<double>(ang)) * t.attnFactor);
    int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    out[a] = static_cast<float>(static_cast<double>(v[a]) * c -
                                static_cast<double>(v[b]) * s);
    out[b] = static_cast<float>(static_cast<double>(v[b]) * c +
                                static_cast<double>(v[a]) * s);
  }
  std::copy(out.begin(), out.end(), v);
}

/// Indices of the k largest values, largest first (lower index on ties).
std::vector<int64_t> topk(const std::vector<double> &v, int64_t k) {
  std::vector<int64_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int64_t a, int64_t b) { return v[a] > v[b]; });
  idx.resize(k);
  return idx;
}

} // namespace

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

struct ReferenceModel::Layer {
  const LayerSpec *spec = nullptr;
  Mat inNorm, postNorm;
  // Standard attention.
  Mat q, k, v, o, qb, kb, vb, ob, qNorm, kNorm, sinks;
  // MLA.
  Mat qa, qaBias, qaNorm, qbProj, kva, kvaBias, kvaNorm, kvb;
  // Dense FFN / shared experts.
  Mat gate, up, down, gateB, upB, downB;
  // MoE.
  Mat router, routerBias, correction;
  std::vector<Mat> eGate, eUp, eDown;
  Mat gateUp, gateUpBias, downProj, downProjBias; // gpt-oss
  Mat sGate, sUp, sDown;
};

struct ReferenceModel::RowCache {
  // Per layer: keys / values per position, all heads [pos][heads * dim].
  std::vector<std::vector<Vec>> keys, values;
};

ReferenceModel::~ReferenceModel() = default;

std::unique_ptr<ReferenceModel::Layer>
ReferenceModel::loadLayer(const WeightLoader &W,
                          const rt::SafetensorsCheckpoint &ckpt,
                          const LayerSpec &ls) {
  auto load = [&](const std::string &name, std::vector<int64_t> shape) {
    return W.plain(name, shape);
  };
  auto loadIf = [&](bool cond, const std::string &name,
                    std::vector<int64_t> shape) {
    return cond ? load(name, shape) : Mat();
  };
  // Linear weights of the decoder layers: float or quantized.
  auto lin = [&](const std::string &name, std::vector<int64_t> shape) {
    return W.linear(name, shape);
  };
  int64_t H = spec_.hiddenSize;
  auto L = std::make_unique<Layer>();
  L->spec = &ls;
  std::string p = "model.layers." + std::to_string(ls.index) + ".";
  std::string s = p + "self_attn.";
  const AttentionSpec &a = ls.attention;
  L->inNorm = load(p + "input_layernorm.weight", {H});
  L->postNorm = load(p + "post_attention_layernorm.weight", {H});
  if (a.kind == AttentionKind::MLA) {
    int64_t qk = a.qkNopeHeadDim + a.qkRopeHeadDim;
    if (a.qLoraRank > 0) {
      L->qa = lin(s + "q_a_proj.weight", {a.qLoraRank, H});
      L->qaBias = loadIf(a.qkvBias, s + "q_a_proj.bias", {a.qLoraRank});
      L->qaNorm = load(s + "q_a_layernorm.weight", {a.qLoraRank});
      L->qbProj = lin(s + "q_b_proj.weight", {a.numHeads * qk, a.qLoraRank});
    } else {
      L->q = lin(s + "q_proj.weight", {a.numHeads * qk, H});
    }
    L->kva = lin(s + "kv_a_proj_with_mqa.weight",
                 {a.kvLoraRank + a.qkRopeHeadDim, H});
    L->kvaBias = loadIf(a.qkvBias, s + "kv_a_proj_with_mqa.bias",
                        {a.kvLoraRank + a.qkRopeHeadDim});
    L->kvaNorm = load(s + "kv_a_layernorm.weight", {a.kvLoraRank});
    L->kvb = lin(s + "kv_b_proj.weight",
                 {a.numHeads * (a.qkNopeHeadDim + a.vHeadDim), a.kvLoraRank});
    L->o = lin(s + "o_proj.weight", {H, a.numHeads * a.vHeadDim});
    L->ob = loadIf(a.outBias, s + "o_proj.bias", {H});
  } else {
    int64_t q = a.numHeads * a.headDim, kv = a.numKVHeads * a.headDim;
    L->q = lin(s + "q_proj.weight", {q, H});
    L->k = lin(s + "k_proj.weight", {kv, H});
    L->v = lin(s + "v_proj.weight", {kv, H});
    L->o = lin(s + "o_proj.weight", {H, a.numHeads * a.vHeadDim});
    L->qb = loadIf(a.qkvBias, s + "q_proj.bias", {q});
    L->kb = loadIf(a.qkvBias, s + "k_proj.bias", {kv});
    L->vb = loadIf(a.qkvBias, s + "v_proj.bias", {kv});
    L->ob = loadIf(a.outBias, s + "o_proj.bias", {H});
    L->qNorm = loadIf(a.qkNorm, s + "q_norm.weight", {a.headDim});
    L->kNorm = loadIf(a.qkNorm, s + "k_norm.weight", {a.headDim});
    L->sinks = loadIf(a.sinks, s + "sinks", {a.numHeads});
  }
  if (!ls.isMoE) {
    int64_t I = ls.ffn.intermediate;
    L->gate = lin(p + "mlp.gate_proj.weight", {I, H});
    L->up = lin(p + "mlp.up_proj.weight", {I, H});
    L->down = lin(p + "mlp.down_proj.weight", {H, I});
    L->gateB = loadIf(ls.ffn.bias, p + "mlp.gate_proj.bias", {I});
    L->upB = loadIf(ls.ffn.bias, p + "mlp.up_proj.bias", {I});
    L->downB = loadIf(ls.ffn.bias, p + "mlp.down_proj.bias", {H});
  } else {
    const MoESpec &m = ls.moe;
    int64_t E = m.numExperts, I = m.expertIntermediate;
    if (type_ == "gpt_oss") {
      std::string x = p + "mlp.experts.";
      L->router = load(p + "mlp.router.weight", {E, H});
      L->routerBias = load(p + "mlp.router.bias", {E});
      L->gateUp = W.experts(x + "gate_up_proj", E, H, 2 * I);
      L->gateUpBias = load(x + "gate_up_proj_bias", {E, 2 * I});
      L->downProj = W.experts(x + "down_proj", E, I, H);
      L->downProjBias = load(x + "down_proj_bias", {E, H});
    } else {
      bool mixtral = type_ == "mixtral";
      std::string x = p + (mixtral ? "block_sparse_moe." : "mlp.");
      L->router = load(x + "gate.weight", {E, H});
      if (ckpt.has(x + "gate.e_score_correction_bias"))
        L->correction = load(x + "gate.e_score_correction_bias", {E});
      for (int64_t j = 0; j < E; ++j) {
        std::string e = x + "experts." + std::to_string(j) + ".";
        L->eGate.push_back(
            lin(e + (mixtral ? "w1" : "gate_proj") + ".weight", {I, H}));
        L->eUp.push_back(
            lin(e + (mixtral ? "w3" : "up_proj") + ".weight", {I, H}));
        L->eDown.push_back(
            lin(e + (mixtral ? "w2" : "down_proj") + ".weight", {H, I}));
      }
      if (m.numSharedExperts > 0) {
        int64_t S = m.sharedIntermediate * m.numSharedExperts;
        L->sGate = lin(x + "shared_experts.gate_proj.weight", {S, H});
        L->sUp = lin(x + "shared_experts.up_proj.weight", {S, H});
        L->sDown = lin(x + "shared_experts.down_proj.weight", {H, S});
      }
    }
  }
  return L;
}

ReferenceModel::ReferenceModel(const ModelSpec &spec,
                               const nlohmann::json &config,
                               const rt::SafetensorsCheckpoint &ckpt,
                               int64_t batch, KvDtype kvDtype, bool withMTP)
    : spec_(spec), mtpSpec_(mtpLayerOf(spec, 0)), type_(spec.modelType),
      kvDtype_(kvDtype) {
  WeightLoader W(ckpt, config);
  auto load = [&](const std::string &name, std::vector<int64_t> shape) {
    return W.plain(name, shape);
  };
  // Linear weights of the decoder layers: float or quantized.
  auto lin = [&](const std::string &name, std::vector<int64_t> shape) {
    return W.linear(name, shape);
  };
  topkMethod_ = config.value("topk_method",
                             type_ == "deepseek_v2" ? "greedy" : "noaux_tc");
  swigluLimit_ = config.value("swiglu_limit", 7.0);
  int64_t H = spec.hiddenSize, V = spec.vocabSize;
  embed_ = load("model.embed_tokens.weight", {V, H});
  finalNorm_ = load("model.norm.weight", {H});
  lmHead_ = spec.tieWordEmbeddings ? embed_ : load("lm_head.weight", {V, H});
  for (const LayerSpec &ls : spec.layers)
    if (!ls.isMTP)
      layers_.push_back(loadLayer(W, ckpt, ls));
  // DeepSeek-V3's MTP module (docs/speculative-decoding.md): a decoder
  // layer with its own embedding, input norms, eh_proj and shared head.
  if (withMTP) {
    if (spec.mtpLayers <= 0)
      throw Error("reference: the model has no multi-token-prediction layer "
                  "(num_nextn_predict_layers)");
    std::string p = "model.layers." + std::to_string(mtpSpec_.index) + ".";
    mtp_ = loadLayer(W, ckpt, mtpSpec_);
    mtpEmbed_ = load(p + "embed_tokens.weight", {V, H});
    enorm_ = load(p + "enorm.weight", {H});
    hnorm_ = load(p + "hnorm.weight", {H});
    ehProj_ = lin(p + "eh_proj.weight", {H, 2 * H});
    sharedNorm_ = load(p + "shared_head.norm.weight", {H});
    sharedHead_ = load(p + "shared_head.head.weight", {V, H});
  }
  for (int64_t r = 0; r < batch; ++r) {
    auto c = std::make_unique<RowCache>();
    c->keys.resize(layers_.size());
    c->values.resize(layers_.size());
    rows_.push_back(std::move(c));
    auto m = std::make_unique<RowCache>();
    m->keys.resize(1);
    m->values.resize(1);
    mtpRows_.push_back(std::move(m));
  }
  lastHidden_.resize(batch);
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

/// Softmax attention of one query head over cached keys/values at positions
/// [first, pos], with an optional sink logit in the denominator.
static Vec attendHead(const float *q, const std::vector<Vec> &keys,
                      const std::vector<Vec> &values, int64_t head,
                      int64_t kDim, int64_t vDim, int64_t first, int64_t pos,
                      double scale, const float *sink) {
  std::vector<double> s;
  for (int64_t t = first; t <= pos; ++t) {
    const float *k = keys[t].data() + head * kDim;
    double d = 0;
    for (int64_t i = 0; i < kDim; ++i)
      d += static_cast<double>(q[i]) * k[i];
    s.push_back(d * scale);
  }
  double m = *std::max_element(s.begin(), s.end());
  if (sink)
    m = std::max(m, static_cast<double>(*sink));
  double denom = sink ? std::exp(*sink - m) : 0.0;
  for (double &x : s) {
    x = std::exp(x - m);
    denom += x;
  }
  std::vector<double> acc(vDim, 0.0);
  for (int64_t t = first; t <= pos; ++t) {
    const float *v = values[t].data() + head * vDim;
    double p = s[t - first] / denom;
    for (int64_t i = 0; i < vDim; ++i)
      acc[i] += p * v[i];
  }
  return Vec(acc.begin(), acc.end());
}

Vec ReferenceModel::attention(Layer &l, RowCache &c, size_t li, const Vec &x,
                              int64_t pos) {
  const AttentionSpec &a = l.spec->attention;
  int64_t nH = a.numHeads, K = a.numKVHeads, hd = a.headDim;
  Vec q = matvec(l.q, x, &l.qb), k = matvec(l.k, x, &l.kb),
      v = matvec(l.v, x, &l.vb);
  if (a.qkNorm) {
    for (int64_t h = 0; h < nH; ++h) {
      Vec n = rmsnorm(q.data() + h * hd, hd, l.qNorm, spec_.rmsNormEps);
      std::copy(n.begin(), n.end(), q.begin() + h * hd);
    }
    for (int64_t h = 0; h < K; ++h) {
      Vec n = rmsnorm(k.data() + h * hd, hd, l.kNorm, spec_.rmsNormEps);
      std::copy(n.begin(), n.end(), k.begin() + h * hd);
    }
  }
  RopeTable rope = ropeFor(a.rope, hd, spec_.maxPositionEmbeddings, pos + 1);
  for (int64_t h = 0; h < nH; ++h)
    rotate(q.data() + h * hd, hd, rope, pos, false);
  for (int64_t h = 0; h < K; ++h)
    rotate(k.data() + h * hd, hd, rope, pos, false);
  if (static_cast<int64_t>(c.keys[li].size()) != pos)
    throw Error("reference: positions must be fed in order");
  // The cache stores K (after RoPE) and V rounded to --kv-dtype; attention
  // reads them back, the new token's own K and V included.
  roundKv(kvDtype_, k.data(), static_cast<int64_t>(k.size()), hd);
  roundKv(kvDtype_, v.data(), static_cast<int64_t>(v.size()), a.vHeadDim);
  c.keys[li].push_back(k);
  c.values[li].push_back(v);
  int64_t first =
      a.slidingWindow > 0 ? std::max<int64_t>(0, pos - a.slidingWindow + 1) : 0;
  double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  Vec out(nH * a.vHeadDim);
  for (int64_t h = 0; h < nH; ++h) {
    int64_t kvh = h / (nH / K);
    Vec o = attendHead(q.data() + h * hd, c.keys[li], c.values[li], kvh, hd,
                       a.vHeadDim, first, pos, scale,
                       a.sinks ? &l.sinks.v[h] : nullptr);
    std::copy(o.begin(), o.end(), out.begin() + h * a.vHeadDim);
  }
  return matvec(l.o, out, &l.ob);
}

Vec ReferenceModel::mla(Layer &l, RowCache &c, size_t li, const Vec &x,
                        int64_t pos) {
  const AttentionSpec &a = l.spec->attention;
  int64_t nH = a.numHeads, nope = a.qkNopeHeadDim, rd = a.qkRopeHeadDim,
          vd = a.vHeadDim, R = a.kvLoraRank, qk = nope + rd;
  // The low-rank norms use DeepseekV3RMSNorm's default eps (1e-6).
  Vec q = a.qLoraRank > 0 ? matvec(l.qbProj, rmsnorm(matvec(l.qa, x, &l.qaBias),
                                                     l.qaNorm, 1e-6))
                          : matvec(l.q, x);
  Vec kva = matvec(l.kva, x, &l.kvaBias);
  RopeTable rope = ropeFor(a.rope, rd, spec_.maxPositionEmbeddings, pos + 1);
  // What an MLA cache holds per token: the normalized latent [R] and the
  // roped k_pe [rd], one vector rounded to --kv-dtype as a whole.
  Vec cached = rmsnorm(kva.data(), R, l.kvaNorm, 1e-6);
  cached.insert(cached.end(), kva.begin() + R, kva.end());
  rotate(cached.data() + R, rd, rope, pos, /*interleaved=*/true);
  roundKv(kvDtype_, cached.data(), R + rd, R + rd);
  Vec latent(cached.begin(), cached.begin() + R);
  Vec kpe(cached.begin() + R, cached.end());
  // Decompressed from the rounded latent. The reference keeps the
  // decompressed K / V per position rather than the latent: kv_b of the
  // same cached latent gives the same values at every later step, so this
  // equals re-expanding the latent cache each step, without the cost.
  Vec kv = matvec(l.kvb, latent); // [nH, nope + vd]
  for (int64_t h = 0; h < nH; ++h)
    rotate(q.data() + h * qk + nope, rd, rope, pos, true);
  Vec keys(nH * qk), values(nH * vd);
  for (int64_t h = 0; h < nH; ++h) {
    std::copy(kv.begin() + h * (nope + vd), kv.begin() + h * (nope + vd) + nope,
              keys.begin() + h * qk);
    std::copy(kpe.begin(), kpe.end(), keys.begin() + h * qk + nope);
    std::copy(kv.begin() + h * (nope + vd) + nope,
              kv.begin() + (h + 1) * (nope + vd), values.begin() + h * vd);
  }
  if (static_cast<int64_t>(c.keys[li].size()) != pos)
    throw Error("reference: positions must be fed in order");
  c.keys[li].push_back(keys);
  c.values[li].push_back(values);
  double scale = 1.0 / std::sqrt(static_cast<double>(qk));
  if (a.rope.scaling == "yarn" && a.rope.mscaleAllDim != 0) {
    double m = yarnGetMscale(a.rope.factor, a.rope.mscaleAllDim);
    scale *= m * m;
  }
  Vec out(nH * vd);
  for (int64_t h = 0; h < nH; ++h) {
    Vec o = attendHead(q.data() + h * qk, c.keys[li], c.values[li], h, qk, vd,
                       0, pos, scale, nullptr);
    std::copy(o.begin(), o.end(), out.begin() + h * vd);
  }
  return matvec(l.o, out, &l.ob);
}

static Vec gatedMlp(const Mat &g, const Mat &u, const Mat &d, const Mat *gb,
                    const Mat *ub, const Mat *db, const std::string &actName,
                    const Vec &x) {
  Vec gv = matvec(g, x, gb), uv = matvec(u, x, ub);
  Vec h(gv.size());
  for (size_t i = 0; i < h.size(); ++i)
    h[i] = static_cast<float>(act(actName, gv[i]) * uv[i]);
  return matvec(d, h, db);
}

Vec ReferenceModel::ffn(Layer &l, const Vec &x) {
  return gatedMlp(l.gate, l.up, l.down, &l.gateB, &l.upB, &l.downB,
                  l.spec->ffn.activation, x);
}

Vec ReferenceModel::moe(Layer &l, const Vec &x) {
  const MoESpec &m = l.spec->moe;
  int64_t E = m.numExperts, K = m.topK, H = spec_.hiddenSize;
  Vec logits = matvec(l.router, x, &l.routerBias);
  std::vector<int64_t> chosen;
  std::vector<double> w;
  if (type_ == "gpt_oss") {
    // GptOssTopKRouter: top-k of the logits, softmax over those.
    std::vector<double> lg(logits.begin(), logits.end());
    chosen = topk(lg, K);
    double mx = lg[chosen[0]], sum = 0;
    for (int64_t e : chosen)
      sum += std::exp(lg[e] - mx);
    for (int64_t e : chosen)
      w.push_back(std::exp(lg[e] - mx) / sum);
  } else {
    std::vector<double> scores(E);
    if (m.scoringFunc == "sigmoid") {
      for (int64_t e = 0; e < E; ++e)
        scores[e] = 1 / (1 + std::exp(-static_cast<double>(logits[e])));
    } else {
      double mx = *std::max_element(logits.begin(), logits.end()), sum = 0;
      for (int64_t e = 0; e < E; ++e)
        sum += scores[e] = std::exp(logits[e] - mx);
      for (double &s : scores)
        s /= sum;
    }
    bool deepseek =
        type_ == "deepseek_v2" || type_ == "deepseek_v3" || type_ == "kimi_k2";
    std::vector<double> choice = scores;
    if (deepseek && !l.correction.empty())
      for (int64_t e = 0; e < E; ++e)
        choice[e] += l.correction.v[e];
    if (deepseek && topkMethod_ != "greedy" && m.nGroup > 1) {
      int64_t per = E / m.nGroup;
      std::vector<double> gs(m.nGroup);
      for (int64_t g = 0; g < m.nGroup; ++g) {
        std::vector<double> part(choice.begin() + g * per,
                                 choice.begin() + (g + 1) * per);
        std::vector<int64_t> t = topk(part, std::min<int64_t>(2, per));
        gs[g] = topkMethod_ == "group_limited_greedy" || per < 2
                    ? part[t[0]]
                    : part[t[0]] + part[t[1]];
      }
      std::vector<int64_t> keep = topk(gs, m.topkGroup);
      std::vector<bool> kept(m.nGroup, false);
      for (int64_t g : keep)
        kept[g] = true;
      for (int64_t e = 0; e < E; ++e)
        if (!kept[e / per])
          choice[e] = 0.0;
    }
    chosen = topk(choice, K);
    for (int64_t e : chosen)
      w.push_back(scores[e]);
    if (m.normTopkProb) {
      double sum = std::accumulate(w.begin(), w.end(), 0.0);
      for (double &x : w)
        x /= deepseek ? sum + 1e-20 : sum;
    }
    for (double &x : w)
      x *= m.routedScalingFactor;
  }
  // Experts, in expert order as Hugging Face accumulates them.
  std::vector<double> acc(H, 0.0);
  std::vector<int64_t> order(K);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return chosen[a] < chosen[b]; });
  for (int64_t k : order) {
    int64_t e = chosen[k];
    Vec y;
    if (type_ == "gpt_oss") {
      int64_t I = m.expertIntermediate;
      const float *gu = l.gateUp.v.data() + e * H * 2 * I;
      Vec hidden(I);
      for (int64_t i = 0; i < I; ++i) {
        double g = l.gateUpBias.v[e * 2 * I + 2 * i],
               u = l.gateUpBias.v[e * 2 * I + 2 * i + 1];
        for (int64_t j = 0; j < H; ++j) {
          g += static_cast<double>(x[j]) * gu[j * 2 * I + 2 * i];
          u += static_cast<double>(x[j]) * gu[j * 2 * I + 2 * i + 1];
        }
        float gf = static_cast<float>(g), uf = static_cast<float>(u);
        gf = std::min(gf, static_cast<float>(swigluLimit_));
        uf = std::max(std::min(uf, static_cast<float>(swigluLimit_)),
                      -static_cast<float>(swigluLimit_));
        double glu = gf / (1 + std::exp(-1.702 * gf));
        hidden[i] = static_cast<float>((uf + 1.0) * glu);
      }
      const float *dp = l.downProj.v.data() + e * I * H;
      y.assign(H, 0.0f);
      for (int64_t j = 0; j < H; ++j) {
        double s = l.downProjBias.v[e * H + j];
        for (int64_t i = 0; i < I; ++i)
          s += static_cast<double>(hidden[i]) * dp[i * H + j];
        y[j] = static_cast<float>(s);
      }
    } else {
      y = gatedMlp(l.eGate[e], l.eUp[e], l.eDown[e], nullptr, nullptr, nullptr,
                   m.activation, x);
    }
    for (int64_t j = 0; j < H; ++j)
      acc[j] += w[k] * y[j];
  }
  Vec out(acc.begin(), acc.end());
  if (m.numSharedExperts > 0) {
    Vec s = gatedMlp(l.sGate, l.sUp, l.sDown, nullptr, nullptr, nullptr,
                     m.activation, x);
    for (int64_t j = 0; j < H; ++j)
      out[j] += s[j];
  }
  return out;
}

Vec ReferenceModel::step(int64_t row, int64_t token, int64_t pos) {
  if (row < 0 || row >= static_cast<int64_t>(rows_.size()))
    throw Error("reference: row out of range");
  if (token < 0 || token >= spec_.vocabSize)
    throw Error("reference: token " + std::to_string(token) + " out of range");
  RowCache &c = *rows_[row];
  int64_t H = spec_.hiddenSize;
  Vec h(embed_.v.begin() + token * H, embed_.v.begin() + (token + 1) * H);
  for (size_t li = 0; li < layers_.size(); ++li)
    h = decoderLayer(*layers_[li], c, li, h, pos);
  lastHidden_[row] = rmsnorm(h, finalNorm_, spec_.rmsNormEps);
  return matvec(lmHead_, lastHidden_[row]);
}

Vec ReferenceModel::decoderLayer(Layer &l, RowCache &c, size_t li, Vec h,
                                 int64_t pos) {
  int64_t H = spec_.hiddenSize;
  Vec n = rmsnorm(h, l.inNorm, spec_.rmsNormEps);
  Vec a = l.spec->attention.kind == AttentionKind::MLA
              ? mla(l, c, li, n, pos)
              : attention(l, c, li, n, pos);
  for (int64_t j = 0; j < H; ++j)
    h[j] += a[j];
  n = rmsnorm(h, l.postNorm, spec_.rmsNormEps);
  Vec f = l.spec->isMoE ? moe(l, n) : ffn(l, n);
  for (int64_t j = 0; j < H; ++j)
    h[j] += f[j];
  return h;
}

ReferenceModel::MTPOutput ReferenceModel::mtpStep(int64_t row, int64_t token,
                                                  int64_t pos,
                                                  const Vec &hidden) {
  if (!mtp_)
    throw Error("reference: the MTP layer was not loaded");
  if (row < 0 || row >= static_cast<int64_t>(mtpRows_.size()) || token < 0 ||
      token >= spec_.vocabSize || pos < 0)
    throw Error("reference: MTP step out of range");
  int64_t H = spec_.hiddenSize;
  if (static_cast<int64_t>(hidden.size()) != H)
    throw Error("reference: MTP step: hidden state of the wrong size");
  RowCache &c = *mtpRows_[row];
  if (static_cast<int64_t>(c.keys[0].size()) < pos)
    throw Error("reference: MTP positions must be fed in order");
  // A position fed again replaces it and drops what came after it.
  c.keys[0].resize(pos);
  c.values[0].resize(pos);
  // eh_proj([enorm(embedding of the next token); hnorm(hidden state)]).
  Vec e(mtpEmbed_.v.begin() + token * H, mtpEmbed_.v.begin() + (token + 1) * H);
  Vec both = rmsnorm(e, enorm_, spec_.rmsNormEps);
  Vec hn = rmsnorm(hidden, hnorm_, spec_.rmsNormEps);
  both.insert(both.end(), hn.begin(), hn.end());
  MTPOutput out;
  out.hidden = decoderLayer(*mtp_, c, 0, matvec(ehProj_, both), pos);
  out.logits =
      matvec(sharedHead_, rmsnorm(out.hidden, sharedNorm_, spec_.rmsNormEps));
  return out;
}

} // namespace reference
} // namespace helix
