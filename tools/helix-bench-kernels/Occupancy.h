//===- Occupancy.h - Per-SM limits and theoretical occupancy ---*- C++ -*-===//
//
// The limits are data (data/gpu/sm-limits.json, each figure with its
// source); the calculation follows the CUDA toolkit's cuda_occupancy.h
// (cudaOccMaxActiveBlocksPerMultiprocessor) for the default configuration:
// no partitioned global caching, the default shared-memory carveout (all of
// the SM's shared memory), and no opt-in above the default per-block limit
// (the helix launchers call no cudaFuncSetAttribute).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_TOOLS_BENCHKERNELS_OCCUPANCY_H
#define HELIX_TOOLS_BENCHKERNELS_OCCUPANCY_H

#include <cstdint>
#include <map>
#include <string>

namespace helix::benchkernels {

struct Figure {
  int64_t value = 0;
  std::string source; // as in the file: "<source id>: <where>"
};

struct SmLimits {
  std::string arch; // the entry used ("sm_90" also for "sm_90a")
  std::string name; // "Hopper (compute capability 9.0)"
  std::map<std::string, Figure> figures;
  std::map<std::string, std::string> sources; // id -> "title <url>"

  int64_t get(const std::string &key) const { return figures.at(key).value; }
};

/// The keys every architecture of sm-limits.json must give.
extern const char *const kLimitKeys[];

/// Reads sm-limits.json: architecture -> limits.
bool readLimits(const std::string &path, std::map<std::string, SmLimits> &out,
                std::string &error);

/// The limits for `arch` ("sm_90a" and "sm_90f" use "sm_90"), or null.
const SmLimits *findLimits(const std::map<std::string, SmLimits> &all,
                           const std::string &arch);

struct KernelResources {
  int registers = 0;
  int64_t staticSmemBytes = 0; // the kernel's own __shared__ data
  int64_t dynamicSmemBytes = 0;
  int blockSize = 0;
};

struct Occupancy {
  int warpsPerBlock = 0;
  int blocksByWarps = 0, blocksByRegisters = 0, blocksBySmem = 0,
      blocksBySmLimit = 0;
  int64_t registersPerBlock = 0; // allocated (per-warp granularity)
  int64_t smemPerBlock = 0;      // allocated, reserved block included
  int activeBlocks = 0;
  int activeWarps = 0;
  double occupancy = 0; // active warps / max warps per SM
  std::string limiter;  // "warps", "registers", "smem", "blocks" or why 0
};

Occupancy computeOccupancy(const SmLimits &limits, const KernelResources &k);

} // namespace helix::benchkernels

#endif
