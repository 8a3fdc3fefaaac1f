//===- ImportHFConfig.cpp - config.json to helix model IR -----------------===//

#include "helix/Translate/ImportHFConfig.h"
#include "helix/Dialect/Helix/HelixDialect.h"
#include "helix/ModelIR/ModelIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace helix {

/// Builds and verifies the IR of an imported spec; verifier diagnostics are
/// collected into `error` (a config the importer accepted but the IR rejects
/// is still reported, never printed as invalid IR).
static OwningOpRef<ModuleOp> buildVerified(MLIRContext &context,
                                           const ModelSpec &spec,
                                           const std::string &sourceName,
                                           std::string &error) {
  OwningOpRef<ModuleOp> module = buildModelIR(context, spec);
  std::string diag;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      if (diag.empty())
        diag = d.str();
      return success();
    });
    if (succeeded(verify(*module)))
      return module;
  }
  error = sourceName + ": <model>: the imported model is not valid IR: " + diag;
  return nullptr;
}

OwningOpRef<ModuleOp> importHFConfigToIR(MLIRContext &context,
                                         const std::string &path,
                                         const ImportOptions &opts,
                                         std::string &error) {
  ModelSpec spec;
  if (!importHFConfigFile(path, opts, spec, error))
    return nullptr;
  return buildVerified(context, spec, path, error);
}

OwningOpRef<ModuleOp> importHFConfigStringToIR(MLIRContext &context,
                                               const std::string &json,
                                               const std::string &sourceName,
                                               const ImportOptions &opts,
                                               std::string &error) {
  ModelSpec spec;
  if (!importHFConfigString(json, sourceName, opts, spec, error))
    return nullptr;
  return buildVerified(context, spec, sourceName, error);
}

static llvm::cl::opt<bool>
    includeMTP("hf-include-mtp",
               llvm::cl::desc("with --import-hf-config: append the "
                              "multi-token-prediction layers"),
               llvm::cl::init(false));

void registerImportHFConfigTranslation() {
  TranslateToMLIRRegistration reg(
      "import-hf-config", "import a Hugging Face config.json as helix model IR",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        std::string name = buffer->getBufferIdentifier().str();
        ImportOptions opts;
        opts.includeMTP = includeMTP;
        std::string error;
        OwningOpRef<ModuleOp> module = importHFConfigStringToIR(
            *context, buffer->getBuffer().str(), name, opts, error);
        if (!module) {
          emitError(FileLineColLoc::get(context, name, 0, 0)) << error;
          return nullptr;
        }
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<mlir::helix::HelixDialect, func::FuncDialect>();
      });
}

} // namespace helix
