//===- CudaBackend.h - The CUDA backend (internal) --------------*- C++ -*-===//

#ifndef HELIX_RUNTIME_LIB_CUDABACKEND_H
#define HELIX_RUNTIME_LIB_CUDABACKEND_H

#include "helix/Runtime/Backend.h"
#include "helix/Runtime/Error.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

namespace helix {
namespace rt {

void cudaCheck(cudaError_t e, const char *what);
void cublasCheck(cublasStatus_t s, const char *what);

/// Device, streams and handles of one rank.
struct CudaState {
  int device = 0;
  cudaStream_t compute = nullptr; // every kernel and GEMM
  cudaStream_t comm = nullptr;    // NCCL collectives started with *Start
  cublasHandle_t blas = nullptr;
  bool nccl = true; // collectives through NCCL (else MPI, host staging)
};

std::unique_ptr<Communicator>
createNcclCommunicator(Context &ctx, CudaState &state,
                       const std::vector<int> &members, int index,
                       GroupHandle &group);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_CUDABACKEND_H
