//===- PlanCommand.cpp - helix plan ---------------------------------------===//

#include "Commands.h"
#include "CommonOptions.h"
#include "EmitConfig.h"
#include "OutputFile.h"
#include "Streams.h"

#include "helix/Cost/Search.h"
#include "helix/Plan/Gains.h"
#include "helix/Plan/PlanCSV.h"
#include "helix/Plan/PlanJSON.h"
#include "helix/Plan/PlanSVG.h"
#include "helix/Plan/PlanText.h"

#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>

namespace helix::driver {

namespace {
/// The most --rows: more than any front has.
constexpr int64_t kMaxRows = 1000000;

struct PlanArgs {
  WorkloadArgs workload;
  // Numbers as typed (readInteger, readReal).
  std::string maxGPUs = "64";
  std::string minGPUs = "1";
  std::string ttlMs = "0";
  std::string strategies = "helix,tp,tp-pp,ep,kvp";
  std::string json, csv, svg;
  std::string rows = "12";
  EmitConfigArgs emit;
  std::string emitFor; // --emit-config-for, as typed (default helix)
  std::string perLayer = "on";
};
} // namespace

static int runPlan(const PlanArgs &args) {
  const char *cmd = "helix plan";
  EmitConfigArgs emit = args.emit;
  if (!checkEmitConfigArgs(cmd, emit))
    return 1;
  if (!args.emitFor.empty() && !emit.wanted) {
    cliErr() << cmd
             << ": error: --emit-config-for needs --emit-config "
                "ENGINE\n";
    return 1;
  }
  const std::string emitFor = args.emitFor.empty() ? "helix" : args.emitFor;
  if (emitFor != "helix" && emitFor != "baseline") {
    cliErr() << cmd
             << ": error: --emit-config-for: expected helix or "
                "baseline, got '"
             << emitFor << "'\n";
    return 1;
  }
  LoadedWorkload in;
  if (!loadWorkload(args.workload, cmd, in))
    return 1;
  SearchOptions opts;
  std::string error;
  if (!parseStrategyList(args.strategies, opts.strategies, error)) {
    cliErr() << cmd << ": error: --strategies: " << error << "\n";
    return 1;
  }
  int64_t rows = 0;
  if (!readInteger(cmd, "--min-gpus", args.minGPUs, 1, kMaxGPUs,
                   opts.minGPUs) ||
      !readInteger(cmd, "--max-gpus", args.maxGPUs, opts.minGPUs, kMaxGPUs,
                   opts.maxGPUs) ||
      !readReal(cmd, "--ttl-ms", args.ttlMs, 0,
                std::numeric_limits<double>::max(), opts.ttlMs) ||
      !readInteger(cmd, "--rows", args.rows, 0, kMaxRows, rows))
    return 1;
  if (args.perLayer != "on" && args.perLayer != "off") {
    cliErr() << cmd << ": error: --per-layer: expected on or off, got '"
             << args.perLayer << "'\n";
    return 1;
  }
  // The HOP-B ablation is part of every report that has Helix in it.
  auto has = [&](Strategy s) {
    return std::find(opts.strategies.begin(), opts.strategies.end(), s) !=
           opts.strategies.end();
  };
  if (has(Strategy::Helix) && !has(Strategy::HelixNoHopB))
    opts.strategies.push_back(Strategy::HelixNoHopB);
  opts.perLayer = args.perLayer == "on" && has(Strategy::Helix);
  if (opts.perLayer && in.workload.mtpTokens > 0) {
    // The per-layer search composes layer times itself and does not price
    // draft passes yet: say so rather than mix two kinds of TTL.
    cliErr() << cmd
             << ": note: --mtp: per-layer layouts are not searched with "
                "speculative decoding yet (--per-layer off)\n";
    opts.perLayer = false;
  }
  PlanResult result = search(in.model, in.hardware, in.workload, opts);

  TextOptions text;
  text.maxRowsPerFront = size_t(rows);
  writePlanSummary(cliOut(), result, in.model, in.hardware, text);
  bool ok = finishStdout(cmd);
  if (!args.json.empty())
    ok &= writeOutputFile(cmd, args.json,
                          [&](std::ostream &os) { writePlanJSON(os, result); });
  if (!args.csv.empty())
    ok &= writeOutputFile(cmd, args.csv,
                          [&](std::ostream &os) { writePlanCSV(os, result); });
  if (!args.svg.empty())
    ok &= writeOutputFile(cmd, args.svg,
                          [&](std::ostream &os) { writePlanSVG(os, result); });
  if (emit.wanted) {
    // The configuration the summary shows as "Helix" (or "Baseline").
    const Frontier *f = result.frontier(emitFor);
    const PlanPoint *pt = f ? chosenPoint(result, *f) : nullptr;
    if (!pt) {
      std::string why = f && f->empty() ? "none fits in memory"
                        : f             ? "none meets the --ttl-ms budget"
                        : emitFor == "helix"
                            ? "--strategies has no helix"
                            : "--strategies has no baseline (tp, tp-pp, ep, "
                              "kvp)";
      cliErr() << cmd << ": error: --emit-config: no " << emitFor
               << " configuration to write: " << why << "\n";
      return 1;
    }
    ok &= emitEngineConfig(cmd, emit, in, pt->config, opts.ttlMs);
  }
  return ok ? 0 : 1;
}

Action addPlanCommand(CLI::App &app) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App *cmd = app.add_subcommand(
      "plan", "Search sharding layouts (Helix and the baselines) and report "
              "the throughput/latency Pareto fronts");
  addWorkloadOptions(cmd, args->workload);
  cmd->add_option("--max-gpus", args->maxGPUs,
                  "largest GPU count searched (at most " +
                      std::to_string(kMaxGPUs) + ")")
      ->capture_default_str();
  cmd->add_option("--min-gpus", args->minGPUs, "smallest GPU count searched")
      ->capture_default_str();
  cmd->add_option("--ttl-ms", args->ttlMs,
                  "token-to-token latency budget in ms: report the best "
                  "configuration under it and the largest batch meeting it");
  cmd->add_option("--strategies", args->strategies,
                  "comma-separated: helix, helix-no-hopb, tp, tp-pp, ep, kvp "
                  "(with helix, helix-no-hopb is added for the HOP-B ablation; "
                  "baseline is the best of the baselines given)")
      ->capture_default_str();
  cmd->add_option("--per-layer", args->perLayer,
                  "on or off: also search one Helix layout per kind of layer "
                  "(full / window / sparse attention, linear attention, "
                  "Mamba, dense / MoE FFN) and report its "
                  "gain over one layout for all (docs/per-layer-layouts.md)")
      ->capture_default_str();
  cmd->add_option("--json", args->json, "write the fronts as JSON");
  cmd->add_option("--csv", args->csv, "write the fronts as CSV");
  cmd->add_option("--svg", args->svg, "draw the fronts as SVG");
  addEmitConfigOptions(cmd, args->emit,
                       "the configuration the summary shows as Helix (the "
                       "best under --ttl-ms, else the fastest)");
  cmd->add_option("--emit-config-for", args->emitFor,
                  "helix (default) or baseline: which chosen configuration "
                  "--emit-config writes");
  cmd->add_option("--rows", args->rows,
                  "rows shown per front in the summary (0: all; at most " +
                      std::to_string(kMaxRows) + ")")
      ->capture_default_str();
  return [args] { return runPlan(*args); };
}

} // namespace helix::driver
