//===- CudaEmuTsan.cpp - CUDA kernels on CPU threads under TSan -----------===//
//
// Built with -fsanitize=thread (no gtest: nothing uninstrumented runs the
// threads), with CudaKernels.cu and CudaEmuRaceKernels.cu as host C++
// (docs/cuda-on-cpu.md). Modes:
//
//   racy-block-sum        a tree sum missing the barrier after its stores
//   racy-two-reductions   blockReduce without its first barrier, twice
//   clean                 the same two with their barriers, then every
//                         launcher of CudaKernels.cu (CudaEmuCases.h)
//
// ctest expects ThreadSanitizer to report a data race in the racy kernels
// and nothing in `clean` (exit 0: every result also matches naive math).
//
//===----------------------------------------------------------------------===//

#include "CudaEmuCases.h"

#include <cstdio>
#include <cstring>

namespace helix {
namespace cudaemu_race {
void racyBlockSum(const float *x, int blocks, float *out);
void blockSum(const float *x, int blocks, float *out);
void racyTwoReductions(const float *x, int blocks, float *out);
void twoReductions(const float *x, int blocks, float *out);
} // namespace cudaemu_race
} // namespace helix

using namespace helix::rt::cudaemu_test;
namespace race = helix::cudaemu_race;

namespace {

int failures = 0;

void expect(const Result &r) {
  int64_t i = mismatch(r);
  if (r.error != cudaSuccess || i != -1) {
    ++failures;
    std::printf("FAIL %s: %s %s", r.what.c_str(), cudaGetErrorString(r.error),
                helix::cudaemu::lastErrorMessage().c_str());
    if (i >= 0 && i < static_cast<int64_t>(r.got.size()))
      std::printf(" element %lld is %g, naive %g", static_cast<long long>(i),
                  r.got[i], r.want[i]);
    std::printf("\n");
  } else {
    std::printf("ok   %s\n", r.what.c_str());
  }
}

/// Block sums (and sums of squares) of `x` in blocks of `n`.
Result sums(const char *what, void (*f)(const float *, int, float *),
            int blocks, int n, bool squares) {
  std::vector<float> x = randn(blocks * n, 60);
  std::vector<float> out(blocks * (squares ? 2 : 1), NAN);
  f(x.data(), blocks, out.data());
  std::vector<double> want;
  for (int b = 0; b < blocks; ++b) {
    double s = 0, ss = 0;
    for (int i = 0; i < n; ++i) {
      s += x[b * n + i];
      ss += double(x[b * n + i]) * x[b * n + i];
    }
    want.push_back(s);
    if (squares)
      want.push_back(ss);
  }
  return finish(what, out, want, 1e-5);
}

} // namespace

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!std::strcmp(mode, "racy-block-sum")) {
    sums("racyBlockSum", race::racyBlockSum, 2, 256, false);
    return 0; // ThreadSanitizer's report sets the exit status
  }
  if (!std::strcmp(mode, "racy-two-reductions")) {
    sums("racyTwoReductions", race::racyTwoReductions, 2, 128, true);
    return 0;
  }
  if (std::strcmp(mode, "clean")) {
    std::fprintf(stderr, "usage: %s racy-block-sum|racy-two-reductions|clean\n",
                 argv[0]);
    return 2;
  }
  expect(sums("blockSum", race::blockSum, 2, 256, false));
  expect(sums("twoReductions", race::twoReductions, 2, 128, true));
  for (const Result &r : allCases())
    expect(r);
  std::printf("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
