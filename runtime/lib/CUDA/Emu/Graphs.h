//===- Graphs.h - Stream capture and CUDA graphs, emulated ------*- C++ -*-===//
//
// cudaStreamBeginCapture / EndCapture, cudaGraphInstantiate, Launch and
// Destroy for host code compiled against the CUDA emulation (HostApi.h;
// docs/cuda-on-cpu.md, "CUDA graphs"). While a stream captures, the work
// issued to it -- kernel launches (CudaEmu.h), copies, memsets, cuBLAS
// (Cublas.h), NCCL calls (NcclOverMpi.cpp), event records and waits,
// stream-ordered allocations -- is recorded as graph nodes instead of
// running; a graph launch runs the nodes in the order they were recorded
// (one legal schedule, as streams are run in HostApi.h). CUDA's rules are
// enforced:
//
//   * a host wait (cudaStreamSynchronize / Query on a capturing stream,
//     cudaDeviceSynchronize, cudaEventSynchronize / Query of a captured
//     event), a synchronous call (cudaMemcpy, cudaMalloc, cudaFree,
//     cudaMallocHost, cudaFreeHost) while a capture is active, a copy of
//     pageable host memory on a capturing stream, or the legacy stream used
//     during a capture fail (cudaErrorStreamCaptureUnsupported / Implicit)
//     and invalidate the capture: EndCapture then returns
//     cudaErrorStreamCaptureInvalidated and no graph;
//   * a stream that waits on an event recorded in the capture joins it;
//     EndCapture fails with cudaErrorStreamCaptureUnjoined unless every
//     joined stream's last work is waited for by the origin stream, and
//     with cudaErrorStreamCaptureUnmatched on another stream than the
//     origin; a capturing stream waiting on an event recorded outside the
//     capture fails (cudaErrorStreamCaptureIsolation);
//   * cudaMallocAsync on a capturing stream is a graph allocation: its
//     address is fixed for the graph's life, each launch allocates it
//     again and it must have been freed (by a free node or by the program,
//     cudaFreeAsync / cudaFree) before the next launch, else the launch
//     fails (cudaErrorInvalidValue). The graph keeps the memory until it
//     is destroyed. A captured cudaFreeAsync of memory the capture did not
//     allocate is refused here: each replay would free it again.
//
// One capture at a time per process; the modes are not told apart (every
// capture forbids the unsafe calls of every thread). The trace (CudaEmu.h)
// shows each captured call once, as it was issued, between "capture begin
// ... mode M" and "capture end" lines, and each graph launch as one "graph
// launch" line.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_CUDA_EMU_GRAPHS_H
#define HELIX_RUNTIME_CUDA_EMU_GRAPHS_H

// Included by HostApi.h.

#include <set>

enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
};
enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
};

struct CUgraphNode_st;
typedef CUgraphNode_st *cudaGraphNode_t;

namespace helix {
namespace cudaemu {

inline cudaError_t allocateDevice(void **p, size_t bytes); // HostApi.h
inline cudaError_t freeDevice(void *p, const char *call);  // HostApi.h

struct GraphNode {
  std::string what;
  std::function<cudaError_t()> run;
};

/// An allocation made by a capture: the graph owning it keeps the memory;
/// `live` while allocated by a launch (or the capture) and not yet freed.
struct GraphAllocation {
  const void *graph = nullptr; // the owning CUgraph_st, once captured
  bool live = true;
  bool orphan = false; // the graph is gone: the next free frees it
};

struct Capture {
  CUstream_st *origin = nullptr;
  std::vector<CUstream_st *> members; // origin first, then joined streams
  std::vector<GraphNode> nodes;
  std::map<CUstream_st *, long> lastNode; // per joined stream
  std::map<CUstream_st *, long> rejoined; // its last node the origin awaited
  std::vector<void *> allocations;
  bool invalid = false;
  std::string why;
};

struct GraphState {
  std::mutex mu; // the allocation table; captures are one host thread's
  Capture *active = nullptr;
  std::map<uintptr_t, GraphAllocation> allocations;
  unsigned nextGraph = 1;
};
inline GraphState &graphs() {
  static GraphState g;
  return g;
}

/// Marks the capture invalid (EndCapture then fails) and sets error `e`.
inline cudaError_t invalidateCapture(Capture *c, cudaError_t e,
                                     const std::string &why) {
  if (c && !c->invalid) {
    c->invalid = true;
    c->why = why;
  }
  return setError(e, why);
}

/// A call that is illegal while any capture is active.
inline cudaError_t forbiddenInCapture(const char *call) {
  Capture *c = graphs().active;
  if (!c)
    return cudaSuccess;
  return invalidateCapture(c, cudaErrorStreamCaptureUnsupported,
                           std::string(call) +
                               " while a stream is capturing (a synchronous "
                               "call cannot be captured)");
}

inline cudaError_t checkStreamUse(cudaStream_t s, const char *call) {
  Capture *c = graphs().active;
  if (!s && c)
    return invalidateCapture(c, cudaErrorStreamCaptureImplicit,
                             std::string(call) +
                                 " on the legacy stream while a stream is "
                                 "capturing");
  return cudaSuccess;
}

/// A host wait for stream `s`.
inline cudaError_t hostWaitOn(cudaStream_t s, const char *call) {
  Capture *c = s ? s->capture : graphs().active;
  if (!c)
    return cudaSuccess;
  return invalidateCapture(c, cudaErrorStreamCaptureUnsupported,
                           std::string(call) + " of stream " +
                               std::to_string(streamId(s)) +
                               " while it is capturing (a host wait cannot "
                               "be captured)");
}

inline cudaError_t hostWaitOnEvent(cudaEvent_t e, const char *call) {
  if (!e)
    return setError(cudaErrorInvalidResourceHandle,
                    std::string(call) + ": null event");
  if (e->capture && e->capture == graphs().active)
    return invalidateCapture(e->capture, cudaErrorStreamCaptureUnsupported,
                             std::string(call) + " of event " +
                                 std::to_string(e->id) +
                                 " recorded in an active capture");
  return cudaSuccess;
}

inline bool recordNode(cudaStream_t s, std::string what,
                       std::function<cudaError_t()> run) {
  if (!s || !s->capture)
    return false;
  Capture *c = s->capture;
  c->nodes.push_back({std::move(what), std::move(run)});
  c->lastNode[s] = static_cast<long>(c->nodes.size()) - 1;
  return true;
}

inline void recordEvent(cudaEvent_t e, cudaStream_t s) {
  if (s && s->capture) {
    recordNode(s, "event record", [] { return cudaSuccess; });
    e->capture = s->capture;
    e->stream = s;
    e->node = s->capture->lastNode[s];
  } else {
    e->capture = nullptr;
    e->stream = s;
    e->node = -1;
  }
}

inline cudaError_t waitEvent(cudaStream_t s, cudaEvent_t e) {
  Capture *c = graphs().active;
  bool captured = e->capture && e->capture == c;
  if (s && s->capture && !captured)
    return invalidateCapture(s->capture, cudaErrorStreamCaptureIsolation,
                             "cudaStreamWaitEvent: capturing stream " +
                                 std::to_string(streamId(s)) +
                                 " waits on event " + std::to_string(e->id) +
                                 ", recorded outside the capture");
  if (!captured)
    return cudaSuccess;
  if (!s->capture) { // joins the capture
    s->capture = c;
    c->members.push_back(s);
  }
  recordNode(s, "event wait", [] { return cudaSuccess; });
  if (s == c->origin && e->stream != c->origin)
    c->rejoined[e->stream] = std::max(c->rejoined[e->stream], e->node);
  return cudaSuccess;
}

/// cudaMallocAsync on a capturing stream.
inline cudaError_t captureAllocation(cudaStream_t s, void **p, size_t bytes) {
  if (cudaError_t e = allocateDevice(p, bytes))
    return e;
  void *at = *p;
  s->capture->allocations.push_back(at);
  {
    std::lock_guard<std::mutex> lk(graphs().mu);
    graphs().allocations[reinterpret_cast<uintptr_t>(at)] = GraphAllocation{};
  }
  recordNode(s, "allocation", [at] {
    std::lock_guard<std::mutex> lk(graphs().mu);
    GraphAllocation &a = graphs().allocations[reinterpret_cast<uintptr_t>(at)];
    if (a.live)
      return setError(cudaErrorInvalidValue,
                      "cudaGraphLaunch: the graph's allocation at " +
                          std::to_string(reinterpret_cast<uintptr_t>(at)) +
                          " from its previous launch was not freed");
    a.live = true;
    return cudaSuccess;
  });
  return cudaSuccess;
}

/// cudaFreeAsync on a capturing stream: only of the capture's own
/// allocations.
inline cudaError_t captureFree(cudaStream_t s, void *p) {
  if (!p)
    return cudaSuccess;
  auto key = reinterpret_cast<uintptr_t>(p);
  {
    std::lock_guard<std::mutex> lk(graphs().mu);
    auto it = graphs().allocations.find(key);
    const std::vector<void *> &mine = s->capture->allocations;
    if (it == graphs().allocations.end() ||
        std::find(mine.begin(), mine.end(), p) == mine.end())
      return invalidateCapture(s->capture, cudaErrorStreamCaptureUnsupported,
                               "cudaFreeAsync on a capturing stream of memory "
                               "the capture did not allocate (each launch of "
                               "the graph would free it again)");
    it->second.live = false;
  }
  recordNode(s, "free", [key] {
    std::lock_guard<std::mutex> lk(graphs().mu);
    graphs().allocations[key].live = false;
    return cudaSuccess;
  });
  return cudaSuccess;
}

/// A free of graph memory outside a capture: marked free (the graph keeps
/// it), or freed for real when its graph is gone. False: not graph memory.
inline bool releaseGraphAllocation(void *p) {
  std::lock_guard<std::mutex> lk(graphs().mu);
  auto it = graphs().allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it == graphs().allocations.end())
    return false;
  if (!it->second.orphan) {
    it->second.live = false;
    return true;
  }
  graphs().allocations.erase(it);
  return false; // the caller frees it
}

} // namespace cudaemu
} // namespace helix

struct CUgraph_st {
  unsigned id;
  std::vector<helix::cudaemu::GraphNode> nodes;
  std::vector<void *> allocations;
};
typedef CUgraph_st *cudaGraph_t;
struct CUgraphExec_st {
  CUgraph_st *graph; // instantiated from (the emulation shares the nodes)
};
typedef CUgraphExec_st *cudaGraphExec_t;

inline cudaError_t cudaStreamBeginCapture(cudaStream_t s,
                                          cudaStreamCaptureMode mode) {
  using namespace helix::cudaemu;
  if (!s)
    return setError(cudaErrorStreamCaptureUnsupported,
                    "cudaStreamBeginCapture: the legacy stream cannot capture");
  if (s->capture || graphs().active)
    return setError(cudaErrorInvalidValue,
                    "cudaStreamBeginCapture: a capture is already active "
                    "(the emulation captures one at a time)");
  auto *c = new Capture;
  c->origin = s;
  c->members.push_back(s);
  s->capture = c;
  graphs().active = c;
  trace("capture begin stream %u mode %s", streamId(s),
        mode == cudaStreamCaptureModeGlobal        ? "global"
        : mode == cudaStreamCaptureModeThreadLocal ? "thread-local"
                                                   : "relaxed");
  return cudaSuccess;
}

inline cudaError_t cudaStreamIsCapturing(cudaStream_t s,
                                         cudaStreamCaptureStatus *status) {
  helix::cudaemu::Capture *c = s ? s->capture : nullptr;
  *status = !c           ? cudaStreamCaptureStatusNone
            : c->invalid ? cudaStreamCaptureStatusInvalidated
                         : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

/// Ends the capture begun on `s`; *graph is null when it fails.
inline cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph) {
  using namespace helix::cudaemu;
  *graph = nullptr;
  Capture *c = s ? s->capture : nullptr;
  if (!c)
    return setError(cudaErrorInvalidValue,
                    "cudaStreamEndCapture: the stream is not capturing");
  if (c->origin != s)
    return invalidateCapture(c, cudaErrorStreamCaptureUnmatched,
                             "cudaStreamEndCapture on stream " +
                                 std::to_string(streamId(s)) +
                                 ", not the stream that began the capture");
  std::string unjoined;
  for (CUstream_st *m : c->members) {
    if (m == c->origin || !c->lastNode.count(m))
      continue;
    auto r = c->rejoined.find(m);
    if (r == c->rejoined.end() || r->second < c->lastNode[m])
      unjoined += (unjoined.empty() ? "" : ", ") + std::to_string(streamId(m));
  }
  for (CUstream_st *m : c->members)
    m->capture = nullptr;
  graphs().active = nullptr;
  std::unique_ptr<Capture> done(c);
  auto orphan = [&] { // a failed capture's memory: what it freed now, the
                      // rest with the program's frees
    std::vector<void *> release;
    {
      std::lock_guard<std::mutex> lk(graphs().mu);
      for (void *p : done->allocations) {
        auto it = graphs().allocations.find(reinterpret_cast<uintptr_t>(p));
        if (it->second.live) {
          it->second.orphan = true;
        } else {
          graphs().allocations.erase(it);
          release.push_back(p);
        }
      }
    }
    for (void *p : release)
      freeDevice(p, "cudaStreamEndCapture");
  };
  if (!unjoined.empty()) {
    orphan();
    trace("capture end stream %u failed", streamId(s));
    return setError(cudaErrorStreamCaptureUnjoined,
                    "cudaStreamEndCapture: stream(s) " + unjoined +
                        " joined the capture and their last work is not "
                        "waited for by the origin stream");
  }
  if (done->invalid) {
    orphan();
    trace("capture end stream %u invalidated", streamId(s));
    return setError(cudaErrorStreamCaptureInvalidated,
                    "cudaStreamEndCapture: the capture was invalidated: " +
                        done->why);
  }
  auto *g = new CUgraph_st{graphs().nextGraph++, std::move(done->nodes),
                           std::move(done->allocations)};
  {
    std::lock_guard<std::mutex> lk(graphs().mu);
    for (void *p : g->allocations) {
      GraphAllocation &a = graphs().allocations[reinterpret_cast<uintptr_t>(p)];
      a.graph = g;
      a.live = false; // allocated by each launch
    }
  }
  trace("capture end stream %u graph %u nodes %zu", streamId(s), g->id,
        g->nodes.size());
  *graph = g;
  return cudaSuccess;
}

inline cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t *nodes,
                                     size_t *count) {
  if (!g || !count)
    return helix::cudaemu::setError(cudaErrorInvalidValue,
                                    "cudaGraphGetNodes: null argument");
  if (nodes)
    return helix::cudaemu::setError(cudaErrorInvalidValue,
                                    "cudaGraphGetNodes: only the count is "
                                    "emulated");
  *count = g->nodes.size();
  return cudaSuccess;
}

inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t g,
                                        unsigned long long = 0) {
  if (!g)
    return helix::cudaemu::setError(cudaErrorInvalidValue,
                                    "cudaGraphInstantiate: null graph");
  *exec = new CUgraphExec_st{g};
  return cudaSuccess;
}

/// Runs the graph's nodes in their recorded order; the first failing node
/// ends the launch with its error.
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  using namespace helix::cudaemu;
  if (!exec || !exec->graph)
    return setError(cudaErrorInvalidValue, "cudaGraphLaunch: no graph");
  if (s && s->capture)
    return invalidateCapture(s->capture, cudaErrorStreamCaptureUnsupported,
                             "cudaGraphLaunch on a capturing stream (child "
                             "graphs are not emulated)");
  if (cudaError_t e = checkStreamUse(s, "cudaGraphLaunch"))
    return e;
  trace("graph launch graph %u nodes %zu stream %u", exec->graph->id,
        exec->graph->nodes.size(), streamId(s));
  replayingGraph = true;
  cudaError_t result = cudaSuccess;
  for (GraphNode &n : exec->graph->nodes)
    if (cudaError_t e = n.run()) {
      result = setError(e, "cudaGraphLaunch: node " + n.what + ": " +
                               lastErrorMessage());
      break;
    }
  replayingGraph = false;
  return result;
}

inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete exec;
  return cudaSuccess;
}

/// Frees the graph's memory (an allocation still held by the program is
/// freed by its own free later).
inline cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  using namespace helix::cudaemu;
  if (!g)
    return cudaSuccess;
  std::vector<void *> release;
  {
    std::lock_guard<std::mutex> lk(graphs().mu);
    for (void *p : g->allocations) {
      auto it = graphs().allocations.find(reinterpret_cast<uintptr_t>(p));
      if (it == graphs().allocations.end())
        continue;
      if (it->second.live) {
        it->second.orphan = true;
      } else {
        graphs().allocations.erase(it);
        release.push_back(p);
      }
    }
  }
  delete g;
  for (void *p : release)
    freeDevice(p, "cudaGraphDestroy");
  return cudaSuccess;
}

#endif // HELIX_RUNTIME_CUDA_EMU_GRAPHS_H
