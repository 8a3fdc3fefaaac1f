//===- CudaBackend.h - The CUDA backend (internal) --------------*- C++ -*-===//

#ifndef HELIX_RUNTIME_LIB_CUDABACKEND_H
#define HELIX_RUNTIME_LIB_CUDABACKEND_H

#include "helix/Runtime/Backend.h"
#include "helix/Runtime/Error.h"

#include <cublas_v2.h>
#include <nccl.h>

#include <cuda_runtime_api.h>
#include <functional>
#include <vector>

#include <string>

namespace helix {
namespace rt {

void cudaCheck(cudaError_t e, const char *what);
void cublasCheck(cublasStatus_t s, const char *what);

class StepGraph; // StepGraph.h

/// Device, streams and handles of one rank.
struct CudaState {
  int device = 0;
  int sms = 1; // streaming multiprocessors (split-K attention)
  cudaStream_t compute = nullptr; // every kernel and GEMM
  cudaStream_t comm = nullptr;    // NCCL collectives started with *Start
  cublasHandle_t blas = nullptr;
  bool nccl = true; // collectives through NCCL (else MPI, host staging)
  /// The watchdog's deadline for a host wait on a stream (seconds; <= 0:
  /// none) and the NCCL communicators it checks and aborts.
  double timeoutS = 60;
  std::vector<ncclComm_t> comms;
  /// The decode step's CUDA graph: while it replays, the communicators
  /// issue nothing (their work is in the graph).
  StepGraph *graph = nullptr;
  /// Counts one collective operation under `name` (Backend::traffic).
  std::function<void(const char *)> countCollective;
};

/// Waits for `stream` like cudaStreamSynchronize, but as a watchdog: polls
/// it, checks every NCCL communicator of `s` for an asynchronous error
/// (ncclCommGetAsyncError), and when one has failed or the stream has not
/// finished after s.timeoutS (a peer stopped, deadlocked or died) aborts
/// them all (ncclCommAbort) and throws Error naming `what`.
void waitStream(CudaState &s, cudaStream_t stream, const char *what);

std::unique_ptr<Communicator>
createNcclCommunicator(Context &ctx, CudaState &state,
                       const std::vector<int> &members, int index,
                       GroupHandle &group);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_CUDABACKEND_H
