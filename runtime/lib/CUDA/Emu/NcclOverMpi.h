//===- NcclOverMpi.h - NCCL's interface, implemented over MPI ----*- C++
//-*-===//
//
// The NCCL calls of the CUDA backend's communicator (runtime/lib/CUDA/
// NcclCommunicator.cpp), with NCCL's types and result codes, implemented
// with MPI on the host (NcclOverMpi.cpp) for the CUDA backend under the CPU
// emulation (docs/cuda-on-cpu.md). The communicator code above this
// interface (bootstrap over MPI, group calls, stream ordering with events,
// HOP-B's collectives on their own stream) runs unchanged.
//
//   * ncclGetUniqueId names the calling MPI rank and a sequence number;
//     ncclCommInitRank gathers the members' world ranks at that rank
//     (point-to-point on MPI_COMM_WORLD, tags reserved for this) and builds
//     an MPI communicator whose rank i is NCCL rank i
//     (MPI_Comm_create_group: only the members take part, as in NCCL).
//   * Collectives are the MPI collectives (in place where NCCL's buffers
//     coincide); sends and receives between ncclGroupStart and ncclGroupEnd
//     are posted together at ncclGroupEnd and completed there, outside a
//     group each completes on its own (a send waits for its receive, as
//     NCCL's does).
//   * Calls complete before they return (streams: HostApi.h), and operands
//     must lie in device allocations, as NCCL requires.
//   * Float32, float64, int32, int64 and 8-bit types; reductions: sum,
//     prod, max, min. Anything else: ncclInvalidArgument with a message
//     (ncclGetLastError).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_CUDA_EMU_NCCLOVERMPI_H
#define HELIX_RUNTIME_CUDA_EMU_NCCLOVERMPI_H

#include "CudaEmu.h"

#include <cstddef>

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum { // the values of nccl.h
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
} ncclResult_t;

typedef enum {
  ncclInt8 = 0,
  ncclChar = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclInt = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclHalf = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclDouble = 8,
  ncclBfloat16 = 9,
} ncclDataType_t;

typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
} ncclRedOp_t;

struct ncclComm;
typedef ncclComm *ncclComm_t;

const char *ncclGetErrorString(ncclResult_t result);
const char *ncclGetLastError(ncclComm_t comm);
ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                              int rank);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError);
ncclResult_t ncclCommCount(const ncclComm_t comm, int *count);
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank);
ncclResult_t ncclGroupStart();
ncclResult_t ncclGroupEnd();
ncclResult_t ncclSend(const void *sendbuff, size_t count,
                      ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream);
ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype,
                      int peer, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff,
                           size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff,
                               size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream);
ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream);

#endif // HELIX_RUNTIME_CUDA_EMU_NCCLOVERMPI_H
