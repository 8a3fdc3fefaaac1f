//===- CudaEmuTest.cpp - The CUDA kernels on CPU threads ------------------===//
//
// CudaKernels.cu compiled as host C++ and run by CudaEmu.h (docs/
// cuda-on-cpu.md): every launcher against naive math (CudaEmuCases.h), the
// launch limits a GPU enforces, and the execution model itself (barriers,
// shuffles, shared memory, and the faults a GPU would hang on).
//
//===----------------------------------------------------------------------===//

#include "gtest/gtest.h"

#include "CudaEmuCases.h"

using namespace helix::rt;
using namespace helix::rt::cudaemu_test;

namespace {

void check(const Result &r) {
  ASSERT_EQ(r.error, cudaSuccess)
      << r.what << ": " << cudaGetErrorString(r.error) << ": "
      << helix::cudaemu::lastErrorMessage();
  ASSERT_EQ(r.got.size(), r.want.size()) << r.what;
  int64_t i = mismatch(r);
  ASSERT_EQ(i, -1) << r.what << ": element " << i << " is " << r.got[i]
                   << ", naive " << r.want[i];
}

//===-- Every launcher against naive math ---------------------------------===//

TEST(CudaEmuKernels, Embedding) {
  check(embedding());
  check(embedding(true));
}

TEST(CudaEmuKernels, RmsNorm) {
  check(rmsNorm(1000));                // more values than threads
  check(rmsNorm(40));                  // fewer: idle threads contribute 0
  check(rmsNorm(1000, /*bf16=*/true)); // a BF16 weight read as stored
  check(rmsNormPrefix());
}

TEST(CudaEmuKernels, AddRmsNorm) {
  for (int64_t dim : {1000, 40})
    for (const Result &r : addRmsNorm(dim))
      check(r);
}

TEST(CudaEmuKernels, Elementwise) {
  for (const Result &r : elementwise())
    check(r);
}

TEST(CudaEmuKernels, Rope) {
  check(rope(false));
  check(rope(true));
}

class CudaEmuKV : public ::testing::TestWithParam<DType> {};

TEST_P(CudaEmuKV, KvStore) { check(kvStore(GetParam())); }
TEST_P(CudaEmuKV, KvStorePairInOneLaunch) { check(kvStorePair(GetParam())); }
// RoPE on q and k and the KV append in one launch: what the three launches
// give, with and without a value cache; RoPE only without a cache.
TEST_P(CudaEmuKV, RopeKvStore) {
  for (bool valueInKey : {false, true})
    for (const Result &r : ropeKvStore(GetParam(), valueInKey))
      check(r);
  for (const Result &r : ropeKvStore(GetParam(), false, false))
    check(r);
}
// Each format with heads of whole 16-byte chunks (the 128-bit path) and
// without (element loads).
TEST_P(CudaEmuKV, Attention) {
  for (const AttentionDims &d : {kAlignedDims, kMixedDims, kOddDims})
    check(attention(GetParam(), false, 1, d));
}
TEST_P(CudaEmuKV, AttentionValueInKey) {
  for (const AttentionDims &d : {kAlignedDims, kOddDims})
    check(attention(GetParam(), true, 1, d));
}
// Split-K: 3 and 7 parts (more parts than the 93-key row has chunks of
// 128, so some parts are empty), merged; the same results.
TEST_P(CudaEmuKV, AttentionSplitK) {
  check(attention(GetParam(), false, 3, kAlignedDims));
  check(attention(GetParam(), true, 7, kOddDims));
}
// Which path each case takes: every format vectorized at whole chunks,
// none at odd dims, F32 / BF16 only at 40/24.
// The packing of helix.attention_partial written by the kernel: the same
// numbers as the separate outputs, whole and straddling chunks, split-K.
TEST_P(CudaEmuKV, AttentionWritesThePacking) {
  check(attentionPackedOut(GetParam(), 3, 2, kAlignedDims));
  check(attentionPackedOut(GetParam(), 1, 1, kOddDims));
}

TEST_P(CudaEmuKV, AttentionPath) {
  DType t = GetParam();
  bool wide = t == DType::F32 || t == DType::BF16;
  std::vector<uint8_t> buf(64);
  const void *at = buf.data(); // malloc: 16-byte aligned
  const void *off = buf.data() + 4;
  EXPECT_TRUE(cuda::attentionVectorized(t, 64, 96, false, at, at));
  EXPECT_TRUE(cuda::attentionVectorized(t, 64, 32, true, at, nullptr));
  EXPECT_TRUE(cuda::attentionVectorized(t, 576, 512, true, at, nullptr));
  EXPECT_TRUE(cuda::attentionVectorized(t, 128, 128, false, at, at));
  EXPECT_EQ(cuda::attentionVectorized(t, 40, 24, false, at, at), wide);
  EXPECT_FALSE(cuda::attentionVectorized(t, 38, 22, false, at, at));
  EXPECT_FALSE(cuda::attentionVectorized(t, 64, 96, false, off, at));
  EXPECT_FALSE(cuda::attentionVectorized(t, 64, 96, false, at, off));
  EXPECT_TRUE(cuda::attentionVectorized(t, 64, 32, true, at, off))
      << "no value cache: its pointer does not count";
  // More value chunks than the block's 128 threads.
  int64_t most = 128 * 128 / int64_t(dtypeBits(t));
  EXPECT_TRUE(cuda::attentionVectorized(t, 64, most, false, at, at));
  EXPECT_FALSE(cuda::attentionVectorized(t, 64, 2 * most, false, at, at));
}
// MLA's latent dims (576 / 512, value in the key) on the 128-bit path.
TEST(CudaEmuKernels, AttentionMlaDims) {
  check(attention(DType::BF16, true, 1, kMlaDims));
  check(attention(DType::F4E2M1, true, 2, kMlaDims));
}

INSTANTIATE_TEST_SUITE_P(Formats, CudaEmuKV,
                         ::testing::Values(DType::F32, DType::BF16,
                                           DType::F8E4M3, DType::F4E2M1),
                         [](const ::testing::TestParamInfo<DType> &i) {
                           return std::string(dtypeName(i.param));
                         });

TEST(CudaEmuKernels, LseCombine) {
  check(lseCombine(false));
  check(lseCombine(true));
  check(lseCombine(false, /*packed=*/true));
  check(lseCombine(true, /*packed=*/true));
}

TEST(CudaEmuKernels, Gated) {
  for (int kind = 0; kind < 4; ++kind)
    check(gated(kind));
}

TEST(CudaEmuKernels, Dequantize) {
  for (const Result &r : dequantizeAll())
    check(r);
}

// How many parts split-K cuts a row into: enough blocks for
// kAttentionBlocksPerSM (8) per SM, at least kMinKeysPerSplit keys each, at
// most kMaxAttentionSplits.
TEST(CudaEmuKernels, AttentionSplits) {
  using cuda::attentionSplits;
  EXPECT_EQ(attentionSplits(1056, 1 << 20, 132), 1); // enough blocks already
  EXPECT_EQ(attentionSplits(512, 1 << 20, 132), 3);  // 8 x 132 / 512
  EXPECT_EQ(attentionSplits(32, 1 << 20, 132), 33);  // 8 x 132 / 32
  EXPECT_EQ(attentionSplits(8, 1000, 132), 3);       // 1000 / 256 keys
  EXPECT_EQ(attentionSplits(8, 511, 132), 1);        // under 2 x 256 keys
  EXPECT_EQ(attentionSplits(1, 1 << 20, 132), 64);   // at most 64
}

TEST(CudaEmuKernels, LinearResident) {
  for (const Result &r : linearResidentAll())
    check(r);
}

TEST(CudaEmuKernels, MoeRoute) {
  for (const Result &r : moeRouteAll())
    check(r);
}

TEST(CudaEmuKernels, MoeExpertPath) {
  for (const Result &r : moeExpertPath())
    check(r);
}

// The long-context layers' kernels: Gated DeltaNet's step, DSA's indexer
// (prepare; scores and top-k) and the gather of the selected KV entries.
TEST(CudaEmuKernels, GatedDeltaNet) { check(gatedDeltaNet()); }

TEST(CudaEmuKernels, IndexerPrepare) {
  check(indexerPrepare(false));
  check(indexerPrepare(true));
}

TEST(CudaEmuKernels, IndexerTopK) { check(indexerTopK()); }

TEST_P(CudaEmuKV, KvGather) {
  check(kvGather(GetParam(), false));
  check(kvGather(GetParam(), true));
}

//===-- Launch limits through the real launchers --------------------------===//

/// attention's dynamic shared memory is (keyDim + valueDim + 128) floats:
/// 48 KiB, the limit without opt-in, at keyDim + valueDim = 12160.
TEST(CudaEmuLimits, AttentionSharedMemory) {
  for (int64_t dim : {6080, 6144}) {
    bool fits = dim == 6080;
    std::vector<float> q = randn(dim, 50), k = randn(dim, 51),
                       v = randn(dim, 52);
    std::vector<int64_t> begin = {0}, end = {1};
    std::vector<float> out(dim, NAN), lse(1, NAN);
    cuda::attention(q.data(), k.data(), nullptr, v.data(), nullptr, DType::F32,
                    1, 1, 1, dim, dim, 1, begin.data(), end.data(), 0.01f,
                    out.data(), lse.data(), 1, nullptr, nullptr);
    cudaError_t e = cudaGetLastError();
    if (fits) {
      ASSERT_EQ(e, cudaSuccess) << helix::cudaemu::lastErrorMessage();
      double s = 0;
      for (int64_t i = 0; i < dim; ++i)
        s += double(q[i]) * k[i];
      EXPECT_NEAR(lse[0], s * 0.01, 1e-4); // one key: weight 1
      for (int64_t i = 0; i < dim; ++i)
        ASSERT_EQ(out[i], v[i]) << i;
    } else {
      EXPECT_EQ(e, cudaErrorInvalidValue);
      EXPECT_NE(
          helix::cudaemu::lastErrorMessage().find("dynamic shared memory"),
          std::string::npos)
          << helix::cudaemu::lastErrorMessage();
      EXPECT_TRUE(std::isnan(out[0]) && std::isnan(lse[0])) << "it ran";
    }
  }
}

/// attention's grid is (qHeads, batch): batch is gridDim.y, at most 65535.
TEST(CudaEmuLimits, AttentionGrid) {
  int64_t batch = 65536, dim = 2;
  std::vector<float> q(batch * dim, 1.0f), kv(batch * dim, 1.0f);
  std::vector<int64_t> begin(batch, 0), end(batch, 1);
  std::vector<float> out(batch * dim, NAN), lse(batch, NAN);
  cuda::attention(q.data(), kv.data(), nullptr, nullptr, nullptr, DType::F32,
                  batch, 1, 1, dim, dim, 1, begin.data(), end.data(), 1.0f,
                  out.data(), lse.data(), 1, nullptr, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_TRUE(std::isnan(out[0])) << "it ran";
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the error is not sticky";
}

//===-- The execution model -----------------------------------------------===//

__global__ void noopKernel(int *) {}
__global__ void optInKernel(int *) {}

cudaError_t launchNoop(dim3 grid, dim3 block, size_t smem) {
  int x = 0;
  HELIX_EMU_LAUNCH(noopKernel, grid, block, smem, nullptr)(&x);
  return cudaGetLastError();
}

TEST(CudaEmuLimits, Configurations) {
  EXPECT_EQ(launchNoop(1, 1024, 0), cudaSuccess);
  EXPECT_EQ(launchNoop(1, 1025, 0), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchNoop(1, dim3(32, 32, 2), 0), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchNoop(1, dim3(1, 1, 65), 0), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchNoop(1, dim3(1, 1, 64), 0), cudaSuccess);
  EXPECT_EQ(launchNoop(1, 0, 0), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchNoop(0, 32, 0), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchNoop(dim3(1, 65536), 32, 0), cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchNoop(dim3(1, 1, 65536), 32, 0),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchNoop(dim3(2147483648u), 32, 0),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(launchNoop(dim3(3, 65535), 1, 0), cudaSuccess);
  EXPECT_EQ(launchNoop(1, 32, 48 * 1024), cudaSuccess);
  EXPECT_EQ(launchNoop(1, 32, 48 * 1024 + 1), cudaErrorInvalidValue);
}

TEST(CudaEmuLimits, SharedMemoryOptIn) {
  int x = 0;
  auto launch = [&](size_t smem) {
    HELIX_EMU_LAUNCH(optInKernel, 1, 32, smem, nullptr)(&x);
    return cudaGetLastError();
  };
  EXPECT_EQ(launch(100 * 1024), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFuncSetAttribute(optInKernel,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 100 * 1024),
            cudaSuccess);
  EXPECT_EQ(launch(100 * 1024), cudaSuccess);
  EXPECT_EQ(launch(100 * 1024 + 4), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFuncSetAttribute(optInKernel,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 228 * 1024),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue) << "recorded too";
  EXPECT_EQ(launch(48 * 1024 + 4), cudaSuccess) << "other kernels keep 48 KiB";
  EXPECT_EQ(launchNoop(1, 32, 48 * 1024 + 4), cudaErrorInvalidValue);
}

__global__ void indicesKernel(unsigned *out) {
  unsigned block =
      blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned thread =
      threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  out[block * blockDim.x * blockDim.y * blockDim.z + thread] +=
      block * 1000 + thread + 1;
}

TEST(CudaEmu, EveryThreadOfEveryBlockOnce) {
  dim3 grid(2, 3, 2), block(4, 2, 3);
  std::vector<unsigned> out(12 * 24, 0);
  HELIX_EMU_LAUNCH(indicesKernel, grid, block, 0, nullptr)(out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (unsigned b = 0; b < 12; ++b)
    for (unsigned t = 0; t < 24; ++t)
      ASSERT_EQ(out[b * 24 + t], b * 1000 + t + 1) << b << " " << t;
}

__global__ void rotateKernel(int rounds, int *out) {
  __shared__ int s[256];
  int v = threadIdx.x;
  for (int r = 0; r < rounds; ++r) {
    s[threadIdx.x] = v;
    __syncthreads();
    v = s[(threadIdx.x + 1) % blockDim.x];
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

TEST(CudaEmu, SyncthreadsIsABarrier) {
  int rounds = 20, n = 256;
  std::vector<int> out(2 * n, -1);
  HELIX_EMU_LAUNCH(rotateKernel, 2, n, 0, nullptr)(rounds, out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int i = 0; i < 2 * n; ++i)
    ASSERT_EQ(out[i], (i % n + rounds) % n) << i;
}

__global__ void shuffleKernel(int *out, float *f, double *d) {
  int lane = threadIdx.x & 31, *o = out + 5 * threadIdx.x;
  int sum = lane;
  for (int k = 16; k > 0; k >>= 1)
    sum += __shfl_xor_sync(0xffffffffu, sum, k);
  o[0] = sum;
  o[1] = __shfl_sync(0xffffffffu, lane * 3, 5);
  o[2] = __shfl_down_sync(0xffffffffu, lane, 4);
  o[3] = __shfl_up_sync(0xffffffffu, lane, 2);
  o[4] = __shfl_xor_sync(0xffffffffu, lane, 8, 8);
  f[threadIdx.x] = __shfl_xor_sync(0xffffffffu, lane + 0.5f, 1);
  d[threadIdx.x] = __shfl_sync(0xffffffffu, lane * 0.25, 31);
}

TEST(CudaEmu, WarpShuffles) {
  std::vector<int> out(5 * 64, -1);
  std::vector<float> f(64);
  std::vector<double> d(64);
  HELIX_EMU_LAUNCH(shuffleKernel, 1, 64, 0, nullptr)
  (out.data(), f.data(), d.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int t = 0; t < 64; ++t) {
    int lane = t % 32, *o = out.data() + 5 * t;
    EXPECT_EQ(o[0], 496) << t;
    EXPECT_EQ(o[1], 15) << t;
    EXPECT_EQ(o[2], lane < 28 ? lane + 4 : lane) << t;
    EXPECT_EQ(o[3], lane >= 2 ? lane - 2 : lane) << t;
    // Width 8: lanes may read earlier segments, later ones give their own.
    EXPECT_EQ(o[4], lane & ~8) << t;
    EXPECT_EQ(f[t], (lane ^ 1) + 0.5f) << t;
    EXPECT_EQ(d[t], 31 * 0.25) << t;
  }
}

__global__ void earlyExitKernel(int *out) {
  __shared__ int s[128];
  if (threadIdx.x >= 64)
    return;
  s[threadIdx.x] = threadIdx.x;
  __syncthreads(); // the 64 exited threads count as arrived
  out[threadIdx.x] = s[63 - threadIdx.x];
}

TEST(CudaEmu, ExitedThreadsDoNotHoldBarriers) {
  std::vector<int> out(64, -1);
  HELIX_EMU_LAUNCH(earlyExitKernel, 2, 128, 0, nullptr)(out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(out[i], 63 - i);
}

__global__ void dynamicSharedKernel(float *out) {
  HELIX_EMU_DYNAMIC_SHARED(float, buf);
  if (threadIdx.x == 0) {
    out[blockIdx.x] = buf[blockDim.x - 1];
    buf[blockDim.x - 1] = 1.0f;
  }
}

TEST(CudaEmu, DynamicSharedMemoryStartsUndefined) {
  std::vector<float> out(3, 0.0f);
  HELIX_EMU_LAUNCH(dynamicSharedKernel, 3, 32, 32 * sizeof(float), nullptr)
  (out.data());
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  for (float v : out)
    EXPECT_TRUE(std::isnan(v)) << "each block starts with NaN bytes";
}

//===-- Faults: the launch fails with a message ---------------------------===//

void expectFault(const char *what) {
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_NE(helix::cudaemu::lastErrorMessage().find(what), std::string::npos)
      << helix::cudaemu::lastErrorMessage();
}

__global__ void reduceKernel(float *out) {
  float v = 1.0f;
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  out[threadIdx.x] = v;
}

TEST(CudaEmuFaults, FullMaskInPartialWarp) {
  std::vector<float> out(48);
  HELIX_EMU_LAUNCH(reduceKernel, 1, 48, 0, nullptr)(out.data());
  expectFault("do not exist");
}

__global__ void divergentKernel(int *out) {
  if (threadIdx.x < 16) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1;
}

TEST(CudaEmuFaults, DivergentSyncthreads) {
  std::vector<int> out(64);
  HELIX_EMU_LAUNCH(divergentKernel, 1, 64, 0, nullptr)(out.data());
  expectFault("divergent __syncthreads");
}

__global__ void exitedLaneKernel(int *out) {
  if (threadIdx.x == 3)
    return;
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, int(threadIdx.x), 1);
}

TEST(CudaEmuFaults, ShuffleWithExitedLane) {
  std::vector<int> out(32);
  HELIX_EMU_LAUNCH(exitedLaneKernel, 1, 32, 0, nullptr)(out.data());
  expectFault("exited");
}

__global__ void deadlockKernel(int *out) {
  if (threadIdx.x == 0)
    __syncthreads();
  else
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1);
}

// Threads find it by the watchdog's timer; fibers at once, when a whole
// round of the block's threads goes by with none arriving or returning.
TEST(CudaEmuFaults, DeadlockWatchdog) {
  std::vector<int> out(32);
  auto before = helix::cudaemu::setWatchdog(std::chrono::milliseconds(300));
  HELIX_EMU_LAUNCH(deadlockKernel, 1, 32, 0, nullptr)(out.data());
  helix::cudaemu::setWatchdog(before);
  expectFault(helix::cudaemu::globals().mode.load() ==
                      helix::cudaemu::Mode::Fibers
                  ? "deadlock: __syncthreads at line"
                  : "watchdog");
}

// The mode a run uses: fibers where built, threads under
// HELIX_CUDA_EMU_THREADS other than "" or "0" (ctest runs this suite both
// ways).
TEST(CudaEmu, Mode) {
  const char *env = std::getenv("HELIX_CUDA_EMU_THREADS");
  bool asked = env && std::string(env) != "" && std::string(env) != "0";
  bool threads = asked || !helix::cudaemu::fibersAvailable();
  EXPECT_EQ(helix::cudaemu::globals().mode.load(),
            threads ? helix::cudaemu::Mode::Threads
                    : helix::cudaemu::Mode::Fibers);
}

} // namespace
