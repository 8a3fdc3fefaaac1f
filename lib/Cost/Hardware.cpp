//===- Hardware.cpp - Hardware presets and JSON loading -------------------===//

#include "helix/Cost/Hardware.h"
#include "helix/Cost/EngineProfile.h"

#include "helix/Common/JSONParse.h"
#include "helix/Common/Numbers.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace helix {

namespace {
struct Preset {
  const char *name;
  const char *json;
};
// Generated at build time from data/hardware/*.json.
const Preset kPresets[] = {
#include "HardwarePresets.inc"
};
} // namespace

const char *stringifyCollectiveKind(CollectiveKind kind) {
  switch (kind) {
  case CollectiveKind::AllReduce:
    return "all_reduce";
  case CollectiveKind::AllGather:
    return "all_gather";
  case CollectiveKind::ReduceScatter:
    return "reduce_scatter";
  case CollectiveKind::AllToAll:
    return "all_to_all";
  case CollectiveKind::Broadcast:
    return "broadcast";
  case CollectiveKind::MoEDispatch:
    return "moe_dispatch";
  case CollectiveKind::MoECombine:
    return "moe_combine";
  case CollectiveKind::P2P:
    return "p2p";
  }
  return "unknown";
}

double interpolateLog2(const std::vector<std::pair<int64_t, double>> &table,
                       int64_t n) {
  if (table.empty())
    return 0.0;
  if (table.size() == 1 || n <= table.front().first)
    return table.front().second;
  size_t hi = 1;
  while (hi + 1 < table.size() && table[hi].first < n)
    ++hi;
  const auto &a = table[hi - 1];
  const auto &b = table[hi];
  // Beyond the last size a falling slope is not extended: a table that
  // measured less latency at its largest size would reach 0 and below.
  if (n > b.first && b.second < a.second)
    return b.second;
  double slope = (b.second - a.second) /
                 (std::log2(double(b.first)) - std::log2(double(a.first)));
  return a.second + slope * (std::log2(double(n)) - std::log2(double(a.first)));
}

double CollectiveParams::alpha(int64_t n) const {
  return interpolateLog2(alphaS, n);
}

double Hardware::scaleOutLatency(int64_t domains) const {
  return interpolateLog2(scaleOutLatencyS, domains);
}

KernelPoint KernelCurve::at(double x) const {
  if (points.empty())
    return KernelPoint();
  if (points.size() == 1 || x <= points.front().x)
    return points.front();
  if (x >= points.back().x)
    return points.back();
  size_t hi = 1;
  while (points[hi].x < x)
    ++hi;
  const KernelPoint &a = points[hi - 1];
  const KernelPoint &b = points[hi];
  double t = std::log2(x / a.x) / std::log2(b.x / a.x);
  auto mix = [t](double u, double v) { return u + t * (v - u); };
  KernelPoint p;
  p.x = x;
  p.fixedS = mix(a.fixedS, b.fixedS);
  p.bandwidthEfficiency = mix(a.bandwidthEfficiency, b.bandwidthEfficiency);
  // A point without a math figure defers to compute.gemm_efficiency.
  p.mathEfficiency = (a.mathEfficiency > 0 && b.mathEfficiency > 0)
                         ? mix(a.mathEfficiency, b.mathEfficiency)
                         : 0.0;
  return p;
}

/// byFormat[format], else the nearest wider format with a curve.
static const KernelCurve &widerFallback(const KernelCurve *byFormat,
                                        DType format) {
  // Widths in bits, as Precision::bytesPerValue orders them (without the
  // block scales, which change no order).
  auto bits = [](DType d) {
    return d == DType::FP4 ? 4 : d == DType::FP8 ? 8 : 16;
  };
  for (DType d : {format, DType::FP8, DType::BF16}) {
    if (bits(d) < bits(format))
      continue;
    if (!byFormat[static_cast<int>(d)].empty())
      return byFormat[static_cast<int>(d)];
  }
  return byFormat[static_cast<int>(format)];
}

const KernelCurve &KernelCurves::gemmFor(DType format, bool grouped) const {
  return widerFallback(grouped ? groupedGemm : gemm, format);
}

const KernelCurve &KernelCurves::attention(bool mla, double localHeads,
                                           DType kvFormat) const {
  const KernelCurve *byFormat = attentionGQA;
  if (mla)
    byFormat = localHeads <= 32 &&
                       !attentionMLAFewHeads[static_cast<int>(kvFormat)].empty()
                   ? attentionMLAFewHeads
                   : attentionMLA;
  return widerFallback(byFormat, kvFormat);
}

const char *defaultHardwareName() { return "gb200-nvl72"; }

std::vector<std::string> listHardwarePresets() {
  std::vector<std::string> names;
  for (const Preset &p : kPresets)
    names.push_back(p.name);
  std::sort(names.begin(), names.end());
  return names;
}

const char *hardwarePresetJSON(const std::string &name) {
  for (const Preset &p : kPresets)
    if (name == p.name)
      return p.json;
  return nullptr;
}

namespace {
using nlohmann::json;

/// Reads {"value": ..., "source": "..."} figures; every error names the
/// origin and the dotted field path. With `partial`, missing fields keep the
/// value already in the Hardware (a user file with "base").
class FigureReader {
public:
  FigureReader(const json &root, const std::string &origin, bool partial,
               Hardware &hw, std::string &error)
      : root(root), origin(origin), partial(partial), hw(hw), error(error) {}

  /// Reads a figure scaled by `scale` into `out`. A null value is allowed
  /// only with `nullMeansZero` (a format the GPU lacks).
  bool figure(const std::string &path, double scale, double &out,
              bool nullMeansZero = false, bool allowZero = false,
              bool optional = false) {
    const json *node = find(path);
    if (!node)
      return !failed() && (partial || optional || fail(path, "is missing"));
    if (!node->is_object() || !node->contains("value") ||
        !node->contains("source"))
      return fail(path, "must be an object {\"value\": ..., \"source\": ...}");
    if (!checkSource(path, node->at("source")))
      return false;
    const json &v = node->at("value");
    if (v.is_null() && nullMeansZero) {
      out = 0.0;
      return true;
    }
    if (!v.is_number())
      return fail(path + ".value", "must be a number");
    double d = v.get<double>();
    if (!std::isfinite(d) || d < 0 || (d == 0 && !allowZero))
      return fail(path + ".value",
                  allowZero ? "must be non-negative" : "must be positive");
    out = d * scale;
    setSource(path, node->at("source").get<std::string>());
    return true;
  }

  /// Reads an integer figure in [1, max] (optional: absent leaves `out`).
  bool integer(const std::string &path, int64_t max, int64_t &out,
               bool optional = false) {
    double d = double(out);
    if (!figure(path, 1.0, d, false, false, optional))
      return false;
    if (!find(path))
      return true;
    if (!doubleToInteger(d, 1, max, out)) {
      std::ostringstream typed;
      typed << d;
      return fail(path + ".value", "must be an integer " +
                                       describeRange(1, max) + ", got " +
                                       typed.str());
    }
    return true;
  }

  /// "alpha_us": [{"gpus": n, "value": us, "source": ...}, ...]
  /// [{"<key>": n, "value": us, "source": ...}] by group size `key`
  /// ("gpus", or "domains"), into (n, seconds) sorted by n.
  bool latencyTable(const std::string &path, const char *key,
                    std::vector<std::pair<int64_t, double>> &out,
                    bool optional = false) {
    const json *node = find(path);
    if (!node)
      return !failed() && (partial || optional || fail(path, "is missing"));
    const std::string shape =
        std::string("{\"") + key + "\", \"value\", \"source\"}";
    if (!node->is_array() || node->empty())
      return fail(path, "must be a non-empty array of " + shape);
    clearSources(path);
    std::vector<std::pair<int64_t, double>> points;
    for (size_t i = 0; i < node->size(); ++i) {
      std::string at = path + "[" + std::to_string(i) + "]";
      const json &p = (*node)[i];
      if (!p.is_object() || !p.contains(key) || !p.contains("value") ||
          !p.contains("source"))
        return fail(at, "must be an object " + shape);
      int64_t n = 0;
      if (!p[key].is_number() ||
          !doubleToInteger(p[key].get<double>(), 1, kMaxGPUs, n))
        return fail(at + "." + key, "must be an integer " +
                                        describeRange(1, kMaxGPUs) + ", got " +
                                        p[key].dump());
      if (!p["value"].is_number() || !std::isfinite(p["value"].get<double>()) ||
          p["value"].get<double>() < 0)
        return fail(at + ".value", "must be a non-negative number");
      if (!checkSource(at, p["source"]))
        return false;
      points.emplace_back(n, p["value"].get<double>() * 1e-6);
      setSource(at, p["source"].get<std::string>());
    }
    std::sort(points.begin(), points.end());
    for (size_t i = 1; i < points.size(); ++i)
      if (points[i].first == points[i - 1].first)
        return fail(path, std::string("lists ") + key + "=" +
                              std::to_string(points[i].first) + " twice");
    out = std::move(points);
    return true;
  }

  /// "latency_us": [{"gpus": n, "bytes": S, "value": us, "source": ...}]
  /// (optional).
  bool collectivePoints(const std::string &path, CollectiveParams &params) {
    const json *node = find(path);
    if (!node)
      return !failed();
    if (!node->is_array() || node->empty())
      return fail(path, "must be a non-empty array of {\"gpus\", \"bytes\", "
                        "\"value\", \"source\"}");
    clearSources(path);
    std::vector<CollectivePoint> points;
    for (size_t i = 0; i < node->size(); ++i) {
      std::string at = path + "[" + std::to_string(i) + "]";
      const json &p = (*node)[i];
      if (!p.is_object() || !p.contains("gpus") || !p.contains("bytes") ||
          !p.contains("value") || !p.contains("source"))
        return fail(at, "must be an object {\"gpus\", \"bytes\", \"value\", "
                        "\"source\"}");
      CollectivePoint c;
      if (!p["gpus"].is_number() ||
          !doubleToInteger(p["gpus"].get<double>(), 2, kMaxGPUs, c.gpus))
        return fail(at + ".gpus", "must be an integer " +
                                      describeRange(2, kMaxGPUs) + ", got " +
                                      p["gpus"].dump());
      if (!positive(p["bytes"], 1e15, c.bytes))
        return fail(at + ".bytes", "must be a positive number of bytes (at "
                                   "most 1e15), got " +
                                       p["bytes"].dump());
      if (!positive(p["value"], 1e9, c.seconds))
        return fail(at + ".value", "must be a positive time in microseconds "
                                   "(at most 1e9), got " +
                                       p["value"].dump());
      if (!checkSource(at, p["source"]))
        return false;
      setSource(at, p["source"].get<std::string>());
      points.push_back(CollectivePoint(c.gpus, c.bytes, c.seconds * 1e-6));
    }
    std::sort(points.begin(), points.end(),
              [](const CollectivePoint &a, const CollectivePoint &b) {
                return a.gpus != b.gpus ? a.gpus < b.gpus : a.bytes < b.bytes;
              });
    for (size_t i = 1; i < points.size(); ++i)
      if (points[i].gpus == points[i - 1].gpus &&
          points[i].bytes == points[i - 1].bytes)
        return fail(path, "lists gpus=" + std::to_string(points[i].gpus) +
                              " bytes=" + json(points[i].bytes).dump() +
                              " twice");
    params.measured = std::move(points);
    return true;
  }

  /// A kernel curve: [{"<xKey>": x, "fixed_us": a, "bandwidth_efficiency":
  /// e, ["math_efficiency": f,] "source": ...}, ...] (optional).
  bool kernelCurve(const std::string &path, const char *xKey,
                   KernelCurve &curve, bool mathOnly = false) {
    const json *node = find(path);
    if (!node)
      return !failed();
    std::string shape =
        std::string("{\"") + xKey +
        (mathOnly ? "\", \"math_efficiency\", \"source\"}"
                  : "\", \"fixed_us\", \"bandwidth_efficiency\", "
                    "\"source\"}");
    if (!node->is_array() || node->empty())
      return fail(path, "must be a non-empty array of " + shape);
    clearSources(path);
    std::vector<KernelPoint> points;
    for (size_t i = 0; i < node->size(); ++i) {
      std::string at = path + "[" + std::to_string(i) + "]";
      const json &p = (*node)[i];
      if (!p.is_object() || !p.contains(xKey) || !p.contains("source") ||
          (mathOnly ? !p.contains("math_efficiency")
                    : (!p.contains("fixed_us") ||
                       !p.contains("bandwidth_efficiency"))))
        return fail(at, "must be an object " + shape);
      KernelPoint k;
      if (!positive(p[xKey], 1e9, k.x))
        return fail(at + "." + xKey, "must be a positive number (at most "
                                     "1e9), got " +
                                         p[xKey].dump());
      if (mathOnly) {
        // Only the math figure is read; the others keep their defaults.
      } else if (!p["fixed_us"].is_number() ||
                 !std::isfinite(p["fixed_us"].get<double>()) ||
                 p["fixed_us"].get<double>() < 0 ||
                 p["fixed_us"].get<double>() > 1e6)
        return fail(at + ".fixed_us", "must be a time in microseconds in "
                                      "[0, 1e6], got " +
                                          p["fixed_us"].dump());
      if (!mathOnly)
        k.fixedS = p["fixed_us"].get<double>() * 1e-6;
      if (!mathOnly &&
          !positive(p["bandwidth_efficiency"], 1.0, k.bandwidthEfficiency))
        return fail(at + ".bandwidth_efficiency",
                    "must be a fraction in (0, 1], got " +
                        p["bandwidth_efficiency"].dump());
      if (p.contains("math_efficiency") &&
          !positive(p["math_efficiency"], 1.0, k.mathEfficiency))
        return fail(at + ".math_efficiency",
                    "must be a fraction in (0, 1], got " +
                        p["math_efficiency"].dump());
      if (!checkSource(at, p["source"]))
        return false;
      setSource(at, p["source"].get<std::string>());
      points.push_back(k);
    }
    std::sort(
        points.begin(), points.end(),
        [](const KernelPoint &a, const KernelPoint &b) { return a.x < b.x; });
    for (size_t i = 1; i < points.size(); ++i)
      if (points[i].x == points[i - 1].x)
        return fail(path, std::string("lists ") + xKey + "=" +
                              json(points[i].x).dump() + " twice");
    curve.points = std::move(points);
    return true;
  }

  bool failed() const { return !error.empty(); }

private:
  /// A finite number in (0, max].
  static bool positive(const json &v, double max, double &out) {
    if (!v.is_number())
      return false;
    double d = v.get<double>();
    if (!std::isfinite(d) || d <= 0 || d > max)
      return false;
    out = d;
    return true;
  }

  const json *find(const std::string &path) {
    const json *node = &root;
    size_t start = 0;
    while (start <= path.size()) {
      size_t dot = path.find('.', start);
      std::string key = path.substr(start, dot - start);
      if (!node->is_object()) {
        fail(path.substr(0, start ? start - 1 : 0), "must be an object");
        return nullptr;
      }
      auto it = node->find(key);
      if (it == node->end())
        return nullptr;
      node = &*it;
      if (dot == std::string::npos)
        break;
      start = dot + 1;
    }
    return node;
  }

  /// Drops the sources of a list's points ("path[i]...") before a file
  /// replaces the list, so a shorter list leaves no stale entries.
  void clearSources(const std::string &path) {
    const std::string prefix = path + "[";
    hw.sources.erase(std::remove_if(hw.sources.begin(), hw.sources.end(),
                                    [&](const auto &e) {
                                      return e.first.rfind(prefix, 0) == 0;
                                    }),
                     hw.sources.end());
  }

  void setSource(const std::string &path, const std::string &source) {
    for (auto &entry : hw.sources)
      if (entry.first == path) {
        entry.second = source;
        return;
      }
    hw.sources.emplace_back(path, source);
  }

  bool checkSource(const std::string &path, const json &source) {
    if (!source.is_string() || source.get<std::string>().empty())
      return fail(path + ".source", "must be a non-empty string");
    return true;
  }

  bool fail(const std::string &path, const std::string &what) {
    if (error.empty())
      error = origin + ": field '" + path + "' " + what;
    return false;
  }

  const json &root;
  const std::string &origin;
  bool partial;
  Hardware &hw;
  std::string &error;
};

bool readAll(const json &root, const std::string &origin, bool partial,
             Hardware &hw, std::string &error) {
  FigureReader r(root, origin, partial, hw, error);
  for (int i = 0; i < kNumDTypes; ++i)
    if (!r.figure("compute.peak_dense_pflops." +
                      stringifyDType(static_cast<DType>(i)).str(),
                  1e15, hw.peakFlops[i], /*nullMeansZero=*/true))
      return false;
  double eff = hw.gemmEfficiency;
  bool ok =
      r.figure("compute.gemm_efficiency", 1.0, eff) &&
      r.figure("compute.kernel_overhead_us", 1e-6, hw.kernelOverheadS,
               /*nullMeansZero=*/false, /*allowZero=*/true) &&
      r.integer("compute.sm_count", 1024, hw.smCount, /*optional=*/true) &&
      r.figure("memory.hbm_capacity_gb", 1e9, hw.hbmCapacityBytes) &&
      r.figure("memory.hbm_bandwidth_tb_per_s", 1e12, hw.hbmBandwidth) &&
      r.figure("memory.memory_bound_efficiency", 1.0, hw.memoryEfficiency) &&
      r.figure("memory.attention_memory_efficiency", 1.0,
               hw.attentionMemoryEfficiency) &&
      r.figure("interconnect.nvlink_gb_per_s_per_direction", 1e9,
               hw.nvlinkBandwidth) &&
      r.integer("interconnect.nvlink_domain_gpus", kMaxGPUs, hw.nvlinkDomain) &&
      r.figure("interconnect.scale_out_gb_per_s_per_direction", 1e9,
               hw.scaleOutBandwidth) &&
      r.latencyTable("interconnect.scale_out_latency_us", "domains",
                     hw.scaleOutLatencyS, /*optional=*/true) &&
      r.figure("interconnect.scale_out_efficiency", 1.0, hw.scaleOutEfficiency,
               /*nullMeansZero=*/false,
               /*allowZero=*/false, /*optional=*/true);
  if (!ok)
    return false;
  // The two go together: a round's latency and the NIC's achieved share.
  if (hw.scaleOutLatencyS.empty() != (hw.scaleOutEfficiency <= 0)) {
    error = origin + ": field 'interconnect." +
            (hw.scaleOutLatencyS.empty() ? "scale_out_latency_us"
                                         : "scale_out_efficiency") +
            "' is missing: scale_out_latency_us and scale_out_efficiency "
            "are given together (or neither)";
    return false;
  }
  if (hw.scaleOutEfficiency > 1.0) {
    error = origin +
            ": field 'interconnect.scale_out_efficiency.value' must be a "
            "fraction in (0, 1]";
    return false;
  }
  hw.gemmEfficiency = eff;
  for (int k = 0; k < kNumCollectiveKinds; ++k) {
    std::string base = std::string("collectives.") +
                       stringifyCollectiveKind(CollectiveKind(k));
    CollectiveParams &c = hw.collectives[k];
    if (!r.latencyTable(base + ".alpha_us", "gpus", c.alphaS) ||
        !r.figure(base + ".bus_efficiency", 1.0, c.busEfficiency) ||
        !r.collectivePoints(base + ".latency_us", c))
      return false;
  }
  KernelCurves &k = hw.kernels;
  for (int i = 0; i < kNumDTypes; ++i) {
    std::string dt = stringifyDType(static_cast<DType>(i)).str();
    if (!r.kernelCurve("kernels.gemm." + dt, "m", k.gemm[i]) ||
        !r.kernelCurve("kernels.gemm_math." + dt, "m", k.gemmMath[i],
                       /*mathOnly=*/true) ||
        !r.kernelCurve("kernels.grouped_gemm." + dt, "m", k.groupedGemm[i]) ||
        !r.kernelCurve("kernels.attention.gqa." + dt, "rows",
                       k.attentionGQA[i]) ||
        !r.kernelCurve("kernels.attention.mla." + dt, "rows",
                       k.attentionMLA[i]) ||
        !r.kernelCurve("kernels.attention.mla_few_heads." + dt, "rows",
                       k.attentionMLAFewHeads[i]))
      return false;
  }
  if (!r.kernelCurve("kernels.grouped_gemm.mxfp4", "m", k.groupedGemmMXFP4) ||
      !r.kernelCurve("kernels.grouped_gemm.fp4_trtllm_gen", "m",
                     k.groupedGemmFP4TrtllmGen))
    return false;
  if (!r.figure("kernels.elementwise_us", 1e-6, k.elementwiseS,
                /*nullMeansZero=*/false, /*allowZero=*/true, /*optional=*/true))
    return false;
  for (double e :
       {hw.gemmEfficiency, hw.memoryEfficiency, hw.attentionMemoryEfficiency})
    if (e > 1.0) {
      error = origin + ": an efficiency figure is above 1";
      return false;
    }
  if (!hw.supports(DType::FP8) && !hw.supports(DType::BF16)) {
    error = origin + ": field 'compute.peak_dense_pflops' needs fp8 or bf16";
    return false;
  }
  return true;
}
} // namespace

bool parseHardwareJSON(const std::string &text, const std::string &origin,
                       Hardware &hw, std::string &error) {
  // The reader keeps the first failure it sees: a message left in `error`
  // by an earlier call must not fail this one.
  error.clear();
  json root;
  if (!parseJSONObject(text, origin, root, error))
    return false;
  bool partial = false;
  if (root.contains("base")) {
    if (!root["base"].is_string()) {
      error = origin + ": field 'base' must be a preset name";
      return false;
    }
    std::string base = root["base"].get<std::string>();
    const char *baseText = hardwarePresetJSON(base);
    if (!baseText) {
      error = origin + ": field 'base' names no preset ('" +
              escapeJSONText(base) + "')";
      return false;
    }
    if (!parseHardwareJSON(baseText, "preset " + base, hw, error))
      return false;
    hw.preset = base;
    partial = true;
  } else {
    hw = Hardware();
  }
  for (const char *key : {"name", "description"}) {
    if (!root.contains(key)) {
      if (partial || std::string(key) == "description")
        continue;
      error = origin + ": field '" + key + "' is missing";
      return false;
    }
    if (!root[key].is_string()) {
      error = origin + ": field '" + key + "' must be a string";
      return false;
    }
    (std::string(key) == "name" ? hw.name : hw.description) =
        root[key].get<std::string>();
  }
  return readAll(root, origin, partial, hw, error);
}

bool overlayHardwareJSON(const std::string &text, const std::string &origin,
                         Hardware &hw, std::string &error) {
  error.clear();
  json root;
  if (!parseJSONObject(text, origin, root, error))
    return false;
  return readAll(root, origin, /*partial=*/true, hw, error);
}

bool loadHardware(const std::string &nameOrPath, Hardware &hw,
                  std::string &error) {
  // "PRESET+ENGINE": the preset under an engine profile (--engine).
  size_t plus = nameOrPath.rfind('+');
  if (plus != std::string::npos && !hardwarePresetJSON(nameOrPath) &&
      !std::ifstream(nameOrPath)) {
    std::string engine = nameOrPath.substr(plus + 1);
    const std::vector<std::string> &engines = listEngineProfiles();
    if (std::find(engines.begin(), engines.end(), engine) != engines.end()) {
      if (!loadHardware(nameOrPath.substr(0, plus), hw, error))
        return false;
      std::string note;
      if (!applyEngineProfile(engine, hw, note, error))
        return false;
      if (hw.engineProfile != engine) {
        std::string covers;
        for (const std::string &p : engineProfilePresets(engine))
          covers += (covers.empty() ? "" : ", ") + p;
        error = "'" + nameOrPath + "': the " + engine +
                " profile has no curves for " +
                (hw.preset.empty() ? "a hardware file without a preset"
                                   : hw.preset) +
                " (it covers " + covers + ")";
        return false;
      }
      return true;
    }
  }
  if (const char *text = hardwarePresetJSON(nameOrPath)) {
    if (!parseHardwareJSON(text, "preset " + nameOrPath, hw, error))
      return false;
    hw.preset = nameOrPath;
    return true;
  }
  std::ifstream in(nameOrPath);
  if (!in) {
    std::string names;
    for (const std::string &n : listHardwarePresets())
      names += (names.empty() ? "" : ", ") + n;
    error = "unknown hardware '" + nameOrPath + "': not a preset (" + names +
            ") and no such file";
    return false;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return parseHardwareJSON(buf.str(), nameOrPath, hw, error);
}

} // namespace helix
