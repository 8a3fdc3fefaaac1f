//===- EmitConfig.h - --emit-config for helix plan and helix cost -*- C++ -*-=//
//
// `--emit-config trtllm|vllm|sglang -o FILE` writes a serving engine's
// configuration for one helix configuration (helix/Plan/EngineConfig.h).
// Header-only: shared by PlanCommand.cpp and CostCommand.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_TOOLS_HELIX_EMITCONFIG_H
#define HELIX_TOOLS_HELIX_EMITCONFIG_H

#include "CommonOptions.h"
#include "OutputFile.h"

#include "helix/Plan/EngineConfig.h"

#include <cstdio>
#include <iostream>
#include <string>
#include <sys/stat.h>

namespace helix::driver {

struct EmitConfigArgs {
  std::string engine;  // --emit-config, as typed
  std::string output;  // -o
  std::string version; // --engine-version
  /// Checked: whether a file is wanted, and for which engine.
  bool wanted = false;
  Engine parsed = Engine::TRTLLM;
};

inline void addEmitConfigOptions(CLI::App *cmd, EmitConfigArgs &args,
                                 const std::string &what) {
  cmd->add_option("--emit-config", args.engine,
                  "write the serving engine's configuration for " + what +
                      " to -o FILE: trtllm (TensorRT-LLM LLM-API YAML), vllm "
                      "(vllm serve script) or sglang (sglang.launch_server "
                      "script); where the engine cannot run it, the nearest "
                      "configuration it can (docs/engine-configs.md)");
  cmd->add_option("-o,--output", args.output,
                  "the file --emit-config writes ('-' for stdout)");
  cmd->add_option("--engine-version", args.version,
                  "the engine version --emit-config targets, where the "
                  "engines' rules differ by version (data/engines: vllm "
                  "0.10.2, 0.11.1, 0.12.0; sglang 2026-05, 2026-07; "
                  "trtllm 1.3.0rc26; default the newest)");
}

/// Checks the options before any work; prints one error line and returns
/// false when they are wrong.
inline bool checkEmitConfigArgs(const std::string &command,
                                EmitConfigArgs &args) {
  std::string error;
  if (args.engine.empty()) {
    if (!args.version.empty()) {
      cliErr() << command
               << ": error: --engine-version needs --emit-config "
                  "ENGINE\n";
      return false;
    }
    if (!args.output.empty()) {
      cliErr() << command
               << ": error: -o needs --emit-config ENGINE "
                  "(trtllm, vllm or sglang)\n";
      return false;
    }
    return true;
  }
  if (!parseEngine(args.engine, args.parsed, error)) {
    cliErr() << command << ": error: --emit-config: " << error << "\n";
    return false;
  }
  if (args.output.empty()) {
    cliErr() << command << ": error: --emit-config " << args.engine
             << " needs -o FILE\n";
    return false;
  }
  if (!checkEngineVersion(args.parsed, args.version, error)) {
    cliErr() << command << ": error: --engine-version: " << error << "\n";
    return false;
  }
  args.wanted = true;
  return true;
}

/// Writes the engine configuration for `config`; when the engine cannot run
/// it as planned, says so on stderr (the file's header says it too).
/// `ttlBudgetMs` (helix plan --ttl-ms; 0: none) bounds the fallback.
inline bool emitEngineConfig(const std::string &command,
                             const EmitConfigArgs &args,
                             const LoadedWorkload &in, const Config &config,
                             double ttlBudgetMs = 0) {
  EngineConfig ec;
  std::string error;
  EngineConfigOptions options;
  options.command = command;
  options.ttlBudgetMs = ttlBudgetMs;
  options.outputPath = args.output;
  options.version = args.version;
  if (!makeEngineConfig(args.parsed, in.model, in.hardware, in.workload, config,
                        ec, error, options)) {
    cliErr() << command << ": error: --emit-config " << args.engine << ": "
             << error << "\n";
    return false;
  }
  if (!writeOutputFile(command, args.output,
                       [&](std::ostream &os) { os << ec.text; }))
    return false;
  // The deployment's other files, beside it.
  for (const EngineFile &f : ec.extraFiles) {
    if (!writeOutputFile(command, f.path,
                         [&](std::ostream &os) { os << f.text; }))
      return false;
    if (f.executable && !cliMemoryFile(f.path))
      ::chmod(f.path.c_str(), 0755);
  }
  if (!ec.exact()) {
    std::string changes;
    for (const std::string &c : ec.changes)
      changes += (changes.empty() ? "" : "; ") + c;
    char ttl[96];
    std::snprintf(ttl, sizeof ttl, "TTL %.3g ms -> %.3g ms",
                  ec.plannedPrediction.ttlS * 1e3,
                  ec.emittedPrediction.ttlS * 1e3);
    cliErr() << command << ": warning: " << engineDisplayName(args.parsed)
             << " cannot run " << stringifyStrategy(config.strategy).str()
             << " " << config.layout.str() << " as planned; " << args.output
             << " configures the nearest configuration it can (" << changes
             << "; " << ttl << ")\n";
  }
  if (!ec.meetsBudget)
    cliErr() << command << ": warning: " << engineDisplayName(args.parsed)
             << " runs no configuration on these GPUs within the --ttl-ms "
                "budget; "
             << args.output << " configures the nearest (TTL "
             << ec.emittedPrediction.ttlS * 1e3 << " ms)\n";
  if (!ec.emittedPrediction.fits)
    cliErr() << command << ": warning: the configuration in " << args.output
             << " does not fit in HBM at batch " << ec.emitted.batch
             << " by helix's memory model\n";
  return true;
}

} // namespace helix::driver

#endif // HELIX_TOOLS_HELIX_EMITCONFIG_H
