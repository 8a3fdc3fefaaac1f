//===- MpiCommunicator.h - Collectives over MPI (internal) ------*- C++ -*-===//
//
// The CPU backend's communicator, and the CUDA backend's when ranks share a
// device: device tensors are staged through host memory.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_LIB_MPICOMMUNICATOR_H
#define HELIX_RUNTIME_LIB_MPICOMMUNICATOR_H

#include "helix/Runtime/Backend.h"
#include "helix/Runtime/Context.h"

#include "MpiGroup.h"

namespace helix {
namespace rt {

std::unique_ptr<Communicator>
createMpiCommunicator(Context &ctx, const std::vector<int> &members, int index,
                      GroupHandle &group);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_MPICOMMUNICATOR_H
