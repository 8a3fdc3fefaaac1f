//===- CudaBackend.cpp - Kernels on the GPU, GEMMs through cuBLAS ---------===//
//
// Every op runs on the rank's compute stream; memory is stream-ordered
// (cudaMallocAsync / cudaFreeAsync on that stream). Collectives started
// with *Start run on a second stream, ordered with events (HOP-B). MoE
// runs on the device without a host round trip: routing, the dispatch of
// routed rows to the local experts, one grouped GEMM launch per expert
// projection, the combine. Weights kept in BF16 / FP8 / FP4 are read as
// stored by a weight-streaming kernel (linearResident); f32 ones go
// through cuBLAS.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "CudaKernels.h"
#include "MoeRouting.h"
#include "StepGraph.h"
#include "TrafficCounts.h"

#include "helix/Runtime/CudaBackend.h"

#include "../Common/MpiCommunicator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace helix {
namespace rt {

void cudaCheck(cudaError_t e, const char *what) {
  if (e != cudaSuccess)
    throw Error(std::string("cuda: ") + what + ": " + cudaGetErrorString(e));
}

void waitStream(CudaState &s, cudaStream_t stream, const char *what) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto pause = std::chrono::microseconds(0);
  for (;;) {
    cudaError_t e = cudaStreamQuery(stream);
    if (e == cudaSuccess)
      return;
    if (e != cudaErrorNotReady)
      cudaCheck(e, what);
    std::string failure;
    for (ncclComm_t c : s.comms) {
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(c, &async) == ncclSuccess &&
          async != ncclSuccess && async != ncclInProgress)
        failure = std::string("an NCCL communicator failed: ") +
                  ncclGetErrorString(async);
    }
    double waited = std::chrono::duration<double>(Clock::now() - start).count();
    if (failure.empty() && s.timeoutS > 0 && waited >= s.timeoutS) {
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", s.timeoutS);
      failure = std::string("no answer in ") + secs +
                " s (a peer stopped, deadlocked or died; the limit is "
                "--step-timeout)";
    }
    if (!failure.empty()) {
      // Unblock the stream's NCCL kernels so the process can exit.
      for (ncclComm_t c : s.comms)
        ncclCommAbort(c);
      s.comms.clear();
      throw Error(std::string("cuda: ") + what + ": " + failure);
    }
    std::this_thread::sleep_for(pause);
    if (pause < std::chrono::microseconds(1000))
      pause += std::chrono::microseconds(50);
  }
}

void cublasCheck(cublasStatus_t s, const char *what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("cublas: ") + what + " failed (status " +
                std::to_string(static_cast<int>(s)) + ")");
}

int cudaDeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

namespace {

/// Small host arrays (indices, RoPE frequencies) uploaded for one kernel
/// call (through the step graph's staging: StepGraph.h).
template <class T> class DeviceArray {
public:
  DeviceArray(const std::vector<T> &v, StepGraph &g)
      : g_(g), ptr_(g.stage(v.data(), v.size() * sizeof(T))) {}
  ~DeviceArray() { g_.unstage(ptr_); }
  const T *get() const { return static_cast<const T *>(ptr_); }

private:
  StepGraph &g_;
  const void *ptr_;
};
using DeviceInts = DeviceArray<int64_t>;
using DeviceFloats = DeviceArray<float>;

class CudaBackend : public Backend {
public:
  CudaBackend(Context &ctx, const ContextOptions &o) {
    s_.timeoutS = o.stepTimeoutS;
    int count = cudaDeviceCount();
    if (count == 0)
      throw Error("cuda backend: no CUDA device found (use --backend cpu)");
    s_.device = o.device >= 0 ? o.device : ctx.localRank() % count;
    if (s_.device >= count)
      throw Error("cuda backend: device " + std::to_string(s_.device) +
                  " requested, " + std::to_string(count) + " present");
    cudaCheck(cudaSetDevice(s_.device), "cudaSetDevice");
    cudaCheck(cudaDeviceGetAttribute(&s_.sms, cudaDevAttrMultiProcessorCount,
                                     s_.device),
              "cudaDeviceGetAttribute");
    cudaCheck(cudaStreamCreateWithFlags(&s_.compute, cudaStreamNonBlocking),
              "cudaStreamCreate");
    cudaCheck(cudaStreamCreateWithFlags(&s_.comm, cudaStreamNonBlocking),
              "cudaStreamCreate");
    cublasCheck(cublasCreate(&s_.blas), "cublasCreate");
    cublasCheck(cublasSetStream(s_.blas, s_.compute), "cublasSetStream");
    // Plain fp32 GEMMs (no TF32), to agree with the CPU reference.
    cublasCheck(cublasSetMathMode(s_.blas, CUBLAS_DEFAULT_MATH),
                "cublasSetMathMode");
    cudaCheck(cudaMalloc(reinterpret_cast<void **>(&moeStats_),
                         2 * kMoeStatSlots * sizeof(int64_t)),
              "cudaMalloc (MoE statistics)");
    if (o.collectives == "mpi")
      s_.nccl = false;
    else if (o.collectives == "nccl")
      s_.nccl = true;
    else // NCCL refuses two ranks on one device
      s_.nccl = o.device < 0 && ctx.localSize() <= count;
    // Graphs capture the NCCL calls; MPI collectives stage through the host.
    if (o.cudaGraphs == "on" && !s_.nccl)
      throw Error("--cuda-graphs on: CUDA graphs need NCCL collectives "
                  "(--collectives mpi stages every collective through the "
                  "host)");
    graph_ = std::make_unique<StepGraph>(
        s_.compute, o.cudaGraphs == "on" || (o.cudaGraphs == "auto" && s_.nccl),
        [this] { waitStream(s_, s_.compute, "the previous step"); });
    s_.graph = graph_.get();
    s_.countCollective = [this](const char *name) {
      OpTraffic &t = traffic_[name];
      t.calls += 1;
      t.collectives += 1;
    };
    life_->graph = graph_.get();
  }
  ~CudaBackend() override {
    life_->graph = nullptr;
    cudaStreamSynchronize(s_.compute);
    cudaStreamSynchronize(s_.comm);
    s_.graph = nullptr;
    graph_.reset();
    cudaFree(moeStats_);
    cublasDestroy(s_.blas);
    cudaStreamDestroy(s_.comm);
    cudaStreamDestroy(s_.compute);
  }

  std::string name() const override { return "cuda"; }

  std::map<std::string, OpTraffic> traffic() const override {
    std::map<std::string, OpTraffic> t = traffic_;
    addRoutedExperts(t);
    return t;
  }
  void resetTraffic() override {
    traffic_.clear();
    op_ = nullptr;
    moeCalls_.clear();
    moeSlot_ = 0;
  }

  /// A decode step: captured once as a CUDA graph and replayed (StepGraph).
  Tensor runStep(const std::function<Tensor()> &step) override {
    // A replay that does not match runs the step's host code twice: the
    // counts go back to where the step began.
    auto traffic = traffic_;
    size_t moeCalls = moeCalls_.size();
    return graph_->run(
        [&] {
          moeSlot_ = 0; // the step's MoE calls take statistics slots 0, 1, ..
          return step();
        },
        [&] {
          traffic_ = traffic;
          op_ = nullptr;
          moeCalls_.resize(moeCalls);
        });
  }
  bool deviceMemory() const override { return true; }

  std::shared_ptr<Storage> allocate(size_t bytes) override {
    auto s = std::make_shared<Storage>();
    s->data = graph_->allocate(bytes);
    s->bytes = bytes;
    s->onDevice = true;
    cudaStream_t stream = s_.compute;
    std::shared_ptr<Life> life = life_;
    // Tensors may outlive the backend (a program's weights): then free
    // without the (destroyed) stream. A replayed step's frees are its
    // graph's.
    s->release = [stream, life](void *p) {
      if (!life->graph)
        cudaFree(p);
      else if (!life->graph->skipsFree())
        cudaFreeAsync(p, stream);
    };
    return s;
  }
  void upload(void *dst, const void *src, size_t bytes) override {
    cudaCheck(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s_.compute),
        "upload");
    waitStream(s_, s_.compute, "upload");
  }
  void download(void *dst, const void *src, size_t bytes) override {
    cudaCheck(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s_.compute),
        "download");
    waitStream(s_, s_.compute, "download");
  }
  void copy(void *dst, const void *src, size_t bytes) override {
    if (skip())
      return;
    cudaCheck(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s_.compute),
        "copy");
  }
  void zero(void *dst, size_t bytes) override {
    if (skip())
      return;
    cudaCheck(cudaMemsetAsync(dst, 0, bytes, s_.compute), "memset");
  }
  void synchronize() override {
    waitStream(s_, s_.compute, "synchronize");
    waitStream(s_, s_.comm, "synchronize (communication stream)");
  }

  std::unique_ptr<Communicator>
  createCommunicator(Context &ctx, const std::vector<int> &members, int index,
                     GroupHandle &group) override {
    if (!s_.nccl || members.size() == 1)
      return createMpiCommunicator(ctx, members, index, group);
    return createNcclCommunicator(ctx, s_, members, index, group);
  }

  /// After an op's launches: the launch error, then the kernels and cuBLAS
  /// calls it issued, on the op count() named (and on its entry in the step
  /// graph, whose replays count what the capture recorded).
  void launched(const char *what) {
    cudaCheck(cudaGetLastError(), what);
    if (op_) {
      op_->launches += kernels_;
      op_->blasCalls += blas_;
    }
    graph_->addWork(opEntry_, kernels_, blas_);
    kernels_ = blas_ = 0;
  }
  /// Replaying a step: the host code runs, the device work is the graph's
  /// (every op returns here after its allocations and index uploads).
  bool skip() const { return graph_->replaying(); }

  void embedding(const Tensor &table, const std::vector<int64_t> &tokens,
                 int64_t vocabBegin, Tensor &out) override {
    int64_t mine = 0;
    for (int64_t t : tokens)
      mine += t >= vocabBegin && t < vocabBegin + table.dim(0);
    count("embedding", KernelKind::Embedding,
          storedBytes(table, mine * table.dim(1)), 0, f32Bytes(out));
    DeviceInts t(tokens, *graph_);
    if (skip())
      return;
    kernels_ += cuda::embedding(
        table.raw(), table.dtype(), table.dim(0), table.dim(1), t.get(),
        static_cast<int64_t>(tokens.size()), vocabBegin, out.f32(), s_.compute);
    launched("embedding");
  }

  void rmsNorm(const Tensor &x, const Tensor &w, float eps,
               Tensor &out) override {
    int64_t D = w.dim(0);
    count("rmsNorm", KernelKind::Norm, storedBytes(w, D), 0, 2 * f32Bytes(x));
    if (skip())
      return;
    kernels_ += cuda::rmsNorm(x.f32(), w.raw(), x.numel() / D, D, eps,
                              out.f32(), s_.compute, w.dtype());
    launched("rmsNorm");
  }

  void rmsNormPrefix(const Tensor &x, const Tensor &w, float eps,
                     Tensor &out) override {
    int64_t D = w.dim(0), W = x.dim(-1);
    count("rmsNorm", KernelKind::Norm, storedBytes(w, D), 0, 2 * f32Bytes(x));
    if (skip())
      return;
    kernels_ += cuda::rmsNormPrefix(x.f32(), w.raw(), x.numel() / W, W, D, eps,
                                    out.f32(), s_.compute, w.dtype());
    launched("rmsNorm");
  }

  void addRmsNorm(const Tensor &a, const Tensor &b, const Tensor &w, float eps,
                  Tensor &sum, Tensor &out) override {
    int64_t D = w.dim(0);
    count("addRmsNorm", KernelKind::Norm, storedBytes(w, D), 0,
          4 * f32Bytes(a));
    if (skip())
      return;
    kernels_ +=
        cuda::addRmsNorm(a.f32(), b.f32(), w.raw(), a.numel() / D, D, eps,
                         sum.f32(), out.f32(), s_.compute, w.dtype());
    launched("addRmsNorm");
  }

  /// out [M, N] = x [M, K] . w [N, K]^T (row-major), via column-major cuBLAS.
  void gemm(const float *x, const float *w, float *out, int64_t M, int64_t K,
            int64_t N) {
    const float one = 1.0f, zero = 0.0f;
    ++blas_;
    cublasCheck(cublasSgemm(s_.blas, CUBLAS_OP_T, CUBLAS_OP_N,
                            static_cast<int>(N), static_cast<int>(M),
                            static_cast<int>(K), &one, w, static_cast<int>(K),
                            x, static_cast<int>(K), &zero, out,
                            static_cast<int>(N)),
                "cublasSgemm");
  }

  bool readsResidentWeights() const override { return true; }

  /// out [M, N] = x [M, K] . W^T (+ bias) for W the [N, K] matrix starting
  /// at element `first` of `w`: cuBLAS for f32 weights; resident weights
  /// read as stored by the weight-streaming kernel up to
  /// kStreamingGemmMaxRows rows, else decoded to f32 once for cuBLAS.
  void matmul(const float *x, int64_t M, int64_t K, const Tensor &w,
              int64_t first, int64_t N, const float *bias, float *out) {
    const BlockScales *bs = w.scales().get();
    bool streamed = w.dtype() != DType::F32 && M <= cuda::kStreamingGemmMaxRows;
    double act = 4.0 * double(M * K + M * N + (bias ? N : 0));
    if (w.dtype() != DType::F32 && !streamed)
      act += 8.0 * double(N * K); // the f32 copy written, then read
    count(streamed ? "gemm (weights as stored)" : "gemm (cuBLAS)",
          KernelKind::Gemm, storedBytes(w, N * K), 0, act,
          2.0 * double(M * N * K));
    const float *wf = w.dtype() == DType::F32 ? w.f32() + first : nullptr;
    Tensor decoded; // above the streaming sizes: the weight decoded to f32
    if (!wf && !streamed) {
      if ((first * dtypeBits(w.dtype())) % 8 != 0)
        throw Error("cuda backend: a weight matrix starts inside a byte (" +
                    w.str() + ", element " + std::to_string(first) + ")");
      decoded = tmp(N * K);
    }
    if (skip())
      return;
    if (streamed) {
      kernels_ += cuda::linearResident(
          x, M, K, w.raw(), w.dtype(), first, w.elementOffset(),
          bs ? &bs->desc : nullptr, N, bias, out, s_.compute);
      return;
    }
    if (!wf) {
      kernels_ += cuda::dequantize(
          static_cast<const uint8_t *>(w.raw()) + dtypeBytes(w.dtype(), first),
          w.dtype(), N * K, w.elementOffset() + first, bs ? &bs->desc : nullptr,
          decoded.f32(), s_.compute);
      wf = decoded.f32();
    }
    gemm(x, wf, out, M, K, N);
    if (bias)
      kernels_ += cuda::addBias(out, bias, M, N, s_.compute);
  }

  void linear(const Tensor &x, const Tensor &w, const Tensor *bias,
              Tensor &out) override {
    matmul(x.f32(), x.dim(0), x.dim(1), w, 0, w.dim(0),
           bias ? bias->f32() : nullptr, out.f32());
    launched("linear");
  }

  /// Several weights of one x: where every one is streamed as stored
  /// (matmul's rule), one launch over all their columns; else one
  /// linear() each.
  void linearMany(const Tensor &x, const std::vector<Tensor> &ws,
                  const std::vector<const Tensor *> &biases,
                  std::vector<Tensor> &outs) override {
    int64_t M = x.dim(0), K = x.dim(1);
    bool fused = ws.size() >= 2 && ws.size() <= size_t(cuda::kMaxLinearParts) &&
                 M <= cuda::kStreamingGemmMaxRows;
    for (const Tensor &w : ws)
      fused = fused && w.dtype() != DType::F32;
    if (!fused) {
      Backend::linearMany(x, ws, biases, outs);
      return;
    }
    double weights = 0, act = 4.0 * double(M * K), flops = 0;
    std::vector<cuda::LinearPart> parts(ws.size());
    for (size_t i = 0; i < ws.size(); ++i) {
      const Tensor &w = ws[i];
      int64_t N = w.dim(0);
      weights += storedBytes(w, N * K);
      act += 4.0 * double(M * N + (biases[i] ? N : 0));
      flops += 2.0 * double(M * N * K);
      const BlockScales *bs = w.scales().get();
      parts[i] = {w.raw(),
                  w.dtype(),
                  0,
                  w.elementOffset(),
                  bs ? &bs->desc : nullptr,
                  N,
                  biases[i] ? biases[i]->f32() : nullptr,
                  outs[i].f32()};
    }
    count("gemm (weights as stored)", KernelKind::Gemm, weights, 0, act, flops);
    if (skip())
      return;
    kernels_ +=
        cuda::linearResidentParts(x.f32(), M, K, parts.data(),
                                  static_cast<int>(parts.size()), s_.compute);
    launched("linear");
  }

  void headMatmul(const Tensor &x, const Tensor &w, bool transposeW,
                  Tensor &out) override {
    int B = static_cast<int>(x.dim(0)), H = static_cast<int>(x.dim(1)),
        A = static_cast<int>(x.dim(2)), N = static_cast<int>(out.dim(2));
    bool streamed = B <= cuda::kStreamingGemmMaxRows;
    if (w.dtype() != DType::F32 && streamed) {
      // Resident weights at decode sizes: one kernel, the weight read once
      // in its format.
      const BlockScales *bs = w.scales().get();
      count("gemm (per head, weights as stored)", KernelKind::Gemm,
            storedBytes(w, w.numel()), 0, f32Bytes(x) + f32Bytes(out),
            2.0 * B * H * A * N);
      if (skip())
        return;
      kernels_ += cuda::headMatmulResident(
          x.f32(), B, H, A, w.raw(), w.dtype(), w.elementOffset(),
          bs ? &bs->desc : nullptr, N, transposeW, out.f32(), s_.compute);
      launched("headMatmul");
      return;
    }
    // Above the streaming rows a resident weight is decoded to f32 once for
    // cuBLAS (4 bytes per value written and read).
    bool decode = w.dtype() != DType::F32;
    count("headMatmul", KernelKind::Gemm,
          decode ? storedBytes(w, w.numel()) : f32Bytes(w), 0,
          f32Bytes(x) + f32Bytes(out) + (decode ? 8.0 * w.numel() : 0.0),
          2.0 * B * H * A * N);
    Tensor decoded = decode ? tmp(w.numel()) : Tensor();
    if (skip())
      return;
    const float *wf = w.dtype() == DType::F32 ? w.f32() : nullptr;
    if (decode) {
      const BlockScales *bs = w.scales().get();
      kernels_ +=
          cuda::dequantize(w.raw(), w.dtype(), w.numel(), w.elementOffset(),
                           bs ? &bs->desc : nullptr, decoded.f32(), s_.compute);
      wf = decoded.f32();
    }
    const float one = 1.0f, zero = 0.0f;
    // Per head h: out_h [B, N] (row stride H*N) = x_h [B, A] (row stride H*A)
    // times w_h^T ([N, A]) or w_h ([A, N]).
    ++blas_;
    cublasCheck(cublasSgemmStridedBatched(
                    s_.blas, transposeW ? CUBLAS_OP_N : CUBLAS_OP_T,
                    CUBLAS_OP_N, N, B, A, &one, wf, transposeW ? N : A,
                    static_cast<long long>(N) * A, x.f32(), H * A, A, &zero,
                    out.f32(), H * N, N, H),
                "cublasSgemmStridedBatched");
    launched("headMatmul");
  }

  void rope(Tensor &x, const std::vector<int64_t> &positions,
            const std::vector<float> &invFreq, float attentionFactor,
            int64_t offset, bool interleaved) override {
    count("rope", KernelKind::Rope, 0, 0, 2 * f32Bytes(x));
    DeviceInts pos(positions, *graph_);
    DeviceFloats freq(invFreq, *graph_);
    if (skip())
      return;
    kernels_ += cuda::rope(x.f32(), x.dim(0), x.dim(1), x.dim(2), pos.get(),
                           freq.get(), static_cast<int64_t>(invFreq.size()),
                           attentionFactor, offset, interleaved, s_.compute);
    launched("rope");
  }

  void ropeKvAppend(Tensor &q, Tensor &k, const Tensor *v, KVCache *cache,
                    const std::vector<int64_t> &slots,
                    const std::vector<int64_t> &positions,
                    const std::vector<float> &invFreq, float attentionFactor,
                    int64_t offset, bool interleaved) override {
    double kv = cache ? kvEntryBytes(*cache, double(storedSlots(slots))) : 0;
    double act = 2 * f32Bytes(q) + 2 * f32Bytes(k) +
                 (cache ? f32Bytes(k) + (v ? f32Bytes(*v) : 0) : 0);
    count(cache ? "rope + kvAppend" : "rope (q and k)",
          cache ? KernelKind::KVAppend : KernelKind::Rope, 0, kv, act);
    DeviceInts pos(positions, *graph_);
    DeviceFloats freq(invFreq, *graph_);
    DeviceInts at(cache ? slots : std::vector<int64_t>(), *graph_);
    cuda::KVStoreTarget target{};
    if (cache) {
      const KVCacheConfig &c = cache->config;
      target = {cache->keys.raw(),
                scalesOf(cache->keyScales),
                v ? cache->values.raw() : nullptr,
                scalesOf(cache->valueScales),
                v ? v->f32() : nullptr,
                c.dtype,
                c.capacity,
                c.keyDim,
                c.valueDim,
                at.get()};
    }
    if (skip())
      return;
    kernels_ += cuda::ropeKvStore(
        q.f32(), q.dim(1), k.f32(), k.dim(1), q.dim(0), q.dim(2), pos.get(),
        freq.get(), static_cast<int64_t>(invFreq.size()), attentionFactor,
        offset, interleaved, cache ? &target : nullptr, s_.compute);
    launched("ropeKvAppend");
  }

  void dequantize(const Tensor &q, Tensor &out) override {
    const BlockScales *bs = q.scales().get();
    count("dequantize", KernelKind::Convert, storedBytes(q, q.numel()), 0,
          f32Bytes(out));
    if (skip())
      return;
    kernels_ +=
        cuda::dequantize(q.raw(), q.dtype(), q.numel(), q.elementOffset(),
                         bs ? &bs->desc : nullptr, out.f32(), s_.compute);
    launched("dequantize");
  }

  void kvAppend(KVCache &cache, const Tensor &k, const Tensor *v,
                const std::vector<int64_t> &slots) override {
    const KVCacheConfig &c = cache.config;
    count("kvAppend", KernelKind::KVAppend, 0,
          kvEntryBytes(cache, double(storedSlots(slots))),
          f32Bytes(k) + (v ? f32Bytes(*v) : 0));
    DeviceInts s(slots, *graph_);
    if (skip())
      return;
    if (v) {
      // K and V in one launch: ropeKvStore with nothing to rotate.
      cuda::KVStoreTarget target{
          cache.keys.raw(),   scalesOf(cache.keyScales),
          cache.values.raw(), scalesOf(cache.valueScales),
          v->f32(),           c.dtype,
          c.capacity,         c.keyDim,
          c.valueDim,         s.get()};
      kernels_ += cuda::ropeKvStore(
          nullptr, 0, const_cast<float *>(k.f32()), c.heads, c.batch, c.keyDim,
          nullptr, nullptr, 0, 1.0f, 0, false, &target, s_.compute);
    } else {
      kernels_ += cuda::kvStore(cache.keys.raw(), scalesOf(cache.keyScales),
                                k.f32(), c.dtype, c.batch, c.capacity, c.heads,
                                c.keyDim, s.get(), s_.compute);
    }
    launched("kvAppend");
  }

  void attention(const Tensor &q, const KVCache &cache, float scale,
                 const std::vector<int64_t> &slotBegin,
                 const std::vector<int64_t> &slotEnd, Tensor &out, Tensor &lse,
                 int64_t piece) override {
    const KVCacheConfig &c = cache.config;
    double tokens = 0;
    int64_t longest = 0;
    for (size_t i = 0; i < slotBegin.size(); ++i) {
      int64_t n = std::max<int64_t>(0, slotEnd[i] - slotBegin[i]);
      tokens += double(n);
      longest = std::max(longest, n);
    }
    int64_t qHeads = q.dim(1), rows = c.batch * qHeads;
    // A graph replays one grid: split-K sized by the capacity, not by this
    // step's longest row (each part finds its range on the device).
    int splits = cuda::attentionSplits(
        rows, graph_->enabled() ? c.capacity : longest, s_.sms);
    Tensor work;
    if (splits > 1)
      work = tmp(cuda::attentionWorkspace(splits, c.batch, qHeads, c.valueDim));
    int64_t perToken = c.heads * (c.keyDim + c.valueDim);
    count(splits > 1 ? "attention (split-K)" : "attention",
          KernelKind::Attention, 0, kvEntryBytes(cache, tokens),
          f32Bytes(q) + f32Bytes(out) + (piece ? 0 : f32Bytes(lse)) +
              8.0 * double(work.defined() ? work.numel() : 0),
          2.0 * tokens * double(qHeads) / double(c.heads) * perToken);
    DeviceInts b(slotBegin, *graph_), e(slotEnd, *graph_);
    if (skip())
      return;
    kernels_ += cuda::attention(
        q.f32(), cache.keys.raw(), scalesOf(cache.keyScales),
        c.valueInKey ? nullptr : cache.values.raw(),
        scalesOf(cache.valueScales), c.dtype, c.batch, q.dim(1), c.heads,
        c.keyDim, c.valueDim, c.capacity, b.get(), e.get(), scale, out.f32(),
        piece ? nullptr : lse.f32(), splits, splits > 1 ? work.f32() : nullptr,
        s_.compute, piece);
    launched("attention");
  }

  void lseCombine(const Tensor &values, const Tensor &lse,
                  const PartialsLayout &l, const Tensor *sinks,
                  Tensor &out) override {
    double partials = double(l.batch * l.shards * l.heads);
    count("lseCombine", KernelKind::Combine, 0, 0,
          4.0 * (partials * double(l.dim + 1)) + f32Bytes(out));
    if (skip())
      return;
    kernels_ +=
        cuda::lseCombine(values.f32(), lse.f32(), l,
                         sinks ? sinks->f32() : nullptr, out.f32(), s_.compute);
    launched("lseCombine");
  }

  void gatedActivation(const Tensor &gate, const Tensor &up,
                       const Activation &act, Tensor &out) override {
    count("gatedActivation", KernelKind::Activation, 0, 0, 3 * f32Bytes(gate));
    if (skip())
      return;
    // A gate of one value per row broadcasts over the row.
    int64_t div = gate.numel() == up.numel() ? 1 : up.dim(-1);
    kernels_ += cuda::gated(gate.f32(), up.f32(), up.numel(),
                            static_cast<int>(act.kind), act.alpha, act.limit,
                            out.f32(), s_.compute, nullptr, 0, div);
    launched("gatedActivation");
  }

  void moeRoute(const Tensor &logits, const RouterConfig &c, const Tensor *bias,
                Routing &out) override {
    cuda::RouterParams p = cuda::routerParams(c, logits.dim(1));
    count("moeRoute", KernelKind::Route, 0, 0,
          f32Bytes(logits) + (bias ? f32Bytes(*bias) : 0) +
              f32Bytes(out.weights) + 4.0 * double(out.indices.numel()));
    if (skip())
      return;
    kernels_ += cuda::moeRoute(logits.f32(), bias ? bias->f32() : nullptr,
                               logits.dim(0), p,
                               static_cast<int32_t *>(out.indices.raw()),
                               out.weights.f32(), s_.compute);
    launched("moeRoute");
  }

  void moeExperts(const Tensor &x, const std::vector<int32_t> &indices,
                  const std::vector<float> &weights, int64_t topK,
                  const ExpertWeights &w, int64_t firstExpert,
                  const Activation &act, bool addDownBias,
                  Tensor &out) override {
    int64_t B = x.dim(0);
    Routing r{Tensor(allocate(indices.size() * sizeof(int32_t)), {B, topK},
                     DType::I32),
              tmp(B * topK).view({B, topK})};
    upload(r.indices.raw(), indices.data(), indices.size() * sizeof(int32_t));
    upload(r.weights.raw(), weights.data(), weights.size() * sizeof(float));
    moeExpertsRouted(x, r, w, firstExpert, act, addDownBias, out);
  }

  /// Dispatch (rows grouped by local expert, on the device), gather, the
  /// three grouped GEMMs over every local expert (one launch each),
  /// activation, combine: seven launches whatever the routing, sized for
  /// the most rows (B k); the kernels read how many are routed here from
  /// the device.
  void moeExpertsRouted(const Tensor &x, const Routing &routing,
                        const ExpertWeights &w, int64_t firstExpert,
                        const Activation &act, bool addDownBias,
                        Tensor &out) override {
    int64_t B = x.dim(0), H = x.dim(1), E = w.gate.dim(0), I = w.gate.dim(1),
            k = routing.indices.dim(1), R = B * k;
    // offsets [E + 1], rows [R], slotOf [R] in one int64 workspace.
    Tensor ints(allocate(static_cast<size_t>(E + 1 + 2 * R) * 8),
                {2 * (E + 1 + 2 * R)}, DType::I32);
    int64_t *offsets = static_cast<int64_t *>(ints.raw()),
            *rows = offsets + E + 1, *slotOf = rows + R;
    Tensor xe = tmp(R * H), g = tmp(R * I), u = tmp(R * I), h = tmp(R * I),
           y = tmp(R * H);
    int64_t *stats = moeStatsSlot(w);
    noteMoeRows(R);
    // Activations: the dispatch's indices and the rows moved (gathered x,
    // the gate/up/activation rows, the down rows, the combined output).
    count("moe experts (routed rows)", KernelKind::Experts, 0, 0,
          4.0 * double(R) + 16.0 * double(R + E) +
              4.0 * double(2 * R * H + 3 * R * I + R * H + B * H + R));
    if (skip())
      return;
    kernels_ += cuda::moeDispatch(
        static_cast<const int32_t *>(routing.indices.raw()), B, k, firstExpert,
        E, offsets, rows, slotOf, stats, s_.compute);
    const int64_t *live = offsets + E;
    kernels_ +=
        cuda::gatherRows(x.f32(), H, rows, R, xe.f32(), s_.compute, live);
    bool gu = w.gateBias.defined();
    grouped(xe.f32(), H, w.gate, I, gu ? w.gateBias.f32() : nullptr, offsets,
            g.f32());
    grouped(xe.f32(), H, w.up, I, gu ? w.upBias.f32() : nullptr, offsets,
            u.f32());
    kernels_ += cuda::gated(g.f32(), u.f32(), R * I, static_cast<int>(act.kind),
                            act.alpha, act.limit, h.f32(), s_.compute, live, I);
    bool db = addDownBias && w.downBias.defined();
    grouped(h.f32(), I, w.down, H, db ? w.downBias.f32() : nullptr, offsets,
            y.f32());
    kernels_ += cuda::moeCombine(y.f32(), slotOf, routing.weights.f32(), B, k,
                                 H, out.f32(), s_.compute);
    launched("moeExperts");
  }

  /// One grouped expert GEMM: out rows of each local expert = x rows . W_e^T
  /// (+ bias_e), W [E, N, K] read as stored.
  void grouped(const float *x, int64_t K, const Tensor &w, int64_t N,
               const float *bias, const int64_t *offsets, float *out) {
    const BlockScales *bs = w.scales().get();
    kernels_ += cuda::linearGrouped(x, K, w.raw(), w.dtype(), w.elementOffset(),
                                    bs ? &bs->desc : nullptr, w.dim(0), N, bias,
                                    offsets, out, s_.compute);
  }

  /// A small weight (f32, or BF16 as stored) for a kernel.
  static cuda::WeightRef ref(const Tensor &t) { return {t.raw(), t.dtype()}; }

  void gatedDeltaNet(const Tensor &proj, const Tensor &ba,
                     const GatedDeltaNetWeights &w, Tensor &state,
                     const std::vector<int64_t> &positions,
                     const GatedDeltaNetDims &d, float eps,
                     Tensor &out) override {
    int64_t B = proj.dim(0);
    double weights = 0;
    for (const Tensor *t :
         {&w.convQ, &w.convK, &w.convV, &w.aLog, &w.dtBias, &w.normWeight})
      weights += storedBytes(*t, t->numel());
    // The state rows are read and written (the layer's "KV").
    double flops =
        double(B) * double(d.valueHeads) * 6.0 * double(d.keyDim * d.valueDim) +
        2.0 * double(B * d.convChannels() * d.convKernel);
    count("gated deltanet step", KernelKind::Recurrent, weights,
          2 * f32Bytes(state), f32Bytes(proj) + f32Bytes(ba) + f32Bytes(out),
          flops);
    DeviceInts pos(positions, *graph_);
    if (skip())
      return;
    cuda::GatedDeltaNetArgs a;
    a.proj = proj.f32();
    a.ba = ba.f32();
    a.convQ = ref(w.convQ);
    a.convK = ref(w.convK);
    a.convV = ref(w.convV);
    a.aLog = ref(w.aLog);
    a.dtBias = ref(w.dtBias);
    a.norm = ref(w.normWeight);
    a.state = state.f32();
    a.positions = pos.get();
    a.batch = B;
    a.keyHeads = d.keyHeads;
    a.valueHeads = d.valueHeads;
    a.keyDim = d.keyDim;
    a.valueDim = d.valueDim;
    a.convKernel = d.convKernel;
    a.eps = eps;
    a.out = out.f32();
    kernels_ += cuda::gatedDeltaNet(a, s_.compute);
    launched("gatedDeltaNet");
  }

  void indexerPrepare(Tensor &q, const Tensor &key, const Tensor &normWeight,
                      const Tensor &normBias, float normEps, Tensor &weights,
                      float weightScale, Tensor &cache,
                      const std::vector<int64_t> &slots,
                      const std::vector<int64_t> &positions,
                      const std::vector<float> &invFreq, float attentionFactor,
                      bool interleaved) override {
    int64_t B = q.dim(0), D = q.dim(2), per = indexSlotValues(D);
    count("indexer prepare", KernelKind::Indexer,
          storedBytes(normWeight, D) + storedBytes(normBias, D),
          4.0 * double(storedSlots(slots) * per),
          2 * f32Bytes(q) + f32Bytes(key) + 2 * f32Bytes(weights));
    DeviceInts pos(positions, *graph_), at(slots, *graph_);
    DeviceFloats freq(invFreq, *graph_);
    if (skip())
      return;
    cuda::IndexerPrepareArgs a;
    a.q = q.f32();
    a.key = key.f32();
    a.normWeight = ref(normWeight);
    a.normBias = ref(normBias);
    a.normEps = normEps;
    a.weights = weights.f32();
    a.weightScale = weightScale;
    a.cache = cache.f32();
    a.capacity = cache.dim(1) / per;
    a.slots = at.get();
    a.positions = pos.get();
    a.invFreq = freq.get();
    a.half = static_cast<int64_t>(invFreq.size());
    a.attentionFactor = attentionFactor;
    a.interleaved = interleaved;
    a.batch = B;
    a.heads = q.dim(1);
    a.dim = D;
    kernels_ += cuda::indexerPrepare(a, s_.compute);
    launched("indexerPrepare");
  }

  void indexerTopK(const Tensor &q, const Tensor &weights, const Tensor &cache,
                   const std::vector<int64_t> &begin,
                   const std::vector<int64_t> &end, int64_t topK,
                   Tensor &out) override {
    int64_t B = q.dim(0), heads = q.dim(1), D = q.dim(2),
            per = indexSlotValues(D), capacity = cache.dim(1) / per;
    double entries = 0;
    for (size_t i = 0; i < begin.size(); ++i)
      entries += double(end[i] - begin[i]);
    int64_t words = cuda::indexerTopKWorkspace(B, capacity, topK);
    // Scores: the cached keys (the indexer's "KV"), q and the weights per
    // row, a key per entry written and read by the selection.
    count("indexer scores + top-k", KernelKind::IndexScores, 0,
          4.0 * entries * double(per),
          f32Bytes(q) + f32Bytes(weights) + 16.0 * entries + f32Bytes(out),
          2.0 * entries * double(heads * D + heads));
    Tensor work(allocate(static_cast<size_t>(std::max<int64_t>(words, 1)) * 8),
                {2 * std::max<int64_t>(words, 1)}, DType::I32);
    DeviceInts b(begin, *graph_), e(end, *graph_);
    if (skip())
      return;
    kernels_ += cuda::indexerTopK(q.f32(), weights.f32(), cache.f32(), B, heads,
                                  D, capacity, b.get(), e.get(), topK,
                                  static_cast<uint64_t *>(work.raw()),
                                  out.f32(), s_.compute);
    launched("indexerTopK");
  }

  void kvGather(const KVCache &src, const std::vector<int64_t> &slots,
                KVCache &dst) override {
    const KVCacheConfig &c = src.config;
    double entries = double(storedSlots(slots));
    count("kvGather", KernelKind::Layout, 0, kvEntryBytes(src, entries),
          kvEntryBytes(src, entries) + 8.0 * double(slots.size()));
    DeviceInts at(slots, *graph_);
    if (skip())
      return;
    cuda::KVGatherArgs a;
    a.keys = static_cast<const uint8_t *>(src.keys.raw());
    a.keyScales = scalesOf(src.keyScales);
    a.values =
        c.valueInKey ? nullptr : static_cast<const uint8_t *>(src.values.raw());
    a.valueScales = scalesOf(src.valueScales);
    a.dstKeys = static_cast<uint8_t *>(dst.keys.raw());
    a.dstKeyScales = scalesOf(dst.keyScales);
    a.dstValues =
        c.valueInKey ? nullptr : static_cast<uint8_t *>(dst.values.raw());
    a.dstValueScales = scalesOf(dst.valueScales);
    a.dtype = c.dtype;
    a.batch = c.batch;
    a.capacity = c.capacity;
    a.dstCapacity = dst.config.capacity;
    a.heads = c.heads;
    a.keyDim = c.keyDim;
    a.valueDim = c.valueDim;
    a.slots = at.get();
    kernels_ += cuda::kvGather(a, s_.compute);
    launched("kvGather");
  }

  void add(const Tensor &a, const Tensor &b, Tensor &out) override {
    count("add", KernelKind::Sum, 0, 0, 3 * f32Bytes(a));
    if (skip())
      return;
    kernels_ += cuda::add(a.f32(), b.f32(), a.numel(), out.f32(), s_.compute);
    launched("add");
  }
  void logAddExp(const Tensor &a, const Tensor &b, Tensor &out) override {
    count("logAddExp", KernelKind::Combine, 0, 0, 3 * f32Bytes(a));
    if (skip())
      return;
    kernels_ +=
        cuda::logAddExp(a.f32(), b.f32(), a.numel(), out.f32(), s_.compute);
    launched("logAddExp");
  }
  void swapAxes01(const Tensor &x, int64_t a, int64_t b, int64_t c,
                  Tensor &out) override {
    count("swapAxes01", KernelKind::Layout, 0, 0, 2 * f32Bytes(x));
    if (skip())
      return;
    kernels_ += cuda::swapAxes01(x.f32(), a, b, c, out.f32(), s_.compute);
    launched("swapAxes01");
  }
  void sliceColumns(const Tensor &x, int64_t rows, int64_t cols, int64_t begin,
                    int64_t count, Tensor &out) override {
    this->count("sliceColumns", KernelKind::Layout, 0, 0,
                8.0 * double(rows * count));
    if (skip())
      return;
    kernels_ += cuda::sliceColumns(x.f32(), rows, cols, begin, count, out.f32(),
                                   s_.compute);
    launched("sliceLast");
  }
  void concatColumns(const Tensor &a, const Tensor &b, int64_t rows, int64_t ca,
                     int64_t cb, Tensor &out) override {
    count("concatColumns", KernelKind::Layout, 0, 0,
          8.0 * double(rows * (ca + cb)));
    if (skip())
      return;
    kernels_ += cuda::concatColumns(a.f32(), b.f32(), rows, ca, cb, out.f32(),
                                    s_.compute);
    launched("concatLast");
  }
  void sumLeading(const Tensor &x, int64_t s, int64_t n, Tensor &out) override {
    count("sumLeading", KernelKind::Layout, 0, 0, 4.0 * double(s * n + n));
    if (skip())
      return;
    kernels_ += cuda::sumLeading(x.f32(), s, n, out.f32(), s_.compute);
    launched("sumLeading");
  }

private:
  CudaState s_;
  std::map<std::string, OpTraffic> traffic_;
  OpTraffic *op_ = nullptr;    // the op count() named last
  long opEntry_ = -1;          // its entry in the step graph's script
  int kernels_ = 0, blas_ = 0; // issued by it so far

  /// The routed experts' traffic is known on the device only: each
  /// moeExpertsRouted call's dispatch writes (experts with rows, rows) to a
  /// slot of moeStats_, and traffic() reads them after the step. A step's
  /// calls take slots 0, 1, ... (runStep), so a step replayed as a CUDA
  /// graph writes where its calls are recorded; counts over several steps
  /// take each call's last step. Beyond kMoeStatSlots calls per step the
  /// call is counted with all its local experts and every row (an upper
  /// bound, under its own name).
  static constexpr int64_t kMoeStatSlots = 4096;
  struct MoeCall {
    int64_t slot;         // -1: no statistics
    int64_t localExperts; // E
    int64_t maxRows;      // B k
    double expertBytes;   // gate + up + down of one expert, as stored
    double flopsPerRow;   // 6 I H
  };
  std::vector<MoeCall> moeCalls_;
  int64_t moeSlot_ = 0;
  int64_t *moeStats_ = nullptr; // [kMoeStatSlots, 2], device

  /// The statistics slot of the next MoE call with weights `w` (null when
  /// none is left), recorded for traffic().
  int64_t *moeStatsSlot(const ExpertWeights &w) {
    int64_t E = w.gate.dim(0), I = w.gate.dim(1), H = w.gate.dim(2);
    int64_t slot = moeSlot_ < kMoeStatSlots ? moeSlot_++ : -1;
    double bytes = storedBytes(w.gate, I * H) + storedBytes(w.up, I * H) +
                   storedBytes(w.down, H * I);
    moeCalls_.push_back({slot, E, 0, bytes, 6.0 * double(I * H)});
    return slot >= 0 ? moeStats_ + 2 * slot : nullptr;
  }
  void noteMoeRows(int64_t rows) { moeCalls_.back().maxRows = rows; }

  /// Adds the routed experts' weights and FLOPs (from the device).
  void addRoutedExperts(std::map<std::string, OpTraffic> &t) const {
    if (moeCalls_.empty())
      return;
    int64_t used = 0;
    for (const MoeCall &c : moeCalls_)
      used = std::max(used, c.slot + 1);
    std::vector<int64_t> stats(2 * std::max<int64_t>(used, 1));
    if (used > 0)
      const_cast<CudaBackend *>(this)->download(stats.data(), moeStats_,
                                                stats.size() * sizeof(int64_t));
    for (const MoeCall &c : moeCalls_) {
      bool known = c.slot >= 0;
      int64_t experts = known ? stats[2 * c.slot] : c.localExperts;
      int64_t rows = known ? stats[2 * c.slot + 1] : c.maxRows;
      OpTraffic &o = t[known ? "moe experts (weights as stored)"
                             : "moe experts (upper bound)"];
      o.calls += 1;
      o.experts += experts;
      o.weightBytes += double(experts) * c.expertBytes;
      o.flops += double(rows) * c.flopsPerRow;
    }
  }

  /// Counts one call of op `name` (see OpTraffic); the step graph notes it
  /// (a replay adds the kernels and cuBLAS calls its capture issued).
  void count(const char *name, KernelKind kind, double weightBytes,
             double kvBytes, double actBytes, double flops = 0) {
    opEntry_ = graph_->note(name);
    OpTraffic &t = traffic_[name];
    op_ = &t;
    t.kind = kind;
    // Decode attention's launches past the first are its split-K merge;
    // those of DSA's index scores, the top-k selection.
    t.extraKind = kind == KernelKind::Attention     ? KernelKind::SplitMerge
                  : kind == KernelKind::IndexScores ? KernelKind::Indexer
                                                    : kind;
    kernels_ = blas_ = 0;
    if (skip()) {
      StepGraph::Work w = graph_->work(opEntry_);
      t.launches += w.kernels;
      t.blasCalls += w.blas;
    }
    t.calls += 1;
    t.weightBytes += weightBytes;
    t.kvBytes += kvBytes;
    t.actBytes += actBytes;
    t.flops += flops;
  }
  /// Bytes of `n` elements of `w` as stored, with the block scales they use.
  static double storedBytes(const Tensor &w, int64_t n) {
    const BlockScales *bs = w.scales().get();
    return rt::storedBytes(w.dtype(), bs ? &bs->desc : nullptr, n);
  }
  /// Bytes of `tokens` KV entries of `cache` (keys and values, scales).
  static double kvEntryBytes(const KVCache &cache, double tokens) {
    return rt::kvEntryBytes(cache.config, tokens);
  }
  static double f32Bytes(const Tensor &t) { return double(t.numel()) * 4; }
  /// Rows of an append that store (slot -1: another KVP rank's position).
  static int64_t storedSlots(const std::vector<int64_t> &slots) {
    return std::count_if(slots.begin(), slots.end(),
                         [](int64_t s) { return s >= 0; });
  }
  /// An F4E2M1 cache's scales (else null).
  static uint8_t *scalesOf(const Tensor &t) {
    return t.defined() ? static_cast<uint8_t *>(const_cast<void *>(t.raw()))
                       : nullptr;
  }
  /// What a tensor's release needs: the step graph (null once the backend
  /// is gone).
  struct Life {
    const StepGraph *graph = nullptr;
  };
  std::shared_ptr<Life> life_ = std::make_shared<Life>();
  std::unique_ptr<StepGraph> graph_;

  Tensor tmp(int64_t n) {
    return Tensor(allocate(static_cast<size_t>(n) * sizeof(float)), {n},
                  DType::F32);
  }
};

} // namespace

void registerCudaBackend() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerBackend("cuda", [](Context &ctx, const ContextOptions &o) {
      return std::unique_ptr<Backend>(new CudaBackend(ctx, o));
    });
  });
}

} // namespace rt
} // namespace helix
