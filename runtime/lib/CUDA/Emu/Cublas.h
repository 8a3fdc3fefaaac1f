//===- Cublas.h - The cuBLAS calls of the CUDA backend, on the CPU -*- C++
//-*-===//
//
// cublasSgemm and cublasSgemmStridedBatched with cuBLAS's column-major
// conventions, computed naively (double accumulation) on the host, for the
// CUDA backend under the CPU emulation (docs/cuda-on-cpu.md). Each operand
// must lie inside one device allocation (HostApi.h), as on a GPU, where a
// host pointer faults; a dimension or leading dimension cuBLAS rejects gives
// CUBLAS_STATUS_INVALID_VALUE.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_CUDA_EMU_CUBLAS_H
#define HELIX_RUNTIME_CUDA_EMU_CUBLAS_H

#include "CudaEmu.h"

enum cublasStatus_t { // the values of cublas_api.h
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_ALLOC_FAILED = 3,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_EXECUTION_FAILED = 13,
};
enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 };
enum cublasMath_t {
  CUBLAS_DEFAULT_MATH = 0,
  CUBLAS_TENSOR_OP_MATH = 1,
  CUBLAS_PEDANTIC_MATH = 2,
  CUBLAS_TF32_TENSOR_OP_MATH = 3,
};
struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};
typedef cublasContext *cublasHandle_t;

inline cublasStatus_t cublasCreate(cublasHandle_t *h) {
  *h = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDestroy(cublasHandle_t h) {
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
  if (!h)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  h->stream = s;
  return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t m) {
  if (!h)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  h->math = m;
  return CUBLAS_STATUS_SUCCESS;
}

namespace helix {
namespace cudaemu {

/// Elements a column-major `rows` x `cols` operand with leading dimension
/// `ld` spans.
inline size_t span(int rows, int cols, int ld) {
  return rows && cols ? size_t(cols - 1) * ld + rows : 0;
}

/// C = alpha op(A) op(B) + beta C, column-major, one matrix of a batch.
inline void sgemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                  int k, float alpha, const float *A, int lda, const float *B,
                  int ldb, float beta, float *C, int ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double acc = 0;
      for (int p = 0; p < k; ++p) {
        float a =
            ta == CUBLAS_OP_N ? A[i + size_t(p) * lda] : A[p + size_t(i) * lda];
        float b =
            tb == CUBLAS_OP_N ? B[p + size_t(j) * ldb] : B[j + size_t(p) * ldb];
        acc += double(a) * b;
      }
      float &c = C[i + size_t(j) * ldc];
      c = float(alpha * acc + (beta == 0.0f ? 0.0 : double(beta) * c));
    }
}

/// Checks the arguments of one batch of `count` GEMMs as cuBLAS does, and
/// that every operand lies in device memory.
inline cublasStatus_t checkGemm(const char *call, cublasHandle_t h,
                                cublasOperation_t ta, cublasOperation_t tb,
                                int m, int n, int k, const float *A, int lda,
                                long long strideA, const float *B, int ldb,
                                long long strideB, float *C, int ldc,
                                long long strideC, int count) {
  if (!h)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  auto op = [](cublasOperation_t t) {
    return t == CUBLAS_OP_N || t == CUBLAS_OP_T;
  };
  int aRows = ta == CUBLAS_OP_N ? m : k, bRows = tb == CUBLAS_OP_N ? k : n;
  if (!op(ta) || !op(tb) || m < 0 || n < 0 || k < 0 || count < 0 ||
      lda < std::max(1, aRows) || ldb < std::max(1, bRows) ||
      ldc < std::max(1, m)) {
    setError(cudaErrorInvalidValue, std::string(call) + ": invalid argument");
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  auto inside = [&](const char *name, const float *p, int rows, int cols,
                    int ld, long long stride) {
    size_t elems =
        count ? size_t(count - 1) * stride + span(rows, cols, ld) : 0;
    if (elems && !onDevice(p, elems * sizeof(float))) {
      badPointer(call, name, p, elems * sizeof(float));
      return false;
    }
    return true;
  };
  if (!inside("A operand", A, aRows, ta == CUBLAS_OP_N ? k : m, lda, strideA) ||
      !inside("B operand", B, bRows, tb == CUBLAS_OP_N ? n : k, ldb, strideB) ||
      !inside("C operand", C, m, n, ldc, strideC))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  trace("cublas %s m %d n %d k %d batch %d stream %u", call, m, n, k, count,
        streamId(h->stream));
  return CUBLAS_STATUS_SUCCESS;
}

/// Runs a checked call now, or records it on the handle's capturing stream
/// (Graphs.h).
template <class F>
cublasStatus_t run(const char *call, cublasHandle_t h, const F &f) {
  if (checkStreamUse(h->stream, call) != cudaSuccess)
    return CUBLAS_STATUS_EXECUTION_FAILED;
  if (!recordNode(h->stream, call, [f] {
        f();
        return cudaSuccess;
      }))
    f();
  return CUBLAS_STATUS_SUCCESS;
}

} // namespace cudaemu
} // namespace helix

inline cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta,
                                  cublasOperation_t tb, int m, int n, int k,
                                  const float *alpha, const float *A, int lda,
                                  const float *B, int ldb, const float *beta,
                                  float *C, int ldc) {
  using namespace helix::cudaemu;
  cublasStatus_t s = checkGemm("cublasSgemm", h, ta, tb, m, n, k, A, lda, 0, B,
                               ldb, 0, C, ldc, 0, 1);
  if (s != CUBLAS_STATUS_SUCCESS)
    return s;
  float a = *alpha, b = *beta; // host pointer mode: read at the call
  return run("cublasSgemm", h,
             [=] { sgemm(ta, tb, m, n, k, a, A, lda, B, ldb, b, C, ldc); });
}

inline cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
    int k, const float *alpha, const float *A, int lda, long long strideA,
    const float *B, int ldb, long long strideB, const float *beta, float *C,
    int ldc, long long strideC, int count) {
  using namespace helix::cudaemu;
  cublasStatus_t s =
      checkGemm("cublasSgemmStridedBatched", h, ta, tb, m, n, k, A, lda,
                strideA, B, ldb, strideB, C, ldc, strideC, count);
  if (s != CUBLAS_STATUS_SUCCESS)
    return s;
  float a = *alpha, be = *beta;
  return run("cublasSgemmStridedBatched", h, [=] {
    for (int b = 0; b < count; ++b)
      sgemm(ta, tb, m, n, k, a, A + b * strideA, lda, B + b * strideB, ldb, be,
            C + b * strideC, ldc);
  });
}

#endif // HELIX_RUNTIME_CUDA_EMU_CUBLAS_H
