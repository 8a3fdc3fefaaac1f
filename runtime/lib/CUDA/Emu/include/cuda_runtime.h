// Stand-in for the CUDA toolkit's <cuda_runtime.h> where CUDA source is
// compiled as host C++ (this directory first on the include path): the
// CPU execution of kernels, ../CudaEmu.h and docs/cuda-on-cpu.md.
#include "../CudaEmu.h"
