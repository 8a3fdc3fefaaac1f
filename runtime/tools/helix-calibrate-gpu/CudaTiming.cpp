//===- CudaTiming.cpp - The runtime's kernels timed with CUDA events ------===//
//
// What helix-calibrate-gpu measures (Timing.h): what helix's CUDA runtime
// runs, through the runtime's own launchers (runtime/lib/CUDA/CudaKernels.h)
// and the same cuBLAS and NCCL calls as CudaBackend.cpp /
// NcclCommunicator.cpp:
//
//  * GEMM: CudaBackend's linear() on a resident bf16 / fp8 (128x128 f32
//    block scales) / fp4 (NVFP4) weight, as it runs it: up to
//    kStreamingGemmMaxRows rows cuda::linearResident, reading the weight as
//    stored; above, cuda::dequantize to an f32 workspace then cublasSgemm
//    (plain fp32, no TF32); across m and decode-relevant (n, k), and at
//    m >= 1024 for the math efficiency.
//  * decode attention: cuda::attention over KV lengths, GQA (head dim 128,
//    8 query heads per KV head) at batch x KV heads, MLA (576-value latent
//    key, value its first 512) with 128 and 16 query heads, KV in bf16,
//    fp8 and fp4 (NVFP4 scales per 16 values).
//  * elementwise: rmsNorm, rope, kvStore (KV append), lseCombine and the
//    gated activation at batch 1 and 8.
//  * with two GPUs or more in view: ncclAllReduce, ncclAllGather, the
//    runtime's reduce-scatter (copy, all-reduce, copy of the rank's part)
//    and its all-to-all (grouped ncclSend/ncclRecv), single process over
//    GPUs 0..n-1 (ncclCommInitAll).
//
// A kernel time is GPU time between two CUDA events: the L2 is flushed
// first (a memset larger than it), and the stream is held by a host
// function until the op's launches are queued, so host launch latency is
// not in it (nor is the runtime's host work between ops: index uploads,
// allocation). Two warm-up runs, then the median of 3 to 9. A collective
// time is per-GPU event time over back-to-back iterations divided by their
// count, the slowest GPU, median of 5 runs.
//
//===----------------------------------------------------------------------===//

#include "CudaTiming.h"

#include "CudaKernels.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace helix {
namespace calibrate {
namespace {

namespace cuda = ::helix::rt::cuda;
using RtDType = ::helix::rt::DType;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t e, const std::string &what) {
  if (e != cudaSuccess)
    throw Failure("cuda: " + what + ": " + cudaGetErrorString(e));
}
void checkBlas(cublasStatus_t s, const char *what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Failure(std::string("cublas: ") + what + " failed (status " +
                  std::to_string(static_cast<int>(s)) + ")");
}
void checkNccl(ncclResult_t r, const char *what) {
  if (r != ncclSuccess)
    throw Failure(std::string("nccl: ") + what + ": " + ncclGetErrorString(r));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string gib(double bytes) {
  std::ostringstream os;
  os.precision(3);
  os << bytes / double(1ull << 30) << " GiB";
  return os.str();
}

/// Device memory on the current device.
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(size_t bytes) : bytes_(bytes) {
    check(cudaMalloc(&ptr_, std::max<size_t>(bytes, 256)),
          "cudaMalloc of " + std::to_string(bytes) + " bytes");
  }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  Buffer(Buffer &&o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = nullptr;
  }
  Buffer &operator=(Buffer &&o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~Buffer() {
    if (ptr_)
      cudaFree(ptr_);
  }
  void *get() const { return ptr_; }
  template <typename T> T *as() const { return static_cast<T *>(ptr_); }
  size_t bytes() const { return bytes_; }

private:
  void *ptr_ = nullptr;
  size_t bytes_ = 0;
};

template <typename T>
Buffer upload(const std::vector<T> &host, cudaStream_t stream) {
  Buffer b(host.size() * sizeof(T));
  check(cudaMemcpyAsync(b.get(), host.data(), host.size() * sizeof(T),
                        cudaMemcpyHostToDevice, stream),
        "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return b;
}

Buffer filled(size_t bytes, int byte, cudaStream_t stream) {
  Buffer b(bytes);
  check(cudaMemsetAsync(b.get(), byte, std::max<size_t>(bytes, 1), stream),
        "cudaMemsetAsync");
  return b;
}

/// Holds a stream until the host has queued what follows (or 20 ms pass,
/// so a launch that blocks cannot deadlock it).
struct Gate {
  std::atomic<bool> open{true};
};
void CUDART_CB holdStream(void *p) {
  auto *gate = static_cast<Gate *>(p);
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (!gate->open.load(std::memory_order_acquire) &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
}

/// GPU time of ops on one stream (see the file comment).
class KernelTimer {
public:
  KernelTimer(cudaStream_t stream, size_t flushBytes)
      : stream_(stream), flush_(flushBytes) {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~KernelTimer() {
    gate_.open.store(true, std::memory_order_release);
    cudaStreamSynchronize(stream_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }

  /// Median seconds of `op`, which queues its work on the stream.
  double time(const std::function<void()> &op, int64_t &runs) {
    once(op, /*gated=*/false); // first call: cuBLAS heuristics, module load
    double warm = once(op, /*gated=*/true);
    int n = warm > 0.05 ? 3 : warm > 0.01 ? 5 : 9;
    std::vector<double> t;
    for (int i = 0; i < n; ++i)
      t.push_back(once(op, /*gated=*/true));
    runs = n;
    return median(t);
  }

private:
  double once(const std::function<void()> &op, bool gated) {
    try {
      check(cudaMemsetAsync(flush_.get(), flushByte_++ & 0xff, flush_.bytes(),
                            stream_),
            "cudaMemsetAsync (L2 flush)");
      if (gated) {
        gate_.open.store(false, std::memory_order_release);
        check(cudaLaunchHostFunc(stream_, holdStream, &gate_),
              "cudaLaunchHostFunc");
      }
      check(cudaEventRecord(start_, stream_), "cudaEventRecord");
      op();
      check(cudaGetLastError(), "kernel launch");
      check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
      gate_.open.store(true, std::memory_order_release);
      check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
      return double(ms) * 1e-3;
    } catch (...) {
      gate_.open.store(true, std::memory_order_release);
      cudaStreamSynchronize(stream_);
      throw;
    }
  }

  cudaStream_t stream_;
  Buffer flush_;
  int flushByte_ = 1;
  Gate gate_;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

/// The cost model's name of a format (stringifyDType lives in HelixCommon,
/// which the plugin does not link).
std::string formatName(DType d) {
  switch (d) {
  case DType::FP4:
    return "fp4";
  case DType::FP8:
    return "fp8";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}

/// The formats helix's runtime keeps resident, by the cost model's names.
struct FormatSpec {
  DType cost;
  RtDType stored;
};
const FormatSpec kFormats[] = {{DType::BF16, RtDType::BF16},
                               {DType::FP8, RtDType::F8E4M3},
                               {DType::FP4, RtDType::F4E2M1}};

/// Bytes that decode to finite values (bf16 0x3c3c ~ 0.0115, e4m3 0x38 =
/// 1, e2m1 0x22 = 1, 1): the kernels' speed does not depend on them.
int fillByte(RtDType d) {
  switch (d) {
  case RtDType::BF16:
    return 0x3c;
  case RtDType::F8E4M3:
    return 0x38;
  case RtDType::F4E2M1:
    return 0x22;
  default:
    return 0;
  }
}

/// One device's stream, cuBLAS handle and timer.
struct Device {
  int id = 0;
  int sms = 1;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  std::unique_ptr<KernelTimer> timer;
  size_t budget = 0; // bytes one shape may allocate

  explicit Device(int id) : id(id) {
    check(cudaSetDevice(id), "cudaSetDevice");
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, id),
          "cudaDeviceGetAttribute");
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
          "cudaStreamCreate");
    // As CudaBackend: the compute stream, plain fp32 GEMMs.
    checkBlas(cublasCreate(&blas), "cublasCreate");
    checkBlas(cublasSetStream(blas, stream), "cublasSetStream");
    checkBlas(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH),
              "cublasSetMathMode");
    int l2 = 0;
    check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, id),
          "cudaDeviceGetAttribute");
    timer = std::make_unique<KernelTimer>(
        stream, std::max<size_t>(size_t(4) * size_t(l2), size_t(64) << 20));
    size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    budget = std::min<size_t>(free / 10 * 7, size_t(24) << 30);
  }
  ~Device() {
    cudaSetDevice(id);
    timer.reset();
    if (blas)
      cublasDestroy(blas);
    if (stream)
      cudaStreamDestroy(stream);
  }
};

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

/// (n, k) of decode projections: Llama-3.1-8B (qkv 6144x4096, gate-up
/// 28672x4096, down 4096x14336), 70B at TP 8 (qkv 1280x8192, o 8192x1024,
/// gate-up 7168x8192, down 8192x3584), squares and powers of two from 2^20
/// to 2^28 values (the presets' fits use that range).
const std::pair<int64_t, int64_t> kGemmShapes[] = {
    {1024, 1024},  {2048, 2048}, {4096, 1024},  {1024, 4096},  {1280, 8192},
    {8192, 1024},  {4096, 4096}, {6144, 4096},  {8192, 3584},  {7168, 8192},
    {4096, 14336}, {8192, 8192}, {28672, 4096}, {16384, 16384}};
const int64_t kGemmM[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
const int64_t kMathM[] = {1024, 2048, 4096};

void timeGemms(Device &dev, MeasurementSet &set, const TimingOptions &opt) {
  const float one = 1.0f, zero = 0.0f;
  for (const FormatSpec &f : kFormats) {
    std::string name = formatName(f.cost);
    if (opt.progress)
      opt.progress("timing the GEMM path (" + name + " weights)");
    for (const auto &shape : kGemmShapes) {
      const int64_t n = shape.first, k = shape.second;
      bool math = n >= 4096 && k >= 4096;
      int64_t maxM = math ? kMathM[2] : kGemmM[8];
      size_t need = ::helix::rt::dtypeBytes(f.stored, n * k) +
                    size_t(n * k) * 4 + size_t(maxM) * size_t(n + k) * 4;
      if (need > dev.budget) {
        set.notMeasured.push_back("gemm." + name + " n=" + std::to_string(n) +
                                  " k=" + std::to_string(k) + ": needs " +
                                  gib(double(need)) + ", over the " +
                                  gib(double(dev.budget)) + " allowed");
        continue;
      }
      Buffer w = filled(::helix::rt::dtypeBytes(f.stored, n * k),
                        fillByte(f.stored), dev.stream);
      Buffer wf(size_t(n * k) * 4);
      Buffer x = filled(size_t(maxM * k) * 4, 0, dev.stream);
      Buffer out(size_t(maxM * n) * 4);
      // The block scales as Quant.cpp lays them out (quantizeFP8Block,
      // quantizeNVFP4), all 1.
      ::helix::rt::BlockScaleDesc desc;
      Buffer scales, globals;
      bool scaled = f.stored != RtDType::BF16;
      desc.rows = n;
      desc.cols = k;
      if (f.stored == RtDType::F8E4M3) {
        desc.type = ::helix::rt::ScaleType::F32;
        desc.blockRows = std::min<int64_t>(128, n);
        desc.blockCols = std::min<int64_t>(128, k);
        desc.gridRows = (n + desc.blockRows - 1) / desc.blockRows;
        desc.gridCols = (k + desc.blockCols - 1) / desc.blockCols;
        scales = upload(
            std::vector<float>(size_t(desc.gridRows * desc.gridCols), 1.0f),
            dev.stream);
      } else if (f.stored == RtDType::F4E2M1) {
        desc.type = ::helix::rt::ScaleType::E4M3;
        desc.blockRows = 1;
        desc.blockCols = std::min<int64_t>(16, k);
        desc.gridRows = n;
        desc.gridCols = (k + desc.blockCols - 1) / desc.blockCols;
        scales =
            filled(size_t(desc.gridRows * desc.gridCols), 0x38, dev.stream);
        globals = upload(std::vector<float>(1, 1.0f), dev.stream);
        desc.globals = globals.as<float>();
      }
      desc.scales = scales.as<uint8_t>();
      auto timeAt = [&](int64_t m) {
        auto op = [&] {
          if (m <= cuda::kStreamingGemmMaxRows) {
            cuda::linearResident(x.as<float>(), m, k, w.get(), f.stored, 0, 0,
                                 scaled ? &desc : nullptr, n, nullptr,
                                 out.as<float>(), dev.stream);
            return;
          }
          cuda::dequantize(w.get(), f.stored, n * k, 0,
                           scaled ? &desc : nullptr, wf.as<float>(),
                           dev.stream);
          checkBlas(cublasSgemm(dev.blas, CUBLAS_OP_T, CUBLAS_OP_N,
                                static_cast<int>(n), static_cast<int>(m),
                                static_cast<int>(k), &one, wf.as<float>(),
                                static_cast<int>(k), x.as<float>(),
                                static_cast<int>(k), &zero, out.as<float>(),
                                static_cast<int>(n)),
                    "cublasSgemm");
        };
        GemmSample s;
        s.format = f.cost;
        s.m = m;
        s.n = n;
        s.k = k;
        s.seconds = dev.timer->time(op, s.runs);
        set.gemm.push_back(s);
      };
      for (int64_t m : kGemmM)
        timeAt(m);
      if (math)
        for (int64_t m : kMathM)
          timeAt(m);
    }
  }
}

//===----------------------------------------------------------------------===//
// Decode attention
//===----------------------------------------------------------------------===//

const int64_t kKVLengths[] = {512, 2048, 8192, 32768};

struct AttentionShape {
  AttentionKind kind;
  int64_t batch, kvHeads, qHeads, keyDim, valueDim;
};

std::vector<AttentionShape> attentionShapes() {
  std::vector<AttentionShape> v;
  // GQA, head dim 128, 8 query heads per KV head: rows = batch x KV heads
  // from 1 to 256, as one KV head per request and as 8.
  for (int64_t rows = 1; rows <= 256; rows *= 2) {
    v.push_back({AttentionKind::GQA, rows, 1, 8, 128, 128});
    if (rows >= 8)
      v.push_back({AttentionKind::GQA, rows / 8, 8, 64, 128, 128});
  }
  // MLA (DeepSeek's kv_lora 512 + rope 64), 128 and 16 query heads.
  for (int64_t heads : {128, 16})
    for (int64_t batch = 1; batch <= 64; batch *= 2)
      v.push_back({AttentionKind::MLA, batch, 1, heads, 576, 512});
  return v;
}

void timeAttention(Device &dev, MeasurementSet &set, const TimingOptions &opt) {
  std::vector<AttentionShape> shapes = attentionShapes();
  for (const FormatSpec &f : kFormats) {
    std::string name = formatName(f.cost);
    if (opt.progress)
      opt.progress("timing decode attention (" + name + " KV cache)");
    for (const AttentionShape &a : shapes) {
      for (int64_t len : kKVLengths) {
        bool mla = a.kind == AttentionKind::MLA;
        int64_t per = a.batch * len * a.kvHeads;
        size_t keyBytes = ::helix::rt::dtypeBytes(f.stored, per * a.keyDim);
        size_t valueBytes =
            mla ? 0 : ::helix::rt::dtypeBytes(f.stored, per * a.valueDim);
        bool fp4 = f.stored == RtDType::F4E2M1;
        size_t keyScaleBytes = fp4 ? size_t(per * ((a.keyDim + 15) / 16)) : 0;
        size_t valueScaleBytes =
            fp4 && !mla ? size_t(per * ((a.valueDim + 15) / 16)) : 0;
        size_t need = keyBytes + valueBytes + keyScaleBytes + valueScaleBytes;
        std::string what = std::string("attention.") + (mla ? "mla" : "gqa") +
                           "." + name + " batch=" + std::to_string(a.batch) +
                           " kv_heads=" + std::to_string(a.kvHeads) +
                           " q_heads=" + std::to_string(a.qHeads) +
                           " kv_len=" + std::to_string(len);
        if (need > dev.budget) {
          set.notMeasured.push_back(what + ": needs " + gib(double(need)) +
                                    ", over the " + gib(double(dev.budget)) +
                                    " allowed");
          continue;
        }
        Buffer keys = filled(keyBytes, fillByte(f.stored), dev.stream);
        Buffer values = filled(valueBytes, fillByte(f.stored), dev.stream);
        Buffer keyScales = filled(keyScaleBytes, 0x38, dev.stream);
        Buffer valueScales = filled(valueScaleBytes, 0x38, dev.stream);
        Buffer q =
            filled(size_t(a.batch * a.qHeads * a.keyDim) * 4, 0, dev.stream);
        Buffer out(size_t(a.batch * a.qHeads * a.valueDim) * 4);
        Buffer lse(size_t(a.batch * a.qHeads) * 4);
        Buffer begin = upload(std::vector<int64_t>(a.batch, 0), dev.stream);
        Buffer end = upload(std::vector<int64_t>(a.batch, len), dev.stream);
        float scale = 1.0f / std::sqrt(float(a.keyDim));
        // Split-K as the backend picks it for this shape.
        int splits = cuda::attentionSplits(a.batch * a.qHeads, len, dev.sms);
        Buffer work(size_t(cuda::attentionWorkspace(splits, a.batch, a.qHeads,
                                                    a.valueDim)) *
                    4);
        auto op = [&] {
          cuda::attention(q.as<float>(), keys.get(),
                          fp4 ? keyScales.as<uint8_t>() : nullptr,
                          mla ? nullptr : values.get(),
                          fp4 && !mla ? valueScales.as<uint8_t>() : nullptr,
                          f.stored, a.batch, a.qHeads, a.kvHeads, a.keyDim,
                          a.valueDim, len, begin.as<int64_t>(),
                          end.as<int64_t>(), scale, out.as<float>(),
                          lse.as<float>(), splits,
                          splits > 1 ? work.as<float>() : nullptr, dev.stream);
        };
        AttentionSample s;
        s.kind = a.kind;
        s.kvFormat = f.cost;
        s.batch = a.batch;
        s.kvHeads = a.kvHeads;
        s.qHeads = a.qHeads;
        s.headDim = a.keyDim;
        s.kvLength = len;
        s.seconds = dev.timer->time(op, s.runs);
        set.attention.push_back(s);
        // The runtime's kernel is slow at long contexts: stop a shape's
        // sweep once one call takes half a second.
        if (s.seconds > 0.5 && len != kKVLengths[3]) {
          set.notMeasured.push_back(what + " and longer: one call took " +
                                    std::to_string(s.seconds) +
                                    " s at this length");
          break;
        }
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Elementwise kernels
//===----------------------------------------------------------------------===//

void timeElementwise(Device &dev, MeasurementSet &set,
                     const TimingOptions &opt) {
  if (opt.progress)
    opt.progress("timing the norm, RoPE, KV-append, combine and activation "
                 "kernels");
  const int64_t hidden = 8192, heads = 64, kvHeads = 8, dim = 128,
                capacity = 4096, shards = 4, inter = 3584;
  for (int64_t b : {1, 8}) {
    std::string at = " b=" + std::to_string(b);
    auto add = [&](const std::string &kernel, const std::function<void()> &op) {
      ElementwiseSample s;
      s.kernel = kernel + at;
      s.seconds = dev.timer->time(op, s.runs);
      set.elementwise.push_back(s);
    };
    Buffer x = filled(size_t(b * hidden) * 4, 0, dev.stream);
    Buffer w = filled(size_t(hidden) * 4, 0, dev.stream);
    Buffer y(size_t(b * hidden) * 4);
    add("rmsNorm " + std::to_string(hidden), [&] {
      cuda::rmsNorm(x.as<float>(), w.as<float>(), b, hidden, 1e-5f,
                    y.as<float>(), dev.stream);
    });

    Buffer qk = filled(size_t(b * heads * dim) * 4, 0, dev.stream);
    std::vector<int64_t> posHost(size_t(b), 1000);
    Buffer pos = upload(posHost, dev.stream);
    std::vector<float> freqHost(size_t(dim / 2));
    for (int64_t i = 0; i < dim / 2; ++i)
      freqHost[size_t(i)] = std::pow(500000.0f, -2.0f * float(i) / float(dim));
    Buffer freq = upload(freqHost, dev.stream);
    add("rope " + std::to_string(heads) + "x" + std::to_string(dim), [&] {
      cuda::rope(qk.as<float>(), b, heads, dim, pos.as<int64_t>(),
                 freq.as<float>(), dim / 2, 1.0f, 0, false, dev.stream);
    });

    Buffer cache = filled(
        ::helix::rt::dtypeBytes(RtDType::BF16, b * capacity * kvHeads * dim), 0,
        dev.stream);
    Buffer kv = filled(size_t(b * kvHeads * dim) * 4, 0, dev.stream);
    Buffer slots = upload(std::vector<int64_t>(size_t(b), 7), dev.stream);
    add("kvStore bf16 " + std::to_string(kvHeads) + "x" + std::to_string(dim),
        [&] {
          cuda::kvStore(cache.get(), nullptr, kv.as<float>(), RtDType::BF16, b,
                        capacity, kvHeads, dim, slots.as<int64_t>(),
                        dev.stream);
        });

    Buffer partials =
        filled(size_t(b * shards * heads * dim) * 4, 0, dev.stream);
    Buffer lse = filled(size_t(b * shards * heads) * 4, 0, dev.stream);
    Buffer combined(size_t(b * heads * dim) * 4);
    add("lseCombine " + std::to_string(shards) + "x" + std::to_string(heads) +
            "x" + std::to_string(dim),
        [&] {
          cuda::lseCombine(partials.as<float>(), lse.as<float>(),
                           rt::PartialsLayout::separate(b, shards, heads, dim),
                           nullptr, combined.as<float>(), dev.stream);
        });

    Buffer gate = filled(size_t(b * inter) * 4, 0, dev.stream);
    Buffer up = filled(size_t(b * inter) * 4, 0, dev.stream);
    Buffer act(size_t(b * inter) * 4);
    add("gated SiLU " + std::to_string(inter), [&] {
      cuda::gated(gate.as<float>(), up.as<float>(), b * inter, 0, 1.702f, 7.0f,
                  act.as<float>(), dev.stream);
    });
  }
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

struct Group {
  std::vector<int> devices;
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> starts, stops;

  explicit Group(int n) {
    for (int d = 0; d < n; ++d)
      devices.push_back(d);
    comms.assign(size_t(n), nullptr);
    checkNccl(ncclCommInitAll(comms.data(), n, devices.data()),
              "ncclCommInitAll");
    for (int d : devices) {
      check(cudaSetDevice(d), "cudaSetDevice");
      cudaStream_t s;
      check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
            "cudaStreamCreate");
      streams.push_back(s);
      cudaEvent_t a, b;
      check(cudaEventCreate(&a), "cudaEventCreate");
      check(cudaEventCreate(&b), "cudaEventCreate");
      starts.push_back(a);
      stops.push_back(b);
    }
  }
  ~Group() {
    for (size_t i = 0; i < devices.size(); ++i) {
      cudaSetDevice(devices[i]);
      if (i < streams.size()) {
        cudaStreamSynchronize(streams[i]);
        cudaStreamDestroy(streams[i]);
      }
      if (i < starts.size()) {
        cudaEventDestroy(starts[i]);
        cudaEventDestroy(stops[i]);
      }
    }
    for (ncclComm_t c : comms)
      if (c)
        ncclCommDestroy(c);
  }
  int size() const { return static_cast<int>(devices.size()); }
};

/// Seconds of one collective: `iters` back-to-back launches between events
/// on every GPU, divided by iters, the slowest GPU; median of 5 runs after
/// 2 warm-up launches.
double timeCollective(Group &g, const std::function<void()> &launch, int iters,
                      int64_t &runs) {
  auto sync = [&] {
    for (int i = 0; i < g.size(); ++i) {
      check(cudaSetDevice(g.devices[size_t(i)]), "cudaSetDevice");
      check(cudaStreamSynchronize(g.streams[size_t(i)]),
            "cudaStreamSynchronize");
    }
  };
  launch();
  launch();
  sync();
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    for (int i = 0; i < g.size(); ++i) {
      check(cudaSetDevice(g.devices[size_t(i)]), "cudaSetDevice");
      check(cudaEventRecord(g.starts[size_t(i)], g.streams[size_t(i)]),
            "cudaEventRecord");
    }
    for (int it = 0; it < iters; ++it)
      launch();
    for (int i = 0; i < g.size(); ++i) {
      check(cudaSetDevice(g.devices[size_t(i)]), "cudaSetDevice");
      check(cudaEventRecord(g.stops[size_t(i)], g.streams[size_t(i)]),
            "cudaEventRecord");
    }
    double slowest = 0;
    for (int i = 0; i < g.size(); ++i) {
      check(cudaEventSynchronize(g.stops[size_t(i)]), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, g.starts[size_t(i)], g.stops[size_t(i)]),
            "cudaEventElapsedTime");
      slowest = std::max(slowest, double(ms) * 1e-3 / iters);
    }
    t.push_back(slowest);
  }
  runs = 5;
  return median(t);
}

void timeCollectives(int count, MeasurementSet &set, const TimingOptions &opt) {
  std::vector<int> sizes;
  for (int n = 2; n <= count; n *= 2)
    sizes.push_back(n);
  if (sizes.back() != count)
    sizes.push_back(count);
  const double kMaxBytes = double(256 << 20);
  for (int n : sizes) {
    if (opt.progress)
      opt.progress("timing NCCL collectives over " + std::to_string(n) +
                   " GPUs");
    Group g(n);
    // Per GPU: send / receive buffers of the largest message, plus the
    // reduce-scatter's copy.
    std::vector<Buffer> a, b, c;
    for (int d : g.devices) {
      check(cudaSetDevice(d), "cudaSetDevice");
      a.emplace_back(size_t(kMaxBytes));
      b.emplace_back(size_t(kMaxBytes));
      c.emplace_back(size_t(kMaxBytes));
      check(cudaMemset(a.back().get(), 0, a.back().bytes()), "cudaMemset");
    }
    for (double bytes = 1024; bytes <= kMaxBytes; bytes *= 4) {
      // f32 elements, whole per-rank parts (nccl-tests sizes).
      size_t part = std::max<size_t>(1, size_t(bytes) / 4 / size_t(n));
      size_t whole = part * size_t(n);
      int iters = bytes <= double(1 << 20)    ? 20
                  : bytes <= double(16 << 20) ? 10
                                              : 3;
      auto record = [&](CollectiveKind op, double sized,
                        const std::function<void()> &launch) {
        CollectiveSample s;
        s.op = op;
        s.gpus = n;
        s.bytes = sized;
        s.seconds = timeCollective(g, launch, iters, s.runs);
        set.collectives.push_back(s);
      };
      record(CollectiveKind::AllReduce, double(whole * 4), [&] {
        checkNccl(ncclGroupStart(), "ncclGroupStart");
        for (int i = 0; i < n; ++i)
          checkNccl(ncclAllReduce(a[size_t(i)].get(), a[size_t(i)].get(), whole,
                                  ncclFloat, ncclSum, g.comms[size_t(i)],
                                  g.streams[size_t(i)]),
                    "ncclAllReduce");
        checkNccl(ncclGroupEnd(), "ncclGroupEnd");
      });
      record(CollectiveKind::AllGather, double(whole * 4), [&] {
        checkNccl(ncclGroupStart(), "ncclGroupStart");
        for (int i = 0; i < n; ++i)
          checkNccl(ncclAllGather(a[size_t(i)].get(), b[size_t(i)].get(), part,
                                  ncclFloat, g.comms[size_t(i)],
                                  g.streams[size_t(i)]),
                    "ncclAllGather");
        checkNccl(ncclGroupEnd(), "ncclGroupEnd");
      });
      // Communicator::reduceScatterSum: clone, all-reduce of the clone,
      // clone of the rank's rows.
      record(CollectiveKind::ReduceScatter, double(whole * 4), [&] {
        for (int i = 0; i < n; ++i) {
          check(cudaSetDevice(g.devices[size_t(i)]), "cudaSetDevice");
          check(cudaMemcpyAsync(c[size_t(i)].get(), a[size_t(i)].get(),
                                whole * 4, cudaMemcpyDeviceToDevice,
                                g.streams[size_t(i)]),
                "cudaMemcpyAsync");
        }
        checkNccl(ncclGroupStart(), "ncclGroupStart");
        for (int i = 0; i < n; ++i)
          checkNccl(ncclAllReduce(c[size_t(i)].get(), c[size_t(i)].get(), whole,
                                  ncclFloat, ncclSum, g.comms[size_t(i)],
                                  g.streams[size_t(i)]),
                    "ncclAllReduce");
        checkNccl(ncclGroupEnd(), "ncclGroupEnd");
        for (int i = 0; i < n; ++i) {
          check(cudaSetDevice(g.devices[size_t(i)]), "cudaSetDevice");
          check(cudaMemcpyAsync(b[size_t(i)].get(),
                                c[size_t(i)].as<float>() + size_t(i) * part,
                                part * 4, cudaMemcpyDeviceToDevice,
                                g.streams[size_t(i)]),
                "cudaMemcpyAsync");
        }
      });
      // NcclCommunicator::startAllToAllChunks.
      record(CollectiveKind::AllToAll, double(whole * 4), [&] {
        checkNccl(ncclGroupStart(), "ncclGroupStart");
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < n; ++j) {
            checkNccl(ncclSend(a[size_t(i)].as<float>() + size_t(j) * part,
                               part, ncclFloat, j, g.comms[size_t(i)],
                               g.streams[size_t(i)]),
                      "ncclSend");
            checkNccl(ncclRecv(b[size_t(i)].as<float>() + size_t(j) * part,
                               part, ncclFloat, j, g.comms[size_t(i)],
                               g.streams[size_t(i)]),
                      "ncclRecv");
          }
        checkNccl(ncclGroupEnd(), "ncclGroupEnd");
      });
    }
    for (size_t i = 0; i < g.devices.size(); ++i) {
      cudaSetDevice(g.devices[i]);
      a[i] = Buffer();
      b[i] = Buffer();
      c[i] = Buffer();
    }
  }
}

//===----------------------------------------------------------------------===//
// The GPU and its software
//===----------------------------------------------------------------------===//

/// The kernel driver's version: NVML when it loads, else the proc file,
/// else the driver API version CUDA reports.
std::string driverVersion() {
  if (void *nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    using Init = int (*)();
    using Version = int (*)(char *, unsigned);
    auto init = reinterpret_cast<Init>(dlsym(nvml, "nvmlInit_v2"));
    auto version =
        reinterpret_cast<Version>(dlsym(nvml, "nvmlSystemGetDriverVersion"));
    auto shutdown = reinterpret_cast<Init>(dlsym(nvml, "nvmlShutdown"));
    std::string v;
    if (init && version && init() == 0) {
      char buf[96] = {0};
      if (version(buf, sizeof buf) == 0)
        v = buf;
      if (shutdown)
        shutdown();
    }
    dlclose(nvml);
    if (!v.empty())
      return v;
  }
  std::ifstream proc("/proc/driver/nvidia/version");
  std::string line;
  if (proc && std::getline(proc, line)) {
    std::istringstream words(line);
    std::string w;
    while (words >> w)
      if (std::count(w.begin(), w.end(), '.') >= 1 &&
          std::isdigit(static_cast<unsigned char>(w[0])))
        return w;
  }
  int v = 0;
  cudaDriverGetVersion(&v);
  return "unknown (CUDA driver API " + std::to_string(v / 1000) + "." +
         std::to_string(v % 1000 / 10) + ")";
}

std::string today() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string environment(const cudaDeviceProp &prop, int count) {
  int rt = 0, drv = 0, nccl = 0;
  cudaRuntimeGetVersion(&rt);
  cudaDriverGetVersion(&drv);
  ncclGetVersion(&nccl);
  int blas = 0;
  cublasGetProperty(MAJOR_VERSION, &blas);
  int blasMinor = 0, blasPatch = 0;
  cublasGetProperty(MINOR_VERSION, &blasMinor);
  cublasGetProperty(PATCH_LEVEL, &blasPatch);
  std::ostringstream os;
  os << "CUDA runtime " << rt / 1000 << "." << rt % 1000 / 10 << ", driver API "
     << drv / 1000 << "." << drv % 1000 / 10 << ", cuBLAS " << blas << "."
     << blasMinor << "." << blasPatch << ", NCCL " << nccl / 10000 << "."
     << nccl % 10000 / 100 << "." << nccl % 100 << "; compute capability "
     << prop.major << "." << prop.minor << ", " << prop.multiProcessorCount
     << " SMs, " << count << " GPU" << (count == 1 ? "" : "s") << " in view";
  return os.str();
}

void describeMethods(MeasurementSet &set) {
  const std::string timing =
      "GPU time between CUDA events, L2 flushed before each run and the "
      "launches queued before the stream starts (host launch latency and the "
      "runtime's host work between ops not counted), median of 3-9 runs "
      "after 2 warm-ups";
  set.subject =
      "helix's CUDA runtime as it runs: GEMMs as its linear() runs them "
      "(resident weights read as stored by its weight-streaming kernel up to " +
      std::to_string(cuda::kStreamingGemmMaxRows) +
      " rows, above that dequantized to f32 for cuBLAS SGEMM), "
      "its own decode attention and elementwise kernels, NCCL collectives; "
      "not the kernels of a production engine (TensorRT-LLM, vLLM, SGLang), "
      "which the presets describe";
  set.methods["gemm"] =
      "the resident weight (bf16; fp8 with 128x128 f32 block scales; fp4 as "
      "NVFP4) through cuda::linearResident up to " +
      std::to_string(cuda::kStreamingGemmMaxRows) +
      " rows, above that "
      "cuda::dequantize to f32 then cublasSgemm; " +
      timing;
  set.methods["gemm_math"] = set.methods["gemm"];
  set.methods["attention"] =
      "the runtime's cuda::attention kernel (one block per query head and "
      "request), GQA head_dim 128 with 8 query heads per KV head, MLA "
      "head_dim 576 (value 512); " +
      timing;
  set.methods["elementwise"] =
      "cuda::rmsNorm, rope, kvStore (KV append), lseCombine and gated "
      "(SiLU) at batch 1 and 8; " +
      timing;
  const std::string coll =
      "; single process over GPUs 0..n-1 (ncclCommInitAll); per-GPU CUDA "
      "event time of back-to-back iterations / iterations, the slowest GPU, "
      "median of 5 runs after 2 warm-ups";
  set.methods["all_reduce"] = "ncclAllReduce of f32, in place, as the "
                              "runtime's all-reduce" +
                              coll;
  set.methods["all_gather"] = "ncclAllGather of f32, as the runtime's "
                              "all-gather; bytes = the output" +
                              coll;
  set.methods["reduce_scatter"] =
      "the runtime's reduceScatterSum: a device copy, ncclAllReduce of the "
      "whole f32 buffer, a copy of the rank's part (it calls no "
      "ncclReduceScatter); bytes = the input" +
      coll;
  set.methods["all_to_all"] =
      "the runtime's all-to-all chunks: grouped ncclSend/ncclRecv of f32 per "
      "peer; bytes = the per-rank send buffer" +
      coll;
}

int run(const TimingOptions &opt, MeasurementSet &set, std::string &reason) {
  int count = -1;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    int drv = 0;
    cudaDriverGetVersion(&drv);
    reason = drv == 0
                 ? std::string("no NVIDIA driver is loaded "
                               "(cudaGetDeviceCount: ") +
                       cudaGetErrorString(e) + ")"
                 : std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    return static_cast<int>(TimingStatus::NoGPU);
  }
  if (count <= 0) {
    reason = "cudaGetDeviceCount found no device";
    return static_cast<int>(TimingStatus::NoGPU);
  }
  if (opt.device < 0 || opt.device >= count) {
    reason = "device " + std::to_string(opt.device) + " requested, " +
             std::to_string(count) + " in view";
    return static_cast<int>(TimingStatus::NoGPU);
  }
  cudaDeviceProp prop;
  check(cudaGetDeviceProperties(&prop, opt.device), "cudaGetDeviceProperties");
  set = MeasurementSet();
  set.gpu = prop.name;
  set.smCount = prop.multiProcessorCount;
  set.driver = driverVersion();
  set.date = today();
  set.environment = environment(prop, count);
  describeMethods(set);
  set.notMeasured.push_back(
      "grouped_gemm (the runtime's MoE experts run per local expert: a row "
      "gather, three GEMMs of the GEMM path and a scatter, after host-side "
      "routing; not timed as one unit)");
  set.notMeasured.push_back("collectives broadcast, moe_dispatch, "
                            "moe_combine, p2p (not timed)");

  std::vector<std::string> failures;
  auto section = [&](const char *what, const std::function<void()> &body) {
    try {
      body();
    } catch (const Failure &f) {
      (void)cudaGetLastError();
      failures.push_back(std::string(what) + ": " + f.what());
      set.notMeasured.push_back(std::string(what) + " (failed: " + f.what() +
                                ")");
      if (opt.progress)
        opt.progress(std::string("warning: ") + what + " failed: " + f.what());
    }
  };
  {
    std::unique_ptr<Device> dev;
    section("device setup",
            [&] { dev = std::make_unique<Device>(opt.device); });
    if (dev) {
      section("gemm", [&] { timeGemms(*dev, set, opt); });
      section("attention", [&] { timeAttention(*dev, set, opt); });
      section("elementwise", [&] { timeElementwise(*dev, set, opt); });
    }
  }
  if (count >= 2)
    section("collectives", [&] { timeCollectives(count, set, opt); });
  else
    set.notMeasured.push_back("collectives (one GPU in view; NCCL needs two)");
  if (set.empty()) {
    reason = "nothing could be timed";
    for (const std::string &f : failures)
      reason += "; " + f;
    return static_cast<int>(TimingStatus::Failed);
  }
  return static_cast<int>(TimingStatus::Measured);
}

} // namespace
} // namespace calibrate
} // namespace helix

int helix::calibrate::timeRuntimeOnGPU(const TimingOptions &options,
                                       MeasurementSet &set,
                                       std::string &reason) {
  try {
    return run(options, set, reason);
  } catch (const std::exception &e) {
    reason = e.what();
  } catch (...) {
    reason = "an unknown exception";
  }
  return static_cast<int>(TimingStatus::Failed);
}
