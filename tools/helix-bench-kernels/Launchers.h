//===- Launchers.h - How CudaKernels.cu launches each kernel ---*- C++ -*-===//
//
// The block size and dynamic shared memory of a kernel are not in its
// object code: its launcher (runtime/lib/CUDA/CudaKernels.cu) chooses them.
// This table copies them, with the launch's own text so that
// checkLaunchers() can tell when the source and the table part ways.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_TOOLS_BENCHKERNELS_LAUNCHERS_H
#define HELIX_TOOLS_BENCHKERNELS_LAUNCHERS_H

#include <cstdint>
#include <string>
#include <vector>

namespace helix::benchkernels {

/// Sizes the dynamic shared memory depends on.
struct LaunchDims {
  int64_t keyDim = 128;
  int64_t valueDim = 128;
  // The MoE router's (DeepSeek-V3 by default).
  int64_t experts = 256, expertGroups = 8, topK = 8;
};

struct Launcher {
  const char *kernel;      // the __global__ function
  const char *function;    // the host function that launches it
  int blockSize;           // threads per block
  const char *smemText;    // the launch's dynamic-smem argument, as written
  const char *smemFormula; // the same in bytes, documented
  int64_t (*dynamicSmem)(const LaunchDims &);
  bool hot; // on the decode path of every token (checked for spills)
  /// Streams the KV cache or the weights: must issue 128-bit (or wider)
  /// global loads (checked).
  bool streaming = false;
};

const std::vector<Launcher> &launchers();
const Launcher *findLauncher(const std::string &kernel);

/// Compares the table with the launches (`kernel<<<grid, block, smem,
/// stream>>>`) of CudaKernels.cu: same kernels, block sizes and dynamic
/// shared-memory expressions. Returns the differences.
std::vector<std::string> checkLaunchers(const std::string &sourcePath);

} // namespace helix::benchkernels

#endif
