//===- HostApi.h - The CUDA runtime's host API, emulated --------*- C++ -*-===//
//
// Devices, memory, streams and events for host code compiled against the
// CUDA emulation (CudaEmu.h; docs/cuda-on-cpu.md): what the CUDA backend
// (runtime/lib/CUDA/CudaBackend.cpp) calls, so it runs on the CPU.
//
//   * Devices: HELIX_CUDA_EMU_DEVICES of them (default 8, one node of an
//     8-GPU server), all the same host memory.
//   * Memory: device allocations are host allocations (256-byte aligned)
//     kept in a table: freeing an address that is not an allocation's
//     start, or a copy whose device side is not inside one allocation (a
//     host pointer where a device pointer belongs, or an overrun), fails
//     with cudaErrorInvalidValue and a message, as cuda-memcheck would
//     report it. Host memory is not checked the other way.
//   * Streams and events: every call completes before it returns (launches
//     too), which is one legal schedule of any stream program, so results
//     are what a correctly synchronized program computes on a GPU. Stream
//     order is recorded, not enforced: the trace (CudaEmu.h, traceFile)
//     shows which stream each launch, copy, event and wait went to.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_CUDA_EMU_HOSTAPI_H
#define HELIX_RUNTIME_CUDA_EMU_HOSTAPI_H

// Included at the end of CudaEmu.h.

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
constexpr unsigned cudaStreamDefault = 0x0, cudaStreamNonBlocking = 0x1;
constexpr unsigned cudaEventDefault = 0x0, cudaEventDisableTiming = 0x2;

struct CUevent_st {
  unsigned id;
};
typedef CUevent_st *cudaEvent_t;

namespace helix {
namespace cudaemu {

struct HostState {
  std::mutex mu;
  std::map<uintptr_t, size_t> allocations; // start -> bytes
  size_t liveBytes = 0;
  unsigned nextStream = 1, nextEvent = 1;
  int device = 0;
  int devices = [] {
    const char *s = std::getenv("HELIX_CUDA_EMU_DEVICES");
    int n = s ? std::atoi(s) : 8;
    return n >= 0 ? n : 0;
  }();
};
inline HostState &host() {
  static HostState h;
  return h;
}

/// Whether [p, p + bytes) lies inside one device allocation.
inline bool onDevice(const void *p, size_t bytes) {
  HostState &h = host();
  std::lock_guard<std::mutex> lk(h.mu);
  auto a = reinterpret_cast<uintptr_t>(p);
  auto it = h.allocations.upper_bound(a);
  if (it == h.allocations.begin())
    return false;
  --it;
  return a - it->first <= it->second && bytes <= it->second - (a - it->first);
}

inline cudaError_t badPointer(const char *call, const char *side, const void *p,
                              size_t bytes) {
  char at[32];
  std::snprintf(at, sizeof at, "%p", p);
  return setError(cudaErrorInvalidValue,
                  std::string(call) + ": the " + side + " (" + at + ", " +
                      std::to_string(bytes) +
                      " bytes) is not inside one device allocation");
}

/// Bytes in device allocations now (a leak check for tests).
inline size_t liveDeviceBytes() {
  std::lock_guard<std::mutex> lk(host().mu);
  return host().liveBytes;
}

} // namespace cudaemu
} // namespace helix

inline const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
  case cudaSuccess:
    return "no error";
  case cudaErrorInvalidValue:
    return "invalid argument";
  case cudaErrorMemoryAllocation:
    return "out of memory";
  case cudaErrorInvalidConfiguration:
    return "invalid configuration argument";
  case cudaErrorInvalidDevicePointer:
    return "invalid device pointer";
  case cudaErrorInvalidDevice:
    return "invalid device ordinal";
  case cudaErrorInvalidResourceHandle:
    return "invalid resource handle";
  case cudaErrorNotReady:
    return "device not ready";
  case cudaErrorLaunchFailure:
    return "unspecified launch failure";
  }
  return "unknown error";
}

//===-- Devices
//------------------------------------------------------------===//

inline cudaError_t cudaGetDeviceCount(int *n) {
  *n = helix::cudaemu::host().devices;
  return *n > 0 ? cudaSuccess
                : helix::cudaemu::setError(cudaErrorInvalidDevice,
                                           "no emulated device "
                                           "(HELIX_CUDA_EMU_DEVICES=0)");
}
inline cudaError_t cudaSetDevice(int d) {
  if (d < 0 || d >= helix::cudaemu::host().devices)
    return helix::cudaemu::setError(cudaErrorInvalidDevice,
                                    "cudaSetDevice(" + std::to_string(d) + ")");
  helix::cudaemu::host().device = d;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
/// The SM count is HELIX_CUDA_EMU_SMS (default 132, an H100 SXM's).
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr attr,
                                          int device) {
  if (device < 0 || device >= helix::cudaemu::host().devices)
    return helix::cudaemu::setError(cudaErrorInvalidDevice,
                                    "cudaDeviceGetAttribute: device " +
                                        std::to_string(device));
  if (attr != cudaDevAttrMultiProcessorCount)
    return helix::cudaemu::setError(cudaErrorInvalidValue,
                                    "cudaDeviceGetAttribute: attribute " +
                                        std::to_string(int(attr)) +
                                        " is not emulated");
  const char *s = std::getenv("HELIX_CUDA_EMU_SMS");
  *v = s && std::atoi(s) > 0 ? std::atoi(s) : 132;
  return cudaSuccess;
}

//===-- Memory
//-------------------------------------------------------------===//

inline cudaError_t cudaMalloc(void **p, size_t bytes) {
  using namespace helix::cudaemu;
  size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  *p = std::aligned_alloc(256, rounded);
  if (!*p)
    return setError(cudaErrorMemoryAllocation,
                    "cudaMalloc: " + std::to_string(bytes) + " bytes");
  std::lock_guard<std::mutex> lk(host().mu);
  host().allocations[reinterpret_cast<uintptr_t>(*p)] = bytes;
  host().liveBytes += bytes;
  return cudaSuccess;
}
inline cudaError_t cudaFree(void *p) {
  using namespace helix::cudaemu;
  if (!p)
    return cudaSuccess;
  {
    std::lock_guard<std::mutex> lk(host().mu);
    auto it = host().allocations.find(reinterpret_cast<uintptr_t>(p));
    if (it == host().allocations.end())
      return setError(cudaErrorInvalidDevicePointer,
                      "cudaFree: not the start of a device allocation (a "
                      "host pointer, or freed twice)");
    host().liveBytes -= it->second;
    host().allocations.erase(it);
  }
  std::free(p);
  return cudaSuccess;
}
inline cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t) {
  return cudaMalloc(p, bytes);
}
inline cudaError_t cudaFreeAsync(void *p, cudaStream_t) { return cudaFree(p); }

inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                                   cudaMemcpyKind kind, cudaStream_t s) {
  using namespace helix::cudaemu;
  bool srcDevice =
      kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  bool dstDevice =
      kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  if (srcDevice && !onDevice(src, bytes))
    return badPointer("cudaMemcpyAsync", "source", src, bytes);
  if (dstDevice && !onDevice(dst, bytes))
    return badPointer("cudaMemcpyAsync", "destination", dst, bytes);
  trace("memcpy kind %d bytes %zu stream %u", static_cast<int>(kind), bytes,
        streamId(s));
  if (bytes)
    std::memmove(dst, src, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                              cudaMemcpyKind kind) {
  return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
}
inline cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes,
                                   cudaStream_t s) {
  using namespace helix::cudaemu;
  if (!onDevice(p, bytes))
    return badPointer("cudaMemsetAsync", "destination", p, bytes);
  trace("memset bytes %zu stream %u", bytes, streamId(s));
  std::memset(p, value, bytes);
  return cudaSuccess;
}

//===-- Streams and events
//-------------------------------------------------===//

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags) {
  std::lock_guard<std::mutex> lk(helix::cudaemu::host().mu);
  *s = new CUstream_st{helix::cudaemu::host().nextStream++, flags};
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreate(cudaStream_t *s) {
  return cudaStreamCreateWithFlags(s, cudaStreamDefault);
}
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete s;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  helix::cudaemu::trace("sync stream %u", helix::cudaemu::streamId(s));
  return cudaSuccess;
}
/// Every call has completed when it returns.
inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }

inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned) {
  std::lock_guard<std::mutex> lk(helix::cudaemu::host().mu);
  *e = new CUevent_st{helix::cudaemu::host().nextEvent++};
  return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t *e) {
  return cudaEventCreateWithFlags(e, cudaEventDefault);
}
inline cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete e;
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr) {
  if (!e)
    return helix::cudaemu::setError(cudaErrorInvalidResourceHandle,
                                    "cudaEventRecord: null event");
  helix::cudaemu::trace("record event %u stream %u", e->id,
                        helix::cudaemu::streamId(s));
  return cudaSuccess;
}
inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e,
                                       unsigned = 0) {
  if (!e)
    return helix::cudaemu::setError(cudaErrorInvalidResourceHandle,
                                    "cudaStreamWaitEvent: null event");
  helix::cudaemu::trace("wait stream %u event %u", helix::cudaemu::streamId(s),
                        e->id);
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }

#endif // HELIX_RUNTIME_CUDA_EMU_HOSTAPI_H
