//===- Fit.cpp - Kernel curves fitted to measured times -------------------===//

#include "helix/Calibrate/Fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <tuple>

namespace helix {
namespace calibrate {

namespace {

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string sig3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

} // namespace

bool fitFixedPlusBandwidth(
    const std::vector<std::pair<double, double>> &samples, double peakBytesPerS,
    LineFit &fit, std::string &error) {
  if (!(std::isfinite(peakBytesPerS) && peakBytesPerS > 0)) {
    error = "the HBM peak must be a positive number of bytes/s";
    return false;
  }
  std::set<double> sizes;
  for (size_t i = 0; i < samples.size(); ++i) {
    double x = samples[i].first, y = samples[i].second;
    if (!(std::isfinite(x) && x > 0)) {
      error = "sample " + std::to_string(i) +
              ": bytes must be a positive finite number";
      return false;
    }
    if (!(std::isfinite(y) && y > 0)) {
      error = "sample " + std::to_string(i) +
              ": seconds must be a positive finite number";
      return false;
    }
    sizes.insert(x);
  }
  if (sizes.size() < 2) {
    error = "a fixed cost and a bandwidth need samples of at least 2 "
            "different sizes, got " +
            std::to_string(samples.size()) + " sample" +
            (samples.size() == 1 ? "" : "s") +
            (samples.size() > 1 ? " of one size" : "");
    return false;
  }
  // Work in microseconds and bytes / (bytes per microsecond) so the sums
  // stay well scaled; weights 1/y^2 make the residuals relative.
  double peakPerUs = peakBytesPerS * 1e-6;
  double sw = 0, swx = 0, swy = 0, swxx = 0, swxy = 0;
  for (const auto &s : samples) {
    double x = s.first / peakPerUs; // microseconds at e = 1
    double y = s.second * 1e6;
    double w = 1.0 / (y * y);
    sw += w;
    swx += w * x;
    swy += w * y;
    swxx += w * x * x;
    swxy += w * x * y;
  }
  // y = a + b x with b = 1 / e: e <= 1 is b >= 1.
  double det = sw * swxx - swx * swx;
  if (!(det > 0)) {
    error = "the samples' sizes are too close together to separate a fixed "
            "cost from a bandwidth";
    return false;
  }
  double b = (sw * swxy - swx * swy) / det;
  double a = (swy - b * swx) / sw;
  double rawA = a, rawB = b;
  auto rawText = [&] {
    return "unconstrained e=" +
           (rawB > 0 ? sig3(1.0 / rawB) : std::string("inf")) +
           ", a=" + sig3(rawA) + " us";
  };
  std::string note;
  if (b < 1.0) {
    // Faster than the peak (or no growth with size): e = 1.
    note = rawText() + "; refit with e=1";
    b = 1.0;
    a = (swy - b * swx) / sw;
  }
  if (a < 0) {
    if (note.empty())
      note = rawText() + "; refit with a=0";
    else
      note += ", then a=0";
    a = 0;
    b = std::max(swxy / swxx, 1.0);
  }
  std::vector<double> rel;
  for (const auto &s : samples) {
    double x = s.first / peakPerUs, y = s.second * 1e6;
    rel.push_back(std::fabs(a + b * x - y) / y);
  }
  fit.fixedS = a * 1e-6;
  fit.efficiency = 1.0 / b;
  fit.samples = samples.size();
  fit.maxRelError = *std::max_element(rel.begin(), rel.end());
  fit.medianRelError = median(rel);
  fit.note = note;
  return true;
}

namespace {

std::string dtypeName(DType d) { return stringifyDType(d).str(); }

/// "n*k 2^20..2^28" style description of a GEMM point's shapes.
std::string gemmShapes(const std::vector<const GemmSample *> &at) {
  std::set<std::pair<int64_t, int64_t>> nk;
  for (const GemmSample *s : at)
    nk.insert({s->n, s->k});
  int64_t lo = INT64_MAX, hi = 0;
  for (auto &p : nk) {
    lo = std::min(lo, p.first * p.second);
    hi = std::max(hi, p.first * p.second);
  }
  std::ostringstream os;
  os << nk.size() << " (n, k) shapes, n*k " << lo << ".." << hi;
  return os.str();
}

std::string attentionShapes(const std::vector<const AttentionSample *> &at) {
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t>> combos;
  int64_t lo = INT64_MAX, hi = 0;
  for (const AttentionSample *s : at) {
    combos.insert({s->batch, s->kvHeads, s->qHeads, s->headDim});
    lo = std::min(lo, s->kvLength);
    hi = std::max(hi, s->kvLength);
  }
  std::ostringstream os;
  os << "kv_len " << lo << ".." << hi << ", (batch x kv_heads, q_heads, "
     << "head_dim)";
  bool first = true;
  for (auto &c : combos) {
    os << (first ? " " : ", ") << std::get<0>(c) << "x" << std::get<1>(c) << "/"
       << std::get<2>(c) << "/" << std::get<3>(c);
    first = false;
  }
  return os.str();
}

} // namespace

bool fitCalibration(const MeasurementSet &set, const Hardware &base,
                    Calibration &out, std::string &error) {
  std::string invalid = validate(set);
  if (!invalid.empty()) {
    error = invalid;
    return false;
  }
  if (set.empty()) {
    error = "no measurements: nothing to fit (no GEMM, attention, "
            "elementwise or collective samples)";
    return false;
  }
  out = Calibration();
  out.measured = set;
  out.hbmBytesPerS = base.hbmBandwidth;

  // GEMM: per (format, m) a bandwidth point; large m: math efficiency.
  std::map<std::pair<int, int64_t>, std::vector<const GemmSample *>> byM;
  std::map<std::pair<int, int64_t>, std::vector<const GemmSample *>> mathM;
  size_t unused = 0;
  for (const GemmSample &s : set.gemm) {
    auto key = std::make_pair(static_cast<int>(s.format), s.m);
    if (s.m <= kMaxBandwidthM)
      byM[key].push_back(&s);
    else if (s.m >= kMinMathM && s.n >= kMinMathNK && s.k >= kMinMathNK)
      mathM[key].push_back(&s);
    else
      ++unused;
  }
  if (unused)
    out.skipped.push_back(
        std::to_string(unused) + " GEMM sample" + (unused == 1 ? "" : "s") +
        " fit neither curve (m above " + std::to_string(kMaxBandwidthM) +
        " and below " + std::to_string(kMinMathM) + ", or n or k below " +
        std::to_string(kMinMathNK) + ")");
  for (auto &[key, at] : byM) {
    DType fmt = static_cast<DType>(key.first);
    std::vector<std::pair<double, double>> xy;
    for (const GemmSample *s : at)
      xy.emplace_back(gemmBytes(*s), s->seconds);
    CurvePoint p;
    p.x = double(key.second);
    std::string why;
    if (!fitFixedPlusBandwidth(xy, base.hbmBandwidth, p.fit, why)) {
      out.skipped.push_back("gemm." + dtypeName(fmt) +
                            " m=" + std::to_string(key.second) + ": " + why);
      continue;
    }
    p.shapes = gemmShapes(at);
    out.gemm[dtypeName(fmt)].push_back(p);
  }
  for (auto &[key, at] : mathM) {
    DType fmt = static_cast<DType>(key.first);
    double peak = base.peak(fmt);
    std::string name = dtypeName(fmt);
    if (!(peak > 0)) {
      std::string line = "gemm_math." + name + ": the base has no dense " +
                         name + " peak to divide by";
      if (std::find(out.skipped.begin(), out.skipped.end(), line) ==
          out.skipped.end())
        out.skipped.push_back(line);
      continue;
    }
    std::vector<double> eff;
    for (const GemmSample *s : at)
      eff.push_back(gemmFlops(*s) / (s->seconds * peak));
    MathPoint mp;
    mp.m = double(key.second);
    mp.efficiency = median(eff);
    mp.minEfficiency = *std::min_element(eff.begin(), eff.end());
    mp.maxEfficiency = *std::max_element(eff.begin(), eff.end());
    mp.samples = eff.size();
    if (mp.efficiency > 1.0) {
      error = "gemm_math " + name + " m=" + std::to_string(key.second) +
              ": median math efficiency " + sig3(mp.efficiency) +
              " is above 1 of the base's " + sig3(peak * 1e-15) +
              " PFLOP/s: is --base the GPU that was measured?";
      return false;
    }
    out.gemmMath[name].push_back(mp);
  }

  // Attention: per (curve, kv format, rows).
  std::map<std::tuple<std::string, int, int64_t>,
           std::vector<const AttentionSample *>>
      byRows;
  for (const AttentionSample &s : set.attention)
    byRows[{attentionCurveName(s), static_cast<int>(s.kvFormat),
            attentionRows(s)}]
        .push_back(&s);
  for (auto &[key, at] : byRows) {
    const std::string &curve = std::get<0>(key);
    std::string fmt = dtypeName(static_cast<DType>(std::get<1>(key)));
    std::vector<std::pair<double, double>> xy;
    for (const AttentionSample *s : at)
      xy.emplace_back(attentionKVBytes(*s), s->seconds);
    CurvePoint p;
    p.x = double(std::get<2>(key));
    std::string why;
    if (!fitFixedPlusBandwidth(xy, base.hbmBandwidth, p.fit, why)) {
      out.skipped.push_back("attention." + curve + "." + fmt + " rows=" +
                            std::to_string(std::get<2>(key)) + ": " + why);
      continue;
    }
    p.shapes = attentionShapes(at);
    out.attention[curve][fmt].push_back(p);
  }

  // Elementwise: the median kernel.
  if (!set.elementwise.empty()) {
    std::vector<double> t;
    for (const ElementwiseSample &s : set.elementwise) {
      t.push_back(s.seconds);
      out.elementwiseKernels.emplace_back(s.kernel, s.seconds);
    }
    out.haveElementwise = true;
    out.elementwiseS = median(t);
  }

  // Collectives: the median of the samples at each (op, gpus, bytes).
  std::map<std::tuple<int, int64_t, double>,
           std::vector<const CollectiveSample *>>
      byPoint;
  for (const CollectiveSample &s : set.collectives)
    byPoint[{static_cast<int>(s.op), s.gpus, s.bytes}].push_back(&s);
  for (auto &[key, at] : byPoint) {
    CollectivePointFit p;
    p.gpus = std::get<1>(key);
    p.bytes = std::get<2>(key);
    std::vector<double> t;
    for (const CollectiveSample *s : at) {
      t.push_back(s->seconds);
      p.runs += s->runs;
    }
    p.seconds = median(t);
    out.collectives[stringifyCollectiveKind(
                        static_cast<CollectiveKind>(std::get<0>(key)))]
        .push_back(p);
  }
  if (out.gemm.empty() && out.gemmMath.empty() && out.attention.empty() &&
      !out.haveElementwise && out.collectives.empty()) {
    error = "nothing could be fitted" +
            (out.skipped.empty() ? std::string() : ": " + out.skipped.front());
    return false;
  }
  return true;
}

} // namespace calibrate
} // namespace helix
