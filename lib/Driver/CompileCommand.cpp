//===- CompileCommand.cpp - helix compile ---------------------------------===//
//
// Plans a configuration (an explicit layout, validated, or the layout
// search) and runs the sharding pipeline to planned IR or rank IR.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CommonOptions.h"
#include "OutputFile.h"
#include "Streams.h"

#include "helix/Codegen/ProjectWriter.h"
#include "helix/Common/Speculative.h"
#include "helix/Cost/Evaluate.h"
#include "helix/Cost/PerLayer.h"
#include "helix/Dialect/Helix/HelixAttributes.h"
#include "helix/Dialect/Helix/HelixDialect.h"
#include "helix/InitAllHelix.h"
#include "helix/ModelIR/ModelIR.h"
#include "helix/Plan/PlanJSON.h"
#include "helix/Plan/Planning.h"
#include "helix/Transforms/DraftProgram.h"
#include "helix/Transforms/Passes.h"
#include "helix/Transforms/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>
#include <limits>
#include <memory>
#include <sstream>

namespace helix::driver {

namespace {
struct CompileArgs {
  WorkloadArgs workload;
  // Numbers as typed (readInteger, readReal).
  std::string gpus;
  std::string batch;
  std::string layout;
  std::string strategy = "helix";
  std::string hopb = "on";
  std::string ttlMs = "0";
  std::string kvBlock = "16";
  std::string slices = "auto";
  std::string emit = "rank-ir";
  std::string output = "-";
  std::string backend = "cpu";
  std::string perLayer = "off";
  bool perLayerGiven = false;
  std::vector<std::string> layerLayouts; // KIND=LAYOUT each
};
} // namespace

static int fail(const std::string &message) {
  cliErr() << "helix compile: error: " << message << "\n";
  return 1;
}

/// The planning request of the arguments.
static bool makeRequest(const CompileArgs &args, PlanRequest &request,
                        std::string &error) {
  request.hardware = hardwareSpec(args.workload);
  request.hopb = args.hopb == "on";
  if (!parseStrategy(args.strategy, request.strategy, error)) {
    error = "--strategy: " + error;
    return false;
  }
  // Without HOP-B, Helix is helix-no-hopb (and the plan says so).
  if (!request.hopb && request.strategy == Strategy::Helix)
    request.strategy = Strategy::HelixNoHopB;
  if (!args.layout.empty()) {
    Layout layout;
    if (!parseLayout(args.layout, layout, error)) {
      error = "--layout: " + error;
      return false;
    }
    request.layout = layout;
  }
  request.perLayer = args.perLayer == "on";
  for (const std::string &item : args.layerLayouts) {
    std::vector<KindLayout> kinds;
    if (!parseKindLayouts(item, kinds, error)) {
      error = "--layer-layout: " + error;
      return false;
    }
    for (const KindLayout &k : kinds) {
      for (const KindLayout &seen : request.layerLayouts)
        if (seen.kind == k.kind) {
          error = "--layer-layout: " + stringifyLayerKind(k.kind).str() +
                  " given twice";
          return false;
        }
      request.layerLayouts.push_back(k);
    }
  }
  if (!request.layerLayouts.empty() && args.perLayer == "off" &&
      args.perLayerGiven) {
    error = "--layer-layout needs --per-layer on (or no --per-layer)";
    return false;
  }
  if (request.perLayer && !request.hopb) {
    error = "--per-layer on: per-layer layouts are Helix plans with HOP-B "
            "(not --hopb off)";
    return false;
  }
  return true;
}

/// helix-estimate-cost on a copy of the rank IR `program` (what the project
/// runs): the step's estimate as plan.json records it, or "" when the pass
/// fails. A speculative program's estimate is per accepted token (the verify
/// step and its draft passes), with the two in `mtp`.
static std::string estimateJSON(mlir::ModuleOp program) {
  mlir::OwningOpRef<mlir::ModuleOp> copy = program.clone();
  mlir::PassManager pm(program.getContext());
  pm.addPass(mlir::helix::createHelixEstimateCost());
  if (mlir::failed(pm.run(*copy)))
    return "";
  auto costOf = [](mlir::Operation *op) {
    return op->getAttrOfType<mlir::helix::CostAttr>(::mlir::helix::attrs::cost);
  };
  auto cost = costOf(*copy);
  if (!cost)
    return "";
  auto ms = [](const llvm::APFloat &us) { return us.convertToDouble() / 1e3; };
  llvm::json::Object estimate{
      {"source", "helix-estimate-cost on the rank IR"},
      {"ttl_ms", ms(cost.getTimeUs())},
      {"time_ms",
       llvm::json::Object{{"kv_read", ms(cost.getKvReadUs())},
                          {"weight_read", ms(cost.getWeightReadUs())},
                          {"compute", ms(cost.getComputeUs())},
                          {"kernel_overhead", ms(cost.getOverheadUs())},
                          {"exposed_comm", ms(cost.getCommUs())},
                          {"pipeline_stall", ms(cost.getStallUs())}}},
      {"comm_total_ms", ms(cost.getCommTotalUs())},
      {"bytes", cost.getBytes().convertToDouble()},
      {"flops", cost.getFlops().convertToDouble()}};
  if (auto mtp = (*copy)->getAttrOfType<mlir::helix::MTPAttr>(
          ::mlir::helix::attrs::mtp)) {
    mlir::helix::CostAttr verify, draft;
    for (auto f : copy->getOps<mlir::func::FuncOp>()) {
      if (f->hasAttr(::mlir::helix::attrs::stage) && costOf(f))
        verify = costOf(f);
      if (f->hasAttr(::mlir::helix::attrs::draftStage) && costOf(f))
        draft = costOf(f);
    }
    if (!verify || !draft)
      return "";
    estimate["mtp"] = llvm::json::Object{
        {"draft_tokens", mtp.getDraftTokens()},
        {"expected_accepted_tokens",
         expectedAcceptedTokens(mtp.getDraftTokens(),
                                mtp.getAcceptance().convertToDouble())},
        {"verify_step_ms", ms(verify.getTimeUs())},
        {"draft_pass_ms", ms(draft.getTimeUs())}};
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(estimate));
  return text;
}

static int runCompile(const CompileArgs &args) {
  const char *cmd = "helix compile";
  if (args.emit == "project" && args.output == "-")
    return fail("--emit project: the project directory is required (-o DIR)");
  PlanRequest request;
  int64_t kvBlock = 0;
  if (!readInteger(cmd, "--gpus", args.gpus, 1, kMaxGPUs, request.gpus) ||
      !readInteger(cmd, "--batch", args.batch, 1, kMaxBatch, request.batch) ||
      !readReal(cmd, "--ttl-ms", args.ttlMs, 0,
                std::numeric_limits<double>::max(), request.ttlMs))
    return 1;
  LoadedWorkload in;
  // A block is at most the context (a longer one leaves every rank but the
  // first empty).
  if (!loadWorkload(args.workload, cmd, in) ||
      !readInteger(cmd, "--kv-block", args.kvBlock, 1, in.workload.context,
                   kvBlock))
    return 1;
  std::string unsupported;
  if (args.emit != "planned-ir" && !in.model.onlyClassicLayers(&unsupported))
    return fail(args.workload.model + ": " + unsupported +
                ": helix plans and prices this model (helix plan, helix "
                "cost, --emit planned-ir) but cannot generate its program "
                "yet (docs/long-context-architectures.md)");
  if (!in.model.quantMethod.empty() && in.model.quantFormat.empty())
    return fail(args.workload.model + ": quantization_config.quant_method \"" +
                in.model.quantMethod +
                "\": generated programs load fp8 (128x128 blocks), modelopt "
                "FP8 or NVFP4 and mxfp4 checkpoints, not this one");
  in.workload.kvBlock = kvBlock; // the shards hold whole blocks
  // The program keeps FP4 as NVFP4 (docs/quantization.md): an E4M3 scale
  // per 16 values, so the plan it is compiled from counts them.
  Precision &precision = in.workload.precision;
  if (precision.weights == DType::FP4 || precision.kvCache == DType::FP4)
    precision.nvfp4BlockScales = true;
  PlanRecord record;
  std::string error;
  if (!makeRequest(args, request, error))
    return fail(error);
  if (in.workload.mtpTokens > 0 &&
      (request.perLayer || !request.layerLayouts.empty()))
    return fail("--mtp " + args.workload.mtp +
                ": speculative programs are compiled with one layout for "
                "all layers (the per-layer search does not price drafts); "
                "drop --per-layer on / --layer-layout");
  if (!choosePlan(in.model, in.hardware, in.workload, request, record, error))
    return fail(error);
  // The speculative schedule runs one verify step and its draft passes on
  // every rank at once: no pipeline stages, no DP attention replicas.
  const Layout &chosen = record.config.layout;
  if (in.workload.mtpTokens > 0 && (chosen.pp > 1 || chosen.dp > 1))
    return fail("--mtp " + args.workload.mtp +
                ": speculative programs run without pipeline stages or DP "
                "attention, but the " +
                stringifyStrategy(record.config.strategy).str() + " plan " +
                chosen.str() + " has pp=" + std::to_string(chosen.pp) +
                ", dp=" + std::to_string(chosen.dp));

  // HOP-B slices: the count the cost model finds best (what choosePlan
  // fixed), one per request (the paper's), or the user's; the plan records
  // them and is priced with them.
  if (args.slices == "per-request") {
    fixHopBSlices(in.model, in.hardware, record, record.config.batch);
  } else if (args.slices != "auto") {
    int64_t slices = 0;
    if (!parseInteger("--slices", args.slices, 1, kMaxBatch, slices, error))
      return fail(error + " (or auto, per-request)");
    fixHopBSlices(in.model, in.hardware, record, slices);
  }
  record.kvBlock = kvBlock;

  mlir::DialectRegistry registry;
  registerAllHelixDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string diagnostic;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (diagnostic.empty() &&
        d.getSeverity() == mlir::DiagnosticSeverity::Error)
      diagnostic = d.str();
    return mlir::success();
  });
  // With --mtp the decode step is the verify step: K + 1 query rows per
  // request, returning the hidden state the drafter reads.
  bool speculative = in.workload.mtpTokens > 0;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildModelIR(context, in.model, speculative);
  applyPlan(findDecodeStep(*module), record);
  mlir::OwningOpRef<mlir::ModuleOp> draft; // the MTP drafter's rank IR
  if (args.emit == "rank-ir" || args.emit == "project") {
    ShardingPipelineOptions options;
    options.hopb = args.hopb == "on";
    options.slices = record.config.hopbSlices;
    options.kvBlock = record.kvBlock;
    mlir::PassManager pm(&context);
    buildShardingPipeline(pm, options);
    if (mlir::failed(pm.run(*module)) ||
        (speculative &&
         !(draft = buildDraftProgram(context, in.model, record, options))))
      return fail(diagnostic.empty() ? "the sharding pipeline failed"
                                     : diagnostic);
  }
  if (draft && mlir::failed(mergeDraftProgram(*module, *draft)))
    return fail(diagnostic.empty() ? "cannot add the MTP drafter" : diagnostic);
  if (args.emit == "project") {
    // What the emitted program costs: its rank IR priced.
    std::string estimate = estimateJSON(*module);
    if (estimate.empty())
      return fail(diagnostic.empty() ? "helix-estimate-cost failed"
                                     : diagnostic);
    ProjectOptions project;
    project.outputDir = args.output;
    project.backend = args.backend;
    std::ostringstream cost;
    writeCostJSON(cost,
                  record.perLayer ? evaluate(in.model, in.hardware, in.workload,
                                             record.config, *record.perLayer)
                                  : evaluate(in.model, in.hardware, in.workload,
                                             record.config),
                  record.perLayer ? &*record.perLayer : nullptr);
    project.costJson = cost.str();
    project.estimateJson = estimate;
    project.origin = "helix compile --model " + args.workload.model +
                     " --emit project --backend " + args.backend;
    if (!writeProject(*module, project, error))
      return fail(error);
    return 0;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  if (speculative && args.emit == "planned-ir") {
    // The drafter's planned IR follows as a second module
    // (helix-opt --split-input-file takes both).
    mlir::OwningOpRef<mlir::ModuleOp> planned =
        buildDraftModelIR(context, in.model);
    applyPlan(findDecodeStep(*planned), record);
    os << "\n// -----\n";
    planned->print(os);
  }
  return writeOutputFile(cmd, args.output,
                         [&](std::ostream &out) { out << text; })
             ? 0
             : 1;
}

Action addCompileCommand(CLI::App &app) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App *cmd = app.add_subcommand(
      "compile", "Plan a configuration and compile the decode step to "
                 "per-rank SPMD programs (rank IR) or planned IR");
  addWorkloadOptions(cmd, args->workload);
  cmd->add_option("--gpus", args->gpus, "GPUs")->required();
  cmd->add_option("--batch", args->batch, "concurrent requests")->required();
  cmd->add_option("--layout", args->layout,
                  "e.g. kvp=4,tpa=8,tpf=32,ep=1 (pp=, dp= optional); "
                  "searched when not given");
  cmd->add_option("--strategy", args->strategy,
                  "helix, helix-no-hopb, tp, tp-pp, ep or kvp")
      ->capture_default_str();
  cmd->add_option("--hopb", args->hopb, "HOP-B overlap: on or off")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_option("--ttl-ms", args->ttlMs,
                  "search: the most tokens/s/GPU within this latency "
                  "budget (default: the fastest configuration)");
  cmd->add_option("--kv-block", args->kvBlock,
                  "tokens appended to one KVP rank before the next")
      ->capture_default_str();
  cmd->add_option("--slices", args->slices,
                  "HOP-B batch slices: auto (the count the cost model finds "
                  "best), per-request (the paper's) or a number; the plan "
                  "records them and is priced with them")
      ->capture_default_str();
  cmd->add_option("--per-layer", args->perLayer,
                  "on: one Helix layout per kind of layer (window / full "
                  "attention, dense / MoE FFN) on --gpus at --batch, the "
                  "fastest that fits unless --layer-layout fixes kinds "
                  "(docs/per-layer-layouts.md)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str()
      ->each([args](const std::string &) { args->perLayerGiven = true; });
  cmd->add_option("--layer-layout", args->layerLayouts,
                  "a per-layer plan's layout of one kind, KIND=LAYOUT: "
                  "full_attention=kvp=..,tpa=.. | window_attention=... | "
                  "sparse_attention=... | linear_attention=tpa=.. | "
                  "mamba=tpa=.. | dense_ffn=tpf=.. | moe_ffn=tpf=..,ep=.. "
                  "(repeatable; other kinds take --layout's widths)");
  cmd->add_option("--emit", args->emit,
                  "planned-ir, rank-ir, or project (a CMake project of the "
                  "generated host code in the -o directory)")
      ->check(CLI::IsMember({"planned-ir", "rank-ir", "project"}))
      ->capture_default_str();
  cmd->add_option("--backend", args->backend,
                  "--emit project: the runtime it links, cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", args->output,
                  "output file (default: stdout), or the project directory");
  return [args] { return runCompile(*args); };
}

} // namespace helix::driver
