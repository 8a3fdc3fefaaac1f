//===- CudaBackend.h - The CUDA backend (HelixRuntimeCUDA) ------*- C++ -*-===//
//
// Link Helix::HelixRuntimeCUDA and call registerCudaBackend() once before
// Context::create({"cuda"}): kernels on a compute stream, GEMMs through
// cuBLAS, collectives through NCCL on a second stream (HOP-B overlap with
// events) or through MPI with host staging (collectives = "mpi", or "auto"
// when ranks of a node share a device: NCCL refuses two ranks on one GPU).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_CUDABACKEND_H
#define HELIX_RUNTIME_CUDABACKEND_H

namespace helix {
namespace rt {

/// Registers the "cuda" backend. Safe to call more than once.
void registerCudaBackend();

/// Number of CUDA devices visible (0 when there is no driver or device).
int cudaDeviceCount();

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_CUDABACKEND_H
