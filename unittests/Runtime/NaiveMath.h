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

} // namespace naive
} // namespace rt
} // namespace helix

#endif // HELIX_UNITTESTS_RUNTIME_NAIVEMATH_H
