//===- CommonOptions.cpp - Options shared by helix subcommands ------------===//

#include "CommonOptions.h"

#include "Streams.h"
#include "helix/Cost/EngineProfile.h"

#include "helix/Import/HFConfig.h"
#include "helix/InitAllHelix.h"
#include "helix/ModelIR/ModelIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace helix::driver {

/// "0.64": a default as the help text shows it.
static std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string hardwareSpec(const WorkloadArgs &args) {
  return args.engine.empty() ? args.hardware
                             : args.hardware + "+" + args.engine;
}

void addWorkloadOptions(CLI::App *cmd, WorkloadArgs &args) {
  cmd->add_option("--model", args.model,
                  "the model: a Hugging Face config.json, or helix model IR "
                  "(.mlir); - reads either from standard input")
      ->required();
  std::string presets;
  for (const std::string &p : listHardwarePresets())
    presets += (presets.empty() ? "" : ", ") + p;
  cmd->add_option("--hardware", args.hardware,
                  "hardware preset (" + presets + ") or a hardware JSON file")
      ->capture_default_str();
  cmd->add_option("--engine", args.engine,
                  "price with a serving engine's own kernel and all-reduce "
                  "curves, measured on the preset's GPU: trtllm, vllm or "
                  "sglang (default: the presets' engine-neutral curves; "
                  "docs/cost-model.md, \"Engine profiles\")");
  cmd->add_option("--context", args.context, "KV context length in tokens")
      ->capture_default_str();
  cmd->add_option("--dtype", args.dtype,
                  "precision of weights, KV cache and math: fp4, fp8, bf16 "
                  "(default: the hardware's narrowest native format, fp4 "
                  "on Blackwell, fp8 on Hopper)")
      ->each([&args](const std::string &) { args.dtypeGiven[0] = true; });
  cmd->add_option("--weights-dtype", args.weightsDType,
                  "precision of the weights (overrides --dtype)")
      ->each([&args](const std::string &) { args.dtypeGiven[1] = true; });
  cmd->add_option("--kv-dtype", args.kvDType,
                  "precision of the KV cache (overrides --dtype)")
      ->each([&args](const std::string &) { args.dtypeGiven[2] = true; });
  cmd->add_option("--compute-dtype", args.computeDType,
                  "precision of the arithmetic (overrides --dtype)")
      ->each([&args](const std::string &) { args.dtypeGiven[3] = true; });
  cmd->add_flag("--nvfp4-scales", args.nvfp4Scales,
                "count NVFP4 block scales: FP4 values take 0.5625 bytes (the "
                "default whenever a stored format is fp4)");
  // Always read (an empty value typed is an error, not the default).
  args.routingSkew = fmt(kDefaultRoutingSkew);
  cmd->add_option("--routing-skew", args.routingSkew,
                  "MoE: Zipf exponent of expert popularity, 0 = uniform "
                  "routing (default " +
                      fmt(kDefaultRoutingSkew) +
                      ", from measured DeepSeek-R1 routing; "
                      "docs/cost-model.md)");
  cmd->add_flag("--balanced-experts", args.balancedExperts,
                "MoE: price every EP rank at the mean expert load (a load "
                "balancer that replicates hot experts) instead of the "
                "busiest rank's");
  cmd->add_option("--mtp", args.mtp,
                  "speculative decoding with the model's MTP layer: draft "
                  "tokens per step (0: off, at most " +
                      std::to_string(kMaxMTPTokens) + ")")
      ->capture_default_str();
  args.acceptance = fmt(kDefaultMTPAcceptance);
  cmd->add_option("--acceptance", args.acceptance,
                  "MTP: probability that each draft token is accepted "
                  "(default " +
                      fmt(kDefaultMTPAcceptance) +
                      ", from the DeepSeek-V3 report; docs/cost-model.md)");
  cmd->add_flag("--no-nvfp4-scales", args.noNvfp4Scales,
                "FP4 values take 0.5 bytes, scales not counted (the Helix "
                "paper's convention; helix compile always counts them)");
}

bool readInteger(const std::string &command, const std::string &flag,
                 const std::string &text, int64_t min, int64_t max,
                 int64_t &out) {
  std::string error;
  if (parseInteger(flag, text, min, max, out, error))
    return true;
  cliErr() << command << ": error: " << error << "\n";
  return false;
}

bool readReal(const std::string &command, const std::string &flag,
              const std::string &text, double min, double max, double &out) {
  std::string error;
  if (parseReal(flag, text, min, max, out, error))
    return true;
  cliErr() << command << ": error: " << error << "\n";
  return false;
}

bool finishStdout(const std::string &command) {
  // errno still holds the failed write's reason when the stream failed.
  int err = errno;
  cliOut().flush();
  bool lost = !cliOut();
  if (lost && errno)
    err = errno;
  if (cliOutIsProcessStdout() &&
      (std::fflush(stdout) != 0 || std::ferror(stdout))) {
    lost = true;
    err = errno;
  }
  if (!lost)
    return true;
  cliErr() << command << ": error: writing <stdout>: "
           << (err ? std::strerror(err) : "write failed") << "\n";
  return false;
}

/// Loads a ModelSpec from helix model IR: the file at `path`, or `text`
/// when given (`path` then names it in messages).
static bool loadModelIR(const std::string &path, const std::string *text,
                        ModelSpec &spec, std::string &error) {
  mlir::DialectRegistry registry;
  registerAllHelixDialects(registry);
  mlir::MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  std::string diag;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    if (diag.empty()) {
      llvm::raw_string_ostream os(diag);
      os << d.getLocation() << ": " << d.str();
    }
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      text ? mlir::parseSourceString<mlir::ModuleOp>(
                 *text, mlir::ParserConfig(&context), path)
           : mlir::parseSourceFile<mlir::ModuleOp>(path, sourceMgr, &context);
  if (!module) {
    error = diag.empty() ? path + ": cannot read or parse the IR" : diag;
    return false;
  }
  mlir::func::FuncOp func = findDecodeStep(*module);
  if (!func) {
    error = path + ": no helix decode-step function (func.func @decode_step)";
    return false;
  }
  mlir::FailureOr<ModelSpec> extracted = extractModelSpec(func);
  if (mlir::failed(extracted)) {
    error = diag;
    return false;
  }
  spec = *extracted;
  return true;
}

bool loadWorkload(const WorkloadArgs &args, const std::string &command,
                  LoadedWorkload &out) {
  std::string error;
  auto fail = [&] {
    cliErr() << command << ": error: " << error << "\n";
    return false;
  };
  // "--model -": config.json text or model IR on standard input (or the
  // in-process run's input), told apart by its first character.
  bool fromInput = args.model == "-";
  std::string text;
  if (fromInput && !readCliInput(text, error))
    return fail();
  size_t first = text.find_first_not_of(" \t\r\n");
  bool isIR = fromInput ? first != std::string::npos && text[first] != '{'
                        : args.model.size() > 5 &&
                              args.model.compare(args.model.size() - 5, 5,
                                                 ".mlir") == 0;
  const std::string source = fromInput ? cliInputName() : args.model;
  bool loaded =
      isIR ? loadModelIR(source.empty() ? "<input>" : source,
                         fromInput ? &text : nullptr, out.model, error)
      : fromInput
          ? importHFConfigString(text, source, ImportOptions{}, out.model,
                                 error)
          : importHFConfigFile(args.model, ImportOptions{}, out.model, error);
  if (!loaded)
    return fail();
  if (isIR) // model IR imported with --mtp carries its MTP layers
    for (const LayerSpec &l : out.model.layers)
      out.model.mtpLayers += l.isMTP;
  if (!args.engine.empty()) {
    const std::vector<std::string> &engines = listEngineProfiles();
    if (std::find(engines.begin(), engines.end(), args.engine) ==
        engines.end()) {
      error = "--engine: unknown engine '" + args.engine +
              "' (expected trtllm, vllm or sglang)";
      return fail();
    }
  }
  if (!loadHardware(hardwareSpec(args), out.hardware, error))
    return fail();
  if (!parseInteger("--context", args.context, 1, kMaxContext,
                    out.workload.context, error))
    return fail();
  Precision &p = out.workload.precision;
  const char *dtypeFlags[4] = {"--dtype", "--weights-dtype", "--kv-dtype",
                               "--compute-dtype"};
  const std::string *dtypeValues[4] = {&args.dtype, &args.weightsDType,
                                       &args.kvDType, &args.computeDType};
  for (int i = 0; i < 4; ++i)
    if (args.dtypeGiven[i] && dtypeValues[i]->empty()) {
      error =
          std::string(dtypeFlags[i]) + ": expected fp4, fp8 or bf16, got ''";
      return fail();
    }
  // No --dtype: the narrowest format the GPU computes in.
  const std::string all =
      args.dtypeGiven[0] ? args.dtype
                         : stringifyDType(out.hardware.nativeDType()).str();
  if (!applyDTypeOptions(
          {all, args.weightsDType, args.kvDType, args.computeDType}, "--", p,
          error))
    return fail();
  if (!parseReal("--routing-skew", args.routingSkew, 0.0, 4.0,
                 out.workload.routingSkew, error))
    return fail();
  out.workload.balancedExperts = args.balancedExperts;
  if (!parseInteger("--mtp", args.mtp, 0, kMaxMTPTokens, out.workload.mtpTokens,
                    error) ||
      !parseReal("--acceptance", args.acceptance, 0.0, 1.0,
                 out.workload.mtpAcceptance, error))
    return fail();
  if (out.workload.mtpAcceptance <= 0) {
    error = "--acceptance: expected a probability above 0 and at most 1, "
            "got '" +
            args.acceptance + "'";
    return fail();
  }
  if (out.workload.mtpTokens > 0 && out.model.mtpLayers == 0) {
    error = "--mtp " + args.mtp + ": " + args.model +
            " has no multi-token-prediction layer to draft with "
            "(num_nextn_predict_layers is 0 or absent)";
    return fail();
  }
  if (args.nvfp4Scales && args.noNvfp4Scales) {
    error = "--nvfp4-scales and --no-nvfp4-scales exclude each other";
    return fail();
  }
  // The program keeps FP4 as NVFP4 (an E4M3 scale per 16 values), so the
  // plan counts the scales unless told to follow the paper's 0.5 bytes.
  p.nvfp4BlockScales = args.nvfp4Scales ||
                       (!args.noNvfp4Scales &&
                        (p.weights == DType::FP4 || p.kvCache == DType::FP4));
  if (!out.hardware.supports(p.compute)) {
    error = "--compute-dtype: " + out.hardware.name + " has no " +
            stringifyDType(p.compute).str() +
            " arithmetic (pick fp8 or bf16 on Hopper)";
    return fail();
  }
  return true;
}

} // namespace helix::driver
