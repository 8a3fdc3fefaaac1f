//===- MpiCommunicator.cpp - Collectives over MPI -------------------------===//
//
// Non-blocking where HOP-B overlaps (MPI_Ialltoall, MPI_Iallgather). The
// all-reduce gathers every member's contribution and sums them in member
// order, so every member gets bit-identical results. Every wait for peers
// has the step timeout as its deadline (MpiWait.h).
//
//===----------------------------------------------------------------------===//

#include "MpiCommunicator.h"
#include "MpiWait.h"
#include "helix/Runtime/Error.h"

#include <climits>
#include <cstring>

namespace helix {
namespace rt {

namespace {

int count32(int64_t n, const char *op) {
  check(n <= INT_MAX, std::string(op) + ": message of " + std::to_string(n) +
                          " elements is too large for MPI");
  return static_cast<int>(n);
}

void mpiCheck(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw Error(std::string(what) + " failed: " + std::string(msg, len));
  }
}

/// Host memory holding a tensor's data: the tensor itself on the CPU, a
/// staging copy for device memory.
struct HostView {
  std::vector<char> staging;
  void *ptr = nullptr;
  HostView(Backend &be, Tensor &t, bool load) {
    if (!be.deviceMemory()) {
      ptr = t.raw();
      return;
    }
    staging.resize(t.bytes());
    if (load && t.bytes())
      be.download(staging.data(), t.raw(), t.bytes());
    ptr = staging.data();
  }
  void storeBack(Backend &be, Tensor &t) {
    if (be.deviceMemory() && t.bytes())
      be.upload(t.raw(), staging.data(), t.bytes());
  }
};

class MpiCommunicator : public Communicator {
public:
  MpiCommunicator(Context &ctx, const std::vector<int> &members, int index,
                  MPI_Comm comm)
      : Communicator(ctx, members, index), comm_(comm) {}
  ~MpiCommunicator() override {
    if (comm_ != MPI_COMM_NULL && mpiActive())
      MPI_Comm_free(&comm_);
  }

  std::unique_ptr<CommRequest::Pending>
  startAllToAllChunks(const Tensor &send, Tensor &recv) override {
    Backend &be = ctx_.backend();
    if (size() == 1) {
      if (send.bytes())
        be.copy(recv.raw(), send.raw(), send.bytes());
      return nullptr;
    }
    struct P : CommRequest::Pending {
      Backend *be;
      const MpiCommunicator *comm;
      Tensor send, recv;
      std::unique_ptr<HostView> s, r;
      MPI_Request req = MPI_REQUEST_NULL;
      void wait() override {
        comm->await(req, "all-to-all");
        r->storeBack(*be, recv);
      }
    };
    auto p = std::make_unique<P>();
    p->comm = this;
    p->be = &be;
    p->send = send;
    p->recv = recv;
    p->s = std::make_unique<HostView>(be, p->send, true);
    p->r = std::make_unique<HostView>(be, p->recv, false);
    int n = count32(send.numel() / size(), "allToAll");
    mpiCheck(MPI_Ialltoall(p->s->ptr, n, MPI_FLOAT, p->r->ptr, n, MPI_FLOAT,
                           comm_, &p->req),
             "MPI_Ialltoall");
    return p;
  }

  std::unique_ptr<CommRequest::Pending> startAllReduce(Tensor &x) override {
    if (size() == 1)
      return nullptr;
    Backend &be = ctx_.backend();
    struct P : CommRequest::Pending {
      Backend *be;
      const MpiCommunicator *comm;
      Tensor x;
      int G = 0, n = 0;
      std::unique_ptr<HostView> view;
      std::vector<float> gathered;
      MPI_Request req = MPI_REQUEST_NULL;
      void wait() override {
        comm->await(req, "all-reduce");
        float *out = static_cast<float *>(view->ptr);
        for (int i = 0; i < n; ++i) {
          double s = 0;
          for (int g = 0; g < G; ++g)
            s += gathered[static_cast<size_t>(g) * n + i];
          out[i] = static_cast<float>(s);
        }
        view->storeBack(*be, x);
      }
    };
    auto p = std::make_unique<P>();
    p->comm = this;
    p->be = &be;
    p->x = x;
    p->G = size();
    p->n = count32(x.numel(), "allReduceSum");
    p->view = std::make_unique<HostView>(be, p->x, true);
    p->gathered.resize(static_cast<size_t>(p->G) * p->n);
    mpiCheck(MPI_Iallgather(p->view->ptr, p->n, MPI_FLOAT, p->gathered.data(),
                            p->n, MPI_FLOAT, comm_, &p->req),
             "MPI_Iallgather (all-reduce)");
    return p;
  }

  void allGatherInto(const Tensor &x, Tensor &out) override {
    Backend &be = ctx_.backend();
    if (size() == 1) {
      if (x.bytes())
        be.copy(out.raw(), x.raw(), x.bytes());
      return;
    }
    Tensor in = x;
    HostView s(be, in, true), r(be, out, false);
    int n = count32(x.numel(), "allGather");
    MPI_Request req;
    mpiCheck(
        MPI_Iallgather(s.ptr, n, MPI_FLOAT, r.ptr, n, MPI_FLOAT, comm_, &req),
        "MPI_Iallgather");
    await(req, "all-gather");
    r.storeBack(be, out);
  }

  void broadcastImpl(Tensor &x, int root) override {
    if (size() == 1)
      return;
    Backend &be = ctx_.backend();
    HostView v(be, x, index_ == root);
    MPI_Request req;
    mpiCheck(MPI_Ibcast(v.ptr, count32(x.numel(), "broadcast"), MPI_FLOAT, root,
                        comm_, &req),
             "MPI_Ibcast");
    await(req, "broadcast");
    if (index_ != root)
      v.storeBack(be, x);
  }

  void sendImpl(const Tensor &x, int peer) override {
    Backend &be = ctx_.backend();
    Tensor t = x;
    HostView v(be, t, true);
    MPI_Request req;
    mpiCheck(MPI_Isend(v.ptr, count32(x.numel(), "send"), MPI_FLOAT, peer, 0,
                       comm_, &req),
             "MPI_Isend");
    await(req, "send to rank " + std::to_string(members_[peer]));
  }

  void recvImpl(Tensor &x, int peer) override {
    Backend &be = ctx_.backend();
    HostView v(be, x, false);
    MPI_Request req;
    mpiCheck(MPI_Irecv(v.ptr, count32(x.numel(), "recv"), MPI_FLOAT, peer, 0,
                       comm_, &req),
             "MPI_Irecv");
    await(req, "receive from rank " + std::to_string(members_[peer]));
    v.storeBack(be, x);
  }

  void barrierImpl() override {
    if (size() > 1) {
      MPI_Request req;
      mpiCheck(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier");
      await(req, "barrier");
    }
  }

  /// Waits for `req` with the step timeout as deadline.
  void await(MPI_Request &req, const std::string &what) const {
    waitWithDeadline(req, ctx_.options().stepTimeoutS, what, members_);
  }

private:
  MPI_Comm comm_;
};

} // namespace

std::unique_ptr<Communicator>
createMpiCommunicator(Context &ctx, const std::vector<int> &members, int index,
                      GroupHandle &group) {
  return std::make_unique<MpiCommunicator>(ctx, members, index, group.comm);
}

} // namespace rt
} // namespace helix
