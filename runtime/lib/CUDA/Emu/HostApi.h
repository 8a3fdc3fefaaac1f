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
  /// Recorded last in this capture (Graphs.h), on `stream`, as node `node`;
  /// null when recorded outside a capture.
  helix::cudaemu::Capture *capture = nullptr;
  CUstream_st *stream = nullptr;
  long node = -1;
};
typedef CUevent_st *cudaEvent_t;

namespace helix {
namespace cudaemu {

struct HostState {
  std::mutex mu;
  std::map<uintptr_t, size_t> allocations; // start -> bytes
  std::map<uintptr_t, size_t> pinned;      // page-locked host memory
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

/// Whether [p, p + bytes) lies inside one allocation of `table` (start ->
/// bytes).
inline bool inside(const std::map<uintptr_t, size_t> &table, const void *p,
                   size_t bytes) {
  std::lock_guard<std::mutex> lk(host().mu);
  auto a = reinterpret_cast<uintptr_t>(p);
  auto it = table.upper_bound(a);
  if (it == table.begin())
    return false;
  --it;
  return a - it->first <= it->second && bytes <= it->second - (a - it->first);
}

/// Whether [p, p + bytes) lies inside one device allocation.
inline bool onDevice(const void *p, size_t bytes) {
  return inside(host().allocations, p, bytes);
}

/// Whether [p, p + bytes) lies inside one page-locked host allocation
/// (cudaMallocHost).
inline bool isPinned(const void *p, size_t bytes) {
  return inside(host().pinned, p, bytes);
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
  case cudaErrorStreamCaptureUnsupported:
    return "operation not permitted when stream is capturing";
  case cudaErrorStreamCaptureInvalidated:
    return "operation failed due to a previous error during capture";
  case cudaErrorStreamCaptureUnmatched:
    return "capture was not initiated in this stream";
  case cudaErrorStreamCaptureUnjoined:
    return "capturing stream has unjoined work";
  case cudaErrorStreamCaptureIsolation:
    return "dependency created on uncaptured work in another stream";
  case cudaErrorStreamCaptureImplicit:
    return "operation would make the legacy stream depend on a capturing "
           "blocking stream";
  }
  return "unknown error";
}

#include "Graphs.h"

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
inline cudaError_t cudaDeviceSynchronize() {
  return helix::cudaemu::forbiddenInCapture("cudaDeviceSynchronize");
}

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

namespace helix {
namespace cudaemu {

inline cudaError_t allocateDevice(void **p, size_t bytes) {
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

/// Frees a device allocation; one a graph owns is only marked free
/// (Graphs.h: the graph keeps its memory until it is destroyed).
inline cudaError_t freeDevice(void *p, const char *call) {
  if (!p)
    return cudaSuccess;
  if (releaseGraphAllocation(p))
    return cudaSuccess;
  {
    std::lock_guard<std::mutex> lk(host().mu);
    auto it = host().allocations.find(reinterpret_cast<uintptr_t>(p));
    if (it == host().allocations.end())
      return setError(cudaErrorInvalidDevicePointer,
                      std::string(call) +
                          ": not the start of a device allocation (a "
                          "host pointer, or freed twice)");
    host().liveBytes -= it->second;
    host().allocations.erase(it);
  }
  std::free(p);
  return cudaSuccess;
}

} // namespace cudaemu
} // namespace helix

inline cudaError_t cudaMalloc(void **p, size_t bytes) {
  using namespace helix::cudaemu;
  if (cudaError_t e = forbiddenInCapture("cudaMalloc"))
    return e;
  return allocateDevice(p, bytes);
}
inline cudaError_t cudaFree(void *p) {
  using namespace helix::cudaemu;
  if (cudaError_t e = forbiddenInCapture("cudaFree"))
    return e;
  return freeDevice(p, "cudaFree");
}
/// On a capturing stream: a graph allocation (Graphs.h), its address fixed
/// for the graph's life.
inline cudaError_t cudaMallocAsync(void **p, size_t bytes, cudaStream_t s) {
  using namespace helix::cudaemu;
  if (cudaError_t e = checkStreamUse(s, "cudaMallocAsync"))
    return e;
  if (s && s->capture)
    return captureAllocation(s, p, bytes);
  return allocateDevice(p, bytes);
}
inline cudaError_t cudaFreeAsync(void *p, cudaStream_t s) {
  using namespace helix::cudaemu;
  if (cudaError_t e = checkStreamUse(s, "cudaFreeAsync"))
    return e;
  if (s && s->capture)
    return captureFree(s, p);
  return freeDevice(p, "cudaFreeAsync");
}

/// Page-locked host memory (what a captured copy may read or write).
inline cudaError_t cudaMallocHost(void **p, size_t bytes) {
  using namespace helix::cudaemu;
  if (cudaError_t e = forbiddenInCapture("cudaMallocHost"))
    return e;
  *p = std::aligned_alloc(256, (std::max<size_t>(bytes, 1) + 255) / 256 * 256);
  if (!*p)
    return setError(cudaErrorMemoryAllocation,
                    "cudaMallocHost: " + std::to_string(bytes) + " bytes");
  std::lock_guard<std::mutex> lk(host().mu);
  host().pinned[reinterpret_cast<uintptr_t>(*p)] = bytes;
  return cudaSuccess;
}
inline cudaError_t cudaFreeHost(void *p) {
  using namespace helix::cudaemu;
  if (cudaError_t e = forbiddenInCapture("cudaFreeHost"))
    return e;
  if (!p)
    return cudaSuccess;
  {
    std::lock_guard<std::mutex> lk(host().mu);
    if (!host().pinned.erase(reinterpret_cast<uintptr_t>(p)))
      return setError(cudaErrorInvalidValue,
                      "cudaFreeHost: not the start of a cudaMallocHost "
                      "allocation");
  }
  std::free(p);
  return cudaSuccess;
}

/// On a capturing stream the copy becomes a graph node that copies when
/// the graph runs; its host side must then be page-locked (a pageable copy
/// cannot be captured: cudaErrorStreamCaptureUnsupported, the capture is
/// invalidated).
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
  if (cudaError_t e = checkStreamUse(s, "cudaMemcpyAsync"))
    return e;
  trace("memcpy kind %d bytes %zu stream %u", static_cast<int>(kind), bytes,
        streamId(s));
  if (s && s->capture) {
    const void *hostSide = !srcDevice ? src : !dstDevice ? dst : nullptr;
    if (hostSide && bytes && !isPinned(hostSide, bytes))
      return invalidateCapture(s->capture, cudaErrorStreamCaptureUnsupported,
                               "cudaMemcpyAsync of pageable host memory on a "
                               "capturing stream (only page-locked memory, "
                               "cudaMallocHost, can be captured)");
    recordNode(s, "memcpy", [dst, src, bytes] {
      std::memmove(dst, src, bytes);
      return cudaSuccess;
    });
    return cudaSuccess;
  }
  if (bytes)
    std::memmove(dst, src, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                              cudaMemcpyKind kind) {
  if (cudaError_t e = helix::cudaemu::forbiddenInCapture("cudaMemcpy"))
    return e;
  return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
}
inline cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes,
                                   cudaStream_t s) {
  using namespace helix::cudaemu;
  if (!onDevice(p, bytes))
    return badPointer("cudaMemsetAsync", "destination", p, bytes);
  if (cudaError_t e = checkStreamUse(s, "cudaMemsetAsync"))
    return e;
  trace("memset bytes %zu stream %u", bytes, streamId(s));
  if (recordNode(s, "memset", [p, value, bytes] {
        std::memset(p, value, bytes);
        return cudaSuccess;
      }))
    return cudaSuccess;
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
  if (s && s->capture)
    return helix::cudaemu::invalidateCapture(
        s->capture, cudaErrorStreamCaptureUnsupported,
        "cudaStreamDestroy of a capturing stream");
  delete s;
  return cudaSuccess;
}
/// A host wait for a capturing stream (or for the legacy stream while a
/// capture is active) is illegal: cudaErrorStreamCaptureUnsupported, and
/// the capture is invalidated.
inline cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  if (cudaError_t e = helix::cudaemu::hostWaitOn(s, "cudaStreamSynchronize"))
    return e;
  helix::cudaemu::trace("sync stream %u", helix::cudaemu::streamId(s));
  return cudaSuccess;
}
/// Every call has completed when it returns.
inline cudaError_t cudaStreamQuery(cudaStream_t s) {
  return helix::cudaemu::hostWaitOn(s, "cudaStreamQuery");
}

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
/// On a capturing stream: a node of the capture, which a wait of another
/// stream joins to the capture (Graphs.h).
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr) {
  using namespace helix::cudaemu;
  if (!e)
    return setError(cudaErrorInvalidResourceHandle,
                    "cudaEventRecord: null event");
  if (cudaError_t err = checkStreamUse(s, "cudaEventRecord"))
    return err;
  trace("record event %u stream %u", e->id, streamId(s));
  recordEvent(e, s);
  return cudaSuccess;
}
inline cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e,
                                       unsigned = 0) {
  using namespace helix::cudaemu;
  if (!e)
    return setError(cudaErrorInvalidResourceHandle,
                    "cudaStreamWaitEvent: null event");
  if (cudaError_t err = checkStreamUse(s, "cudaStreamWaitEvent"))
    return err;
  trace("wait stream %u event %u", streamId(s), e->id);
  return waitEvent(s, e);
}
/// A host wait for an event recorded in an active capture is illegal.
inline cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  return helix::cudaemu::hostWaitOnEvent(e, "cudaEventSynchronize");
}
inline cudaError_t cudaEventQuery(cudaEvent_t e) {
  return helix::cudaemu::hostWaitOnEvent(e, "cudaEventQuery");
}

#endif // HELIX_RUNTIME_CUDA_EMU_HOSTAPI_H
