//===- MeasurementsJSON.h - Measurements in a file --------------*- C++ -*-===//
//
// `helix calibrate --save-measurements FILE` keeps what was timed, and
// `--measurements FILE` fits such a file again without a GPU (another base,
// a later fit). The format:
//
//   {"format": "helix-calibrate-measurements", "version": 1,
//    "gpu": "...", "driver": "...", "date": "YYYY-MM-DD",
//    "environment": "...", "subject": "...", "methods": {"gemm": "...", ...},
//    "not_measured": ["..."],
//    "gemm": [{"format": "bf16", "m", "n", "k", "seconds", "runs"}],
//    "attention": [{"kind": "gqa"|"mla", "kv_format", "batch", "kv_heads",
//                   "q_heads", "head_dim", "kv_length", "seconds", "runs"}],
//    "elementwise": [{"kernel", "seconds", "runs"}],
//    "collectives": [{"op": "all_reduce", "gpus", "bytes", "seconds",
//                     "runs"}]}
//
// Every list is optional; "runs" defaults to 1.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_CALIBRATE_MEASUREMENTSJSON_H
#define HELIX_CALIBRATE_MEASUREMENTSJSON_H

#include "helix/Calibrate/Measurements.h"

#include <string>

namespace helix {
namespace calibrate {

std::string writeMeasurementsJSON(const MeasurementSet &set);

/// Parses and validates (validate()) a measurements file; errors are one
/// line naming `origin` and the field ("m.json: field 'gemm[2].seconds'
/// must be a number").
bool parseMeasurementsJSON(const std::string &text, const std::string &origin,
                           MeasurementSet &set, std::string &error);

} // namespace calibrate
} // namespace helix

#endif // HELIX_CALIBRATE_MEASUREMENTSJSON_H
