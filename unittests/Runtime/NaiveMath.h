//===- NaiveMath.h - Reference math for the kernel tests --------*- C++ -*-===//
//
// The double-precision references the kernel tests compare with, written
// once: RMSNorm over a prefix of each row, and MLA's per-head GEMM. Shared
// by the emulation cases (CudaEmuCases.h) and the backend tests.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_UNITTESTS_RUNTIME_NAIVEMATH_H
#define HELIX_UNITTESTS_RUNTIME_NAIVEMATH_H

#include <cmath>
#include <cstdint>
#include <vector>

namespace helix {
namespace rt {
namespace naive {

/// Rows of `width` values: x * rsqrt(mean(x^2) + eps) * w over the first
/// `dim`, the rest copied (dim == width: a plain RMSNorm).
inline std::vector<double> rmsNormRows(const std::vector<float> &x,
                                       const std::vector<float> &w,
                                       int64_t rows, int64_t width, int64_t dim,
                                       float eps) {
  std::vector<double> out(rows * width);
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x.data() + r * width;
    double ss = 0;
    for (int64_t i = 0; i < dim; ++i)
      ss += double(xr[i]) * xr[i];
    double inv = 1 / std::sqrt(ss / dim + eps);
    for (int64_t i = 0; i < width; ++i)
      out[r * width + i] = i < dim ? xr[i] * inv * w[i] : xr[i];
  }
  return out;
}

/// out[b, h, n] = sum_a x[b, h, a] W_h(a, n), W_h's element (a, n) the
/// weight's value at (h A + a) N + n (transposed, [H, A, N]) or
/// (h N + n) A + a ([H, N, A]), read through `value(index)`.
template <class Value>
std::vector<double> headMatmul(const std::vector<float> &x, int64_t B,
                               int64_t H, int64_t A, int64_t N, bool transposeW,
                               const Value &value) {
  std::vector<double> out(B * H * N, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t a = 0; a < A; ++a)
          out[(b * H + h) * N + n] +=
              double(x[(b * H + h) * A + a]) *
              value(transposeW ? (h * A + a) * N + n : (h * N + n) * A + a);
  return out;
}

/// A Gated DeltaNet layer's shape (Ops.h's GatedDeltaNetDims).
struct GdnShape {
  int64_t keyHeads, valueHeads, keyDim, valueDim, convKernel;
  int64_t ratio() const { return valueHeads / keyHeads; }
  int64_t channels() const {
    return 2 * keyHeads * keyDim + valueHeads * valueDim;
  }
  int64_t stateValues() const {
    return valueHeads * keyDim * valueDim + channels() * (convKernel - 1);
  }
};

/// One decode step of a Gated DeltaNet layer for one request, as Hugging
/// Face's Qwen3NextGatedDeltaNet computes it (fix_query_key_value_ordering,
/// causal_conv1d_update, l2norm, the recurrent gated delta rule,
/// Qwen3NextRMSNormGated), from the projections proj (per key head: q, k,
/// v of its value heads, z of them) and ba (per key head: b, a). `state`:
/// the request's row in the runtime's layout (the value heads' S [dk, dv],
/// then the convolution inputs [channels, K - 1], oldest first), updated;
/// `fresh`: start from zeros. Weights: conv [channels, K] (all q, all k, all
/// v), aLog / dtBias [Hv], norm [dv]. -> [Hv dv].
inline std::vector<double>
gdnStep(const GdnShape &s, const std::vector<double> &proj,
        const std::vector<double> &ba, const std::vector<double> &conv,
        const std::vector<double> &aLog, const std::vector<double> &dtBias,
        const std::vector<double> &norm, std::vector<double> &state, bool fresh,
        double eps) {
  const int64_t Hk = s.keyHeads, Hv = s.valueHeads, r = s.ratio(),
                dk = s.keyDim, dv = s.valueDim, K = s.convKernel,
                C = s.channels();
  if (fresh)
    state.assign(s.stateValues(), 0.0);
  double *S = state.data(), *convState = S + Hv * dk * dv;
  // fix_query_key_value_ordering, then mixed_qkv = cat(q, k, v).
  std::vector<double> mixed(C), z(Hv * dv), b(Hv), a(Hv);
  const int64_t per = 2 * dk + 2 * r * dv;
  for (int64_t kh = 0; kh < Hk; ++kh) {
    const double *p = proj.data() + kh * per;
    for (int64_t i = 0; i < dk; ++i) {
      mixed[kh * dk + i] = p[i];
      mixed[Hk * dk + kh * dk + i] = p[dk + i];
    }
    for (int64_t i = 0; i < r * dv; ++i) {
      mixed[2 * Hk * dk + kh * r * dv + i] = p[2 * dk + i];
      z[kh * r * dv + i] = p[2 * dk + r * dv + i];
    }
    for (int64_t j = 0; j < r; ++j) {
      b[kh * r + j] = ba[kh * 2 * r + j];
      a[kh * r + j] = ba[kh * 2 * r + r + j];
    }
  }
  auto silu = [](double x) { return x / (1 + std::exp(-x)); };
  // causal_conv1d_update: [stored K - 1 inputs, new input] * weight.
  std::vector<double> act(C);
  for (int64_t c = 0; c < C; ++c) {
    double *w = convState + c * (K - 1);
    double acc = conv[c * K + K - 1] * mixed[c];
    for (int64_t t = 0; t < K - 1; ++t)
      acc += conv[c * K + t] * w[t];
    for (int64_t t = 0; t + 1 < K - 1; ++t)
      w[t] = w[t + 1];
    if (K > 1)
      w[K - 2] = mixed[c];
    act[c] = silu(acc);
  }
  // l2norm of each q and k head, q scaled by dk^-1/2; repeated r times.
  auto l2 = [&](double *v) {
    double ss = 0;
    for (int64_t i = 0; i < dk; ++i)
      ss += v[i] * v[i];
    for (int64_t i = 0; i < dk; ++i)
      v[i] /= std::sqrt(ss + 1e-6);
  };
  for (int64_t kh = 0; kh < 2 * Hk; ++kh)
    l2(act.data() + kh * dk);
  std::vector<double> out(Hv * dv);
  for (int64_t h = 0; h < Hv; ++h) {
    const double *q = act.data() + (h / r) * dk,
                 *k = act.data() + Hk * dk + (h / r) * dk,
                 *v = act.data() + 2 * Hk * dk + h * dv;
    double beta = 1 / (1 + std::exp(-b[h]));
    double x = a[h] + dtBias[h];
    double g = -std::exp(aLog[h]) * (x > 20 ? x : std::log1p(std::exp(x)));
    double *Sh = S + h * dk * dv;
    for (int64_t i = 0; i < dk * dv; ++i)
      Sh[i] *= std::exp(g);
    std::vector<double> delta(dv), o(dv, 0.0);
    for (int64_t j = 0; j < dv; ++j) {
      double mem = 0;
      for (int64_t i = 0; i < dk; ++i)
        mem += Sh[i * dv + j] * k[i];
      delta[j] = (v[j] - mem) * beta;
    }
    for (int64_t i = 0; i < dk; ++i)
      for (int64_t j = 0; j < dv; ++j)
        Sh[i * dv + j] += k[i] * delta[j];
    for (int64_t j = 0; j < dv; ++j)
      for (int64_t i = 0; i < dk; ++i)
        o[j] += Sh[i * dv + j] * q[i] / std::sqrt(double(dk));
    double ss = 0;
    for (double e : o)
      ss += e * e;
    double inv = 1 / std::sqrt(ss / dv + eps);
    for (int64_t j = 0; j < dv; ++j)
      out[h * dv + j] = o[j] * inv * norm[j] * silu(z[h * dv + j]);
  }
  return out;
}

} // namespace naive
} // namespace rt
} // namespace helix

#endif // HELIX_UNITTESTS_RUNTIME_NAIVEMATH_H
