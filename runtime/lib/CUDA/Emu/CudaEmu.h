//===- CudaEmu.h - CUDA kernels on CPU threads (tests) ----------*- C++ -*-===//
//
// Lets CUDA kernel source (runtime/lib/CUDA/CudaKernels.cu) compile as host
// C++ and run on the CPU with the execution model its kernels rely on, so
// the CUDA path is tested without a GPU (docs/cuda-on-cpu.md):
//
//   * a launch runs its grid's blocks one after another; the threads of a
//     block are std::threads, one per CUDA thread, running concurrently;
//   * __syncthreads() is a barrier of the block's live threads (threads
//     that returned count as arrived, as on the hardware); threads of one
//     phase must wait at the same __syncthreads (same file and line);
//   * warp shuffles exchange values among the lanes of a warp (32
//     consecutive linear thread ids): every lane named in the mask must
//     arrive, a per-warp exchange buffer and barrier;
//   * `__shared__` variables are static storage, shared by the block's
//     threads (blocks run one at a time, launches one at a time); dynamic
//     shared memory is a per-launch buffer of exactly the requested size,
//     filled with NaN bytes (0xff) before every block;
//   * launch limits as a CUDA 12+/sm_90 device checks them: the launch does
//     not run and cudaGetLastError() returns the error;
//   * faults a GPU would hang on or leave undefined (divergent barriers,
//     bad shuffle masks, a barrier that never completes: watchdog) end the
//     launch with cudaErrorLaunchFailure and a message.
//
// Synchronization goes through one mutex per barrier (the block's
// __syncthreads, each warp's shuffles, the end of a block), so
// ThreadSanitizer sees exactly the happens-before edges the barriers give
// and reports accesses that a missing barrier leaves unordered.
//
// Host code uses the CUDA spellings; the `<<<...>>>` launches and `extern
// __shared__` declarations, which C++ cannot parse, are rewritten by
// HostSource.cmake into HELIX_EMU_LAUNCH / HELIX_EMU_DYNAMIC_SHARED.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_CUDA_EMU_CUDAEMU_H
#define HELIX_RUNTIME_CUDA_EMU_CUDAEMU_H

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <math.h>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "Fibers.h"

//===-- The CUDA runtime API the kernels and their launchers use ----------===//

struct uint3 {
  unsigned x, y, z;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) float2 {
  float x, y;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x = 1, unsigned y = 1, unsigned z = 1)
      : x(x), y(y), z(z) {}
};
namespace helix {
namespace cudaemu {
struct Capture; // Graphs.h
} // namespace cudaemu
} // namespace helix
struct CUstream_st {
  unsigned id; // 1, 2, ... in creation order; the legacy stream (0) is null
  unsigned flags;
  /// The stream capture this stream takes part in (Graphs.h), else null.
  helix::cudaemu::Capture *capture = nullptr;
};
typedef CUstream_st *cudaStream_t;

enum cudaError_t { // the values of driver_types.h
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidDevice = 101,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNotReady = 600,
  cudaErrorLaunchFailure = 719,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureUnmatched = 903,
  cudaErrorStreamCaptureUnjoined = 904,
  cudaErrorStreamCaptureIsolation = 905,
  cudaErrorStreamCaptureImplicit = 906,
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };

// Built-in variables: set for each emulated thread.
inline thread_local uint3 threadIdx, blockIdx;
inline thread_local dim3 blockDim, gridDim;

namespace helix {
namespace cudaemu {

/// Device limits (sm_90; docs/gpu.md's table).
constexpr unsigned kMaxThreadsPerBlock = 1024, kMaxBlockXY = 1024,
                   kMaxBlockZ = 64, kMaxGridX = 2147483647u, kMaxGridYZ = 65535,
                   kWarpSize = 32;
constexpr size_t kSharedPerBlock = 48 * 1024; // without opt-in
constexpr size_t kSharedOptIn = 227 * 1024;   // cudaFuncSetAttribute max

/// Unwinds an emulated thread out of its kernel once the launch failed.
struct Abort {};

/// Whether HELIX_CUDA_EMU_THREADS asks for the std::thread mode.
inline bool threadsRequested() {
  const char *s = std::getenv("HELIX_CUDA_EMU_THREADS");
  return s && *s && std::strcmp(s, "0") != 0;
}

struct Globals {
  std::mutex launchMu; // one launch at a time: `__shared__` is static storage
  std::mutex attrMu;
  std::map<const void *, size_t> smemOptIn; // kernel -> dynamic smem limit
  std::atomic<int64_t> watchdogMs{[] {
    const char *s = std::getenv("HELIX_CUDA_EMU_WATCHDOG_S");
    return s ? static_cast<int64_t>(std::atof(s) * 1000) : int64_t(60000);
  }()};
  /// Fibers where built, unless HELIX_CUDA_EMU_THREADS is set to anything
  /// but "" or "0".
  std::atomic<Mode> mode{[] {
    return fibersAvailable() && !threadsRequested() ? Mode::Fibers
                                                    : Mode::Threads;
  }()};
};
inline Globals &globals() {
  static Globals g;
  return g;
}
/// The host thread's last error (cudaGetLastError) and its description.
inline thread_local cudaError_t lastError = cudaSuccess;
inline thread_local std::string lastMessage;

inline cudaError_t setError(cudaError_t e, std::string message) {
  lastError = e;
  lastMessage = std::move(message);
  return e;
}
/// The description of the last error set (kept by cudaGetLastError).
inline const std::string &lastErrorMessage() { return lastMessage; }
/// The stream a call was issued on, by number (0: the legacy stream).
inline unsigned streamId(cudaStream_t s) { return s ? s->id : 0; }

/// The stream trace (HostApi.h): when HELIX_CUDA_EMU_TRACE names a path,
/// each process appends one line per launch, event, stream wait and NCCL
/// call to `<path>.<rank>` (the MPI launcher's rank variable, else 0), so a
/// test can check the stream structure of a decode step.
inline std::FILE *traceFile() {
  static std::FILE *f = []() -> std::FILE * {
    const char *path = std::getenv("HELIX_CUDA_EMU_TRACE");
    if (!path || !*path)
      return nullptr;
    const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (!rank)
      rank = std::getenv("PMI_RANK");
    std::string name = std::string(path) + "." + (rank ? rank : "0");
    std::FILE *out = std::fopen(name.c_str(), "w");
    if (!out)
      std::fprintf(stderr, "cuda-emu: cannot write the trace %s\n",
                   name.c_str());
    return out;
  }();
  return f;
}
/// Set while a graph replays its nodes (Graphs.h): they were traced when
/// captured; the replay traces one line.
inline thread_local bool replayingGraph = false;
template <class... A> void trace(const char *format, A... args) {
  if (replayingGraph)
    return;
  if (std::FILE *f = traceFile()) {
    std::fprintf(f, format, args...);
    std::fputc('\n', f);
    std::fflush(f);
  }
}

/// How later launches run their threads; returns the previous mode. Fibers
/// where this build has none stay threads.
inline Mode setMode(Mode m) {
  if (!fibersAvailable())
    m = Mode::Threads;
  return globals().mode.exchange(m);
}
/// How long a barrier may wait before the launch fails as deadlocked
/// (default 60 s, or HELIX_CUDA_EMU_WATCHDOG_S); returns the previous value.
inline std::chrono::milliseconds setWatchdog(std::chrono::milliseconds ms) {
  return std::chrono::milliseconds(globals().watchdogMs.exchange(ms.count()));
}

class Launch;
struct Thread {
  Launch *launch;
  unsigned tid, warp, lane;
  void *sp = nullptr; // fiber mode: the saved context while switched out
  bool done = false;  // fiber mode: returned from the kernel for this block
};
inline thread_local Thread *self = nullptr;

/// One launch: the grid's blocks in order, each on the block's threads.
class Launch {
public:
  Launch(dim3 grid, dim3 block, size_t smem)
      : grid_(grid), block_(block), smemBytes_(smem),
        threads_(block.x * block.y * block.z),
        warps_(new Warp[(threads_ + kWarpSize - 1) / kWarpSize]),
        smem_(static_cast<unsigned char *>(
            ::operator new(smem, std::align_val_t(16)))) {
    startBlock();
  }
  ~Launch() { ::operator delete(smem_, std::align_val_t(16)); }

  /// Runs `body` (the kernel call) for every thread of every block.
  template <class Body> void run(const Body &body) {
#ifdef HELIX_CUDA_EMU_HAVE_FIBERS
    if (globals().mode.load() == Mode::Fibers)
      return runFibers(body);
#endif
    std::vector<std::thread> ts;
    ts.reserve(threads_);
    try {
      for (unsigned t = 0; t < threads_; ++t)
        ts.emplace_back([this, t, &body] { worker(t, body); });
    } catch (const std::exception &e) {
      fail(std::string("cannot start the block's threads: ") + e.what());
    }
    for (std::thread &t : ts)
      t.join();
  }

  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  const std::string &why() const { return why_; } // after run()
  void *dynamicShared() const { return smem_; }

  void syncthreads(const char *file, int line) {
    Thread &me = *self;
    progress_.fetch_add(1, std::memory_order_relaxed);
    std::unique_lock<std::mutex> lk = hold(sync_.mu);
    if (failed())
      throw Abort{};
    if (sync_.arrived == 0) {
      sync_.file = file;
      sync_.line = line;
    } else if (sync_.line != line || std::strcmp(sync_.file, file) != 0) {
      fault(lk, "divergent __syncthreads: thread " + std::to_string(me.tid) +
                    " at line " + std::to_string(line) + " while " +
                    std::to_string(sync_.arrived) + " wait at line " +
                    std::to_string(sync_.line));
    }
    uint64_t gen = sync_.gen;
    if (++sync_.arrived == live_) {
      release(sync_);
      return;
    }
    await(lk, sync_, gen, [&] {
      return "__syncthreads at line " + std::to_string(line) + ": " +
             std::to_string(sync_.arrived) + " of " + std::to_string(live_) +
             " live threads arrived";
    });
  }

  /// The shuffle primitive: publishes `bits` to the warp's lanes in `mask`
  /// (which must all arrive) and returns the value lane `src` published.
  uint64_t exchange(unsigned mask, uint64_t bits, unsigned src) {
    Thread &me = *self;
    Warp &w = warps_[me.warp];
    unsigned bit = 1u << me.lane;
    progress_.fetch_add(1, std::memory_order_relaxed);
    std::unique_lock<std::mutex> lk = hold(w.mu);
    if (failed())
      throw Abort{};
    auto where = [&] {
      return "warp " + std::to_string(me.warp) + " lane " +
             std::to_string(me.lane) + ": mask " + hex(mask) + ", ";
    };
    if (!(mask & bit))
      fault(lk, where() + "the calling lane is not in the mask");
    if (mask & ~w.exists)
      fault(lk, where() + "lanes " + hex(mask & ~w.exists) +
                    " do not exist (blockDim " + std::to_string(threads_) +
                    ")");
    if (mask & ~w.live)
      fault(lk, where() + "lanes " + hex(mask & ~w.live) + " have exited");
    if (w.arrived == 0)
      w.mask = mask;
    else if (w.mask != mask)
      fault(lk, where() + "lanes " + hex(w.arrived) + " wait with mask " +
                    hex(w.mask));
    uint64_t gen = w.gen;
    uint64_t *slots = w.slots[gen & 1]; // double buffer: lanes one phase on
    slots[me.lane] = bits;              // write the other half
    w.arrived |= bit;
    if (w.arrived == w.mask)
      release(w);
    else
      await(lk, w, gen, [&] {
        return "shuffle in warp " + std::to_string(me.warp) + ": lanes " +
               hex(w.arrived) + " of mask " + hex(w.mask) + " arrived";
      });
    if (!(mask >> src & 1u))
      fault(lk, where() + "reads lane " + std::to_string(src) +
                    ", outside the mask");
    return slots[src];
  }

private:
  struct Barrier {
    std::mutex mu;
    std::condition_variable cv;
    unsigned arrived = 0; // count (sync, end) or lane mask (warp)
    uint64_t gen = 0;
  };
  struct Sync : Barrier {
    const char *file = "";
    int line = 0;
  };
  struct Warp : Barrier {
    unsigned exists = 0, live = 0, mask = 0;
    uint64_t slots[2][kWarpSize] = {};
  };

  static std::string hex(unsigned v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%08x", v);
    return b;
  }

  /// A barrier's lock. In fiber mode every CUDA thread of the block runs
  /// on this one OS thread, so the lock orders nothing and is not taken
  /// (a third of an emulated program's run went to it), except under
  /// ThreadSanitizer, which sees the barriers' edges through the mutex.
  std::unique_lock<std::mutex> hold(std::mutex &mu) const {
#if defined(HELIX_CUDA_EMU_HAVE_FIBERS) && !defined(HELIX_CUDA_EMU_TSAN)
    if (fibers_)
      return std::unique_lock<std::mutex>(mu, std::defer_lock);
#endif
    return std::unique_lock<std::mutex>(mu);
  }

  /// Called with b.mu held: completes b's phase.
  static void release(Barrier &b) {
    b.arrived = 0;
    ++b.gen;
    b.cv.notify_all();
  }

  /// Waits (b.mu held through `lk`) until b's phase `gen` completes.
  template <class Describe>
  void await(std::unique_lock<std::mutex> &lk, Barrier &b, uint64_t gen,
             const Describe &describe) {
#ifdef HELIX_CUDA_EMU_HAVE_FIBERS
    if (fibers_) {
      // The scheduler resumes this fiber once per round; a round in which
      // no thread arrived anywhere or returned means nothing can release
      // this barrier: a deadlock, found at once instead of by a timer.
      const bool held = lk.owns_lock();
      for (;;) {
        if (held)
          lk.unlock();
        switchContext(&self->sp, schedulerSp_, schedulerTsan_, false);
        if (held)
          lk.lock();
        if (b.gen != gen)
          return;
        if (failed())
          throw Abort{};
        if (stalled_)
          fault(lk, "deadlock: " + describe() +
                        ", and no other thread of the block can go on");
      }
    }
#endif
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(globals().watchdogMs.load());
    while (b.gen == gen) {
      if (failed())
        throw Abort{};
      if (b.cv.wait_until(lk, deadline) == std::cv_status::timeout &&
          b.gen == gen && !failed())
        fault(lk, "watchdog: " + describe() + " (deadlock?)");
    }
  }

  [[noreturn]] void fault(std::unique_lock<std::mutex> &lk, std::string why) {
    if (lk.owns_lock())
      lk.unlock();
    fail(std::move(why));
    throw Abort{};
  }

  /// Ends the launch: the first reason is kept, every waiter wakes.
  void fail(std::string why) {
    {
      std::lock_guard<std::mutex> g(failMu_);
      if (failed())
        return;
      why_ = std::move(why);
      failed_.store(true, std::memory_order_relaxed);
    }
    auto wake = [](Barrier &b) {
      std::lock_guard<std::mutex> g(b.mu);
      b.cv.notify_all();
    };
    wake(sync_);
    wake(end_);
    for (unsigned w = 0; w * kWarpSize < threads_; ++w)
      wake(warps_[w]);
  }

  /// Block state before a block starts (no thread runs it yet).
  void startBlock() {
    live_ = threads_;
    for (unsigned w = 0; w * kWarpSize < threads_; ++w) {
      unsigned n = std::min(kWarpSize, threads_ - w * kWarpSize);
      warps_[w].exists = warps_[w].live = n == kWarpSize ? ~0u : (1u << n) - 1;
    }
    std::memset(smem_, 0xff, smemBytes_); // NaN: shared memory starts undefined
  }

  /// Thread `tid` returned from the kernel for this block.
  void exitThread(const Thread &me) {
    {
      std::unique_lock<std::mutex> lk = hold(sync_.mu);
      if (--live_ == sync_.arrived && sync_.arrived > 0)
        release(sync_); // the waiting threads were all that was left
    }
    Warp &w = warps_[me.warp];
    std::unique_lock<std::mutex> lk = hold(w.mu);
    w.live &= ~(1u << me.lane);
    if (w.arrived && (w.mask >> me.lane & 1u))
      fault(lk, "warp " + std::to_string(me.warp) + " lane " +
                    std::to_string(me.lane) + " exited while lanes " +
                    hex(w.arrived) + " wait for it in a shuffle (mask " +
                    hex(w.mask) + ")");
  }

  /// All threads finished the block; the last one prepares the next.
  bool endBlock() {
    std::unique_lock<std::mutex> lk = hold(end_.mu);
    if (failed())
      return false;
    uint64_t gen = end_.gen;
    if (++end_.arrived == threads_) {
      startBlock();
      release(end_);
      return true;
    }
    try {
      await(lk, end_, gen, [&] {
        return "end of block: " + std::to_string(end_.arrived) + " of " +
               std::to_string(threads_) + " threads done";
      });
    } catch (Abort &) {
      return false;
    }
    return true;
  }

  template <class Body> void worker(unsigned tid, const Body &body) {
    Thread me{this, tid, tid / kWarpSize, tid % kWarpSize};
    self = &me;
    threadIdx = {tid % block_.x, tid / block_.x % block_.y,
                 tid / (block_.x * block_.y)};
    blockDim = block_;
    gridDim = grid_;
    uint64_t blocks = uint64_t(grid_.x) * grid_.y * grid_.z;
    for (uint64_t b = 0; b < blocks; ++b) {
      blockIdx = {static_cast<unsigned>(b % grid_.x),
                  static_cast<unsigned>(b / grid_.x % grid_.y),
                  static_cast<unsigned>(b / (uint64_t(grid_.x) * grid_.y))};
      try {
        body();
        exitThread(me);
      } catch (Abort &) {
        break;
      } catch (const std::exception &e) {
        fail(std::string("exception in the kernel: ") + e.what());
        break;
      } catch (...) {
        fail("exception in the kernel");
        break;
      }
      if (!endBlock())
        break;
    }
    self = nullptr;
  }

#ifdef HELIX_CUDA_EMU_HAVE_FIBERS
  /// Fiber mode: each block's threads as fibers on the calling thread, run
  /// round-robin; a fiber runs until it waits at a barrier or shuffle, or
  /// returns. Same semantics as the thread mode (barrier, shuffle and
  /// fault logic are shared); only the waiting differs.
  template <class Body> void runFibers(const Body &body) {
    fibers_ = true;
    body_ = &body;
    callBody_ = [](const void *b) { (*static_cast<const Body *>(b))(); };
    auto &stacks = fiberStacks(threads_);
    std::vector<Thread> ts(threads_);
    // ThreadSanitizer: the scheduler's bookkeeping is not the kernel's and
    // is ignored; switching to a fiber passes it what happened before on
    // the host and in earlier blocks, switching back passes nothing.
    schedulerTsan_ = tsanCurrentFiber();
    tsanIgnoreBegin();
    blockDim = block_;
    gridDim = grid_;
    uint64_t blocks = uint64_t(grid_.x) * grid_.y * grid_.z;
    for (uint64_t b = 0; b < blocks && !failed(); ++b) {
      blockIdx = {static_cast<unsigned>(b % grid_.x),
                  static_cast<unsigned>(b / grid_.x % grid_.y),
                  static_cast<unsigned>(b / (uint64_t(grid_.x) * grid_.y))};
      for (unsigned t = 0; t < threads_; ++t)
        ts[t] = Thread{
            this, t, t / kWarpSize, t % kWarpSize, stacks[t]->start(&fiberMain),
            false};
      stalled_ = false;
      for (unsigned left = threads_; left > 0;) {
        uint64_t before = progress_.load(std::memory_order_relaxed);
        for (unsigned t = 0; t < threads_; ++t) {
          if (ts[t].done)
            continue;
          self = &ts[t];
          threadIdx = {t % block_.x, t / block_.x % block_.y,
                       t / (block_.x * block_.y)};
          switchContext(&schedulerSp_, ts[t].sp, stacks[t]->tsanFiber(), true);
          if (ts[t].done)
            --left;
        }
        if (left > 0 && progress_.load(std::memory_order_relaxed) == before)
          stalled_ = true; // the waiting fibers fault on their next turn
      }
      self = nullptr;
      tsanAcquire(&blockEnd_); // the block happens before what follows
      if (!failed())
        startBlock();
    }
    tsanIgnoreEnd();
  }

  /// A fiber's bottom frame: the kernel for one thread of one block.
  static void fiberMain() {
    Thread &me = *self;
    Launch &l = *me.launch;
    try {
      l.callBody_(l.body_);
      l.exitThread(me);
    } catch (Abort &) {
    } catch (const std::exception &e) {
      l.fail(std::string("exception in the kernel: ") + e.what());
    } catch (...) {
      l.fail("exception in the kernel");
    }
    me.done = true;
    l.progress_.fetch_add(1, std::memory_order_relaxed);
    void *to = l.schedulerSp_, *tsanTo = l.schedulerTsan_;
    tsanRelease(&l.blockEnd_); // the fiber's last access is before this
    switchContext(&me.sp, to, tsanTo, false);
    std::abort(); // a finished fiber is never resumed
  }

  bool fibers_ = false;
  bool stalled_ = false;
  void *schedulerSp_ = nullptr;
  void *schedulerTsan_ = nullptr;
  char blockEnd_ = 0; // ThreadSanitizer: released by each finished fiber
  const void *body_ = nullptr;
  void (*callBody_)(const void *) = nullptr;
#endif
  // Arrivals and returns, for the fiber scheduler's deadlock check. Relaxed:
  // it must not order the threads (ThreadSanitizer would see an edge).
  std::atomic<uint64_t> progress_{0};

  dim3 grid_, block_;
  size_t smemBytes_;
  unsigned threads_;
  Sync sync_;
  unsigned live_ = 0; // threads of the block still in the kernel (sync_.mu)
  std::unique_ptr<Warp[]> warps_;
  Barrier end_;
  unsigned char *smem_;
  std::mutex failMu_;
  std::atomic<bool> failed_{false};
  std::string why_;
};

inline Thread &current() {
  if (!self) {
    std::fprintf(stderr, "cuda-emu: a device function ran outside a kernel\n");
    std::abort();
  }
  return *self;
}

/// Checks a launch configuration as the CUDA runtime does.
inline cudaError_t checkLaunch(const void *kernel, const char *name, dim3 g,
                               dim3 b, size_t smem) {
  std::string at = std::string(name) + " <<<(" + std::to_string(g.x) + "," +
                   std::to_string(g.y) + "," + std::to_string(g.z) + "), (" +
                   std::to_string(b.x) + "," + std::to_string(b.y) + "," +
                   std::to_string(b.z) + "), " + std::to_string(smem) + ">>>: ";
  uint64_t threads = uint64_t(b.x) * b.y * b.z;
  if (!b.x || !b.y || !b.z || b.x > kMaxBlockXY || b.y > kMaxBlockXY ||
      b.z > kMaxBlockZ || threads > kMaxThreadsPerBlock)
    return setError(cudaErrorInvalidConfiguration,
                    at + "block dimensions over the limits (at most 1024 "
                         "threads, x, y <= 1024, z <= 64, none 0)");
  if (!g.x || !g.y || !g.z || g.x > kMaxGridX || g.y > kMaxGridYZ ||
      g.z > kMaxGridYZ)
    return setError(cudaErrorInvalidConfiguration,
                    at + "grid dimensions over the limits (x < 2^31, y, z <= "
                         "65535, none 0)");
  size_t limit = kSharedPerBlock;
  {
    std::lock_guard<std::mutex> lk(globals().attrMu);
    auto it = globals().smemOptIn.find(kernel);
    if (it != globals().smemOptIn.end())
      limit = std::max(limit, it->second);
  }
  if (smem > limit)
    return setError(cudaErrorInvalidValue,
                    at + "dynamic shared memory over the kernel's limit of " +
                        std::to_string(limit) + " bytes");
  return cudaSuccess;
}

/// Records `run` as a node of the capture `s` takes part in (Graphs.h)
/// and returns true; false when `s` is not capturing (the caller runs the
/// work now). `what` names the node in messages.
inline bool recordNode(cudaStream_t s, std::string what,
                       std::function<cudaError_t()> run);
/// Whether using stream `s` now is legal with respect to stream capture:
/// the legacy stream while a capture is active is not (CUDA:
/// cudaErrorStreamCaptureImplicit; the capture is invalidated).
inline cudaError_t checkStreamUse(cudaStream_t s, const char *call);

/// `kernel<<<grid, block, smem, stream>>>` (HELIX_EMU_LAUNCH): checks the
/// configuration, then runs the grid before returning (streams are not
/// modeled: every launch is synchronous), or, on a capturing stream,
/// records it as a graph node with copies of its arguments.
template <class... P> struct Launcher {
  void (*kernel)(P...);
  const char *name;
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;

  template <class... A> void operator()(A &&...args) const {
    trace("launch %s stream %u", name, streamId(stream));
    if (checkStreamUse(stream, name) != cudaSuccess ||
        checkLaunch(reinterpret_cast<const void *>(kernel), name, grid, block,
                    smem) != cudaSuccess)
      return;
    Launcher self = *this;
    auto copies = std::make_tuple(std::decay_t<A>(args)...);
    if (recordNode(stream, std::string("launch ") + name, [self, copies] {
          return std::apply(
              [&](const auto &...a) { return self.execute(a...); }, copies);
        }))
      return;
    execute(args...);
  }

  /// Runs the grid now; the launch's error (also set as the last error).
  template <class... A> cudaError_t execute(const A &...args) const {
    std::lock_guard<std::mutex> one(globals().launchMu);
    Launch launch(grid, block, smem);
    launch.run([&] { kernel(args...); }); // each thread copies the arguments
    if (!launch.failed())
      return cudaSuccess;
    std::fprintf(stderr, "cuda-emu: %s: %s\n", name, launch.why().c_str());
    return setError(cudaErrorLaunchFailure,
                    std::string(name) + ": " + launch.why());
  }
};

template <class... P>
Launcher<P...> launcher(void (*kernel)(P...), const char *name, dim3 grid,
                        dim3 block, size_t smem = 0,
                        cudaStream_t stream = nullptr) {
  return {kernel, name, grid, block, smem, stream};
}

template <class T> T *dynamicShared() {
  return static_cast<T *>(current().launch->dynamicShared());
}

inline void syncthreads(const char *file, int line) {
  current().launch->syncthreads(file, line);
}

/// A shuffle: lane `src` of the caller's segment of `width` lanes, or the
/// caller's own value when `src` is out of range (the CUDA rules).
template <class T> T shuffle(unsigned mask, T v, unsigned src) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "shuffles move values of up to 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  bits = current().launch->exchange(mask, bits, src);
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
inline unsigned lane() { return current().lane; }

} // namespace cudaemu
} // namespace helix

//===-- CUDA spellings ----------------------------------------------------===//

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static
#define __syncthreads() ::helix::cudaemu::syncthreads(__FILE__, __LINE__)
#define CUDART_INF_F (__builtin_huge_valf())
#define CUDART_NAN_F (__builtin_nanf(""))

#define HELIX_EMU_LAUNCH(kernel, ...)                                          \
  ::helix::cudaemu::launcher(kernel, #kernel, __VA_ARGS__)
#define HELIX_EMU_DYNAMIC_SHARED(T, name)                                      \
  T *name = ::helix::cudaemu::dynamicShared<T>()

template <class T> T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  unsigned l = helix::cudaemu::lane(), base = l / width * width;
  return helix::cudaemu::shuffle(mask, v, base + unsigned(src) % width);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int laneMask, int width = 32) {
  unsigned l = helix::cudaemu::lane(), s = l ^ unsigned(laneMask);
  return helix::cudaemu::shuffle(mask, v, s < (l / width + 1) * width ? s : l);
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  unsigned l = helix::cudaemu::lane();
  return helix::cudaemu::shuffle(
      mask, v, l % width + delta < unsigned(width) ? l + delta : l);
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  unsigned l = helix::cudaemu::lane();
  return helix::cudaemu::shuffle(mask, v, l % width >= delta ? l - delta : l);
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
  helix::cudaemu::shuffle(mask, 0, helix::cudaemu::lane());
}

// Math: the fast intrinsics are computed exactly (GPU results may differ in
// the last bits); min/max as CUDA's overloads for mixed integer types.
// (glibc declares, but does not export, __expf and __logf: macros.)
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
#define __expf(x) expf(x)
#define __logf(x) logf(x)
#define __fdividef(a, b) ((a) / (b))
template <class A, class B> std::common_type_t<A, B> min(A a, B b) {
  using T = std::common_type_t<A, B>;
  return T(b) < T(a) ? T(b) : T(a);
}
template <class A, class B> std::common_type_t<A, B> max(A a, B b) {
  using T = std::common_type_t<A, B>;
  return T(a) < T(b) ? T(b) : T(a);
}

inline cudaError_t cudaGetLastError() {
  cudaError_t e = helix::cudaemu::lastError;
  helix::cudaemu::lastError = cudaSuccess;
  return e;
}
inline cudaError_t cudaPeekAtLastError() { return helix::cudaemu::lastError; }
/// Only the dynamic shared memory opt-in is modeled.
template <class... P>
cudaError_t cudaFuncSetAttribute(void (*kernel)(P...), cudaFuncAttribute attr,
                                 int value) {
  using namespace helix::cudaemu;
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
      static_cast<size_t>(value) > kSharedOptIn)
    return setError(cudaErrorInvalidValue,
                    "cudaFuncSetAttribute: dynamic shared memory over " +
                        std::to_string(kSharedOptIn) + " bytes");
  std::lock_guard<std::mutex> lk(globals().attrMu);
  globals().smemOptIn[reinterpret_cast<const void *>(kernel)] = value;
  return cudaSuccess;
}

#include "HostApi.h"

#endif // HELIX_RUNTIME_CUDA_EMU_CUDAEMU_H
