//===- NcclOverMpi.cpp - NCCL's interface, implemented over MPI -----------===//
//
// See NcclOverMpi.h.
//
//===----------------------------------------------------------------------===//

#include "NcclOverMpi.h"

#include <climits>
#include <cstring>

// MPI's C interface only (no C++ bindings to link).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <string>
#include <vector>

struct ncclComm {
  MPI_Comm mpi = MPI_COMM_NULL;
  int rank = 0, size = 0;
};

namespace {

/// What a unique id carries: who gathers the members, and which bootstrap.
struct IdBody {
  uint32_t magic;
  int32_t rootWorldRank;
  uint32_t sequence;
};
constexpr uint32_t kMagic = 0x48454d55; // "HEMU"
constexpr int kSequences = 4096;        // tags reserved per purpose

thread_local std::string lastError;
thread_local int groupDepth = 0;

struct PointToPoint {
  bool send;
  void *buffer;
  int count;
  MPI_Datatype type;
  int peer;
  ncclComm_t comm;
  cudaStream_t stream;
};
thread_local std::vector<PointToPoint> grouped;

ncclResult_t fail(ncclResult_t r, std::string message) {
  lastError = "nccl (over MPI): " + std::move(message);
  return r;
}

/// Tags on MPI_COMM_WORLD for the bootstrap of `sequence` (the top of the
/// tag range, away from anything an application picks).
int bootstrapTag(uint32_t sequence, int purpose) {
  int *ub = nullptr, found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
  int top = found && ub ? *ub : 32767;
  return top - (purpose + 1) * kSequences + 1 +
         static_cast<int>(sequence % kSequences);
}

bool mpiReady() {
  int init = 0, done = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&done);
  return init && !done;
}

/// The MPI type of `t`; `reduce`: only types MPI can reduce.
bool mpiType(ncclDataType_t t, bool reduce, MPI_Datatype *m, size_t *bytes) {
  switch (t) {
  case ncclInt8:
    *m = MPI_INT8_T, *bytes = 1;
    return true;
  case ncclUint8:
    *m = MPI_UINT8_T, *bytes = 1;
    return true;
  case ncclInt32:
    *m = MPI_INT32_T, *bytes = 4;
    return true;
  case ncclUint32:
    *m = MPI_UINT32_T, *bytes = 4;
    return true;
  case ncclInt64:
    *m = MPI_INT64_T, *bytes = 8;
    return true;
  case ncclUint64:
    *m = MPI_UINT64_T, *bytes = 8;
    return true;
  case ncclFloat32:
    *m = MPI_FLOAT, *bytes = 4;
    return true;
  case ncclFloat64:
    *m = MPI_DOUBLE, *bytes = 8;
    return true;
  case ncclFloat16:
  case ncclBfloat16:
    *m = MPI_UINT16_T, *bytes = 2;
    return !reduce; // moved as bits; MPI cannot add them
  }
  return false;
}

bool mpiOp(ncclRedOp_t op, MPI_Op *m) {
  switch (op) {
  case ncclSum:
    *m = MPI_SUM;
    return true;
  case ncclProd:
    *m = MPI_PROD;
    return true;
  case ncclMax:
    *m = MPI_MAX;
    return true;
  case ncclMin:
    *m = MPI_MIN;
    return true;
  case ncclAvg:
    break;
  }
  return false;
}

/// Common checks of one call; sets `type`, `count32` and `bytes` (of
/// `count` elements).
ncclResult_t prepare(const char *call, ncclComm_t comm, size_t count,
                     ncclDataType_t t, bool reduce, MPI_Datatype *type,
                     int *count32, size_t *bytes) {
  if (!comm || comm->mpi == MPI_COMM_NULL)
    return fail(ncclInvalidArgument, std::string(call) + ": no communicator");
  size_t elem = 0;
  if (!mpiType(t, reduce, type, &elem))
    return fail(ncclInvalidArgument,
                std::string(call) + ": data type " +
                    std::to_string(static_cast<int>(t)) +
                    (reduce ? " cannot be reduced here" : " is not supported"));
  if (count > static_cast<size_t>(INT_MAX))
    return fail(ncclInvalidArgument,
                std::string(call) + ": more than 2^31 - 1 elements");
  *count32 = static_cast<int>(count);
  *bytes = count * elem;
  return ncclSuccess;
}

ncclResult_t device(const char *call, const char *which, const void *p,
                    size_t bytes) {
  if (bytes && !helix::cudaemu::onDevice(p, bytes))
    return fail(ncclInvalidArgument, std::string(call) + ": " + which +
                                         " is not inside a device allocation");
  return ncclSuccess;
}

ncclResult_t mpiResult(const char *call, int rc) {
  if (rc == MPI_SUCCESS)
    return ncclSuccess;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return fail(ncclSystemError, std::string(call) + ": " + text);
}

/// Runs `mpi` (the call's MPI operations, returning an MPI result) now, or
/// records it on the capturing stream `s` to run when the graph does
/// (Graphs.h): NCCL calls are captured like kernels.
template <class F>
ncclResult_t runOrCapture(const char *call, cudaStream_t s, const F &mpi) {
  if (helix::cudaemu::checkStreamUse(s, call) != cudaSuccess)
    return fail(ncclInvalidUsage,
                std::string(call) + ": the legacy stream during a capture");
  std::string name = call;
  if (helix::cudaemu::recordNode(s, "nccl " + name, [name, mpi] {
        if (mpiResult(name.c_str(), mpi()) == ncclSuccess)
          return cudaSuccess;
        return helix::cudaemu::setError(cudaErrorLaunchFailure, lastError);
      }))
    return ncclSuccess;
  return mpiResult(call, mpi());
}

void traceCall(const char *call, size_t bytes, ncclComm_t comm, int peer,
               cudaStream_t s) {
  helix::cudaemu::trace("nccl %s bytes %zu rank %d of %d peer %d stream %u",
                        call, bytes, comm->rank, comm->size, peer,
                        helix::cudaemu::streamId(s));
}

ncclResult_t pointToPoint(bool send, const char *call, void *buffer,
                          size_t count, ncclDataType_t t, int peer,
                          ncclComm_t comm, cudaStream_t s) {
  MPI_Datatype type;
  int n = 0;
  size_t bytes = 0;
  if (ncclResult_t r = prepare(call, comm, count, t, false, &type, &n, &bytes))
    return r;
  if (peer < 0 || peer >= comm->size)
    return fail(ncclInvalidArgument, std::string(call) + ": peer " +
                                         std::to_string(peer) + " of " +
                                         std::to_string(comm->size));
  if (ncclResult_t r = device(call, "the buffer", buffer, bytes))
    return r;
  traceCall(call, bytes, comm, peer, s);
  if (groupDepth > 0) {
    grouped.push_back({send, buffer, n, type, peer, comm, s});
    return ncclSuccess;
  }
  // Outside a group a send completes when its receive does (MPI_Ssend), as
  // NCCL's: two ranks that both send first deadlock here as on a GPU.
  MPI_Comm mpi = comm->mpi;
  return runOrCapture(call, s, [=] {
    return send ? MPI_Ssend(buffer, n, type, peer, 0, mpi)
                : MPI_Recv(buffer, n, type, peer, 0, mpi, MPI_STATUS_IGNORE);
  });
}

} // namespace

const char *ncclGetErrorString(ncclResult_t r) {
  switch (r) {
  case ncclSuccess:
    return "no error";
  case ncclUnhandledCudaError:
    return "unhandled cuda error";
  case ncclSystemError:
    return "unhandled system error";
  case ncclInternalError:
    return "internal error";
  case ncclInvalidArgument:
    return "invalid argument";
  case ncclInvalidUsage:
    return "invalid usage";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  case ncclInProgress:
    return "NCCL operation in progress";
  }
  return "unknown result code";
}

const char *ncclGetLastError(ncclComm_t) { return lastError.c_str(); }

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  if (!mpiReady())
    return fail(ncclInvalidUsage, "ncclGetUniqueId: MPI is not initialized");
  static uint32_t sequence = 0;
  IdBody body{kMagic, 0, sequence++};
  MPI_Comm_rank(MPI_COMM_WORLD, &body.rootWorldRank);
  std::memset(id, 0, sizeof *id);
  std::memcpy(id->internal, &body, sizeof body);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id,
                              int rank) {
  IdBody body;
  std::memcpy(&body, id.internal, sizeof body);
  if (!mpiReady())
    return fail(ncclInvalidUsage, "ncclCommInitRank: MPI is not initialized");
  if (body.magic != kMagic)
    return fail(ncclInvalidArgument,
                "ncclCommInitRank: not an id from ncclGetUniqueId");
  if (nranks < 1 || rank < 0 || rank >= nranks)
    return fail(ncclInvalidArgument, "ncclCommInitRank: rank " +
                                         std::to_string(rank) + " of " +
                                         std::to_string(nranks));
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  // The member holding the id's root gathers (rank, world rank) pairs and
  // sends every member the table of world ranks by NCCL rank.
  int tag = bootstrapTag(body.sequence, 0);
  std::vector<int> table(nranks, -1);
  if (world == body.rootWorldRank) {
    table[rank] = world;
    for (int i = 1; i < nranks; ++i) {
      int pair[2];
      MPI_Recv(pair, 2, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      if (pair[0] < 0 || pair[0] >= nranks || table[pair[0]] != -1)
        return fail(ncclInvalidUsage, "ncclCommInitRank: rank " +
                                          std::to_string(pair[0]) +
                                          " given twice or out of range");
      table[pair[0]] = pair[1];
    }
    for (int i = 0; i < nranks; ++i)
      if (i != rank)
        MPI_Send(table.data(), nranks, MPI_INT, table[i], tag, MPI_COMM_WORLD);
  } else {
    int pair[2] = {rank, world};
    MPI_Send(pair, 2, MPI_INT, body.rootWorldRank, tag, MPI_COMM_WORLD);
    MPI_Recv(table.data(), nranks, MPI_INT, body.rootWorldRank, tag,
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Group worldGroup, group;
  MPI_Comm_group(MPI_COMM_WORLD, &worldGroup);
  MPI_Group_incl(worldGroup, nranks, table.data(), &group);
  auto *comm = new ncclComm;
  int rc = MPI_Comm_create_group(MPI_COMM_WORLD, group,
                                 bootstrapTag(body.sequence, 1), &comm->mpi);
  MPI_Group_free(&group);
  MPI_Group_free(&worldGroup);
  if (ncclResult_t r = mpiResult("ncclCommInitRank", rc)) {
    delete comm;
    return r;
  }
  comm->rank = rank;
  comm->size = nranks;
  *out = comm;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm)
    return ncclSuccess;
  if (comm->mpi != MPI_COMM_NULL && mpiReady())
    MPI_Comm_free(&comm->mpi);
  delete comm;
  return ncclSuccess;
}

/// Frees the communicator without the others (the MPI communicator is left
/// to MPI_Finalize: freeing it might wait for peers that stopped).
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  delete comm;
  return ncclSuccess;
}

/// Calls complete before they return: no asynchronous error is pending.
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *e) {
  if (!comm)
    return fail(ncclInvalidArgument, "ncclCommGetAsyncError: no communicator");
  *e = ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count) {
  if (!comm)
    return fail(ncclInvalidArgument, "ncclCommCount: no communicator");
  *count = comm->size;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank) {
  if (!comm)
    return fail(ncclInvalidArgument, "ncclCommUserRank: no communicator");
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
  if (groupDepth++ == 0)
    helix::cudaemu::trace("nccl group start");
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (groupDepth == 0)
    return fail(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
  if (--groupDepth > 0)
    return ncclSuccess;
  helix::cudaemu::trace("nccl group end");
  std::vector<PointToPoint> calls;
  calls.swap(grouped);
  if (calls.empty())
    return ncclSuccess;
  // The group's calls are posted together and completed at its end (one
  // graph node when its stream captures).
  return runOrCapture("ncclGroupEnd", calls.front().stream, [calls] {
    std::vector<MPI_Request> requests(calls.size(), MPI_REQUEST_NULL);
    for (size_t i = 0; i < calls.size(); ++i) {
      const PointToPoint &c = calls[i];
      int rc = c.send ? MPI_Isend(c.buffer, c.count, c.type, c.peer, 0,
                                  c.comm->mpi, &requests[i])
                      : MPI_Irecv(c.buffer, c.count, c.type, c.peer, 0,
                                  c.comm->mpi, &requests[i]);
      if (rc != MPI_SUCCESS)
        return rc;
    }
    return MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                       MPI_STATUSES_IGNORE);
  });
}

ncclResult_t ncclSend(const void *buffer, size_t count, ncclDataType_t t,
                      int peer, ncclComm_t comm, cudaStream_t s) {
  return pointToPoint(true, "ncclSend", const_cast<void *>(buffer), count, t,
                      peer, comm, s);
}

ncclResult_t ncclRecv(void *buffer, size_t count, ncclDataType_t t, int peer,
                      ncclComm_t comm, cudaStream_t s) {
  return pointToPoint(false, "ncclRecv", buffer, count, t, peer, comm, s);
}

namespace {

/// A collective's MPI type and operation, elements and bytes, once its
/// arguments passed the checks.
struct Collective {
  MPI_Datatype type;
  MPI_Op op = MPI_OP_NULL;
  int n = 0;
  size_t bytes = 0; // of `count` elements
};

/// The checks every collective makes, then its trace line: the
/// communicator, type and count (`op`: a reduction), and that `send` and
/// `recv` (null: not checked) hold sendParts and recvParts times `count`
/// elements of device memory.
ncclResult_t checkCollective(const char *call, ncclComm_t comm, size_t count,
                             ncclDataType_t t, const ncclRedOp_t *op,
                             const void *send, size_t sendParts,
                             const void *recv, size_t recvParts, int peer,
                             cudaStream_t s, Collective &c) {
  if (ncclResult_t r =
          prepare(call, comm, count, t, op != nullptr, &c.type, &c.n, &c.bytes))
    return r;
  if (op && !mpiOp(*op, &c.op))
    return fail(ncclInvalidArgument, std::string(call) + ": reduction " +
                                         std::to_string(static_cast<int>(*op)) +
                                         " is not supported");
  if (send)
    if (ncclResult_t r = device(call, "sendbuff", send, c.bytes * sendParts))
      return r;
  if (recv)
    if (ncclResult_t r = device(call, "recvbuff", recv, c.bytes * recvParts))
      return r;
  traceCall(call, c.bytes, comm, peer, s);
  return ncclSuccess;
}

} // namespace

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t s) {
  Collective c;
  if (ncclResult_t r = checkCollective("ncclAllReduce", comm, count, t, &op,
                                       send, 1, recv, 1, -1, s, c))
    return r;
  MPI_Comm mpi = comm->mpi;
  return runOrCapture("ncclAllReduce", s, [=] {
    return MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, c.n, c.type,
                         c.op, mpi);
  });
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t count,
                           ncclDataType_t t, ncclComm_t comm, cudaStream_t s) {
  Collective c;
  if (ncclResult_t r =
          checkCollective("ncclAllGather", comm, count, t, nullptr, send, 1,
                          recv, comm ? size_t(comm->size) : 0, -1, s, c))
    return r;
  bool inPlace = send == static_cast<char *>(recv) + c.bytes * comm->rank;
  MPI_Comm mpi = comm->mpi;
  return runOrCapture("ncclAllGather", s, [=] {
    return MPI_Allgather(inPlace ? MPI_IN_PLACE : send, c.n, c.type, recv, c.n,
                         c.type, mpi);
  });
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count,
                               ncclDataType_t t, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t s) {
  Collective c;
  if (ncclResult_t r =
          checkCollective("ncclReduceScatter", comm, count, t, &op, send,
                          comm ? size_t(comm->size) : 0, recv, 1, -1, s, c))
    return r;
  // NCCL's in place puts the result at the rank's slice of the input, MPI's
  // at its start: reduce from a copy of the input (taken when it runs).
  MPI_Comm mpi = comm->mpi;
  size_t total = c.bytes * comm->size;
  return runOrCapture("ncclReduceScatter", s, [=] {
    std::vector<char> input(static_cast<const char *>(send),
                            static_cast<const char *>(send) + total);
    return MPI_Reduce_scatter_block(input.data(), recv, c.n, c.type, c.op, mpi);
  });
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count,
                           ncclDataType_t t, int root, ncclComm_t comm,
                           cudaStream_t s) {
  bool isRoot = comm && comm->rank == root;
  Collective c;
  if (ncclResult_t r =
          checkCollective("ncclBroadcast", comm, count, t, nullptr,
                          isRoot ? send : nullptr, 1, recv, 1, root, s, c))
    return r;
  if (root < 0 || root >= comm->size)
    return fail(ncclInvalidArgument, "ncclBroadcast: root " +
                                         std::to_string(root) + " of " +
                                         std::to_string(comm->size));
  MPI_Comm mpi = comm->mpi;
  return runOrCapture("ncclBroadcast", s, [=] {
    if (isRoot && send != recv && c.bytes)
      std::memmove(recv, send, c.bytes);
    return MPI_Bcast(recv, c.n, c.type, root, mpi);
  });
}
