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
  Mat sharedGate; // Qwen3-Next shared_expert_gate [1, H]
  // Gated DeltaNet (linear_attn).
  Mat qkvz, ba, conv, dtBias, aLog, gatedNorm, outProj;
  // DeepSeek Sparse Attention's lightning indexer (self_attn.indexer).
  Mat ixWqb, ixWk, ixKNorm, ixKNormBias, ixWeights;
};

struct ReferenceModel::RowCache {
  // Per layer: keys / values per position, all heads [pos][heads * dim].
  std::vector<std::vector<Vec>> keys, values;
  // DSA, per layer: the index key of every position [pos][index_head_dim]
  // (f32, see indexerSelect).
  std::vector<std::vector<Vec>> indexKeys;
  // DSA: the positions the last indexer of the current step selected
  // (what a layer reusing the previous layer's selection attends to).
  std::vector<int64_t> selection;
  int64_t selectionPos = -1; // the step `selection` is of
  // Gated DeltaNet, per layer: the convolution's inputs of the previous
  // convKernel - 1 tokens ([K - 1][channels], oldest first, zeros before
  // the first token), the recurrent state [value heads][dk][dv] and the
  // number of tokens fed.
  std::vector<std::vector<Vec>> convHist;
  std::vector<Vec> state;
  std::vector<int64_t> fed;

  explicit RowCache(size_t layers)
      : keys(layers), values(layers), indexKeys(layers), convHist(layers),
        state(layers), fed(layers, 0) {}
};

ReferenceModel::~ReferenceModel() = default;

Mat ReferenceModel::decoderNorm(const WeightLoader &W, const std::string &name,
                                int64_t n) const {
  Mat m = W.plain(name, {n});
  if (spec_.zeroCenteredNorms)
    for (float &w : m.v)
      w = 1.0f + w;
  return m;
}

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
  // The decoder's RMSNorm weights, as applied: w, or 1 + w for
  // zero-centred norms (Qwen3NextRMSNorm: x_normed * (1.0 + w.float())).
  auto normW = [&](const std::string &name, int64_t n) {
    return decoderNorm(W, name, n);
  };
  int64_t H = spec_.hiddenSize;
  auto L = std::make_unique<Layer>();
  L->spec = &ls;
  std::string p = "model.layers." + std::to_string(ls.index) + ".";
  std::string s = p + "self_attn.";
  std::string where = "reference: layer " + std::to_string(ls.index) + ": ";
  const AttentionSpec &a = ls.attention;
  if (!ls.hasFFN || (ls.mixer != MixerKind::Attention &&
                     ls.mixer != MixerKind::LinearAttention))
    throw Error(where + "a " + stringifyMixerKind(ls.mixer) + " mixer" +
                (ls.hasFFN ? "" : " without FFN") +
                " is not supported by the reference");
  L->inNorm = normW(p + "input_layernorm.weight", H);
  L->postNorm = normW(p + "post_attention_layernorm.weight", H);
  if (ls.mixer == MixerKind::LinearAttention) {
    // Qwen3NextGatedDeltaNet (modeling_qwen3_next).
    const LinearAttentionSpec &g = ls.linear;
    if (g.variant != LinearAttentionSpec::Variant::GatedDeltaNet)
      throw Error(where + stringifyLinearAttentionVariant(g.variant) +
                  " linear attention is not supported by the reference");
    int64_t Hk = g.numKeyHeads, Hv = g.numValueHeads, dk = g.keyHeadDim,
            dv = g.valueHeadDim;
    if (Hk <= 0 || Hv % Hk != 0 || g.convKernel < 1)
      throw Error(where + "malformed linear-attention sizes");
    std::string x = p + "linear_attn.";
    L->qkvz = lin(x + "in_proj_qkvz.weight", {2 * Hk * dk + 2 * Hv * dv, H});
    L->ba = lin(x + "in_proj_ba.weight", {2 * Hv, H});
    L->conv = load(x + "conv1d.weight", {g.convChannels(), 1, g.convKernel});
    L->dtBias = load(x + "dt_bias", {Hv});
    L->aLog = load(x + "A_log", {Hv});
    // Qwen3NextRMSNormGated: a plain weight (not zero-centred).
    L->gatedNorm = load(x + "norm.weight", {dv});
    L->outProj = lin(x + "out_proj.weight", {H, Hv * dv});
  } else if (a.kind == AttentionKind::MLA) {
    if (a.outputGate || a.noRope)
      throw Error(where + "MLA with " +
                  (a.outputGate ? "an output gate" : "no RoPE") +
                  " is not supported by the reference");
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
    const IndexerSpec &ix = a.indexer;
    if (ix.sparse() && !ix.reusesPrevious) {
      if (a.qLoraRank <= 0)
        throw Error(where + "DeepSeek Sparse Attention's indexer reads the "
                            "MLA's q latent, but q_lora_rank is 0");
      if (ix.ropeDim > ix.headDim || ix.ropeDim % 2 != 0)
        throw Error(where + "malformed indexer RoPE size");
      std::string x = s + "indexer.";
      L->ixWqb =
          lin(x + "wq_b.weight", {ix.numHeads * ix.headDim, a.qLoraRank});
      L->ixWk = lin(x + "wk.weight", {ix.headDim, H});
      L->ixKNorm = load(x + "k_norm.weight", {ix.headDim});
      L->ixKNormBias = load(x + "k_norm.bias", {ix.headDim});
      L->ixWeights = lin(x + "weights_proj.weight", {ix.numHeads, H});
    }
  } else {
    if (a.outputGate && a.vHeadDim != a.headDim)
      throw Error(where + "a gated attention output needs v_head_dim == "
                          "head_dim");
    // With an output gate (Qwen3-Next), q_proj yields per head the query
    // and then the gate: [heads, 2 * head_dim].
    int64_t q = a.numHeads * a.headDim * (a.outputGate ? 2 : 1),
            kv = a.numKVHeads * a.headDim;
    L->q = lin(s + "q_proj.weight", {q, H});
    L->k = lin(s + "k_proj.weight", {kv, H});
    L->v = lin(s + "v_proj.weight", {kv, H});
    L->o = lin(s + "o_proj.weight", {H, a.numHeads * a.vHeadDim});
    L->qb = loadIf(a.qkvBias, s + "q_proj.bias", {q});
    L->kb = loadIf(a.qkvBias, s + "k_proj.bias", {kv});
    L->vb = loadIf(a.qkvBias, s + "v_proj.bias", {kv});
    L->ob = loadIf(a.outBias, s + "o_proj.bias", {H});
    if (a.qkNorm) {
      L->qNorm = normW(s + "q_norm.weight", a.headDim);
      L->kNorm = normW(s + "k_norm.weight", a.headDim);
    }
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
    if (m.latentSize > 0 || !m.gated())
      throw Error(where + "a latent or non-gated MoE is not supported by the "
                          "reference");
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
      if (m.sharedExpertGate) {
        // Qwen3NextSparseMoeBlock: one shared expert ("shared_expert",
        // singular) scaled by sigmoid(shared_expert_gate(x)).
        if (m.numSharedExperts != 1)
          throw Error(where + "a gated shared expert must be one expert");
        int64_t S = m.sharedIntermediate;
        L->sGate = lin(x + "shared_expert.gate_proj.weight", {S, H});
        L->sUp = lin(x + "shared_expert.up_proj.weight", {S, H});
        L->sDown = lin(x + "shared_expert.down_proj.weight", {H, S});
        L->sharedGate = lin(x + "shared_expert_gate.weight", {1, H});
      } else if (m.numSharedExperts > 0) {
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
  finalNorm_ = decoderNorm(W, "model.norm.weight", H);
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
    if (spec.zeroCenteredNorms)
      throw Error("reference: the " + type_ +
                  " multi-token-prediction module (mtp.*) is not supported, "
                  "only DeepSeek-V3's");
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
    rows_.push_back(std::make_unique<RowCache>(layers_.size()));
    mtpRows_.push_back(std::make_unique<RowCache>(1));
  }
  lastHidden_.resize(batch);
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

/// Softmax attention of one query head over the cached keys/values at
/// `positions` (ascending), with an optional sink logit in the denominator.
static Vec attendHead(const float *q, const std::vector<Vec> &keys,
                      const std::vector<Vec> &values, int64_t head,
                      int64_t kDim, int64_t vDim,
                      const std::vector<int64_t> &positions, double scale,
                      const float *sink) {
  std::vector<double> s;
  for (int64_t t : positions) {
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
  for (size_t j = 0; j < positions.size(); ++j) {
    const float *v = values[positions[j]].data() + head * vDim;
    double p = s[j] / denom;
    for (int64_t i = 0; i < vDim; ++i)
      acc[i] += p * v[i];
  }
  return Vec(acc.begin(), acc.end());
}

/// Positions [first, pos].
static std::vector<int64_t> span(int64_t first, int64_t pos) {
  std::vector<int64_t> v(pos - first + 1);
  std::iota(v.begin(), v.end(), first);
  return v;
}

static double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

Vec ReferenceModel::attention(Layer &l, RowCache &c, size_t li, const Vec &x,
                              int64_t pos) {
  const AttentionSpec &a = l.spec->attention;
  int64_t nH = a.numHeads, K = a.numKVHeads, hd = a.headDim;
  Vec q = matvec(l.q, x, &l.qb), k = matvec(l.k, x, &l.kb),
      v = matvec(l.v, x, &l.vb);
  // Qwen3-Next's gated attention: per head, q_proj gives the query and
  // then the gate (torch.chunk(q_proj(x).view(..., heads, 2 * hd), 2)).
  Vec gate;
  if (a.outputGate) {
    Vec qs(nH * hd);
    gate.resize(nH * hd);
    for (int64_t h = 0; h < nH; ++h) {
      std::copy(q.begin() + 2 * h * hd, q.begin() + (2 * h + 1) * hd,
                qs.begin() + h * hd);
      std::copy(q.begin() + (2 * h + 1) * hd, q.begin() + (2 * h + 2) * hd,
                gate.begin() + h * hd);
    }
    q = std::move(qs);
  }
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
  // Partial RoPE (partial_rotary_factor): the first rd values of each head
  // are rotated (rotate_half over them, inv_freq over rd), the rest pass.
  int64_t rd = a.partialRotary < 1.0
                   ? static_cast<int64_t>(std::llround(a.partialRotary * hd))
                   : hd;
  RopeTable rope = ropeFor(a.rope, rd, spec_.maxPositionEmbeddings, pos + 1);
  for (int64_t h = 0; h < nH; ++h)
    rotate(q.data() + h * hd, rd, rope, pos, false);
  for (int64_t h = 0; h < K; ++h)
    rotate(k.data() + h * hd, rd, rope, pos, false);
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
  std::vector<int64_t> positions = span(first, pos);
  double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  Vec out(nH * a.vHeadDim);
  for (int64_t h = 0; h < nH; ++h) {
    int64_t kvh = h / (nH / K);
    Vec o = attendHead(q.data() + h * hd, c.keys[li], c.values[li], kvh, hd,
                       a.vHeadDim, positions, scale,
                       a.sinks ? &l.sinks.v[h] : nullptr);
    if (a.outputGate) // attn_output * sigmoid(gate), per query head
      for (int64_t i = 0; i < a.vHeadDim; ++i)
        o[i] = static_cast<float>(o[i] * sigmoid(gate[h * hd + i]));
    std::copy(o.begin(), o.end(), out.begin() + h * a.vHeadDim);
  }
  return matvec(l.o, out, &l.ob);
}

Vec ReferenceModel::gatedDeltaNet(Layer &l, RowCache &c, size_t li,
                                  const Vec &x, int64_t pos) {
  // Qwen3NextGatedDeltaNet one token at a time: causal_conv1d_update and
  // torch_recurrent_gated_delta_rule (use_qk_l2norm_in_kernel) of
  // modeling_qwen3_next, then the gated RMSNorm and out_proj.
  const LinearAttentionSpec &g = l.spec->linear;
  int64_t Hk = g.numKeyHeads, Hv = g.numValueHeads, dk = g.keyHeadDim,
          dv = g.valueHeadDim, r = Hv / Hk, K = g.convKernel,
          C = g.convChannels();
  if (c.fed[li] != pos)
    throw Error("reference: positions must be fed in order");
  ++c.fed[li];
  Vec qkvz = matvec(l.qkvz, x), ba = matvec(l.ba, x);
  // in_proj_qkvz is grouped per key head: [q (dk), k (dk), v (r * dv),
  // z (r * dv)]; in_proj_ba per key head: [b (r), a (r)]. Value head
  // kh * r + j belongs to key head kh. The convolution's channels are
  // [all q heads, all k heads, all v heads].
  int64_t per = 2 * dk + 2 * r * dv;
  Vec in(C), z(Hv * dv);
  std::vector<double> b(Hv), av(Hv);
  for (int64_t kh = 0; kh < Hk; ++kh) {
    const float *src = qkvz.data() + kh * per;
    std::copy(src, src + dk, in.begin() + kh * dk);
    std::copy(src + dk, src + 2 * dk, in.begin() + Hk * dk + kh * dk);
    std::copy(src + 2 * dk, src + 2 * dk + r * dv,
              in.begin() + 2 * Hk * dk + kh * r * dv);
    std::copy(src + 2 * dk + r * dv, src + per, z.begin() + kh * r * dv);
    for (int64_t j = 0; j < r; ++j) {
      b[kh * r + j] = ba[kh * 2 * r + j];
      av[kh * r + j] = ba[kh * 2 * r + r + j];
    }
  }
  // Causal depthwise convolution over this and the previous K - 1 inputs
  // of each channel (tap K - 1 multiplies the newest), no bias, then SiLU.
  std::vector<Vec> &hist = c.convHist[li];
  if (static_cast<int64_t>(hist.size()) != K - 1)
    hist.assign(K - 1, Vec(C, 0.0f));
  Vec mixed(C);
  for (int64_t ch = 0; ch < C; ++ch) {
    const float *w = l.conv.v.data() + ch * K;
    double sum = static_cast<double>(w[K - 1]) * in[ch];
    for (int64_t t = 0; t < K - 1; ++t)
      sum += static_cast<double>(w[t]) * hist[t][ch];
    mixed[ch] = static_cast<float>(act("silu", static_cast<float>(sum)));
  }
  if (K > 1) {
    hist.erase(hist.begin());
    hist.push_back(in);
  }
  // L2-normalise each q and k head (x / sqrt(sum x^2 + 1e-6)); q also
  // times 1 / sqrt(dk).
  auto l2norm = [](float *v, int64_t n, double scale) {
    double ss = 0;
    for (int64_t i = 0; i < n; ++i)
      ss += static_cast<double>(v[i]) * v[i];
    double inv = 1.0 / std::sqrt(ss + 1e-6);
    for (int64_t i = 0; i < n; ++i)
      v[i] = static_cast<float>(static_cast<float>(v[i] * inv) * scale);
  };
  float *qs = mixed.data(), *ks = mixed.data() + Hk * dk,
        *vs = mixed.data() + 2 * Hk * dk;
  for (int64_t kh = 0; kh < Hk; ++kh) {
    l2norm(qs + kh * dk, dk, 1.0 / std::sqrt(static_cast<double>(dk)));
    l2norm(ks + kh * dk, dk, 1.0);
  }
  Vec &state = c.state[li];
  if (state.empty())
    state.assign(Hv * dk * dv, 0.0f);
  Vec out(Hv * dv);
  std::vector<double> S(dk * dv), delta(dv);
  for (int64_t h = 0; h < Hv; ++h) {
    const float *q = qs + (h / r) * dk, *k = ks + (h / r) * dk,
                *v = vs + h * dv;
    double beta = sigmoid(b[h]);
    double sp = av[h] + static_cast<double>(l.dtBias.v[h]);
    double softplus = sp > 20 ? sp : std::log1p(std::exp(sp));
    double decay =
        std::exp(-std::exp(static_cast<double>(l.aLog.v[h])) * softplus);
    float *st = state.data() + h * dk * dv; // [dk][dv]
    for (int64_t i = 0; i < dk * dv; ++i)
      S[i] = st[i] * decay;
    for (int64_t j = 0; j < dv; ++j) {
      double mem = 0;
      for (int64_t i = 0; i < dk; ++i)
        mem += S[i * dv + j] * k[i];
      delta[j] = (v[j] - mem) * beta;
    }
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j)
        st[i * dv + j] = static_cast<float>(S[i * dv + j] + k[i] * delta[j]);
    // o = S^T q, then Qwen3NextRMSNormGated: rmsnorm(o) * w * silu(z).
    std::vector<double> o(dv, 0.0);
    double ss = 0;
    for (int64_t j = 0; j < dv; ++j) {
      for (int64_t i = 0; i < dk; ++i)
        o[j] += static_cast<double>(st[i * dv + j]) * q[i];
      o[j] = static_cast<float>(o[j]);
      ss += o[j] * o[j];
    }
    double rn = 1.0 / std::sqrt(ss / dv + spec_.rmsNormEps);
    for (int64_t j = 0; j < dv; ++j) {
      float y = l.gatedNorm.v[j] * static_cast<float>(o[j] * rn);
      out[h * dv + j] = static_cast<float>(y * act("silu", z[h * dv + j]));
    }
  }
  return matvec(l.outProj, out);
}

Vec ReferenceModel::mla(Layer &l, RowCache &c, size_t li, const Vec &x,
                        int64_t pos) {
  const AttentionSpec &a = l.spec->attention;
  int64_t nH = a.numHeads, nope = a.qkNopeHeadDim, rd = a.qkRopeHeadDim,
          vd = a.vHeadDim, R = a.kvLoraRank, qk = nope + rd;
  // The low-rank norms use DeepseekV3RMSNorm's default eps (1e-6). qr, the
  // normalised q latent, is also what DSA's indexer reads.
  Vec qr;
  if (a.qLoraRank > 0)
    qr = rmsnorm(matvec(l.qa, x, &l.qaBias), l.qaNorm, 1e-6);
  Vec q = a.qLoraRank > 0 ? matvec(l.qbProj, qr) : matvec(l.q, x);
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
  // DeepSeek Sparse Attention: the indexer's top-k positions; else all.
  std::vector<int64_t> positions =
      a.indexer.sparse() ? indexerSelect(l, c, li, x, qr, pos) : span(0, pos);
  if (!sparseSelection_)
    positions = span(0, pos);
  double scale = 1.0 / std::sqrt(static_cast<double>(qk));
  if (a.rope.scaling == "yarn" && a.rope.mscaleAllDim != 0) {
    double m = yarnGetMscale(a.rope.factor, a.rope.mscaleAllDim);
    scale *= m * m;
  }
  Vec out(nH * vd);
  for (int64_t h = 0; h < nH; ++h) {
    Vec o = attendHead(q.data() + h * qk, c.keys[li], c.values[li], h, qk, vd,
                       positions, scale, nullptr);
    std::copy(o.begin(), o.end(), out.begin() + h * vd);
  }
  return matvec(l.o, out, &l.ob);
}

std::vector<int64_t> ReferenceModel::indexerSelect(Layer &l, RowCache &c,
                                                   size_t li, const Vec &x,
                                                   const Vec &qr, int64_t pos) {
  const AttentionSpec &a = l.spec->attention;
  const IndexerSpec &ix = a.indexer;
  if (ix.reusesPrevious) {
    // GLM-5's shared layers (index_topk_pattern "S"): the selection of the
    // previous layer's indexer at this step.
    if (c.selectionPos != pos)
      throw Error("reference: a layer reusing the previous layer's top-k "
                  "has no selection to reuse");
    return c.selection;
  }
  // The lightning indexer (DeepSeek-V3.2's Indexer): q = wq_b(qr) per index
  // head, k = LayerNorm(wk(x)) (eps 1e-6), RoPE on the first ropeDim values
  // of each (rotate_half unless indexer_rope_interleave). DeepSeek's
  // inference code also multiplies q and k by a Hadamard matrix and caches
  // k in FP8; the rotation is orthogonal, so q . k is unchanged, and the
  // reference keeps the index keys in f32 (--kv-dtype rounds only the
  // MLA latent cache).
  int64_t nh = ix.numHeads, dI = ix.headDim, rd = ix.ropeDim;
  // The layer's RoPE (the MLA's qk_rope_head_dim frequencies).
  RopeTable rope = ropeFor(a.rope, rd, spec_.maxPositionEmbeddings, pos + 1);
  Vec q = matvec(l.ixWqb, qr);
  for (int64_t h = 0; h < nh; ++h)
    rotate(q.data() + h * dI, rd, rope, pos, ix.ropeInterleave);
  Vec kp = matvec(l.ixWk, x);
  double mean = 0, var = 0;
  for (float v : kp)
    mean += v;
  mean /= dI;
  for (float v : kp)
    var += (v - mean) * (v - mean);
  var /= dI;
  double inv = 1.0 / std::sqrt(var + 1e-6);
  Vec k(dI);
  for (int64_t i = 0; i < dI; ++i)
    k[i] = static_cast<float>((kp[i] - mean) * inv * l.ixKNorm.v[i] +
                              l.ixKNormBias.v[i]);
  rotate(k.data(), rd, rope, pos, ix.ropeInterleave);
  std::vector<Vec> &keys = c.indexKeys[li];
  if (static_cast<int64_t>(keys.size()) != pos)
    throw Error("reference: positions must be fed in order");
  keys.push_back(k);
  // Head weights weights_proj(x) * nh^-0.5 * dI^-0.5; the score of cached
  // token t: sum_h w_h * relu(q_h . k_t).
  Vec wl = matvec(l.ixWeights, x);
  double headScale = 1.0 / std::sqrt(static_cast<double>(nh)) /
                     std::sqrt(static_cast<double>(dI));
  std::vector<double> score(pos + 1, 0.0);
  for (int64_t t = 0; t <= pos; ++t) {
    double sc = 0;
    for (int64_t h = 0; h < nh; ++h) {
      double d = 0;
      for (int64_t i = 0; i < dI; ++i)
        d += static_cast<double>(q[h * dI + i]) * keys[t][i];
      sc += wl[h] * headScale * std::max(d, 0.0);
    }
    score[t] = sc;
  }
  // The topK best, ties to the lower position (topk's stable order);
  // every position while there are at most topK.
  std::vector<int64_t> chosen;
  if (pos + 1 <= ix.topK) {
    chosen = span(0, pos);
  } else {
    chosen = topk(score, ix.topK);
    std::sort(chosen.begin(), chosen.end());
  }
  c.selection = chosen;
  c.selectionPos = pos;
  return chosen;
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
    bool deepseek = type_ == "deepseek_v2" || type_ == "deepseek_v3" ||
                    type_ == "deepseek_v32" || type_ == "glm_moe_dsa" ||
                    type_ == "kimi_k2";
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
    // Qwen3-Next: sigmoid(shared_expert_gate(x)) * shared_expert(x).
    if (m.sharedExpertGate) {
      float g = static_cast<float>(sigmoid(matvec(l.sharedGate, x)[0]));
      for (float &v : s)
        v = g * v;
    }
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
  Vec a = l.spec->mixer == MixerKind::LinearAttention
              ? gatedDeltaNet(l, c, li, n, pos)
          : l.spec->attention.kind == AttentionKind::MLA
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
  if (c.indexKeys[0].size() > static_cast<size_t>(pos))
    c.indexKeys[0].resize(pos);
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
