//===- ValidateConfigCommand.cpp - helix validate-config ------------------===//
//
// Checks serving-engine configuration files (what --emit-config writes, or
// any other) against helix's data on the engine (data/engines/*.json): each
// flag or key known to the engine version, of its type and allowed values,
// the KV cache format stored for the model's attention, and the engine's
// rules (divisibility, context parallelism). One line per problem, naming
// the file; exit 1 when any file has one.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "OutputFile.h"
#include "Streams.h"

#include "helix/Import/HFConfig.h"
#include "helix/Plan/EngineConfig.h"

#include <fstream>
#include <memory>
#include <sstream>

namespace helix::driver {

namespace {
struct ValidateArgs {
  std::vector<std::string> files;
  std::string engine;
  std::string version;
  std::string model;
};
} // namespace

static int runValidate(const ValidateArgs &args) {
  const char *cmd = "helix validate-config";
  std::string error;
  Engine engine;
  if (!parseEngine(args.engine, engine, error) ||
      !checkEngineVersion(engine, args.version, error)) {
    cliErr() << cmd << ": error: " << error << "\n";
    return 1;
  }
  ModelSpec model;
  if (!importHFConfigFile(args.model, ImportOptions{}, model, error)) {
    cliErr() << cmd << ": error: " << error << "\n";
    return 1;
  }
  const std::string version = engineVersion(engine, args.version);
  int bad = 0;
  for (const std::string &path : args.files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      cliErr() << cmd << ": error: " << path << ": cannot read the file\n";
      ++bad;
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    std::vector<std::string> problems =
        validateEngineFile(engine, version, model, text.str());
    if (problems.empty()) {
      cliOut() << path << ": ok for " << engineDisplayName(engine) << " "
               << version << "\n";
      continue;
    }
    ++bad;
    for (const std::string &p : problems)
      cliOut() << path << ": " << p << "\n";
  }
  if (!finishStdout(cmd))
    return 1;
  return bad ? 1 : 0;
}

Action addValidateConfigCommand(CLI::App &app) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App *cmd = app.add_subcommand(
      "validate-config",
      "Check serving-engine configuration files against the engine's rules "
      "(data/engines: flags and keys, allowed values, KV formats, "
      "divisibility and context-parallel rules, per engine version)");
  cmd->add_option("files", args->files,
                  "the files: a TensorRT-LLM options or trtllm-serve "
                  "disaggregated YAML, or a vllm serve / sglang.launch_server "
                  "script")
      ->required();
  cmd->add_option("--engine", args->engine, "trtllm, vllm or sglang")
      ->required();
  cmd->add_option("--engine-version", args->version,
                  "the engine version the rules are read for (default: the "
                  "newest data/engines knows)");
  cmd->add_option("--model", args->model,
                  "the model's config.json (the rules read its heads, KV "
                  "heads, attention kind, experts)")
      ->required();
  return [args] { return runValidate(*args); };
}

} // namespace helix::driver
