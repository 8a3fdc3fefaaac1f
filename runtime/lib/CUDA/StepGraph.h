//===- StepGraph.h - Decode steps captured as CUDA graphs -------*- C++ -*-===//
//
// The CUDA backend's decode step as a CUDA graph (docs/cuda-on-cpu.md,
// "CUDA graphs"). The first step is captured on the compute stream (its
// NCCL stream joins through HOP-B's events) and launched. The following
// steps replay it: the step's host code runs again in replay mode -- the
// backend launches nothing, its allocations get the captured addresses and
// its index uploads (positions, slots, ...) are written into the
// page-locked staging the graph's copies read -- and the graph is launched
// once. What the host code asks for (allocations, uploads, ops) must be
// what was captured, in order; otherwise the step is captured again (a
// new shape of work, e.g. when a sliding window's ring first wraps).
//
// Replay mode runs inside a scratch capture of the compute stream: a
// backend op that forgot its replay gate would be recorded there instead of
// running (the step fails, naming the count), and a host wait there is as
// illegal as in the real capture.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_LIB_STEPGRAPH_H
#define HELIX_RUNTIME_LIB_STEPGRAPH_H

#include "helix/Runtime/Error.h"
#include "helix/Runtime/Tensor.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace helix {
namespace rt {

void cudaCheck(cudaError_t e, const char *what); // CudaBackend.cpp

class StepGraph {
public:
  enum class Mode { Plain, Capture, Replay };

  /// `waitIdle`: a host wait (with the backend's watchdog) for the compute
  /// stream, before the staging is rewritten.
  StepGraph(cudaStream_t stream, bool enabled, std::function<void()> waitIdle)
      : stream_(stream), enabled_(enabled), waitIdle_(std::move(waitIdle)) {}
  ~StepGraph() {
    drop();
    if (pinned_)
      cudaFreeHost(pinned_);
  }
  StepGraph(const StepGraph &) = delete;
  StepGraph &operator=(const StepGraph &) = delete;

  bool enabled() const { return enabled_; }
  bool replaying() const { return mode_ == Mode::Replay; }
  int64_t captures() const { return captures_; }
  int64_t replays() const { return replays_; }

  /// One decode step: captured, or replayed, or (graphs off) run as is.
  /// `retry` is called before a step whose replay did not match is
  /// captured (its host code runs again: undo what the first pass counted).
  Tensor run(const std::function<Tensor()> &step,
             const std::function<void()> &retry = nullptr) {
    if (!enabled_)
      return step();
    waitIdle_(); // the previous step has read the staging
    if (exec_) {
      try {
        return replay(step);
      } catch (const Mismatch &) {
        drop(); // a different step: capture it
        if (retry)
          retry();
      }
    }
    for (int attempt = 0;; ++attempt) {
      try {
        return capture(step);
      } catch (const StagingFull &full) {
        if (attempt > 0)
          throw Error("cuda graphs: the step's index uploads need " +
                      std::to_string(full.needed) + " bytes of staging");
        growStaging(full.needed);
      }
    }
  }

  /// Device memory of `bytes` for the backend's allocate(): the captured
  /// address when replaying.
  void *allocate(size_t bytes) {
    if (mode_ == Mode::Replay)
      return expect(Entry::Alloc, bytes, "").ptr;
    void *p = nullptr;
    cudaCheck(cudaMallocAsync(&p, std::max<size_t>(bytes, 256), stream_),
              ("allocating " + std::to_string(bytes) + " bytes").c_str());
    if (mode_ == Mode::Capture)
      script_.push_back({Entry::Alloc, bytes, p, 0, ""});
    return p;
  }
  /// Whether a free now belongs to the graph (replay: its free node).
  bool skipsFree() const { return mode_ == Mode::Replay; }

  /// `bytes` of host data (indices, frequencies) in device memory for one
  /// call; release with unstage().
  const void *stage(const void *data, size_t bytes) {
    if (mode_ == Mode::Replay) {
      const Entry &e = expect(Entry::Upload, bytes, "");
      std::memcpy(pinned_ + e.offset, data, bytes);
      return e.ptr;
    }
    void *p = allocateRaw(bytes);
    const void *src = data;
    if (mode_ == Mode::Capture) { // captured copies read page-locked memory
      size_t at = (used_ + 15) / 16 * 16;
      if (at + bytes > pinnedBytes_)
        throw StagingFull{at + bytes};
      std::memcpy(pinned_ + at, data, bytes);
      src = pinned_ + at;
      used_ = at + bytes;
      script_.push_back({Entry::Upload, bytes, p, at, ""});
    }
    if (bytes)
      cudaCheck(cudaMemcpyAsync(p, src, bytes, cudaMemcpyHostToDevice, stream_),
                "cudaMemcpyAsync (indices)");
    return p;
  }
  void unstage(const void *p) {
    if (mode_ != Mode::Replay)
      cudaFreeAsync(const_cast<void *>(p), stream_);
  }

  /// The backend runs op `name` (the step's op sequence): its entry in the
  /// script, -1 outside a capture or replay.
  long note(const char *name) {
    if (mode_ == Mode::Capture) {
      script_.push_back({Entry::Op, 0, nullptr, 0, name});
      return static_cast<long>(script_.size()) - 1;
    }
    if (mode_ == Mode::Replay) {
      expect(Entry::Op, 0, name);
      return static_cast<long>(cursor_) - 1;
    }
    return -1;
  }
  /// What op entry `at` issued: kernels and cuBLAS calls.
  struct Work {
    int64_t kernels = 0, blas = 0;
  };
  /// Records work of op `at` while capturing (a replay reads it: work()).
  void addWork(long at, int kernels, int blas) {
    if (mode_ == Mode::Capture && at >= 0) {
      script_[at].work.kernels += kernels;
      script_[at].work.blas += blas;
    }
  }
  Work work(long at) const { return at >= 0 ? script_[at].work : Work(); }

private:
  struct Entry {
    enum Kind { Alloc, Upload, Op } kind;
    size_t bytes;
    void *ptr;
    size_t offset; // Upload: in the staging
    std::string op;
    Work work = {}; // Op: what the capture issued
  };
  struct Mismatch {};
  struct StagingFull {
    size_t needed;
  };

  void *allocateRaw(size_t bytes) {
    void *p = nullptr;
    cudaCheck(cudaMallocAsync(&p, std::max<size_t>(bytes, 8), stream_),
              "cudaMallocAsync (indices)");
    return p;
  }

  /// The next captured entry, which must be `kind` with `bytes` / `op`.
  const Entry &expect(Entry::Kind kind, size_t bytes, const std::string &op) {
    if (cursor_ >= script_.size())
      throw Mismatch{};
    const Entry &e = script_[cursor_++];
    if (e.kind != kind || e.bytes != bytes || e.op != op)
      throw Mismatch{};
    return e;
  }

  void growStaging(size_t needed) {
    size_t bytes = std::max<size_t>(2 * needed, 1 << 20);
    if (pinned_)
      cudaCheck(cudaFreeHost(pinned_), "cudaFreeHost");
    void *p = nullptr;
    cudaCheck(cudaMallocHost(&p, bytes), "cudaMallocHost (index staging)");
    pinned_ = static_cast<uint8_t *>(p);
    pinnedBytes_ = bytes;
  }

  Tensor capture(const std::function<Tensor()> &step) {
    if (!pinned_)
      growStaging(0);
    script_.clear();
    used_ = 0;
    cudaCheck(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeGlobal),
              "cudaStreamBeginCapture (the decode step)");
    mode_ = Mode::Capture;
    Tensor out;
    try {
      out = step();
    } catch (...) {
      mode_ = Mode::Plain;
      out = Tensor();
      cudaGraph_t g = nullptr;
      cudaStreamEndCapture(stream_, &g);
      if (g)
        cudaGraphDestroy(g);
      (void)cudaGetLastError();
      throw;
    }
    mode_ = Mode::Plain;
    cudaCheck(cudaStreamEndCapture(stream_, &graph_),
              "cudaStreamEndCapture (the decode step)");
    cudaCheck(cudaGraphInstantiate(&exec_, graph_, 0), "cudaGraphInstantiate");
    cudaCheck(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch");
    ++captures_;
    return out;
  }

  Tensor replay(const std::function<Tensor()> &step) {
    cursor_ = 0;
    // Thread-local mode: the same rules for this thread, and the trace
    // tells the check from the step's capture (global mode).
    cudaCheck(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
              "cudaStreamBeginCapture (replay check)");
    mode_ = Mode::Replay;
    Tensor result;
    try {
      Tensor out = step();
      if (cursor_ != script_.size())
        throw Mismatch{}; // out goes while replaying: the graph frees it
      result = std::move(out);
    } catch (...) {
      mode_ = Mode::Plain;
      endScratch();
      throw;
    }
    mode_ = Mode::Plain;
    size_t stray = endScratch();
    if (stray)
      throw Error("cuda graphs: replaying the decode step issued " +
                  std::to_string(stray) +
                  " device operation(s) from the host (a backend op without "
                  "its replay gate)");
    cudaCheck(cudaGraphLaunch(exec_, stream_), "cudaGraphLaunch");
    ++replays_;
    return result;
  }

  /// Ends the replay's scratch capture; the device work it caught.
  size_t endScratch() {
    cudaGraph_t g = nullptr;
    cudaError_t e = cudaStreamEndCapture(stream_, &g);
    size_t n = 0;
    if (g) {
      cudaGraphGetNodes(g, nullptr, &n);
      cudaGraphDestroy(g);
    }
    if (e != cudaSuccess)
      cudaCheck(e, "cudaStreamEndCapture (replay check)");
    return n;
  }

  void drop() {
    if (exec_)
      cudaGraphExecDestroy(exec_);
    if (graph_)
      cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
    script_.clear();
  }

  cudaStream_t stream_;
  bool enabled_;
  std::function<void()> waitIdle_;
  Mode mode_ = Mode::Plain;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::vector<Entry> script_;
  size_t cursor_ = 0;
  uint8_t *pinned_ = nullptr;
  size_t pinnedBytes_ = 0, used_ = 0;
  int64_t captures_ = 0, replays_ = 0;
};

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_STEPGRAPH_H
