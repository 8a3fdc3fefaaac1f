//===- FidelityTable.cpp - Published decode latencies ---------------------===//

#include "FidelityTable.h"

#include "helix/Common/JSONParse.h"
#include "helix/Common/Numbers.h"
#include "helix/Cost/Hardware.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace helix::fidelity {

const char *stringifyMetric(Metric metric) {
  switch (metric) {
  case Metric::TPOTMs:
    return "tpot_ms";
  case Metric::ITLMs:
    return "itl_ms";
  case Metric::StepMs:
    return "step_ms";
  case Metric::TokSUser:
    return "tok_s_user";
  }
  return "?";
}

double Measurement::measuredMs() const {
  return metric == Metric::TokSUser ? 1000.0 / value : value;
}

double acceptanceForAcceptLength(int64_t drafts, double acceptLength) {
  // expectedAcceptedTokens rises strictly from 1 (a = 0) to drafts + 1
  // (a = 1).
  double lo = 0, hi = 1;
  for (int i = 0; i < 200 && lo < hi; ++i) {
    double mid = (lo + hi) / 2;
    if (mid <= lo || mid >= hi)
      break;
    (expectedAcceptedTokens(drafts, mid) < acceptLength ? lo : hi) = mid;
  }
  return hi;
}

namespace {

using nlohmann::json;

/// Reads one row, remembering the first error with the row and field named.
class RowReader {
public:
  RowReader(const json &row, std::string where)
      : row(row), where(std::move(where)) {}

  bool ok() const { return error.empty(); }
  const std::string &message() const { return error; }

  bool fail(const std::string &field, const std::string &what) {
    if (error.empty())
      error = where + ": field '" + field + "': " + what;
    return false;
  }

  const json *find(const std::string &field, bool required) {
    auto it = row.find(field);
    if (it == row.end()) {
      if (required)
        fail(field, "missing");
      return nullptr;
    }
    return &*it;
  }

  void text(const std::string &field, std::string &out, bool required = true) {
    const json *v = find(field, required);
    if (!v)
      return;
    if (!v->is_string()) {
      fail(field, "expected a string");
      return;
    }
    out = v->get<std::string>();
    if (out.empty())
      fail(field, "empty");
  }

  void integer(const std::string &field, int64_t min, int64_t max,
               int64_t &out) {
    const json *v = find(field, true);
    if (!v)
      return;
    if (!v->is_number_integer()) {
      fail(field, "expected an integer, got " + v->dump());
      return;
    }
    std::string e;
    if (!parseInteger(field, v->dump(), min, max, out, e))
      fail(field, e.substr(e.find(": ") + 2));
  }

  void number(const std::string &field, double &out) {
    const json *v = find(field, true);
    if (!v)
      return;
    if (!v->is_number()) {
      fail(field, "expected a number, got " + v->dump());
      return;
    }
    out = v->get<double>();
    if (!std::isfinite(out) || out <= 0)
      fail(field, "expected a positive number, got " + v->dump());
  }

  void flag(const std::string &field, bool &out) {
    const json *v = find(field, false);
    if (!v)
      return;
    if (!v->is_boolean()) {
      fail(field, "expected true or false, got " + v->dump());
      return;
    }
    out = v->get<bool>();
  }

  void dtype(const std::string &field, DType &out) {
    std::string t;
    text(field, t);
    std::string e;
    if (ok() && !parseDType(t, out, e))
      fail(field, e);
  }

private:
  const json &row;
  std::string where;
  std::string error;
};

/// Every field a row may have; anything else is a typo.
// clang-format off
const std::set<std::string> kFields = {
    "id", "set", "engine", "engine_version", "gpu", "gpus", "model",
    "weights_dtype", "kv_dtype", "compute_dtype", "strategy", "layout",
    "batch", "input_len", "output_len", "metric", "value", "speculative",
    "mtp_tokens", "mtp_accept_length", "mtp_acceptance", "derived", "formula",
    "excluded", "exclude_reason", "source", "locator", "layout_source",
    "note", "serving"};
// clang-format on

/// The optional MTP fields: "mtp_tokens" (draft tokens per step, the
/// model's MTP layer drafting them) and at most one of "mtp_accept_length"
/// (the source's mean tokens per step, the verified token included) and
/// "mtp_acceptance" (per-draft-token acceptance); neither: the cost model's
/// default acceptance.
void readMTP(const json &row, RowReader &r, Measurement &m) {
  const bool tokens = row.contains("mtp_tokens"),
             length = row.contains("mtp_accept_length"),
             given = row.contains("mtp_acceptance");
  if (!r.ok() || (!tokens && !length && !given))
    return;
  if (!tokens) {
    r.fail(length ? "mtp_accept_length" : "mtp_acceptance",
           "given without mtp_tokens (the draft tokens per step)");
    return;
  }
  r.integer("mtp_tokens", 1, kMaxMTPTokens, m.mtpTokens);
  if (!r.ok())
    return;
  std::string spec = m.speculative;
  std::transform(spec.begin(), spec.end(), spec.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (m.speculative == "off")
    r.fail("mtp_tokens", "given but 'speculative' is 'off'");
  else if (spec.find("eagle3") != std::string::npos)
    r.fail("mtp_tokens", "'" + escapeJSONText(m.speculative) +
                             "': EAGLE3 drafts with a separate draft model, "
                             "not the model's MTP layer; such rows stay "
                             "excluded");
  else if (!m.excluded && m.metric == Metric::StepMs)
    r.fail("mtp_tokens", "an MTP row is priced per output token; its metric "
                         "must be tpot_ms, itl_ms or tok_s_user, not "
                         "step_ms");
  else if (!m.excluded && m.config.batch > 1 && !m.decodeOnly)
    r.fail("mtp_tokens",
           "MTP rows are scored at batch 1 only (batch is " +
               std::to_string(m.config.batch) +
               "): the prefill a served MTP step absorbs is not modelled");
  if (!r.ok())
    return;
  if (length && given) {
    r.fail("mtp_acceptance", "give mtp_accept_length or mtp_acceptance, "
                             "not both");
    return;
  }
  if (length) {
    const json &v = row["mtp_accept_length"];
    r.number("mtp_accept_length", m.mtpAcceptLength);
    double most = double(m.mtpTokens + 1);
    if (r.ok() && !(m.mtpAcceptLength > 1 && m.mtpAcceptLength <= most))
      r.fail("mtp_accept_length",
             "expected tokens per step above 1 and at most mtp_tokens + 1 = " +
                 std::to_string(m.mtpTokens + 1) + ", got " + v.dump());
    if (!r.ok())
      return;
    m.mtpAcceptance = acceptanceForAcceptLength(m.mtpTokens, m.mtpAcceptLength);
    m.acceptanceFrom = Measurement::AcceptanceFrom::AcceptLength;
  } else if (given) {
    const json &v = row["mtp_acceptance"];
    r.number("mtp_acceptance", m.mtpAcceptance);
    if (r.ok() && !(m.mtpAcceptance > 0 && m.mtpAcceptance <= 1))
      r.fail("mtp_acceptance",
             "expected a probability above 0 and at most 1, got " + v.dump());
    m.acceptanceFrom = Measurement::AcceptanceFrom::Given;
  }
}

bool readRow(const json &row, const std::string &where, Measurement &m,
             std::string &error) {
  RowReader r(row, where);
  if (!row.is_object()) {
    r.fail("<row>", "expected an object");
    error = r.message();
    return false;
  }
  for (auto it = row.begin(); it != row.end(); ++it)
    if (!kFields.count(it.key()))
      r.fail(it.key(), "unknown field");
  r.text("id", m.id);
  std::string set;
  r.text("set", set);
  if (r.ok() && set != "fitted" && set != "held-out")
    r.fail("set", "'" + escapeJSONText(set) +
                      "': expected 'fitted' (used to choose a constant) or "
                      "'held-out'");
  m.heldOut = set == "held-out";
  r.text("engine", m.engine);
  r.text("engine_version", m.engineVersion);
  r.text("gpu", m.gpu);
  std::vector<std::string> presets = listHardwarePresets();
  if (r.ok() &&
      std::find(presets.begin(), presets.end(), m.gpu) == presets.end())
    r.fail("gpu",
           "'" + escapeJSONText(m.gpu) + "' is not a helix hardware preset");
  r.integer("gpus", 1, kMaxGPUs, m.gpus);
  r.text("model", m.model);
  r.dtype("weights_dtype", m.precision.weights);
  r.dtype("kv_dtype", m.precision.kvCache);
  r.dtype("compute_dtype", m.precision.compute);
  std::string strategy, layout, metric, e;
  r.text("strategy", strategy);
  if (r.ok() && !parseStrategy(strategy, m.config.strategy, e))
    r.fail("strategy", e);
  r.text("layout", layout);
  if (r.ok() && !parseLayout(layout, m.config.layout, e))
    r.fail("layout", e);
  if (r.ok() && m.config.layout.gpus() != m.gpus)
    r.fail("gpus", std::to_string(m.gpus) + " but the layout " +
                       m.config.layout.str() + " uses " +
                       std::to_string(m.config.layout.gpus()));
  m.config.gpus = m.gpus;
  r.integer("batch", 1, kMaxBatch, m.config.batch);
  r.integer("input_len", 0, kMaxContext / 2, m.inputLen);
  r.integer("output_len", 1, kMaxContext / 2, m.outputLen);
  r.text("metric", metric);
  if (r.ok()) {
    bool known = false;
    for (Metric k :
         {Metric::TPOTMs, Metric::ITLMs, Metric::StepMs, Metric::TokSUser})
      if (metric == stringifyMetric(k)) {
        m.metric = k;
        known = true;
      }
    if (!known)
      r.fail("metric", "unknown metric '" + escapeJSONText(metric) +
                           "' (expected tpot_ms, itl_ms, step_ms or "
                           "tok_s_user)");
  }
  r.number("value", m.value);
  r.text("speculative", m.speculative);
  std::string serving = "aggregated";
  r.text("serving", serving, false);
  if (r.ok() && serving != "aggregated" && serving != "disaggregated-decode")
    r.fail("serving", "'" + escapeJSONText(serving) +
                          "': expected 'aggregated' (the default) or "
                          "'disaggregated-decode' (one decode instance, its "
                          "prefills on other GPUs)");
  m.decodeOnly = serving == "disaggregated-decode";
  r.flag("derived", m.derived);
  r.text("formula", m.formula, m.derived);
  r.flag("excluded", m.excluded);
  r.text("exclude_reason", m.excludeReason, m.excluded);
  readMTP(row, r, m);
  if (r.ok() && m.speculative != "off" && !m.excluded && m.mtpTokens == 0)
    r.fail("speculative",
           "'" + escapeJSONText(m.speculative) +
               "': rows with speculative decoding must be marked excluded, "
               "unless they draft with the model's own MTP layer and say "
               "how many tokens (mtp_tokens)");
  r.text("source", m.source);
  r.text("locator", m.locator);
  std::string optional;
  r.text("layout_source", optional, false);
  r.text("note", optional, false);
  error = r.message();
  return r.ok();
}

/// The "engines" object: {"NAME": {"prefill": "mixed" | "separate",
/// "source": "...", "locator": "..."}}.
bool readEngines(const json &root, const std::string &path,
                 std::map<std::string, EngineProfile> &engines,
                 std::string &error) {
  auto it = root.find("engines");
  if (it == root.end() || !it->is_object() || it->empty()) {
    error = path + ": expected an \"engines\" object with one profile per "
                   "engine";
    return false;
  }
  engines.clear();
  for (auto e = it->begin(); e != it->end(); ++e) {
    std::string where = path + ": engine '" + escapeJSONText(e.key()) + "'";
    const json &p = e.value();
    if (!p.is_object()) {
      error = where + ": expected an object";
      return false;
    }
    for (auto f = p.begin(); f != p.end(); ++f)
      if (f.key() != "prefill" && f.key() != "source" && f.key() != "locator") {
        error =
            where + ": field '" + escapeJSONText(f.key()) + "': unknown field";
        return false;
      }
    EngineProfile profile;
    auto prefill = p.find("prefill");
    if (prefill == p.end() || !prefill->is_string() ||
        !parsePrefillScheduling(prefill->get<std::string>(), profile.prefill)) {
      error = where + ": field 'prefill': expected \"mixed\" or "
                      "\"separate\"";
      return false;
    }
    for (const char *key : {"source", "locator"}) {
      auto s = p.find(key);
      if (s == p.end() || !s->is_string() || s->get<std::string>().empty()) {
        error = where + ": field '" + key + "': expected a non-empty string";
        return false;
      }
    }
    profile.source = p["source"].get<std::string>();
    engines[e.key()] = profile;
  }
  return true;
}

} // namespace

bool parseFidelityTable(const std::string &path, std::vector<Measurement> &rows,
                        std::map<std::string, EngineProfile> &engines,
                        std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot read the file";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  json root;
  try {
    std::string e;
    if (!parseJSONChecked(text.str(), root, e)) {
      error = path + ": " + e;
      return false;
    }
  } catch (const json::exception &ex) {
    error = path + ": not valid JSON: " + ex.what();
    return false;
  }
  if (!root.is_object()) {
    error = path + ": expected an object with \"engines\" and \"rows\"";
    return false;
  }
  if (!readEngines(root, path, engines, error))
    return false;
  auto list = root.find("rows");
  if (list == root.end() || !list->is_array()) {
    error = path + ": expected an object with a \"rows\" array";
    return false;
  }
  rows.clear();
  std::set<std::string> ids;
  for (size_t i = 0; i < list->size(); ++i) {
    const json &row = (*list)[i];
    std::string where = path + ": row #" + std::to_string(i + 1);
    if (row.is_object()) {
      auto id = row.find("id");
      if (id != row.end() && id->is_string())
        where = path + ": row '" + escapeJSONText(id->get<std::string>()) +
                "' (#" + std::to_string(i + 1) + ")";
    }
    Measurement m;
    if (!readRow(row, where, m, error))
      return false;
    if (!engines.count(m.engine)) {
      error = where + ": field 'engine': '" + escapeJSONText(m.engine) +
              "' has no profile in the table's \"engines\"";
      return false;
    }
    if (!ids.insert(m.id).second) {
      error = where + ": field 'id': duplicate id";
      return false;
    }
    rows.push_back(std::move(m));
  }
  if (rows.empty()) {
    error = path + ": the \"rows\" array is empty";
    return false;
  }
  return true;
}

} // namespace helix::fidelity
