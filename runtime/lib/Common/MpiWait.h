//===- MpiWait.h - MPI waits with a deadline (internal) ---------*- C++ -*-===//
//
// The watchdog of the CPU backend's collectives (and of the decode driver's
// own broadcasts): every wait for peers polls its non-blocking request
// until the step timeout (ContextOptions::stepTimeoutS, helix-decode
// --step-timeout), then throws an Error naming the operation and the ranks
// it waited on, so that a stopped, deadlocked or dead peer ends the run
// instead of hanging it.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_LIB_MPIWAIT_H
#define HELIX_RUNTIME_LIB_MPIWAIT_H

#include "MpiGroup.h" // <mpi.h> without its C++ bindings

#include <string>
#include <vector>

namespace helix {
namespace rt {

/// Completes `req`, or throws Error after `timeoutS` seconds (<= 0: wait
/// forever) naming `what` and the world ranks `members`.
void waitWithDeadline(MPI_Request &req, double timeoutS,
                      const std::string &what, const std::vector<int> &members);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_MPIWAIT_H
