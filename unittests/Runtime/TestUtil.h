//===- TestUtil.h - Helpers of the runtime unit tests -----------*- C++ -*-===//
//
// The kernel tests run on the backend named by HELIX_TEST_BACKEND ("cpu" in
// HelixRuntimeTests, "cuda" in HelixRuntimeCudaTests, which skips every
// test when no CUDA device is present).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_UNITTESTS_RUNTIME_TESTUTIL_H
#define HELIX_UNITTESTS_RUNTIME_TESTUTIL_H

#include "helix/Runtime/Runtime.h"
#ifdef HELIX_TEST_CUDA
#include "helix/Runtime/CudaBackend.h"
#endif

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <random>

namespace helix {
namespace rt {
namespace test {

#ifndef HELIX_TEST_BACKEND
#define HELIX_TEST_BACKEND "cpu"
#endif

/// Creates the backend under test, or skips the test.
inline std::unique_ptr<Context> makeContext() {
#ifdef HELIX_TEST_CUDA
  registerCudaBackend();
  if (cudaDeviceCount() == 0)
    return nullptr;
#endif
  ContextOptions o;
  o.backend = HELIX_TEST_BACKEND;
  return Context::create(o);
}

#define HELIX_NEED_CONTEXT(ctx)                                                \
  auto ctx = ::helix::rt::test::makeContext();                                 \
  if (!ctx)                                                                    \
    GTEST_SKIP() << "no CUDA device";

inline std::vector<float> randomVector(size_t n, uint64_t seed,
                                       float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

/// |a - b| <= tol * (1 + |b|) elementwise.
inline void expectNear(const std::vector<float> &got,
                       const std::vector<double> &want, double tol = 1e-5) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at " << i;
}

inline void expectNear(const std::vector<float> &got,
                       const std::vector<float> &want, double tol = 1e-5) {
  expectNear(got, std::vector<double>(want.begin(), want.end()), tol);
}

/// Naive attention of one query over keys/values (rows of kd / vd floats).
inline std::vector<double>
naiveAttention(const float *q, int64_t kd,
               const std::vector<const float *> &keys,
               const std::vector<const float *> &values, int64_t vd,
               double scale, double *lse, const double *sink = nullptr) {
  std::vector<double> s;
  for (const float *k : keys) {
    double d = 0;
    for (int64_t i = 0; i < kd; ++i)
      d += static_cast<double>(q[i]) * k[i];
    s.push_back(d * scale);
  }
  double m = sink ? *sink : -std::numeric_limits<double>::infinity();
  for (double v : s)
    m = std::max(m, v);
  double sum = sink ? std::exp(*sink - m) : 0.0;
  for (double &v : s)
    sum += v = std::exp(v - m);
  std::vector<double> o(vd, 0.0);
  for (size_t t = 0; t < s.size(); ++t)
    for (int64_t i = 0; i < vd; ++i)
      o[i] += s[t] / sum * values[t][i];
  if (lse)
    *lse = m + std::log(sum);
  return o;
}

} // namespace test
} // namespace rt
} // namespace helix

#endif // HELIX_UNITTESTS_RUNTIME_TESTUTIL_H
