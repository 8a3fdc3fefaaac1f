//===- Timing.h - Timing the runtime's kernels on a GPU ---------*- C++ -*-===//
//
// The timing itself lives in a plugin, libHelixCalibrateCUDA.so
// (lib/Calibrate/CudaTiming.cpp), built only with the CUDA backend
// (HELIX_ENABLE_CUDA): it links the runtime's kernels, cuBLAS and NCCL,
// which the helix driver loads only when `helix calibrate` runs, so the
// other subcommands do not pay for loading them. The plugin exports
//
//   extern "C" int helixCalibrateTimeGPU(const TimingOptions *,
//                                        MeasurementSet *, std::string *);
//
// returning a TimingStatus; the string is the reason when it is not
// Measured. Both sides are built by the same compiler in one build.
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

/// The plugin's entry point name and signature.
constexpr const char *kTimingEntryPoint = "helixCalibrateTimeGPU";
using TimingEntryPoint = int (*)(const TimingOptions *, MeasurementSet *,
                                 std::string *);

/// Loads the first plugin of `candidates` that exists (dlopen) and runs it.
/// No candidate, or one that does not load: NoGPU, with the loader's reason.
TimingStatus timeOnGPU(const std::vector<std::string> &candidates,
                       const TimingOptions &options, MeasurementSet &set,
                       std::string &reason);

/// The preset a GPU name calls for ("NVIDIA H100 80GB HBM3" -> "h100",
/// "NVIDIA GB200" -> "gb200-nvl72"), or "" when none matches.
std::string presetForGPU(const std::string &gpuName);

} // namespace calibrate
} // namespace helix

#endif // HELIX_CALIBRATE_TIMING_H
