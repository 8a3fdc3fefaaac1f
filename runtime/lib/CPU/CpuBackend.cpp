//===- CpuBackend.cpp - Plain reference kernels on the host ---------------===//
//
// Readable loops, one kernel per op, accumulating in double. This backend
// is the reference the CUDA kernels are tested against and lets the whole
// sharded program run under mpirun on any machine.
//
//===----------------------------------------------------------------------===//

#include "helix/Runtime/Backend.h"
#include "helix/Runtime/Error.h"

#include "../Common/MpiCommunicator.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace helix {
namespace rt {

namespace {

double activate(const Activation &act, double g) {
  switch (act.kind) {
  case Activation::SiLU:
    return g / (1.0 + std::exp(-g));
  case Activation::GELU:
    return 0.5 * g * (1.0 + std::erf(g / std::sqrt(2.0)));
  case Activation::GELUTanh:
    return 0.5 * g *
           (1.0 +
            std::tanh(std::sqrt(2.0 / M_PI) * (g + 0.044715 * g * g * g)));
  case Activation::Sigmoid:
    return 1.0 / (1.0 + std::exp(-g));
  case Activation::GptOssSwiGLU:
    break;
  }
  return 0.0;
}

/// act(gate) * up, with gpt-oss's clamped variant.
double gated(const Activation &act, double g, double u) {
  if (act.kind == Activation::GptOssSwiGLU) {
    g = std::min(g, static_cast<double>(act.limit));
    u = std::max(std::min(u, static_cast<double>(act.limit)),
                 -static_cast<double>(act.limit));
    double glu = g / (1.0 + std::exp(-act.alpha * g));
    return (u + 1.0) * glu;
  }
  return activate(act, g) * u;
}

double dot(const float *a, const float *b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i)
    s += static_cast<double>(a[i]) * b[i];
  return s;
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }

/// log(1 + exp(x)), x itself above 20 (torch's softplus threshold).
double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

/// Element i of a small weight kept in f32 or BF16.
double valueOf(const Tensor &t, int64_t i) {
  return fmt::decodeElement(t.dtype(), t.raw(), i);
}

/// RoPE on the first 2 invFreq.size() values of one head, as the rope
/// kernel below computes it.
void ropeHead(float *v, const std::vector<float> &invFreq,
              float attentionFactor, int64_t position, bool interleaved) {
  int64_t half = static_cast<int64_t>(invFreq.size());
  float pos = static_cast<float>(position);
  for (int64_t i = 0; i < half; ++i) {
    float angle = invFreq[i] * pos;
    double c = static_cast<float>(std::cos(static_cast<double>(angle)) *
                                  attentionFactor);
    double s = static_cast<float>(std::sin(static_cast<double>(angle)) *
                                  attentionFactor);
    float *p1 = interleaved ? v + 2 * i : v + i;
    float *p2 = interleaved ? v + 2 * i + 1 : v + i + half;
    double x1 = *p1, x2 = *p2;
    *p1 = static_cast<float>(x1 * c - x2 * s);
    *p2 = static_cast<float>(x2 * c + x1 * s);
  }
}

class CpuBackend : public Backend {
public:
  std::string name() const override { return "cpu"; }
  bool deviceMemory() const override { return false; }

  std::shared_ptr<Storage> allocate(size_t bytes) override {
    auto s = std::make_shared<Storage>();
    size_t n = bytes ? bytes : 1;
    s->data = std::aligned_alloc(64, (n + 63) / 64 * 64);
    check(s->data != nullptr,
          "cpu: out of memory allocating " + std::to_string(bytes) + " bytes");
    s->bytes = bytes;
    s->release = [](void *p) { std::free(p); };
    return s;
  }
  void upload(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void download(void *dst, const void *src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
  }
  void copy(void *dst, const void *src, size_t bytes) override {
    std::memmove(dst, src, bytes);
  }
  void zero(void *dst, size_t bytes) override { std::memset(dst, 0, bytes); }
  void synchronize() override {}

  std::unique_ptr<Communicator>
  createCommunicator(Context &ctx, const std::vector<int> &members, int index,
                     GroupHandle &group) override {
    return createMpiCommunicator(ctx, members, index, group);
  }

  void dequantize(const Tensor &q, Tensor &out) override {
    const BlockScales *bs = q.scales().get();
    int64_t base = q.elementOffset(), n = q.numel();
    float *o = out.f32();
    for (int64_t i = 0; i < n; ++i) {
      float v = fmt::decodeElement(q.dtype(), q.raw(), i);
      o[i] = bs ? bs->desc.apply(v, base + i) : v;
    }
  }

  void embedding(const Tensor &table, const std::vector<int64_t> &tokens,
                 int64_t vocabBegin, Tensor &out) override {
    int64_t V = table.dim(0), H = table.dim(1);
    float *o = out.f32();
    for (size_t b = 0; b < tokens.size(); ++b) {
      int64_t t = tokens[b] - vocabBegin;
      if (t >= 0 && t < V)
        std::memcpy(o + b * H, table.f32() + t * H, H * sizeof(float));
      else
        std::memset(o + b * H, 0, H * sizeof(float));
    }
  }

  void rmsNorm(const Tensor &x, const Tensor &w, float eps,
               Tensor &out) override {
    int64_t D = w.dim(0), rows = x.numel() / D;
    const float *xi = x.f32();
    float *o = out.f32();
    for (int64_t r = 0; r < rows; ++r) {
      double ss = 0;
      for (int64_t i = 0; i < D; ++i)
        ss += static_cast<double>(xi[r * D + i]) * xi[r * D + i];
      double inv = 1.0 / std::sqrt(ss / D + eps);
      for (int64_t i = 0; i < D; ++i)
        o[r * D + i] = static_cast<float>(xi[r * D + i] * inv * w.f32()[i]);
    }
  }

  void rmsNormPrefix(const Tensor &x, const Tensor &w, float eps,
                     Tensor &out) override {
    int64_t D = w.dim(0), W = x.dim(-1), rows = x.numel() / W;
    const float *xi = x.f32();
    float *o = out.f32();
    for (int64_t r = 0; r < rows; ++r) {
      const float *xr = xi + r * W;
      double ss = 0;
      for (int64_t i = 0; i < D; ++i)
        ss += static_cast<double>(xr[i]) * xr[i];
      double inv = 1.0 / std::sqrt(ss / D + eps);
      for (int64_t i = 0; i < D; ++i)
        o[r * W + i] = static_cast<float>(xr[i] * inv * w.f32()[i]);
      for (int64_t i = D; i < W; ++i)
        o[r * W + i] = xr[i];
    }
  }

  void linear(const Tensor &x, const Tensor &w, const Tensor *bias,
              Tensor &out) override {
    int64_t M = x.dim(0), K = x.dim(1), N = w.dim(0);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = dot(x.f32() + m * K, w.f32() + n * K, K);
        if (bias)
          s += bias->f32()[n];
        out.f32()[m * N + n] = static_cast<float>(s);
      }
  }

  void headMatmul(const Tensor &x, const Tensor &w, bool transposeW,
                  Tensor &out) override {
    int64_t B = x.dim(0), H = x.dim(1), A = x.dim(2), N = out.dim(2);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        const float *xv = x.f32() + (b * H + h) * A;
        const float *wh = w.f32() + h * A * N;
        for (int64_t n = 0; n < N; ++n) {
          double s = 0;
          for (int64_t a = 0; a < A; ++a)
            s += static_cast<double>(xv[a]) *
                 (transposeW ? wh[a * N + n] : wh[n * A + a]);
          out.f32()[(b * H + h) * N + n] = static_cast<float>(s);
        }
      }
  }

  void rope(Tensor &x, const std::vector<int64_t> &positions,
            const std::vector<float> &invFreq, float attentionFactor,
            int64_t offset, bool interleaved) override {
    int64_t B = x.dim(0), H = x.dim(1), D = x.dim(2);
    int64_t half = static_cast<int64_t>(invFreq.size());
    for (int64_t b = 0; b < B; ++b) {
      float pos = static_cast<float>(positions[b]);
      for (int64_t i = 0; i < half; ++i) {
        float angle = invFreq[i] * pos; // float32, as Hugging Face computes
        double c = static_cast<float>(std::cos(static_cast<double>(angle)) *
                                      attentionFactor);
        double s = static_cast<float>(std::sin(static_cast<double>(angle)) *
                                      attentionFactor);
        for (int64_t h = 0; h < H; ++h) {
          float *v = x.f32() + (b * H + h) * D + offset;
          float *p1 = interleaved ? v + 2 * i : v + i;
          float *p2 = interleaved ? v + 2 * i + 1 : v + i + half;
          double x1 = *p1, x2 = *p2;
          *p1 = static_cast<float>(x1 * c - x2 * s);
          *p2 = static_cast<float>(x2 * c + x1 * s);
        }
      }
    }
  }

  void kvAppend(KVCache &cache, const Tensor &k, const Tensor *v,
                const std::vector<int64_t> &slots) override {
    const KVCacheConfig &c = cache.config;
    auto put = [&](Tensor &dst, Tensor &scales, const Tensor &x, int64_t dim,
                   int64_t b) {
      for (int64_t h = 0; h < c.heads; ++h) {
        int64_t at = ((b * c.capacity + slots[b]) * c.heads + h) * dim;
        fmt::encodeKV(
            c.dtype, x.f32() + (b * c.heads + h) * dim, dim,
            static_cast<uint8_t *>(dst.raw()) + dtypeBytes(c.dtype, at),
            scales.defined() ? static_cast<uint8_t *>(scales.raw()) +
                                   (at / dim) * fmt::kvScalesPerHead(dim)
                             : nullptr);
      }
    };
    for (int64_t b = 0; b < c.batch; ++b) {
      if (slots[b] < 0)
        continue;
      put(cache.keys, cache.keyScales, k, c.keyDim, b);
      if (v)
        put(cache.values, cache.valueScales, *v, c.valueDim, b);
    }
  }

  void attention(const Tensor &q, const KVCache &cache, float scale,
                 const std::vector<int64_t> &slotBegin,
                 const std::vector<int64_t> &slotEnd, Tensor &out, Tensor &lse,
                 int64_t piece) override {
    const KVCacheConfig &c = cache.config;
    int64_t Hq = q.dim(1), group = Hq / c.heads, kd = c.keyDim, vd = c.valueDim;
    // Row (b, h)'s values and LSE: separate, or packed (Backend.h).
    int64_t rowStride = piece ? vd + vd / piece : vd;
    std::vector<float> row(vd);
    auto put = [&](int64_t b, int64_t h, double l) {
      float *o = out.f32() + (b * Hq + h) * rowStride;
      if (!piece) {
        std::copy(row.begin(), row.end(), o);
        lse.f32()[b * Hq + h] = static_cast<float>(l);
        return;
      }
      for (int64_t i = 0; i < vd; ++i)
        o[i + i / piece] = row[i];
      for (int64_t j = 0; j < vd / piece; ++j)
        o[j * (piece + 1) + piece] = static_cast<float>(l);
    };
    std::vector<double> scores, acc(vd);
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t h = 0; h < Hq; ++h) {
        int64_t kvh = h / group;
        const float *qv = q.f32() + (b * Hq + h) * kd;
        int64_t n = slotEnd[b] - slotBegin[b];
        if (n == 0) {
          std::fill(row.begin(), row.end(), 0.0f);
          put(b, h, -std::numeric_limits<double>::infinity());
          continue;
        }
        // Stored K/V decoded per token (docs/quantization.md).
        auto decoded = [&](const Tensor &store, const Tensor &scales,
                           int64_t dim, int64_t t, std::vector<float> &buf) {
          int64_t at = ((b * c.capacity + t) * c.heads + kvh) * dim;
          if (c.dtype == DType::F32)
            return static_cast<const float *>(store.raw()) + at;
          const uint8_t *src = static_cast<const uint8_t *>(store.raw()) +
                               dtypeBytes(c.dtype, at);
          const uint8_t *sc = scales.defined()
                                  ? static_cast<const uint8_t *>(scales.raw()) +
                                        (at / dim) * fmt::kvScalesPerHead(dim)
                                  : nullptr;
          buf.resize(dim);
          for (int64_t i = 0; i < dim; ++i)
            buf[i] = fmt::decodeKV(c.dtype, src, sc, i);
          return static_cast<const float *>(buf.data());
        };
        std::vector<float> kbuf, vbuf;
        auto keyAt = [&](int64_t t) {
          return decoded(cache.keys, cache.keyScales, kd, t, kbuf);
        };
        auto valueAt = [&](int64_t t) {
          if (c.valueInKey)
            return decoded(cache.keys, cache.keyScales, kd, t, vbuf);
          return decoded(cache.values, cache.valueScales, vd, t, vbuf);
        };
        scores.resize(n);
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t t = 0; t < n; ++t) {
          scores[t] = scale * dot(qv, keyAt(slotBegin[b] + t), kd);
          m = std::max(m, scores[t]);
        }
        double sum = 0;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t t = 0; t < n; ++t) {
          double p = std::exp(scores[t] - m);
          sum += p;
          const float *vv = valueAt(slotBegin[b] + t);
          for (int64_t i = 0; i < vd; ++i)
            acc[i] += p * vv[i];
        }
        for (int64_t i = 0; i < vd; ++i)
          row[i] = static_cast<float>(acc[i] / sum);
        put(b, h, m + std::log(sum));
      }
  }

  void lseCombine(const Tensor &values, const Tensor &lse,
                  const PartialsLayout &l, const Tensor *sinks,
                  Tensor &out) override {
    const double ninf = -std::numeric_limits<double>::infinity();
    for (int64_t b = 0; b < l.batch; ++b)
      for (int64_t h = 0; h < l.heads; ++h) {
        const float *v = values.f32() + b * l.batchStride + h * l.headStride;
        const float *ls =
            lse.f32() + b * l.lseBatchStride + h * l.lseHeadStride;
        double m = sinks ? sinks->f32()[h] : ninf;
        for (int64_t s = 0; s < l.shards; ++s)
          m = std::max(m, static_cast<double>(ls[s * l.lseShardStride]));
        float *o = out.f32() + (b * l.heads + h) * l.dim;
        if (m == ninf) {
          std::memset(o, 0, l.dim * sizeof(float));
          continue;
        }
        double denom = sinks ? std::exp(sinks->f32()[h] - m) : 0.0;
        std::vector<double> acc(l.dim, 0.0);
        for (int64_t s = 0; s < l.shards; ++s) {
          double e = ls[s * l.lseShardStride];
          if (e == ninf)
            continue;
          double w = std::exp(e - m);
          denom += w;
          const float *p = v + s * l.shardStride;
          for (int64_t i = 0; i < l.dim; ++i)
            acc[i] += w * p[i];
        }
        for (int64_t i = 0; i < l.dim; ++i)
          o[i] = static_cast<float>(acc[i] / denom);
      }
  }

  void gatedActivation(const Tensor &gate, const Tensor &up,
                       const Activation &act, Tensor &out) override {
    // A gate of one value per row broadcasts over the row.
    int64_t div = gate.numel() == up.numel() ? 1 : up.dim(-1);
    for (int64_t i = 0; i < up.numel(); ++i)
      out.f32()[i] =
          static_cast<float>(gated(act, gate.f32()[i / div], up.f32()[i]));
  }

  void moeExperts(const Tensor &x, const std::vector<int32_t> &indices,
                  const std::vector<float> &weights, int64_t topK,
                  const ExpertWeights &w, int64_t firstExpert,
                  const Activation &act, bool addDownBias,
                  Tensor &out) override {
    int64_t B = x.dim(0), H = x.dim(1), E = w.gate.dim(0), I = w.gate.dim(1);
    std::vector<double> acc(H), hidden(I);
    for (int64_t b = 0; b < B; ++b) {
      std::fill(acc.begin(), acc.end(), 0.0);
      const float *xv = x.f32() + b * H;
      for (int64_t k = 0; k < topK; ++k) {
        int64_t e = indices[b * topK + k] - firstExpert;
        if (e < 0 || e >= E)
          continue; // another rank's expert
        for (int64_t i = 0; i < I; ++i) {
          double g = dot(xv, w.gate.f32() + (e * I + i) * H, H);
          double u = dot(xv, w.up.f32() + (e * I + i) * H, H);
          if (w.gateBias.defined()) {
            g += w.gateBias.f32()[e * I + i];
            u += w.upBias.f32()[e * I + i];
          }
          // Round as a float32 model would between the two projections.
          hidden[i] = static_cast<float>(
              gated(act, static_cast<float>(g), static_cast<float>(u)));
        }
        double wk = weights[b * topK + k];
        for (int64_t j = 0; j < H; ++j) {
          const float *dr = w.down.f32() + (e * H + j) * I;
          double s = 0;
          for (int64_t i = 0; i < I; ++i)
            s += hidden[i] * dr[i];
          if (addDownBias && w.downBias.defined())
            s += w.downBias.f32()[e * H + j];
          acc[j] += wk * static_cast<float>(s);
        }
      }
      for (int64_t j = 0; j < H; ++j)
        out.f32()[b * H + j] = static_cast<float>(acc[j]);
    }
  }

  void gatedDeltaNet(const Tensor &proj, const Tensor &ba,
                     const GatedDeltaNetWeights &w, Tensor &state,
                     const std::vector<int64_t> &positions,
                     const GatedDeltaNetDims &d, float eps,
                     Tensor &out) override {
    int64_t B = proj.dim(0), Hk = d.keyHeads, Hv = d.valueHeads, r = d.ratio(),
            dk = d.keyDim, dv = d.valueDim, K = d.convKernel, W = K - 1,
            perHead = 2 * dk + 2 * r * dv, S = dk * dv;
    int64_t convBase = Hv * S, values = d.stateValues();
    // Channels of this key head (q, k, then its value heads' v) after the
    // convolution; o of one value head.
    std::vector<double> conv(2 * dk + r * dv), o(dv);
    for (int64_t b = 0; b < B; ++b) {
      float *st = state.f32() + b * values;
      if (positions[b] == 0)
        std::fill(st, st + values, 0.0f);
      for (int64_t kh = 0; kh < Hk; ++kh) {
        const float *pr = proj.f32() + b * Hk * perHead + kh * perHead;
        const float *g2 = ba.f32() + b * Hk * 2 * r + kh * 2 * r;
        for (int64_t lc = 0; lc < 2 * dk + r * dv; ++lc) {
          const Tensor &cw = lc < dk       ? w.convQ
                             : lc < 2 * dk ? w.convK
                                           : w.convV;
          int64_t row = lc < dk       ? kh * dk + lc
                        : lc < 2 * dk ? kh * dk + lc - dk
                                      : kh * r * dv + lc - 2 * dk;
          int64_t channel = lc < dk       ? row
                            : lc < 2 * dk ? Hk * dk + row
                                          : 2 * Hk * dk + row;
          float *window = st + convBase + channel * W;
          double in = pr[lc], acc = 0;
          for (int64_t t = 0; t < W; ++t)
            acc += valueOf(cw, row * K + t) * window[t];
          acc += valueOf(cw, row * K + W) * in;
          for (int64_t t = 0; t + 1 < W; ++t)
            window[t] = window[t + 1];
          if (W > 0)
            window[W - 1] = static_cast<float>(in);
          conv[lc] = silu(acc);
        }
        double qs = 0, ks = 0;
        for (int64_t i = 0; i < dk; ++i) {
          qs += conv[i] * conv[i];
          ks += conv[dk + i] * conv[dk + i];
        }
        double qScale = 1.0 / std::sqrt(qs + 1e-6) / std::sqrt(double(dk));
        double kScale = 1.0 / std::sqrt(ks + 1e-6);
        for (int64_t j = 0; j < r; ++j) {
          int64_t h = kh * r + j;
          double beta = 1.0 / (1.0 + std::exp(-double(g2[j])));
          double decay =
              std::exp(-std::exp(valueOf(w.aLog, h)) *
                       softplus(double(g2[r + j]) + valueOf(w.dtBias, h)));
          float *Sh = st + h * S;
          const double *v = conv.data() + 2 * dk + j * dv;
          for (int64_t c = 0; c < dv; ++c) {
            double kv = 0;
            for (int64_t i = 0; i < dk; ++i)
              kv += Sh[i * dv + c] * decay * conv[dk + i] * kScale;
            double delta = (v[c] - kv) * beta, oc = 0;
            for (int64_t i = 0; i < dk; ++i) {
              double sn =
                  Sh[i * dv + c] * decay + conv[dk + i] * kScale * delta;
              Sh[i * dv + c] = static_cast<float>(sn);
              oc += sn * conv[i] * qScale;
            }
            o[c] = oc;
          }
          double ss = 0;
          for (int64_t c = 0; c < dv; ++c)
            ss += o[c] * o[c];
          double inv = 1.0 / std::sqrt(ss / dv + eps);
          const float *z = pr + 2 * dk + r * dv + j * dv;
          for (int64_t c = 0; c < dv; ++c)
            out.f32()[b * Hv * dv + h * dv + c] = static_cast<float>(
                o[c] * inv * valueOf(w.normWeight, c) * silu(z[c]));
        }
      }
    }
  }

  void indexerPrepare(Tensor &q, const Tensor &key, const Tensor &normWeight,
                      const Tensor &normBias, float normEps, Tensor &weights,
                      float weightScale, Tensor &cache,
                      const std::vector<int64_t> &slots,
                      const std::vector<int64_t> &positions,
                      const std::vector<float> &invFreq, float attentionFactor,
                      bool interleaved) override {
    int64_t B = q.dim(0), heads = q.dim(1), D = q.dim(2),
            per = indexSlotValues(D), capacity = cache.dim(1) / per;
    std::vector<float> k(D);
    for (int64_t b = 0; b < B; ++b) {
      const float *kr = key.f32() + b * D;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < D; ++i)
        mean += kr[i];
      mean /= D;
      for (int64_t i = 0; i < D; ++i)
        var += (kr[i] - mean) * (kr[i] - mean);
      double inv = 1.0 / std::sqrt(var / D + normEps);
      for (int64_t i = 0; i < D; ++i)
        k[i] =
            static_cast<float>((kr[i] - mean) * inv * valueOf(normWeight, i) +
                               valueOf(normBias, i));
      ropeHead(k.data(), invFreq, attentionFactor, positions[b], interleaved);
      for (int64_t h = 0; h < heads; ++h) {
        ropeHead(q.f32() + (b * heads + h) * D, invFreq, attentionFactor,
                 positions[b], interleaved);
        weights.f32()[b * heads + h] *= weightScale;
      }
      if (slots[b] < 0)
        continue;
      float *dst = cache.f32() + (b * capacity + slots[b]) * per;
      std::copy(k.begin(), k.end(), dst);
      dst[D] = static_cast<float>(positions[b]);
    }
  }

  void indexerTopK(const Tensor &q, const Tensor &weights, const Tensor &cache,
                   const std::vector<int64_t> &begin,
                   const std::vector<int64_t> &end, int64_t topK,
                   Tensor &out) override {
    int64_t B = q.dim(0), heads = q.dim(1), D = q.dim(2),
            per = indexSlotValues(D), capacity = cache.dim(1) / per;
    std::vector<std::pair<float, int64_t>> scored;
    for (int64_t b = 0; b < B; ++b) {
      scored.clear();
      for (int64_t e = begin[b]; e < end[b]; ++e) {
        const float *k = cache.f32() + (b * capacity + e % capacity) * per;
        double s = 0;
        for (int64_t h = 0; h < heads; ++h)
          s += weights.f32()[b * heads + h] *
               std::max(0.0, dot(q.f32() + (b * heads + h) * D, k, D));
        float f = static_cast<float>(s);
        scored.push_back({f == 0.0f ? 0.0f : f, static_cast<int64_t>(k[D])});
      }
      std::sort(scored.begin(), scored.end(), [](const auto &x, const auto &y) {
        return x.first != y.first ? x.first > y.first : x.second < y.second;
      });
      float *o = out.f32() + b * topK * 2;
      for (int64_t i = 0; i < topK; ++i) {
        bool has = i < static_cast<int64_t>(scored.size());
        o[2 * i] =
            has ? scored[i].first : -std::numeric_limits<float>::infinity();
        o[2 * i + 1] = has ? static_cast<float>(scored[i].second) : -1.0f;
      }
    }
  }

  void kvGather(const KVCache &src, const std::vector<int64_t> &slots,
                KVCache &dst) override {
    const KVCacheConfig &c = src.config;
    int64_t cap = dst.config.capacity;
    // One entry (all heads) of `t` [B, capacity, heads, dim] in `dtype`.
    auto copyEntry = [&](const Tensor &from, Tensor &to, int64_t dim,
                         DType dtype, int64_t b, int64_t slot, int64_t i) {
      int64_t n = c.heads * dim;
      size_t bytes = dtypeBytes(dtype, n);
      const uint8_t *s = static_cast<const uint8_t *>(from.raw()) +
                         dtypeBytes(dtype, (b * c.capacity + slot) * n);
      uint8_t *d = static_cast<uint8_t *>(to.raw()) +
                   dtypeBytes(dtype, (b * cap + i) * n);
      std::memcpy(d, s, bytes);
    };
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t i = 0; i < cap; ++i) {
        int64_t slot = slots[b * cap + i];
        if (slot < 0)
          continue;
        copyEntry(src.keys, dst.keys, c.keyDim, c.dtype, b, slot, i);
        if (!c.valueInKey)
          copyEntry(src.values, dst.values, c.valueDim, c.dtype, b, slot, i);
        if (src.keyScales.defined())
          copyEntry(src.keyScales, dst.keyScales,
                    fmt::kvScalesPerHead(c.keyDim), DType::U8, b, slot, i);
        if (src.valueScales.defined())
          copyEntry(src.valueScales, dst.valueScales,
                    fmt::kvScalesPerHead(c.valueDim), DType::U8, b, slot, i);
      }
  }

  void add(const Tensor &a, const Tensor &b, Tensor &out) override {
    for (int64_t i = 0; i < a.numel(); ++i)
      out.f32()[i] = a.f32()[i] + b.f32()[i];
  }

  void swapAxes01(const Tensor &x, int64_t A, int64_t Bd, int64_t C,
                  Tensor &out) override {
    for (int64_t a = 0; a < A; ++a)
      for (int64_t b = 0; b < Bd; ++b)
        std::memcpy(out.f32() + (b * A + a) * C, x.f32() + (a * Bd + b) * C,
                    C * sizeof(float));
  }

  void sliceColumns(const Tensor &x, int64_t rows, int64_t cols, int64_t begin,
                    int64_t count, Tensor &out) override {
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(out.f32() + r * count, x.f32() + r * cols + begin,
                  count * sizeof(float));
  }

  void concatColumns(const Tensor &a, const Tensor &b, int64_t rows, int64_t ca,
                     int64_t cb, Tensor &out) override {
    for (int64_t r = 0; r < rows; ++r) {
      std::memcpy(out.f32() + r * (ca + cb), a.f32() + r * ca,
                  ca * sizeof(float));
      std::memcpy(out.f32() + r * (ca + cb) + ca, b.f32() + r * cb,
                  cb * sizeof(float));
    }
  }

  void sumLeading(const Tensor &x, int64_t S, int64_t n, Tensor &out) override {
    for (int64_t i = 0; i < n; ++i) {
      double s = 0;
      for (int64_t j = 0; j < S; ++j)
        s += x.f32()[j * n + i];
      out.f32()[i] = static_cast<float>(s);
    }
  }
};

} // namespace

std::unique_ptr<Backend> createCpuBackend(Context &, const ContextOptions &) {
  return std::make_unique<CpuBackend>();
}

} // namespace rt
} // namespace helix
