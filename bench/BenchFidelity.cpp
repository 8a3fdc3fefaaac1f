//===- BenchFidelity.cpp - The cost model against published latencies -----===//
//
// Prices every row of data/fidelity/measurements.json with the current cost
// model and compares the token-to-token latency with the published decode
// step time (docs/fidelity.md). Each request is priced at a KV context of
// input + output / 2 tokens (its average over the decode) and the batch is
// the row's concurrency.
//
//   helix-bench-fidelity [--table FILE] [--models DIR] [--json]
//
// Prints one line per row and the mean absolute percentage error (MAPE) per
// group: dense/MoE x Hopper/Blackwell, weights precision, engine, overall.
// Exit status: 0 when every row parsed and every scored row was priced,
// 1 for bad input (the table, a flag, a model file), 2 when the cost model
// rejected a row (listed as an error, never dropped).
//
//===----------------------------------------------------------------------===//

#include "FidelityTable.h"

#include "helix/Cost/Evaluate.h"
#include "helix/Cost/Hardware.h"
#include "helix/Cost/Prefill.h"
#include "helix/Import/HFConfig.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using namespace helix;
using namespace helix::fidelity;

namespace {

const char *kTool = "helix-bench-fidelity";

/// GPU generation of a hardware preset.
std::string generation(const std::string &preset) {
  if (preset == "h100" || preset == "h200")
    return "hopper";
  if (preset == "b200" || preset == "gb200-nvl72" || preset == "gb300-nvl72")
    return "blackwell";
  return "other";
}

struct Result {
  const Measurement *row = nullptr;
  enum Status { Scored, Excluded, Error } status = Scored;
  std::string reason; // excluded or error
  bool moe = false;
  int64_t context = 0;
  double measuredMs = 0;
  double decodeMs = 0;  // helix's TTL for the decode step
  double prefillMs = 0; // prefill a served step absorbs (Prefill.h)
  double predictedMs = 0;
  bool fits = true;

  double ratio() const { return predictedMs / measuredMs; }
  std::string dtypes() const {
    const Precision &p = row->precision;
    return stringifyDType(p.weights).str() + "/" +
           stringifyDType(p.kvCache).str() + "/" +
           stringifyDType(p.compute).str();
  }
  std::string layout() const {
    return stringifyStrategy(row->config.strategy).str() + " " +
           row->config.layout.str();
  }
};

struct Group {
  std::string name;
  int n = 0;
  double absPct = 0, ratio = 0;
  double mape() const { return n ? absPct / n : 0; }
  double meanRatio() const { return n ? ratio / n : 0; }
};

/// Scored rows of every group, in print order.
std::vector<Group> summarize(const std::vector<Result> &results) {
  std::vector<Group> groups;
  std::map<std::string, size_t> index;
  auto add = [&](const std::string &name, const Result &r) {
    auto it = index.find(name);
    if (it == index.end()) {
      it = index.emplace(name, groups.size()).first;
      groups.push_back({name});
    }
    Group &g = groups[it->second];
    ++g.n;
    g.absPct += std::fabs(r.ratio() - 1) * 100;
    g.ratio += r.ratio();
  };
  for (const char *kind : {"dense", "moe"})
    for (const char *gen : {"hopper", "blackwell", "other"})
      for (const Result &r : results)
        if (r.status == Result::Scored &&
            (r.moe ? "moe" : "dense") == std::string(kind) &&
            generation(r.row->gpu) == gen)
          add(std::string(kind) + " " + gen, r);
  for (DType d : {DType::FP4, DType::FP8, DType::BF16})
    for (const Result &r : results)
      if (r.status == Result::Scored && r.row->precision.weights == d)
        add("weights " + stringifyDType(d).str(), r);
  std::map<std::string, bool> engines;
  for (const Result &r : results)
    engines[r.row->engine] = true;
  for (const auto &e : engines)
    for (const Result &r : results)
      if (r.status == Result::Scored && r.row->engine == e.first)
        add("engine " + e.first, r);
  for (const Result &r : results)
    if (r.status == Result::Scored)
      add("overall", r);
  return groups;
}

/// Prices one row; errors in the model file are input errors (false).
bool price(const Measurement &m, const EngineProfile &engine,
           const std::string &modelsDir, Result &r, std::string &error) {
  r.row = &m;
  r.context = m.context();
  r.measuredMs = m.measuredMs();
  ModelSpec model;
  std::string path = modelsDir + "/" + m.model;
  if (!importHFConfigFile(path, ImportOptions(), model, error)) {
    error = "row '" + m.id + "': field 'model': " + error;
    return false;
  }
  r.moe = model.numMoELayers() > 0;
  if (m.excluded) {
    r.status = Result::Excluded;
    r.reason = m.excludeReason;
    return true;
  }
  Hardware hw;
  if (!loadHardware(m.gpu, hw, error)) {
    error = "row '" + m.id + "': field 'gpu': " + error;
    return false;
  }
  Workload w;
  w.context = std::max<int64_t>(1, r.context);
  w.precision = m.precision;
  // FP4 as engines store it, NVFP4 with its block scales (helix's CLI
  // default too).
  w.precision.nvfp4BlockScales =
      w.precision.weights == DType::FP4 || w.precision.kvCache == DType::FP4;
  Evaluation ev = evaluate(model, hw, w, m.config);
  if (!ev.valid()) {
    r.status = Result::Error;
    r.reason = ev.error;
    return true;
  }
  r.decodeMs = ev.ttlS * 1e3;
  // A time per output token measured under concurrency also carries the
  // prefills of arriving requests, as the engine schedules them; an
  // engine's step time does not.
  if (m.metric != Metric::StepMs) {
    ServedPrefill p = servedPrefill(model, hw, w, m.config, m.inputLen,
                                    m.outputLen, engine.prefill);
    if (!p.error.empty()) {
      r.status = Result::Error;
      r.reason = "pricing the prefill: " + p.error;
      return true;
    }
    r.prefillMs = p.perStepS * 1e3;
  }
  r.predictedMs = r.decodeMs + r.prefillMs;
  r.fits = ev.fits;
  return true;
}

void printText(const std::string &table, const std::vector<Result> &results,
               const std::vector<Group> &groups) {
  int scored = 0, excluded = 0, errors = 0;
  for (const Result &r : results)
    (r.status == Result::Scored     ? scored
     : r.status == Result::Excluded ? excluded
                                    : errors)++;
  std::printf("%s: %zu rows from %s: %d scored, %d excluded, %d not "
              "evaluated\n",
              kTool, results.size(), table.c_str(), scored, excluded, errors);
  std::printf("priced at context = input + output/2 tokens per request, "
              "batch = concurrency; predicted = helix TTL (decode) + the "
              "prefill a step absorbs: (batch - 1) / output arrivals per "
              "step, their prompts priced as a forward of their own "
              "(engines that prefill separately) or as what they add to "
              "the decode step (mixed), not for step_ms rows "
              "(helix/Cost/Prefill.h)\n\n");
  int idW = 2, modelW = 5, layoutW = 6;
  for (const Result &r : results) {
    idW = std::max(idW, (int)r.row->id.size());
    modelW = std::max(modelW, (int)r.row->model.size());
    layoutW = std::max(layoutW, (int)r.layout().size());
  }
  std::printf("%-*s %-12s %-11s %-*s %-14s %-*s %6s %9s %9s %9s %9s %6s\n", idW,
              "id", "engine", "gpu", modelW, "model", "w/kv/math", layoutW,
              "layout", "batch", "meas_ms", "decode_ms", "prefill", "pred_ms",
              "ratio");
  for (const Result &r : results) {
    const Measurement &m = *r.row;
    std::printf("%-*s %-12s %-11s %-*s %-14s %-*s %6lld %9.3f ", idW,
                m.id.c_str(), m.engine.c_str(), m.gpu.c_str(), modelW,
                m.model.c_str(), r.dtypes().c_str(), layoutW,
                r.layout().c_str(), (long long)m.config.batch, r.measuredMs);
    if (r.status == Result::Scored)
      std::printf("%9.3f %9.3f %9.3f %6.2f%s\n", r.decodeMs, r.prefillMs,
                  r.predictedMs, r.ratio(),
                  r.fits ? "" : "  (does not fit in HBM)");
    else if (r.status == Result::Excluded)
      std::printf("%9s %9s %9s %6s  excluded: %s\n", "-", "-", "-", "-",
                  r.reason.c_str());
    else
      std::printf("%9s %9s %9s %6s  error: %s\n", "-", "-", "-", "-",
                  r.reason.c_str());
  }
  std::printf("\nsummary (scored rows; MAPE = mean |pred/meas - 1|):\n");
  std::printf("%-28s %4s %9s %12s\n", "group", "n", "MAPE", "mean ratio");
  for (const Group &g : groups)
    std::printf("%-28s %4d %8.1f%% %12.2f\n", g.name.c_str(), g.n, g.mape(),
                g.meanRatio());
}

void printJSON(const std::string &table, const std::vector<Result> &results,
               const std::vector<Group> &groups) {
  nlohmann::json out;
  out["table"] = table;
  out["context_rule"] = "input_len + output_len / 2";
  nlohmann::json rows = nlohmann::json::array();
  for (const Result &r : results) {
    const Measurement &m = *r.row;
    nlohmann::json j = {{"id", m.id},
                        {"engine", m.engine},
                        {"gpu", m.gpu},
                        {"model", m.model},
                        {"moe", r.moe},
                        {"generation", generation(m.gpu)},
                        {"dtypes", r.dtypes()},
                        {"strategy", stringifyStrategy(m.config.strategy)},
                        {"layout", m.config.layout.str()},
                        {"batch", m.config.batch},
                        {"context", r.context},
                        {"metric", stringifyMetric(m.metric)},
                        {"derived", m.derived},
                        {"measured_ms", r.measuredMs}};
    if (r.status == Result::Scored) {
      j["status"] = "scored";
      j["decode_ms"] = r.decodeMs;
      j["prefill_ms"] = r.prefillMs;
      j["predicted_ms"] = r.predictedMs;
      j["ratio"] = r.ratio();
      j["fits"] = r.fits;
    } else {
      j["status"] = r.status == Result::Excluded ? "excluded" : "error";
      j["reason"] = r.reason;
    }
    rows.push_back(j);
  }
  out["rows"] = rows;
  nlohmann::json gs = nlohmann::json::array();
  for (const Group &g : groups)
    gs.push_back({{"group", g.name},
                  {"n", g.n},
                  {"mape_pct", g.mape()},
                  {"mean_ratio", g.meanRatio()}});
  out["groups"] = gs;
  std::cout << out.dump(2) << "\n";
}

int usage() {
  std::fprintf(stderr,
               "usage: %s [--table FILE] [--models DIR] [--json]\n"
               "  --table FILE  measurements (default %s)\n"
               "  --models DIR  where the rows' model configs are (default "
               "%s)\n"
               "  --json        machine-readable output on stdout\n",
               kTool, HELIX_FIDELITY_TABLE, HELIX_FIDELITY_MODELS);
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  std::string table = HELIX_FIDELITY_TABLE, modelsDir = HELIX_FIDELITY_MODELS;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json")
      json = true;
    else if ((a == "--table" || a == "--models") && i + 1 < argc)
      (a == "--table" ? table : modelsDir) = argv[++i];
    else if (a == "-h" || a == "--help")
      return usage(), 0;
    else {
      std::fprintf(stderr, "%s: error: unknown or incomplete argument '%s'\n",
                   kTool, a.c_str());
      return usage();
    }
  }
  std::vector<Measurement> rows;
  std::map<std::string, EngineProfile> engines;
  std::string error;
  if (!parseFidelityTable(table, rows, engines, error)) {
    std::fprintf(stderr, "%s: error: %s\n", kTool, error.c_str());
    return 1;
  }
  std::vector<Result> results(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    if (!price(rows[i], engines.at(rows[i].engine), modelsDir, results[i],
               error)) {
      std::fprintf(stderr, "%s: error: %s: %s\n", kTool, table.c_str(),
                   error.c_str());
      return 1;
    }
  std::vector<Group> groups = summarize(results);
  if (json)
    printJSON(table, results, groups);
  else
    printText(table, results, groups);
  std::fflush(stdout);
  if (std::ferror(stdout)) {
    std::fprintf(stderr, "%s: error: writing <stdout> failed\n", kTool);
    return 1;
  }
  int status = 0;
  for (const Result &r : results)
    if (r.status == Result::Error) {
      std::fprintf(stderr, "%s: error: %s: row '%s' not evaluated: %s\n", kTool,
                   table.c_str(), r.row->id.c_str(), r.reason.c_str());
      status = 2;
    }
  return status;
}
