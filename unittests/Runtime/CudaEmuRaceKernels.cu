//===- CudaEmuRaceKernels.cu - Kernels missing a barrier, and their fixes -===//
//
// CUDA source for the ThreadSanitizer tests of the CPU execution of kernels
// (CudaEmuTsan.cpp, docs/cuda-on-cpu.md). Built only as host C++, through
// runtime/lib/CUDA/Emu/HostSource.cmake like CudaKernels.cu.
//
//===----------------------------------------------------------------------===//

#include <cuda_runtime.h>

namespace helix {
namespace cudaemu_race {

namespace {

/// Tree sum of the block's 256 values, missing the barrier between the
/// stores to shared memory and the first step that reads them.
__global__ void racyBlockSumKernel(const float *x, float *out) {
  __shared__ float s[256];
  s[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (unsigned o = blockDim.x / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o)
      s[threadIdx.x] += s[threadIdx.x + o];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = s[0];
}

/// The same with the barrier.
__global__ void blockSumKernel(const float *x, float *out) {
  __shared__ float s[256];
  s[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (unsigned o = blockDim.x / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o)
      s[threadIdx.x] += s[threadIdx.x + o];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = s[0];
}

/// CudaKernels.cu's blockReduce (sum), with or without its first barrier,
/// the one that keeps a reduction from overwriting the per-warp partials
/// a previous reduction is still reading.
template <bool Racy> __device__ float blockReduce(float v, float *scratch) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  int warps = (blockDim.x + 31) >> 5;
  if (!Racy)
    __syncthreads();
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  v = lane < warps ? scratch[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/// Two reductions in a row: sum of x, then sum of x * x.
template <bool Racy> __device__ void twoReductions(const float *x, float *out) {
  __shared__ float scratch[32];
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  float s1 = blockReduce<Racy>(v, scratch);
  float s2 = blockReduce<Racy>(v * v, scratch);
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = s1;
    out[2 * blockIdx.x + 1] = s2;
  }
}

__global__ void racyTwoReductionsKernel(const float *x, float *out) {
  twoReductions<true>(x, out);
}
__global__ void twoReductionsKernel(const float *x, float *out) {
  twoReductions<false>(x, out);
}

} // namespace

void racyBlockSum(const float *x, int blocks, float *out) {
  racyBlockSumKernel<<<blocks, 256>>>(x, out);
}
void blockSum(const float *x, int blocks, float *out) {
  blockSumKernel<<<blocks, 256>>>(x, out);
}
void racyTwoReductions(const float *x, int blocks, float *out) {
  racyTwoReductionsKernel<<<blocks, 128>>>(x, out);
}
void twoReductions(const float *x, int blocks, float *out) {
  twoReductionsKernel<<<blocks, 128>>>(x, out);
}

} // namespace cudaemu_race
} // namespace helix
