//===- ImportCommand.cpp - helix import -----------------------------------===//

#include "Commands.h"

#include "helix/InitAllHelix.h"
#include "helix/ModelIR/ModelIR.h"
#include "helix/Translate/ImportHFConfig.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
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
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importHFConfigToIR(context, args.config, opts, error);
  if (!module) {
    std::cerr << "helix import: error: " << error << "\n";
    return 1;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(args.output, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    std::cerr << "helix import: error: cannot write " << args.output << ": "
              << ec.message() << "\n";
    return 1;
  }
  int rc = 0;
  if (args.summary)
    rc = mlir::failed(printModelSummary(*module, os)) ? 1 : 0;
  else
    module->print(os);
  // A lost write (a full disk) fails the command instead of aborting in
  // raw_fd_ostream's destructor.
  os.flush();
  if (os.has_error()) {
    std::cerr << "helix import: error: writing "
              << (args.output == "-" ? "<stdout>" : args.output) << ": "
              << os.error().message() << "\n";
    os.clear_error();
    return 1;
  }
  return rc;
}

Action addImportCommand(CLI::App &app) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App *cmd = app.add_subcommand(
      "import", "Import a Hugging Face config.json as helix model IR "
                "(one decode step, every layer)");
  cmd->add_option("config", args->config, "the model's config.json")
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
