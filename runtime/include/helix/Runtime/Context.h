//===- Context.h - Rank, backend, memory and communicators ------*- C++ -*-===//
//
// One Context per process (one process per GPU, or per CPU rank under
// mpirun). It knows the rank and world size (from MPI_COMM_WORLD when MPI is
// initialized, else rank 0 of 1), owns the backend (CPU or CUDA, with its
// compute and communication streams) and hands out communicators over
// explicit member ranks:
//
//   auto ctx = Context::create({"cpu"});
//   Communicator &kvp = ctx->group({0, 4, 8, 12});   // only members call
//   Tensor recv = kvp.allToAll(partials, /*axis=*/1);
//
// Collectives:
//   - CPU backend: MPI (non-blocking MPI_Ialltoall / MPI_Iallgather for the
//     *Start variants).
//   - CUDA backend: NCCL (all-to-all as grouped send/recv) on a second
//     stream ordered with events, or MPI with host staging
//     (collectives = "mpi") so several ranks can share one GPU in tests.
//
// all-reduce results are identical on every member (the MPI path gathers
// the contributions and sums them in member order), so replicated
// computations downstream (MoE routing, argmax) agree across ranks.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_CONTEXT_H
#define HELIX_RUNTIME_CONTEXT_H

#include "helix/Runtime/Tensor.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace helix {
namespace rt {

class Backend;
class Context;
struct GroupHandle; // the MPI communicator of a group (internal)

struct ContextOptions {
  /// "cpu" or "cuda" (when HelixRuntimeCUDA is linked and registered).
  std::string backend = "cpu";
  /// CUDA only: "nccl", "mpi" (host staging), or "auto" (NCCL unless two
  /// ranks of this node share a device).
  std::string collectives = "auto";
  /// CUDA only: device ordinal; -1 = node-local rank modulo device count.
  int device = -1;
  /// The watchdog: a wait for peers (a collective, a send or receive, the
  /// driver's broadcasts; on CUDA, a stream that runs NCCL) that has not
  /// completed after this many seconds throws an Error naming the
  /// operation and its ranks, which ends the run on every rank. <= 0: wait
  /// forever. helix-decode --step-timeout.
  double stepTimeoutS = 60;
  /// CUDA only: each decode step captured once as a CUDA graph and
  /// replayed: "on", "off", or "auto" (on with NCCL collectives).
  /// helix-decode --cuda-graphs.
  std::string cudaGraphs = "auto";
};

/// A collective in flight (HOP-B). wait() completes it on the compute
/// stream: on CUDA it makes the compute stream wait for the communication
/// stream (the host does not block); on the CPU it waits for MPI.
class CommRequest {
public:
  struct Pending {
    virtual ~Pending();
    virtual void wait() = 0;
  };
  CommRequest() = default;
  CommRequest(std::unique_ptr<Pending> pending, Tensor result,
              std::function<void()> finish = nullptr);
  CommRequest(CommRequest &&) noexcept;
  CommRequest &operator=(CommRequest &&) noexcept;
  ~CommRequest(); // waits if still pending
  void wait();
  bool pending() const { return pending_ != nullptr; }
  /// The received / reduced tensor; valid after wait().
  const Tensor &result() const { return result_; }

private:
  std::unique_ptr<Pending> pending_;
  Tensor result_;
  std::function<void()> finish_;
};

/// Collectives over a fixed group of world ranks. "index" is a rank's
/// position in the member list.
class Communicator {
public:
  Communicator(Context &ctx, std::vector<int> members, int index);
  virtual ~Communicator();

  const std::vector<int> &members() const { return members_; }
  int size() const { return static_cast<int>(members_.size()); }
  int index() const { return index_; }
  Context &context() { return ctx_; }

  /// Sum over members, in place.
  void allReduceSum(Tensor &x);
  CommRequest allReduceSumStart(Tensor &x);
  /// [G, ...x.shape]: member j's tensor at index j.
  Tensor allGather(const Tensor &x);
  /// x: [G * c, ...]; returns this member's rows [index * c, (index+1) * c)
  /// of the sum over members.
  Tensor reduceScatterSum(const Tensor &x);
  /// `send` has dimension `axis` = G * c; block j (of c) goes to member j.
  /// The result has the shape of `send`; its block j came from member j.
  Tensor allToAll(const Tensor &send, int axis);
  CommRequest allToAllStart(const Tensor &send, int axis);
  void broadcast(Tensor &x, int rootIndex);
  void send(const Tensor &x, int peerIndex);
  void recv(Tensor &x, int peerIndex);
  void barrier();

  // Backends implement these on contiguous buffers.
  /// send and recv: [G, n] contiguous; chunk j to / from member j.
  virtual std::unique_ptr<CommRequest::Pending>
  startAllToAllChunks(const Tensor &send, Tensor &recv) = 0;
  virtual std::unique_ptr<CommRequest::Pending> startAllReduce(Tensor &x) = 0;
  virtual void allGatherInto(const Tensor &x, Tensor &out) = 0;
  virtual void broadcastImpl(Tensor &x, int rootIndex) = 0;
  virtual void sendImpl(const Tensor &x, int peerIndex) = 0;
  virtual void recvImpl(Tensor &x, int peerIndex) = 0;
  virtual void barrierImpl() = 0;

protected:
  Context &ctx_;
  std::vector<int> members_;
  int index_;
};

/// Creates a backend; registered by name (see registerBackend).
using BackendFactory =
    std::function<std::unique_ptr<Backend>(Context &, const ContextOptions &)>;
void registerBackend(const std::string &name, BackendFactory factory);
std::vector<std::string> registeredBackends();

struct QuantHost;

/// What a rank's memory holds (helix-decode --report-memory).
enum class MemoryKind : uint8_t { Workspace, Weights, Scales, KVCache };
constexpr int kNumMemoryKinds = 4;
const char *memoryKindName(MemoryKind kind);

/// Bytes a rank holds by kind: live now and the peak of the live total.
struct MemoryUse {
  int64_t live[kNumMemoryKinds] = {0, 0, 0, 0};
  int64_t peak[kNumMemoryKinds] = {0, 0, 0, 0};
};

class Context {
public:
  /// Throws Error for an unknown backend or one that cannot start (e.g. no
  /// CUDA device).
  static std::unique_ptr<Context> create(const ContextOptions &options = {});
  ~Context();

  int rank() const { return rank_; }
  int worldSize() const { return world_; }
  /// Rank among the processes of this node (for device selection).
  int localRank() const { return localRank_; }
  int localSize() const { return localSize_; }
  Backend &backend() { return *backend_; }
  const ContextOptions &options() const { return options_; }
  /// Whether MPI is initialized (communicators need it when world > 1).
  bool hasMPI() const { return mpi_; }

  // Memory.
  Tensor empty(const std::vector<int64_t> &shape, DType dtype = DType::F32);
  Tensor zeros(const std::vector<int64_t> &shape, DType dtype = DType::F32);
  Tensor upload(const std::vector<float> &data,
                const std::vector<int64_t> &shape);
  Tensor uploadInt(const std::vector<int32_t> &data,
                   const std::vector<int64_t> &shape);
  std::vector<float> download(const Tensor &t);
  std::vector<int32_t> downloadInt(const Tensor &t);
  /// A weight in its resident format (BF16, FP8 or FP4 with block
  /// scales), counted as weights and scales.
  Tensor uploadResident(const QuantHost &q);
  /// Allocations from here on count as `kind` until the returned scope
  /// ends (default: workspace).
  struct MemoryScope {
    Context *ctx;
    MemoryKind previous;
    ~MemoryScope() { ctx->kind_ = previous; }
  };
  MemoryScope memoryScope(MemoryKind kind) {
    MemoryScope s{this, kind_};
    kind_ = kind;
    return s;
  }
  const MemoryUse &memoryUse() const { return *memory_; }

  /// Waits for all work queued on this rank's streams.
  void synchronize();

  /// The communicator over `worldRanks` (sorted or not; member order is the
  /// order given). Collective over the members the first time; cached.
  /// Throws Error when this rank is not a member.
  Communicator &group(const std::vector<int> &worldRanks);
  /// All ranks, in order.
  Communicator &world();

private:
  Context() = default;
  ContextOptions options_;
  int rank_ = 0, world_ = 1, localRank_ = 0, localSize_ = 1;
  bool mpi_ = false;
  std::unique_ptr<Backend> backend_;
  std::map<std::vector<int>, std::unique_ptr<Communicator>> groups_;
  MemoryKind kind_ = MemoryKind::Workspace;
  std::shared_ptr<MemoryUse> memory_ = std::make_shared<MemoryUse>();
  std::shared_ptr<Storage> allocate(size_t bytes);
};

/// Agrees on errors across all ranks of MPI_COMM_WORLD: every rank passes
/// its own error ("" for none) and gets back the error of the lowest failing
/// rank, prefixed with that rank when it is not everyone's ("" when none
/// failed). A no-op returning `localError` without MPI.
std::string agreeOnError(const std::string &localError);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_CONTEXT_H
