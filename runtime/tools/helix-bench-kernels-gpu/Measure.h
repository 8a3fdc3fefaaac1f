//===- Measure.h - Achieved bandwidth of the kernels on a GPU ---*- C++ -*-===//
//
// Achieved bandwidth of the CUDA backend's streaming kernels, timed on the
// GPU (docs/gpu.md, "Measured on a GPU"): CUDA events around each launch,
// the L2 flushed before each run, the median of several runs; bytes as the
// backend counts them (TrafficCounts.h); the device-to-device copy as the
// baseline. Without a GPU nothing is measured.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_TOOLS_BENCHKERNELSGPU_MEASURE_H
#define HELIX_RUNTIME_TOOLS_BENCHKERNELSGPU_MEASURE_H

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace helix::benchkernels {

struct MeasureOptions {
  int device = 0;
  /// Tokens of one rank's KV shard for decode attention.
  std::vector<int64_t> lengths = {131072, 262144, 524288, 1048576};
  /// The target: decode attention's achieved bandwidth over the copy's.
  double attentionTarget = 0.85;
  std::string json;   // also write the figures here
  bool check = false; // exit 1 when attention misses the target
};

/// The CUDA devices in view (0 with the reason in `why`).
int cudaDevices(std::string &why);

/// Measures and prints; returns the exit status (1: no GPU, an error, or
/// with `check` a missed target). Without a GPU: one line on stderr.
int measure(const MeasureOptions &o, std::ostream &os);

} // namespace helix::benchkernels

#endif
