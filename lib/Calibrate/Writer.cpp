//===- Writer.cpp - A calibration as a hardware file ----------------------===//

#include "helix/Calibrate/Writer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace helix {
namespace calibrate {

namespace {

using Json = nlohmann::ordered_json;

/// `v` rounded to 3 significant digits (as the presets are written).
double sig3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return std::strtod(buf, nullptr);
}

std::string text3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100.0);
  return buf;
}

/// An integral figure (m, rows, bytes) as a JSON integer.
Json whole(double v) {
  if (v == static_cast<double>(static_cast<int64_t>(v)))
    return static_cast<int64_t>(v);
  return v;
}

/// A fraction in (0, 1] to 3 digits: rounding never leaves the range.
double fraction3(double v) { return std::min(1.0, std::max(sig3(v), 1e-9)); }

std::string method(const MeasurementSet &set, const std::string &kind) {
  auto it = set.methods.find(kind);
  return it == set.methods.end() || it->second.empty() ? std::string()
                                                       : "; " + it->second;
}

std::string fitSource(const MeasurementSet &set, const CurvePoint &p,
                      const std::string &bytes, const std::string &kind) {
  std::string s =
      sourcePrefix(set) + "; fit of " + std::to_string(p.fit.samples) +
      " shapes, max rel err " + percent(p.fit.maxRelError) + ", median " +
      percent(p.fit.medianRelError) + "; " + p.shapes + "; " + bytes +
      "; relative least squares of t = fixed + bytes / "
      "(HBM peak * e), fixed >= 0, 0 < e <= 1";
  if (!p.fit.note.empty())
    s += "; " + p.fit.note;
  return s + method(set, kind);
}

Json curvePoint(const char *xKey, const CurvePoint &p,
                const std::string &source) {
  Json j;
  j[xKey] = whole(p.x);
  j["fixed_us"] = sig3(p.fit.fixedS * 1e6);
  j["bandwidth_efficiency"] = fraction3(p.fit.efficiency);
  j["max_rel_error"] = sig3(p.fit.maxRelError);
  j["source"] = source;
  return j;
}

std::string join(const std::vector<std::string> &v, const std::string &sep) {
  std::string s;
  for (const std::string &x : v)
    s += (s.empty() ? "" : sep) + x;
  return s;
}

} // namespace

std::string sourcePrefix(const MeasurementSet &set) {
  return "helix calibrate on " +
         (set.gpu.empty() ? "an unnamed GPU" : set.gpu) + ", driver " +
         (set.driver.empty() ? "unknown" : set.driver) + ", " +
         (set.date.empty() ? "undated" : set.date);
}

std::string describeCalibration(const Calibration &c, const std::string &base) {
  const MeasurementSet &set = c.measured;
  std::vector<std::string> measured;
  auto formats = [](const auto &byFormat) {
    std::vector<std::string> f;
    for (const auto &kv : byFormat)
      f.push_back(kv.first);
    return join(f, "/");
  };
  if (!c.gemm.empty())
    measured.push_back("gemm " + formats(c.gemm));
  if (!c.gemmMath.empty())
    measured.push_back("gemm_math " + formats(c.gemmMath));
  for (const auto &[curve, byFormat] : c.attention)
    measured.push_back("attention." + curve + " " + formats(byFormat));
  if (c.haveElementwise)
    measured.push_back("elementwise_us");
  for (const auto &[op, points] : c.collectives) {
    std::vector<int64_t> gpus;
    for (const CollectivePointFit &p : points)
      if (std::find(gpus.begin(), gpus.end(), p.gpus) == gpus.end())
        gpus.push_back(p.gpus);
    std::vector<std::string> g;
    for (int64_t n : gpus)
      g.push_back(std::to_string(n));
    measured.push_back("collectives." + op + ".latency_us (" + join(g, ", ") +
                       " GPUs)");
  }
  std::string d = sourcePrefix(set);
  if (!set.environment.empty())
    d += " (" + set.environment + ")";
  d += ". ";
  if (!set.subject.empty())
    d += "Timed: " + set.subject + ". ";
  d += "Measured: " + join(measured, "; ") + ". Everything else is the " +
       base + " preset's";
  std::vector<std::string> left = set.notMeasured;
  left.insert(left.end(), c.skipped.begin(), c.skipped.end());
  if (!left.empty())
    d += "; not measured: " + join(left, "; ");
  return d + ".";
}

std::string writeHardwareJSON(const Calibration &c, const std::string &base,
                              const std::string &name) {
  const MeasurementSet &set = c.measured;
  Json root;
  root["base"] = base;
  root["name"] = name.empty() ? base + "-calibrated" : name;
  root["description"] = describeCalibration(c, base);
  // The measured GPU's SMs, not the base's: the cost model counts the
  // decode attention's split-K merge by them (helix/Common/AttentionSplits.h).
  if (set.smCount > 0) {
    Json sm;
    sm["value"] = set.smCount;
    sm["source"] = sourcePrefix(set) + "; cudaDeviceProp::multiProcessorCount";
    root["compute"]["sm_count"] = sm;
  }

  Json kernels = Json::object();
  if (!c.gemm.empty()) {
    Json gemm = Json::object();
    for (const auto &[fmt, points] : c.gemm) {
      DType d = DType::BF16;
      if (auto parsed = symbolizeDType(fmt))
        d = *parsed;
      std::string bytes =
          "bytes = n*k*" + text3(bytesPerValue(d)) + " + m*(n+k)*2";
      Json arr = Json::array();
      for (const CurvePoint &p : points)
        arr.push_back(curvePoint("m", p, fitSource(set, p, bytes, "gemm")));
      gemm[fmt] = arr;
    }
    kernels["gemm"] = gemm;
  }
  if (!c.gemmMath.empty()) {
    Json math = Json::object();
    for (const auto &[fmt, points] : c.gemmMath) {
      Json arr = Json::array();
      for (const MathPoint &p : points) {
        Json j;
        j["m"] = whole(p.m);
        j["math_efficiency"] = fraction3(p.efficiency);
        j["source"] =
            sourcePrefix(set) + "; median over " + std::to_string(p.samples) +
            " shapes at m=" + whole(p.m).dump() +
            ", n, k >= " + std::to_string(kMinMathNK) + " (min " +
            text3(p.minEfficiency) + ", max " + text3(p.maxEfficiency) +
            ") of 2*m*n*k / time over the "
            "base's dense " +
            fmt + " peak" + method(set, "gemm_math");
        arr.push_back(j);
      }
      math[fmt] = arr;
    }
    kernels["gemm_math"] = math;
  }
  if (!c.attention.empty()) {
    Json attention = Json::object();
    for (const auto &[curve, byFormat] : c.attention) {
      Json formats = Json::object();
      for (const auto &[fmt, points] : byFormat) {
        DType d = DType::BF16;
        if (auto parsed = symbolizeDType(fmt))
          d = *parsed;
        std::string bytes =
            curve == "gqa"
                ? "kv bytes = batch*kv_heads*kv_len*2*head_dim*" +
                      text3(bytesPerValue(d))
                : "kv bytes = batch*kv_len*head_dim*" + text3(bytesPerValue(d));
        Json arr = Json::array();
        for (const CurvePoint &p : points)
          arr.push_back(
              curvePoint("rows", p, fitSource(set, p, bytes, "attention")));
        formats[fmt] = arr;
      }
      attention[curve] = formats;
    }
    kernels["attention"] = attention;
  }
  if (c.haveElementwise) {
    std::vector<std::string> each;
    for (const auto &[kernel, s] : c.elementwiseKernels)
      each.push_back(kernel + " " + text3(s * 1e6) + " us");
    Json e;
    e["value"] = sig3(c.elementwiseS * 1e6);
    e["source"] = sourcePrefix(set) + "; median of " +
                  std::to_string(c.elementwiseKernels.size()) +
                  " kernels at decode shapes: " + join(each, ", ") +
                  method(set, "elementwise");
    kernels["elementwise_us"] = e;
  }
  if (!kernels.empty())
    root["kernels"] = kernels;

  if (!c.collectives.empty()) {
    Json collectives = Json::object();
    for (const auto &[op, points] : c.collectives) {
      Json arr = Json::array();
      for (const CollectivePointFit &p : points) {
        Json j;
        j["gpus"] = p.gpus;
        j["bytes"] = whole(p.bytes);
        j["value"] = std::max(sig3(p.seconds * 1e6), 1e-3);
        j["source"] = sourcePrefix(set) + "; median of " +
                      std::to_string(p.runs) + " runs" + method(set, op);
        arr.push_back(j);
      }
      collectives[op]["latency_us"] = arr;
    }
    root["collectives"] = collectives;
  }
  return root.dump(2) + "\n";
}

} // namespace calibrate
} // namespace helix
