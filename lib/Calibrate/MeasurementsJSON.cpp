//===- MeasurementsJSON.cpp - Measurements in a file ----------------------===//

#include "helix/Calibrate/MeasurementsJSON.h"

#include "helix/Common/JSONParse.h"
#include "helix/Common/Numbers.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace helix {
namespace calibrate {

namespace {

using Json = nlohmann::ordered_json;
using nlohmann::json;

constexpr const char *kFormat = "helix-calibrate-measurements";

/// Reads fields of one object; the first error names origin and path.
class Reader {
public:
  Reader(const std::string &origin, std::string &error)
      : origin(origin), error(error) {}

  bool fail(const std::string &path, const std::string &what) {
    if (error.empty())
      error = origin + ": field '" + path + "' " + what;
    return false;
  }

  bool string(const json &o, const std::string &path, const char *key,
              std::string &out, bool optional = true) {
    if (!o.contains(key))
      return optional || fail(path + key, "is missing");
    if (!o[key].is_string())
      return fail(path + key, "must be a string");
    out = o[key].get<std::string>();
    return true;
  }

  bool integer(const json &o, const std::string &path, const char *key,
               int64_t &out, bool optional = false) {
    if (!o.contains(key))
      return optional || fail(path + key, "is missing");
    if (!o[key].is_number() ||
        !doubleToInteger(o[key].get<double>(), INT64_MIN / 2, INT64_MAX / 2,
                         out))
      return fail(path + key, "must be an integer, got " + o[key].dump());
    return true;
  }

  bool number(const json &o, const std::string &path, const char *key,
              double &out) {
    if (!o.contains(key))
      return fail(path + key, "is missing");
    if (!o[key].is_number())
      return fail(path + key, "must be a number, got " + o[key].dump());
    out = o[key].get<double>();
    return true;
  }

  bool format(const json &o, const std::string &path, const char *key,
              DType &out) {
    std::string text;
    if (!string(o, path, key, text, /*optional=*/false))
      return false;
    auto d = symbolizeDType(text);
    if (!d)
      return fail(path + key, "must be fp4, fp8 or bf16, got '" +
                                  escapeJSONText(text) + "'");
    out = *d;
    return true;
  }

  /// `key` as an array of objects (absent: empty).
  bool objects(const json &root, const char *key,
               std::vector<const json *> &out) {
    if (!root.contains(key))
      return true;
    const json &a = root[key];
    if (!a.is_array())
      return fail(key, "must be an array");
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_object())
        return fail(std::string(key) + "[" + std::to_string(i) + "]",
                    "must be an object");
      out.push_back(&a[i]);
    }
    return true;
  }

private:
  const std::string &origin;
  std::string &error;
};

bool collectiveKind(const std::string &name, CollectiveKind &out) {
  for (int k = 0; k < kNumCollectiveKinds; ++k)
    if (name == stringifyCollectiveKind(static_cast<CollectiveKind>(k))) {
      out = static_cast<CollectiveKind>(k);
      return true;
    }
  return false;
}

} // namespace

std::string writeMeasurementsJSON(const MeasurementSet &set) {
  Json root;
  root["format"] = kFormat;
  root["version"] = 1;
  root["gpu"] = set.gpu;
  root["driver"] = set.driver;
  root["date"] = set.date;
  root["environment"] = set.environment;
  root["subject"] = set.subject;
  if (set.smCount > 0)
    root["sm_count"] = set.smCount;
  Json methods = Json::object();
  for (const auto &[k, v] : set.methods)
    methods[k] = v;
  root["methods"] = methods;
  root["not_measured"] = set.notMeasured;
  Json gemm = Json::array();
  for (const GemmSample &s : set.gemm)
    gemm.push_back({{"format", stringifyDType(s.format).str()},
                    {"m", s.m},
                    {"n", s.n},
                    {"k", s.k},
                    {"seconds", s.seconds},
                    {"runs", s.runs}});
  root["gemm"] = gemm;
  Json attention = Json::array();
  for (const AttentionSample &s : set.attention)
    attention.push_back({{"kind", attentionKindName(s.kind)},
                         {"kv_format", stringifyDType(s.kvFormat).str()},
                         {"batch", s.batch},
                         {"kv_heads", s.kvHeads},
                         {"q_heads", s.qHeads},
                         {"head_dim", s.headDim},
                         {"kv_length", s.kvLength},
                         {"seconds", s.seconds},
                         {"runs", s.runs}});
  root["attention"] = attention;
  Json elementwise = Json::array();
  for (const ElementwiseSample &s : set.elementwise)
    elementwise.push_back(
        {{"kernel", s.kernel}, {"seconds", s.seconds}, {"runs", s.runs}});
  root["elementwise"] = elementwise;
  Json collectives = Json::array();
  for (const CollectiveSample &s : set.collectives)
    collectives.push_back({{"op", stringifyCollectiveKind(s.op)},
                           {"gpus", s.gpus},
                           {"bytes", s.bytes},
                           {"seconds", s.seconds},
                           {"runs", s.runs}});
  root["collectives"] = collectives;
  return root.dump(1) + "\n";
}

bool parseMeasurementsJSON(const std::string &text, const std::string &origin,
                           MeasurementSet &set, std::string &error) {
  error.clear();
  json root;
  if (!parseJSONObject(text, origin, root, error))
    return false;
  if (!root.contains("format") || root["format"] != kFormat) {
    error = origin + ": field 'format' must be \"" + kFormat +
            "\" (a file written by helix calibrate --save-measurements)";
    return false;
  }
  if (!root.contains("version") || root["version"] != 1) {
    error = origin + ": field 'version' must be 1";
    return false;
  }
  Reader r(origin, error);
  set = MeasurementSet();
  if (!r.string(root, "", "gpu", set.gpu) ||
      !r.string(root, "", "driver", set.driver) ||
      !r.string(root, "", "date", set.date) ||
      !r.string(root, "", "environment", set.environment) ||
      !r.string(root, "", "subject", set.subject) ||
      !r.integer(root, "", "sm_count", set.smCount, /*optional=*/true))
    return false;
  if (root.contains("sm_count") && (set.smCount < 1 || set.smCount > 1024))
    return r.fail("sm_count", "must be an integer from 1 to 1024, got " +
                                  root["sm_count"].dump());
  if (root.contains("methods")) {
    if (!root["methods"].is_object())
      return r.fail("methods", "must be an object of strings");
    for (auto it = root["methods"].begin(); it != root["methods"].end(); ++it) {
      if (!it.value().is_string())
        return r.fail("methods." + it.key(), "must be a string");
      set.methods[it.key()] = it.value().get<std::string>();
    }
  }
  if (root.contains("not_measured")) {
    const json &n = root["not_measured"];
    if (!n.is_array())
      return r.fail("not_measured", "must be an array of strings");
    for (size_t i = 0; i < n.size(); ++i) {
      if (!n[i].is_string())
        return r.fail("not_measured[" + std::to_string(i) + "]",
                      "must be a string");
      set.notMeasured.push_back(n[i].get<std::string>());
    }
  }

  std::vector<const json *> list;
  if (!r.objects(root, "gemm", list))
    return false;
  for (size_t i = 0; i < list.size(); ++i) {
    const json &o = *list[i];
    std::string at = "gemm[" + std::to_string(i) + "].";
    GemmSample s;
    if (!r.format(o, at, "format", s.format) || !r.integer(o, at, "m", s.m) ||
        !r.integer(o, at, "n", s.n) || !r.integer(o, at, "k", s.k) ||
        !r.number(o, at, "seconds", s.seconds) ||
        !r.integer(o, at, "runs", s.runs, /*optional=*/true))
      return false;
    set.gemm.push_back(s);
  }
  list.clear();
  if (!r.objects(root, "attention", list))
    return false;
  for (size_t i = 0; i < list.size(); ++i) {
    const json &o = *list[i];
    std::string at = "attention[" + std::to_string(i) + "].";
    AttentionSample s;
    std::string kind;
    if (!r.string(o, at, "kind", kind, /*optional=*/false))
      return false;
    if (kind == "gqa")
      s.kind = AttentionKind::GQA;
    else if (kind == "mla")
      s.kind = AttentionKind::MLA;
    else
      return r.fail(at + "kind",
                    "must be gqa or mla, got '" + escapeJSONText(kind) + "'");
    if (!r.format(o, at, "kv_format", s.kvFormat) ||
        !r.integer(o, at, "batch", s.batch) ||
        !r.integer(o, at, "kv_heads", s.kvHeads) ||
        !r.integer(o, at, "q_heads", s.qHeads) ||
        !r.integer(o, at, "head_dim", s.headDim) ||
        !r.integer(o, at, "kv_length", s.kvLength) ||
        !r.number(o, at, "seconds", s.seconds) ||
        !r.integer(o, at, "runs", s.runs, /*optional=*/true))
      return false;
    set.attention.push_back(s);
  }
  list.clear();
  if (!r.objects(root, "elementwise", list))
    return false;
  for (size_t i = 0; i < list.size(); ++i) {
    const json &o = *list[i];
    std::string at = "elementwise[" + std::to_string(i) + "].";
    ElementwiseSample s;
    if (!r.string(o, at, "kernel", s.kernel, /*optional=*/false) ||
        !r.number(o, at, "seconds", s.seconds) ||
        !r.integer(o, at, "runs", s.runs, /*optional=*/true))
      return false;
    set.elementwise.push_back(s);
  }
  list.clear();
  if (!r.objects(root, "collectives", list))
    return false;
  for (size_t i = 0; i < list.size(); ++i) {
    const json &o = *list[i];
    std::string at = "collectives[" + std::to_string(i) + "].";
    CollectiveSample s;
    std::string op;
    if (!r.string(o, at, "op", op, /*optional=*/false))
      return false;
    if (!collectiveKind(op, s.op))
      return r.fail(at + "op", "must be a collective kind (all_reduce, "
                               "all_gather, reduce_scatter, all_to_all, ...), "
                               "got '" +
                                   escapeJSONText(op) + "'");
    if (!r.integer(o, at, "gpus", s.gpus) ||
        !r.number(o, at, "bytes", s.bytes) ||
        !r.number(o, at, "seconds", s.seconds) ||
        !r.integer(o, at, "runs", s.runs, /*optional=*/true))
      return false;
    set.collectives.push_back(s);
  }
  std::string invalid = validate(set);
  if (!invalid.empty()) {
    error = origin + ": " + invalid;
    return false;
  }
  return true;
}

} // namespace calibrate
} // namespace helix
