//===- NcclCommunicator.cpp - Collectives through NCCL --------------------===//
//
// The group's NCCL communicator is bootstrapped over its MPI communicator
// (member 0 makes the unique id and broadcasts it). The all-to-all is a
// grouped send/recv. *Start collectives run on the communication stream:
// it first waits for the compute stream (an event), and wait() makes the
// compute stream wait for the collective (another event) -- the host never
// blocks, and attention of the next batch chunk overlaps the exchange
// (HOP-B). Blocking collectives run on the compute stream.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"
#include "StepGraph.h"

#include <algorithm>

#include "../Common/MpiGroup.h"
#include "../Common/MpiWait.h"

#include <nccl.h>

namespace helix {
namespace rt {

namespace {

void ncclCheck(ncclResult_t r, const char *what) {
  if (r != ncclSuccess)
    throw Error(std::string("nccl: ") + what + ": " + ncclGetErrorString(r));
}

/// Completes a collective queued on the communication stream.
struct StreamPending : CommRequest::Pending {
  cudaStream_t compute;
  cudaEvent_t done = nullptr;
  Tensor keepA, keepB; // alive until the compute stream waits
  void wait() override {
    cudaCheck(cudaStreamWaitEvent(compute, done, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(done);
    done = nullptr;
  }
  ~StreamPending() override {
    if (done)
      cudaEventDestroy(done);
  }
};

class NcclCommunicator : public Communicator {
public:
  NcclCommunicator(Context &ctx, CudaState &s, const std::vector<int> &members,
                   int index, MPI_Comm mpi)
      : Communicator(ctx, members, index), s_(s), mpi_(mpi) {
    ncclUniqueId id;
    if (index == 0)
      ncclCheck(ncclGetUniqueId(&id), "ncclGetUniqueId");
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, mpi_);
    ncclCheck(ncclCommInitRank(&comm_, size(), id, index), "ncclCommInitRank");
    s_.comms.push_back(comm_); // the watchdog checks and aborts it
  }
  ~NcclCommunicator() override {
    auto it = std::find(s_.comms.begin(), s_.comms.end(), comm_);
    if (it == s_.comms.end()) // aborted by the watchdog
      return;
    s_.comms.erase(it);
    cudaStreamSynchronize(s_.comm);
    cudaStreamSynchronize(s_.compute);
    ncclCommDestroy(comm_);
    if (mpi_ != MPI_COMM_NULL && mpiActive())
      MPI_Comm_free(&mpi_);
  }

  /// Counts collective `name` (Backend::traffic: replays count what their
  /// graph runs); true when a replayed step's collectives are in its graph
  /// and nothing is to be issued.
  bool counted(const char *name) const {
    if (s_.countCollective)
      s_.countCollective(name);
    return s_.graph && s_.graph->replaying();
  }

  /// Orders the communication stream after the compute stream.
  void commAfterCompute() {
    cudaEvent_t ready;
    cudaCheck(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming),
              "cudaEventCreate");
    cudaCheck(cudaEventRecord(ready, s_.compute), "cudaEventRecord");
    cudaCheck(cudaStreamWaitEvent(s_.comm, ready, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(ready);
  }

  std::unique_ptr<CommRequest::Pending> finishOnComm(const Tensor &a,
                                                     const Tensor &b) {
    auto p = std::make_unique<StreamPending>();
    p->compute = s_.compute;
    p->keepA = a;
    p->keepB = b;
    cudaCheck(cudaEventCreateWithFlags(&p->done, cudaEventDisableTiming),
              "cudaEventCreate");
    cudaCheck(cudaEventRecord(p->done, s_.comm), "cudaEventRecord");
    return p;
  }

  std::unique_ptr<CommRequest::Pending>
  startAllToAllChunks(const Tensor &send, Tensor &recv) override {
    if (counted("all-to-all (nccl)"))
      return nullptr;
    size_t n = static_cast<size_t>(send.numel() / size());
    commAfterCompute();
    ncclCheck(ncclGroupStart(), "ncclGroupStart");
    for (int j = 0; j < size(); ++j) {
      ncclCheck(ncclSend(send.f32() + j * n, n, ncclFloat, j, comm_, s_.comm),
                "ncclSend");
      ncclCheck(ncclRecv(recv.f32() + j * n, n, ncclFloat, j, comm_, s_.comm),
                "ncclRecv");
    }
    ncclCheck(ncclGroupEnd(), "ncclGroupEnd");
    return finishOnComm(send, recv);
  }

  std::unique_ptr<CommRequest::Pending> startAllReduce(Tensor &x) override {
    if (counted("all-reduce (nccl)"))
      return nullptr;
    commAfterCompute();
    ncclCheck(ncclAllReduce(x.f32(), x.f32(), static_cast<size_t>(x.numel()),
                            ncclFloat, ncclSum, comm_, s_.comm),
              "ncclAllReduce");
    return finishOnComm(x, Tensor());
  }

  void allGatherInto(const Tensor &x, Tensor &out) override {
    if (counted("all-gather (nccl)"))
      return;
    ncclCheck(ncclAllGather(x.raw(), out.raw(), static_cast<size_t>(x.numel()),
                            ncclFloat, comm_, s_.compute),
              "ncclAllGather");
  }

  void broadcastImpl(Tensor &x, int root) override {
    if (counted("broadcast (nccl)"))
      return;
    ncclCheck(ncclBroadcast(x.raw(), x.raw(), static_cast<size_t>(x.numel()),
                            ncclFloat, root, comm_, s_.compute),
              "ncclBroadcast");
  }

  void sendImpl(const Tensor &x, int peer) override {
    if (counted("send (nccl)"))
      return;
    ncclCheck(ncclSend(x.raw(), static_cast<size_t>(x.numel()), ncclFloat, peer,
                       comm_, s_.compute),
              "ncclSend");
  }

  void recvImpl(Tensor &x, int peer) override {
    if (counted("recv (nccl)"))
      return;
    ncclCheck(ncclRecv(x.raw(), static_cast<size_t>(x.numel()), ncclFloat, peer,
                       comm_, s_.compute),
              "ncclRecv");
  }

  void barrierImpl() override {
    waitStream(s_, s_.compute, "barrier");
    waitStream(s_, s_.comm, "barrier (communication stream)");
    MPI_Request req;
    MPI_Ibarrier(mpi_, &req);
    waitWithDeadline(req, s_.timeoutS, "barrier", members_);
  }

private:
  CudaState &s_;
  MPI_Comm mpi_;
  ncclComm_t comm_ = nullptr;
};

} // namespace

std::unique_ptr<Communicator>
createNcclCommunicator(Context &ctx, CudaState &state,
                       const std::vector<int> &members, int index,
                       GroupHandle &group) {
  return std::make_unique<NcclCommunicator>(ctx, state, members, index,
                                            group.comm);
}

} // namespace rt
} // namespace helix
