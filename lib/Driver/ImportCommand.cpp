//===- ImportCommand.cpp - helix import -----------------------------------===//

#include "Commands.h"
#include "OutputFile.h"
#include "Streams.h"

#include "helix/InitAllHelix.h"
#include "helix/ModelIR/ModelIR.h"
#include "helix/Translate/ImportHFConfig.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <iostream>
#include <memory>

namespace helix::driver {

namespace {
struct ImportArgs {
  std::string config;
  std::string output = "-";
  bool summary = false;
  bool mtp = false;
};
} // namespace

static int runImport(const ImportArgs &args) {
  mlir::DialectRegistry registry;
  registerAllHelixDialects(registry);
  mlir::MLIRContext context(registry);
  ImportOptions opts;
  opts.includeMTP = args.mtp;
  std::string error;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (args.config == "-") { // the config on standard input
    std::string text;
    if (readCliInput(text, error))
      module =
          importHFConfigStringToIR(context, text, cliInputName(), opts, error);
  } else {
    module = importHFConfigToIR(context, args.config, opts, error);
  }
  if (!module) {
    cliErr() << "helix import: error: " << error << "\n";
    return 1;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  int rc = 0;
  if (args.summary)
    rc = mlir::failed(printModelSummary(*module, os)) ? 1 : 0;
  else
    module->print(os);
  if (args.output == "-") {
    cliOut() << text;
    return finishStdout("helix import") ? rc : 1;
  }
  return writeOutputFile("helix import", args.output,
                         [&](std::ostream &out) { out << text; })
             ? rc
             : 1;
}

Action addImportCommand(CLI::App &app) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App *cmd = app.add_subcommand(
      "import", "Import a Hugging Face config.json as helix model IR "
                "(one decode step, every layer)");
  cmd->add_option("config", args->config,
                  "the model's config.json (- reads standard input)")
      ->required();
  cmd->add_option("-o,--output", args->output, "output file (default: stdout)");
  cmd->add_flag("--summary", args->summary,
                "print a readable summary instead of the IR");
  cmd->add_flag("--mtp", args->mtp,
                "include the multi-token-prediction layers "
                "(num_nextn_predict_layers)");
  std::string types;
  for (const std::string &t : supportedModelTypes())
    types += (types.empty() ? "" : ", ") + t;
  cmd->footer("Supported model_type values: " + types);
  return [args] { return runImport(*args); };
}

} // namespace helix::driver
