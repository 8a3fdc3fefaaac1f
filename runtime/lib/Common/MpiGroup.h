//===- MpiGroup.h - The MPI communicator of a group (internal) --*- C++ -*-===//

#ifndef HELIX_RUNTIME_LIB_MPIGROUP_H
#define HELIX_RUNTIME_LIB_MPIGROUP_H

// The C API only: no MPI C++ bindings (and no libmpi_cxx to link).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

namespace helix {
namespace rt {

/// MPI_COMM_NULL when MPI is not initialized (a one-rank program).
struct GroupHandle {
  MPI_Comm comm = MPI_COMM_NULL;
};

/// Whether MPI is initialized and not yet finalized.
bool mpiActive();

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_MPIGROUP_H
