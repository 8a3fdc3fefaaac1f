//===- Fibers.h - User-level context switching for CudaEmu.h ----*- C++ -*-===//
//
// The fast execution mode of the CUDA emulation (docs/cuda-on-cpu.md): a
// block's threads as fibers on the launching thread, switched only where a
// kernel waits (a barrier or a shuffle) or returns. A switch saves the
// callee-saved registers, the SSE and x87 control words and the stack
// pointer (x86-64 System V), about 10 ns against microseconds for waking an
// OS thread.
//
// Available on x86-64 Linux. Under ThreadSanitizer each CUDA thread's fiber
// is a TSan fiber; switching back to the scheduler does not synchronize, so
// TSan treats the fibers as the concurrent threads they emulate, ordered
// only by the barriers' mutexes as in the std::thread mode. (The scheduler
// passes each fiber what happened before the block on the host and in
// earlier blocks; its own bookkeeping is ignored.) AddressSanitizer builds
// (and other architectures) use the std::thread mode.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_CUDA_EMU_FIBERS_H
#define HELIX_RUNTIME_CUDA_EMU_FIBERS_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HELIX_CUDA_EMU_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define HELIX_CUDA_EMU_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define HELIX_CUDA_EMU_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define HELIX_CUDA_EMU_TSAN 1
#endif

#ifdef HELIX_CUDA_EMU_TSAN
extern "C" {
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);
}
#endif

#if defined(__x86_64__) && defined(__linux__) && !defined(HELIX_CUDA_EMU_ASAN)
#define HELIX_CUDA_EMU_HAVE_FIBERS 1
#include <sys/mman.h>
#include <unistd.h>

// void helix_cuda_emu_switch(void **save, void *to): saves the caller's
// context on its stack, stores that stack pointer in *save and resumes the
// context saved at `to`. Weak: the header is included by several objects.
asm(R"(
  .pushsection .text
  .weak helix_cuda_emu_switch
  .type helix_cuda_emu_switch, @function
helix_cuda_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size helix_cuda_emu_switch, .-helix_cuda_emu_switch
  .popsection
)");
extern "C" void helix_cuda_emu_switch(void **save, void *to);
#endif

namespace helix {
namespace cudaemu {

#ifdef HELIX_CUDA_EMU_HAVE_FIBERS
/// A fiber stack: mapped once and reused by later launches, with a
/// PROT_NONE guard page below it (an overflow faults instead of silently
/// overwriting the next stack).
class FiberStack {
public:
  static constexpr size_t kBytes = 256 * 1024, kGuard = 4096;
  FiberStack() {
    void *p = mmap(nullptr, kBytes + kGuard, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      std::abort();
    mprotect(p, kGuard, PROT_NONE);
    base_ = static_cast<char *>(p);
  }
  ~FiberStack() { munmap(base_, kBytes + kGuard); }
  /// The ThreadSanitizer fiber of the CUDA thread slot this stack serves.
  void *tsanFiber() {
#ifdef HELIX_CUDA_EMU_TSAN
    if (!tsan_)
      tsan_ = __tsan_create_fiber(0);
#endif
    return tsan_;
  }
  FiberStack(const FiberStack &) = delete;
  FiberStack &operator=(const FiberStack &) = delete;

  /// A context that, switched to, calls `entry()` (which must never
  /// return) on this stack, aligned as after a call.
  void *start(void (*entry)()) const {
    auto top =
        reinterpret_cast<uintptr_t>(base_ + kGuard + kBytes) & ~uintptr_t(15);
    auto *sp = reinterpret_cast<uint64_t *>(top);
    *--sp = 0;                                 // entry's return address
    *--sp = reinterpret_cast<uint64_t>(entry); // where the switch returns
    for (int r = 0; r < 6; ++r)                // rbp rbx r12-r15
      *--sp = 0;
    --sp;
    auto *control = reinterpret_cast<uint32_t *>(sp);
    control[0] = 0x1f80; // MXCSR default: all exceptions masked
    control[1] = 0x037f; // x87 default control word
    return sp;
  }

private:
  char *base_;
  void *tsan_ = nullptr;
};

/// Switches from the running context (saved in *save) to `to`, which runs
/// as ThreadSanitizer fiber `tsanTo`; `sync`: what happened before in this
/// fiber happens before what follows in that one.
inline void switchContext(void **save, void *to, void *tsanTo, bool sync) {
#ifdef HELIX_CUDA_EMU_TSAN
  __tsan_switch_to_fiber(tsanTo, sync ? 0 : 1 /* no_sync */);
#endif
  (void)tsanTo, (void)sync;
  helix_cuda_emu_switch(save, to);
}

/// The stacks of the largest block so far (used under the launch lock).
inline std::vector<std::unique_ptr<FiberStack>> &fiberStacks(size_t n) {
  static std::vector<std::unique_ptr<FiberStack>> stacks;
  while (stacks.size() < n)
    stacks.push_back(std::make_unique<FiberStack>());
  return stacks;
}
#endif

/// ThreadSanitizer annotations (no-ops elsewhere).
inline void *tsanCurrentFiber() {
#ifdef HELIX_CUDA_EMU_TSAN
  return __tsan_get_current_fiber();
#else
  return nullptr;
#endif
}
inline void tsanRelease(void *a) {
#ifdef HELIX_CUDA_EMU_TSAN
  __tsan_release(a);
#endif
  (void)a;
}
inline void tsanAcquire(void *a) {
#ifdef HELIX_CUDA_EMU_TSAN
  __tsan_acquire(a);
#endif
  (void)a;
}
inline void tsanIgnoreBegin() {
#ifdef HELIX_CUDA_EMU_TSAN
  __tsan_ignore_thread_begin();
#endif
}
inline void tsanIgnoreEnd() {
#ifdef HELIX_CUDA_EMU_TSAN
  __tsan_ignore_thread_end();
#endif
}

/// How a launch runs its blocks' threads.
enum class Mode {
  Fibers,  // cooperative, on the launching thread (the default where built)
  Threads, // one std::thread per CUDA thread (AddressSanitizer builds)
};

inline bool fibersAvailable() {
#ifdef HELIX_CUDA_EMU_HAVE_FIBERS
  return true;
#else
  return false;
#endif
}

} // namespace cudaemu
} // namespace helix

#endif // HELIX_RUNTIME_CUDA_EMU_FIBERS_H
