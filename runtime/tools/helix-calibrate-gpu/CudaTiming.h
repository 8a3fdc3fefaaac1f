//===- CudaTiming.h - The runtime's kernels timed on a GPU ------*- C++ -*-===//
//
// The timing behind `helix calibrate` (CudaTiming.cpp says what is timed
// and how), run by helix-calibrate-gpu.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_TOOLS_CALIBRATEGPU_CUDATIMING_H
#define HELIX_RUNTIME_TOOLS_CALIBRATEGPU_CUDATIMING_H

#include "helix/Calibrate/Timing.h"

namespace helix {
namespace calibrate {

/// Times the runtime's kernels (and, with two GPUs or more, NCCL's
/// collectives) into `set`; returns a TimingStatus, with the reason in
/// `reason` when it is not Measured.
int timeRuntimeOnGPU(const TimingOptions &options, MeasurementSet &set,
                     std::string &reason);

} // namespace calibrate
} // namespace helix

#endif
