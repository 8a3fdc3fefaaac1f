//===- CudaEmuGraphTest.cpp - Stream capture and graphs, emulated ---------===//
//
// runtime/lib/CUDA/Emu/Graphs.h (docs/cuda-on-cpu.md, "CUDA graphs"):
// captured work runs only when the graph is launched, as often as it is;
// what CUDA forbids during a capture fails and invalidates it; streams join
// and must rejoin; graph allocations keep their address and must be freed
// between launches.
//
//===----------------------------------------------------------------------===//

#include "gtest/gtest.h"

#include "CudaKernels.h"

#include <cublas_v2.h>

#include <vector>

using namespace helix::rt;

namespace {

struct Streams {
  cudaStream_t a = nullptr, b = nullptr;
  Streams() {
    cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
  }
  ~Streams() {
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
  }
};

/// Device buffer of n floats.
float *deviceFloats(size_t n) {
  void *p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, n * sizeof(float)), cudaSuccess);
  return static_cast<float *>(p);
}

/// Ends the capture of `s` expecting `want`; destroys a graph it made.
void endExpecting(cudaStream_t s, cudaError_t want) {
  cudaGraph_t g = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(s, &g), want)
      << helix::cudaemu::lastErrorMessage();
  EXPECT_EQ(g != nullptr, want == cudaSuccess);
  if (g)
    cudaGraphDestroy(g);
  (void)cudaGetLastError();
}

// A page-locked input copied to the device, a kernel on it (add) and a
// cuBLAS GEMM: nothing runs while captured; each launch runs all of it,
// reading the page-locked input as it is at the launch.
TEST(CudaEmuGraphs, CapturedWorkRunsAtEachLaunch) {
  Streams st;
  const int n = 4;
  float *pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(reinterpret_cast<void **>(&pinned), n * 4),
            cudaSuccess);
  float *x = deviceFloats(n), *y = deviceFloats(n), *z = deviceFloats(n);
  std::vector<float> ones(n, 1.0f);
  ASSERT_EQ(
      cudaMemcpyAsync(y, ones.data(), n * 4, cudaMemcpyHostToDevice, st.a),
      cudaSuccess);
  cublasHandle_t blas;
  cublasCreate(&blas);
  cublasSetStream(blas, st.a);
  for (int i = 0; i < n; ++i)
    pinned[i] = float(i);
  ASSERT_EQ(cudaStreamBeginCapture(st.a, cudaStreamCaptureModeGlobal),
            cudaSuccess);
  cudaStreamCaptureStatus status;
  cudaStreamIsCapturing(st.a, &status);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive);
  ASSERT_EQ(cudaMemcpyAsync(x, pinned, n * 4, cudaMemcpyHostToDevice, st.a),
            cudaSuccess);
  cuda::add(x, y, n, z, st.a); // z = x + 1
  // z[0] = sum_i z_i x_i (a 1 x 1 GEMM over n), beta 0.
  const float one = 1.0f, zero = 0.0f;
  ASSERT_EQ(cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, 1, 1, n, &one, z, n, x,
                        n, &zero, y, 1),
            CUBLAS_STATUS_SUCCESS);
  std::vector<float> zHost(n, -1.0f);
  // Nothing ran: z is still unset, y still ones.
  cudaGraph_t g = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(st.a, &g), cudaSuccess);
  size_t nodes = 0;
  cudaGraphGetNodes(g, nullptr, &nodes);
  EXPECT_EQ(nodes, 3u);
  std::vector<float> yHost(n);
  ASSERT_EQ(cudaMemcpy(yHost.data(), y, n * 4, cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(yHost, ones) << "a captured GEMM ran";
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
  for (int launch = 0; launch < 2; ++launch) {
    for (int i = 0; i < n; ++i)
      pinned[i] = float(i + 10 * launch);
    // y[0] was the GEMM's output: reset the rest of the add's input.
    ASSERT_EQ(cudaMemcpy(y, ones.data(), n * 4, cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, st.a), cudaSuccess)
        << helix::cudaemu::lastErrorMessage();
    ASSERT_EQ(cudaMemcpy(zHost.data(), z, n * 4, cudaMemcpyDeviceToHost),
              cudaSuccess);
    float dot = 0;
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(zHost[i], float(i + 10 * launch) + 1.0f) << launch;
      dot += zHost[i] * float(i + 10 * launch);
    }
    ASSERT_EQ(cudaMemcpy(yHost.data(), y, 4, cudaMemcpyDeviceToHost),
              cudaSuccess);
    EXPECT_FLOAT_EQ(yHost[0], dot) << launch;
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(g);
  cublasDestroy(blas);
  cudaFree(x);
  cudaFree(y);
  cudaFree(z);
  cudaFreeHost(pinned);
}

// What CUDA does not allow while a stream captures: each fails at once and
// invalidates the capture (EndCapture: no graph).
TEST(CudaEmuGraphs, IllegalCallsInvalidateTheCapture) {
  Streams st;
  float *d = deviceFloats(4);
  std::vector<float> pageable(4, 1.0f);
  struct Case {
    const char *what;
    std::function<cudaError_t()> call;
    cudaError_t error;
  };
  void *p = nullptr;
  std::vector<Case> cases = {
      {"cudaStreamSynchronize", [&] { return cudaStreamSynchronize(st.a); },
       cudaErrorStreamCaptureUnsupported},
      {"cudaStreamQuery", [&] { return cudaStreamQuery(st.a); },
       cudaErrorStreamCaptureUnsupported},
      {"cudaDeviceSynchronize", [&] { return cudaDeviceSynchronize(); },
       cudaErrorStreamCaptureUnsupported},
      {"pageable copy",
       [&] {
         return cudaMemcpyAsync(d, pageable.data(), 16, cudaMemcpyHostToDevice,
                                st.a);
       },
       cudaErrorStreamCaptureUnsupported},
      {"cudaMemcpy",
       [&] {
         return cudaMemcpy(d, pageable.data(), 16, cudaMemcpyHostToDevice);
       },
       cudaErrorStreamCaptureUnsupported},
      {"cudaMalloc", [&] { return cudaMalloc(&p, 16); },
       cudaErrorStreamCaptureUnsupported},
      {"the legacy stream",
       [&] {
         cuda::add(d, d, 4, d, nullptr);
         return cudaGetLastError();
       },
       cudaErrorStreamCaptureImplicit},
  };
  for (const Case &c : cases) {
    ASSERT_EQ(cudaStreamBeginCapture(st.a, cudaStreamCaptureModeGlobal),
              cudaSuccess);
    EXPECT_EQ(c.call(), c.error) << c.what;
    EXPECT_NE(helix::cudaemu::lastErrorMessage().find("captur"),
              std::string::npos)
        << c.what << ": " << helix::cudaemu::lastErrorMessage();
    (void)cudaGetLastError();
    cudaStreamCaptureStatus status;
    cudaStreamIsCapturing(st.a, &status);
    EXPECT_EQ(status, cudaStreamCaptureStatusInvalidated) << c.what;
    endExpecting(st.a, cudaErrorStreamCaptureInvalidated);
  }
  EXPECT_EQ(cudaStreamSynchronize(st.a), cudaSuccess) << "not capturing";
  cudaFree(d);
}

// A stream joins by waiting on an event recorded in the capture; its work
// is captured too, and the origin must wait for it before the end.
TEST(CudaEmuGraphs, JoinedStreamsMustRejoin) {
  Streams st;
  float *d = deviceFloats(4);
  cudaEvent_t fork, join;
  cudaEventCreateWithFlags(&fork, cudaEventDisableTiming);
  cudaEventCreateWithFlags(&join, cudaEventDisableTiming);
  for (bool rejoin : {true, false}) {
    ASSERT_EQ(cudaStreamBeginCapture(st.a, cudaStreamCaptureModeGlobal),
              cudaSuccess);
    cudaEventRecord(fork, st.a);
    cudaStreamWaitEvent(st.b, fork, 0); // b joins
    cudaStreamCaptureStatus status;
    cudaStreamIsCapturing(st.b, &status);
    EXPECT_EQ(status, cudaStreamCaptureStatusActive);
    ASSERT_EQ(cudaMemsetAsync(d, 0, 16, st.b), cudaSuccess);
    if (rejoin) {
      cudaEventRecord(join, st.b);
      cudaStreamWaitEvent(st.a, join, 0);
    }
    endExpecting(st.a, rejoin ? cudaSuccess : cudaErrorStreamCaptureUnjoined);
    cudaStreamIsCapturing(st.b, &status);
    EXPECT_EQ(status, cudaStreamCaptureStatusNone) << "b left the capture";
  }
  // An event recorded before the capture cannot order a capturing stream.
  cudaEventRecord(join, st.b);
  ASSERT_EQ(cudaStreamBeginCapture(st.a, cudaStreamCaptureModeGlobal),
            cudaSuccess);
  EXPECT_EQ(cudaStreamWaitEvent(st.a, join, 0),
            cudaErrorStreamCaptureIsolation);
  endExpecting(st.a, cudaErrorStreamCaptureInvalidated);
  // Only the stream that began the capture ends it.
  ASSERT_EQ(cudaStreamBeginCapture(st.a, cudaStreamCaptureModeGlobal),
            cudaSuccess);
  cudaEventRecord(fork, st.a);
  cudaStreamWaitEvent(st.b, fork, 0);
  cudaGraph_t g = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(st.b, &g), cudaErrorStreamCaptureUnmatched);
  cudaEventRecord(join, st.b);
  cudaStreamWaitEvent(st.a, join, 0);
  endExpecting(st.a, cudaErrorStreamCaptureInvalidated);
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
  cudaFree(d);
}

// A stream-ordered allocation in a capture is the graph's: the same
// address at every launch, which must find it freed.
TEST(CudaEmuGraphs, GraphAllocationsAreFreedBetweenLaunches) {
  Streams st;
  void *p = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(st.a, cudaStreamCaptureModeGlobal),
            cudaSuccess);
  ASSERT_EQ(cudaMallocAsync(&p, 64, st.a), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(p, 7, 64, st.a), cudaSuccess);
  void *q = nullptr; // allocated and freed inside: fine at every launch
  ASSERT_EQ(cudaMallocAsync(&q, 32, st.a), cudaSuccess);
  ASSERT_EQ(cudaFreeAsync(q, st.a), cudaSuccess);
  cudaGraph_t g = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(st.a, &g), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, g, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, st.a), cudaSuccess);
  unsigned char byte = 0;
  ASSERT_EQ(cudaMemcpy(&byte, p, 1, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(byte, 7);
  EXPECT_EQ(cudaGraphLaunch(exec, st.a), cudaErrorInvalidValue)
      << "p from the first launch is still allocated";
  EXPECT_NE(helix::cudaemu::lastErrorMessage().find("was not freed"),
            std::string::npos)
      << helix::cudaemu::lastErrorMessage();
  ASSERT_EQ(cudaFreeAsync(p, st.a), cudaSuccess); // the program frees it
  EXPECT_EQ(cudaGraphLaunch(exec, st.a), cudaSuccess);
  ASSERT_EQ(cudaFree(p), cudaSuccess);
  cudaGraphExecDestroy(exec);
  size_t before = helix::cudaemu::liveDeviceBytes();
  cudaGraphDestroy(g);
  EXPECT_EQ(helix::cudaemu::liveDeviceBytes(), before - 96)
      << "the graph's memory is freed with it";
  // Freeing memory the capture did not allocate would repeat at every
  // launch: refused.
  void *outside = nullptr;
  ASSERT_EQ(cudaMalloc(&outside, 16), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(st.a, cudaStreamCaptureModeGlobal),
            cudaSuccess);
  EXPECT_EQ(cudaFreeAsync(outside, st.a), cudaErrorStreamCaptureUnsupported);
  endExpecting(st.a, cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(cudaFree(outside), cudaSuccess);
}

} // namespace
