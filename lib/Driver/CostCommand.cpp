//===- CostCommand.cpp - helix cost ---------------------------------------===//

#include "Commands.h"
#include "CommonOptions.h"
#include "EmitConfig.h"
#include "OutputFile.h"
#include "Streams.h"

#include "helix/Cost/Evaluate.h"
#include "helix/Cost/PerLayer.h"
#include "helix/Plan/PlanJSON.h"
#include "helix/Plan/PlanText.h"

#include <iostream>
#include <memory>

namespace helix::driver {

namespace {
struct CostArgs {
  WorkloadArgs workload;
  std::string batch; // as typed (readInteger)
  std::string gpus = "0";
  std::string layout;
  std::string strategy = "helix";
  std::string hopb = "on";
  std::string json;
  std::vector<std::string> layerLayouts; // KIND=LAYOUT each
  EmitConfigArgs emit;
};
} // namespace

static int runCost(const CostArgs &args) {
  const char *cmd = "helix cost";
  LoadedWorkload in;
  EmitConfigArgs emit = args.emit;
  if (!checkEmitConfigArgs(cmd, emit))
    return 1;
  if (!loadWorkload(args.workload, cmd, in))
    return 1;
  Config config;
  std::string error;
  if (!parseLayout(args.layout, config.layout, error)) {
    cliErr() << cmd << ": error: --layout: " << error << "\n";
    return 1;
  }
  if (!parseStrategy(args.strategy, config.strategy, error)) {
    cliErr() << cmd << ": error: --strategy: " << error << "\n";
    return 1;
  }
  if (!readInteger(cmd, "--batch", args.batch, 1, kMaxBatch, config.batch) ||
      !readInteger(cmd, "--gpus", args.gpus, 0, kMaxGPUs, config.gpus))
    return 1;
  config.hopb = args.hopb == "on";

  // A per-layer plan: --layout's widths with the kinds named in their place.
  std::vector<KindLayout> kinds;
  for (const std::string &item : args.layerLayouts) {
    std::vector<KindLayout> more;
    if (!parseKindLayouts(item, more, error)) {
      cliErr() << cmd << ": error: --layer-layout: " << error << "\n";
      return 1;
    }
    for (const KindLayout &k : more)
      for (const KindLayout &seen : kinds)
        if (seen.kind == k.kind) {
          cliErr() << cmd << ": error: --layer-layout: "
                   << stringifyLayerKind(k.kind).str() << " given twice\n";
          return 1;
        }
    kinds.insert(kinds.end(), more.begin(), more.end());
  }
  PerLayerChoice choice;
  if (!kinds.empty()) {
    if (config.strategy != Strategy::Helix || !config.hopb) {
      cliErr() << cmd
               << ": error: --layer-layout: per-layer layouts are "
                  "Helix plans with HOP-B\n";
      return 1;
    }
    if (emit.wanted) {
      cliErr() << cmd
               << ": error: --layer-layout with --emit-config: no "
                  "serving engine runs one layout per kind of layer\n";
      return 1;
    }
    if (!choiceWithKinds(in.model, config.layout, kinds, choice, error)) {
      cliErr() << cmd << ": error: --layer-layout: " << error << "\n";
      return 1;
    }
  }

  Evaluation ev =
      kinds.empty()
          ? evaluate(in.model, in.hardware, in.workload, config)
          : evaluate(in.model, in.hardware, in.workload, config, choice);
  if (!ev.valid()) {
    cliErr() << cmd << ": error: invalid layout for " << in.model.name << ": "
             << ev.error << "\n";
    return 1;
  }
  const PerLayerChoice *perLayer = kinds.empty() ? nullptr : &choice;
  writeCostText(cliOut(), ev, in.model, in.hardware, in.workload, perLayer);
  if (!finishStdout(cmd))
    return 1;
  if (!args.json.empty() &&
      !writeOutputFile(cmd, args.json, [&](std::ostream &os) {
        writeCostJSON(os, ev, perLayer);
      }))
    return 1;
  if (emit.wanted && !emitEngineConfig(cmd, emit, in, config))
    return 1;
  return 0;
}

Action addCostCommand(CLI::App &app) {
  auto args = std::make_shared<CostArgs>();
  CLI::App *cmd = app.add_subcommand(
      "cost", "Price one configuration with the cost model and explain it "
              "per layer");
  addWorkloadOptions(cmd, args->workload);
  cmd->add_option("--batch", args->batch, "concurrent requests")->required();
  cmd->add_option("--layout", args->layout,
                  "e.g. kvp=4,tpa=8,tpf=32,ep=1 (pp=, dp= optional)")
      ->required();
  cmd->add_option("--layer-layout", args->layerLayouts,
                  "a per-layer Helix plan: one kind's layout, KIND=LAYOUT "
                  "(full_attention=kvp=..,tpa=.. | window_attention=... | "
                  "sparse_attention=... | linear_attention=tpa=.. | "
                  "mamba=tpa=.. | dense_ffn=tpf=.. | moe_ffn=tpf=..,ep=..), "
                  "repeatable; the other kinds take --layout's widths");
  cmd->add_option("--gpus", args->gpus,
                  "GPUs expected (checked against the layout)");
  cmd->add_option("--strategy", args->strategy,
                  "helix, helix-no-hopb, tp, tp-pp, ep or kvp")
      ->capture_default_str();
  cmd->add_option("--hopb", args->hopb, "HOP-B overlap: on or off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_option("--json", args->json, "write the evaluation as JSON");
  addEmitConfigOptions(cmd, args->emit, "this configuration");
  return [args] { return runCost(*args); };
}

} // namespace helix::driver
