//===- Writer.h - A calibration as a hardware file --------------*- C++ -*-===//
//
// Writes a Calibration (Fit.h) as hardware JSON on a preset (docs/cost-model.md
// §1, "Hardware presets"): {"base": PRESET, "name", "description", "kernels":
// {gemm, gemm_math, attention, elementwise_us}, "collectives": {<op>:
// {"latency_us"}}}, only the curves that were measured; the base keeps the
// rest. Every point's source reads "helix calibrate on <GPU>, driver <ver>,
// <date>; fit of N shapes, max rel err X%; ..." (math, elementwise and
// collective points: "median of ..."). The text parses with
// parseHardwareJSON; `helix cost --hardware FILE` prices with it.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_CALIBRATE_WRITER_H
#define HELIX_CALIBRATE_WRITER_H

#include "helix/Calibrate/Fit.h"

#include <string>

namespace helix {
namespace calibrate {

/// "helix calibrate on <GPU>, driver <ver>, <date>": the start of every
/// source the writer writes.
std::string sourcePrefix(const MeasurementSet &set);

/// The description: GPU, driver, date, what was timed, which curves were
/// measured and which are the base's (not measured, skipped, and why).
std::string describeCalibration(const Calibration &c, const std::string &base);

/// The hardware file's text (JSON, 2-space indented, newline-terminated).
/// `name` empty: "<base>-calibrated".
std::string writeHardwareJSON(const Calibration &c, const std::string &base,
                              const std::string &name = "");

} // namespace calibrate
} // namespace helix

#endif // HELIX_CALIBRATE_WRITER_H
