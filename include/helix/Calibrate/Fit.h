//===- Fit.h - Kernel curves fitted to measured times -----------*- C++ -*-===//
//
// The method of scripts/curves-from-aiconfigurator.py, which fitted the
// presets' curves: per token count m (GEMM) or rows (attention), over the
// measured shapes, time = a + bytes / (HBM peak * e), a least-squares fit of
// RELATIVE residuals ((pred - t) / t, weights 1/t^2, so short and long
// kernels count alike) with a >= 0 and 0 < e <= 1; when the unconstrained
// optimum breaks a bound, it is refitted with that bound active (e = 1, then
// a = 0) and the point says so. Math efficiency at compute-bound m is
// FLOPs / (time * dense peak of the format), the median over the shapes.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_CALIBRATE_FIT_H
#define HELIX_CALIBRATE_FIT_H

#include "helix/Calibrate/Measurements.h"
#include "helix/Cost/Hardware.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace helix {
namespace calibrate {

/// One fitted fixed cost and bandwidth efficiency.
struct LineFit {
  double fixedS = 0;     // a
  double efficiency = 1; // e, of the HBM peak
  size_t samples = 0;
  double maxRelError = 0;    // max |pred - t| / t over the samples
  double medianRelError = 0; // median of the same
  /// Empty, or which bound was made active and what the unconstrained fit
  /// gave ("unconstrained e=1.2, a=3.1 us; refit with e=1").
  std::string note;
};

/// Fits t = a + bytes / (peak * e) to (bytes, seconds) samples; `peak` in
/// bytes/s. Needs at least two samples with different byte counts, every
/// one positive and finite; else false with `error` saying which.
bool fitFixedPlusBandwidth(
    const std::vector<std::pair<double, double>> &samples, double peakBytesPerS,
    LineFit &fit, std::string &error);

/// GEMM samples with m up to this feed the bandwidth fit; from kMinMathM on,
/// with n and k at least kMinMathNK, the math efficiency.
constexpr int64_t kMaxBandwidthM = 512;
constexpr int64_t kMinMathM = 1024;
constexpr int64_t kMinMathNK = 4096;

/// One point of a fixed-cost + bandwidth curve: x is m or rows.
struct CurvePoint {
  double x = 0;
  LineFit fit;
  std::string shapes; // what was fitted ("12 (n, k) shapes, n*k 2^20..2^28")
};

/// One math-efficiency point: the median over `samples` shapes.
struct MathPoint {
  double m = 0;
  double efficiency = 0;
  double minEfficiency = 0, maxEfficiency = 0;
  size_t samples = 0;
};

/// One collective point: the median of the samples at (gpus, bytes).
struct CollectivePointFit {
  int64_t gpus = 0;
  double bytes = 0;
  double seconds = 0;
  int64_t runs = 0;
};

/// Everything the writer puts into a hardware file, by the file's keys.
struct Calibration {
  MeasurementSet measured; // the inputs (GPU, driver, date, notes)
  double hbmBytesPerS = 0; // the base's HBM peak the efficiencies are of
  /// "bf16" -> points, in the hardware file's format names.
  std::map<std::string, std::vector<CurvePoint>> gemm;
  std::map<std::string, std::vector<MathPoint>> gemmMath;
  /// "gqa" / "mla" / "mla_few_heads" -> kv format -> points (x = rows).
  std::map<std::string, std::map<std::string, std::vector<CurvePoint>>>
      attention;
  bool haveElementwise = false;
  double elementwiseS = 0;
  std::vector<std::pair<std::string, double>> elementwiseKernels;
  /// "all_reduce" -> points.
  std::map<std::string, std::vector<CollectivePointFit>> collectives;
  /// Kinds measured but not written, and why (a format without a peak in
  /// the base, too few shapes at a point); they join measured.notMeasured
  /// in the description.
  std::vector<std::string> skipped;
};

/// Fits every kind present in `set` against `base` (HBM peak, dense peaks).
/// A GEMM or attention point whose samples cannot be fitted (one shape) is
/// left out and listed in `skipped`. Errors (one line): invalid records
/// (validate()), an empty set, nothing that could be fitted, a math
/// efficiency above 1 (the base's peak is below what was measured: is it
/// the right GPU?).
bool fitCalibration(const MeasurementSet &set, const Hardware &base,
                    Calibration &out, std::string &error);

} // namespace calibrate
} // namespace helix

#endif // HELIX_CALIBRATE_FIT_H
