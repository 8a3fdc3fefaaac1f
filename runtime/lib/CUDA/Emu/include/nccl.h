// Stand-in for NCCL's <nccl.h> where CUDA host code is compiled against the
// CPU emulation (this directory first on the include path): NCCL's
// interface implemented over MPI, ../NcclOverMpi.h and docs/cuda-on-cpu.md.
#include "../NcclOverMpi.h"
