// Stand-in for the CUDA toolkit's <cublas_v2.h> where CUDA host code is
// compiled against the CPU emulation (this directory first on the include
// path): ../Cublas.h and docs/cuda-on-cpu.md.
#include "../Cublas.h"
