//===- Timing.h - Timing the runtime's kernels on a GPU ---------*- C++ -*-===//
//
// The timing itself is helix-calibrate-gpu's (runtime/tools/
// helix-calibrate-gpu): an executable that links the runtime's kernels,
// cuBLAS and NCCL and no LLVM or MLIR, which `helix calibrate` runs so that
// the compiler never loads CUDA, and which runs alone where the compiler is
// not installed (the device bundle). It writes the measurements file
// (MeasurementsJSON.h); its exit status is a TimingStatus.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_CALIBRATE_TIMING_H
#define HELIX_CALIBRATE_TIMING_H

#include "helix/Calibrate/Measurements.h"

#include <functional>
#include <string>
#include <vector>

namespace helix {
namespace calibrate {

struct TimingOptions {
  /// The GPU whose kernels are timed; collectives use every GPU in view.
  int device = 0;
  /// Called with one line per stage ("timing GEMMs (bf16)").
  std::function<void(const std::string &)> progress;
};

enum class TimingStatus {
  Measured = 0,
  /// No GPU to time (no driver, no device, device out of range): the
  /// reason says which; nothing was measured.
  NoGPU = 1,
  /// A GPU was there but timing failed (a CUDA, cuBLAS or NCCL error).
  Failed = 2,
};

/// Runs the first of `candidates` (helix-calibrate-gpu executables) that
/// exists with --device and -o a temporary file, its progress lines passed
/// to `options.progress`, and reads the measurements it wrote. No candidate,
/// one that cannot run, or one that writes no valid file: NoGPU or Failed,
/// with the reason.
TimingStatus timeOnGPU(const std::vector<std::string> &candidates,
                       const TimingOptions &options, MeasurementSet &set,
                       std::string &reason);

/// The preset a GPU name calls for ("NVIDIA H100 80GB HBM3" -> "h100",
/// "NVIDIA GB200" -> "gb200-nvl72"), or "" when none matches.
std::string presetForGPU(const std::string &gpuName);

} // namespace calibrate
} // namespace helix

#endif // HELIX_CALIBRATE_TIMING_H
