//===- ImportHFConfig.h - config.json to helix model IR ---------*- C++ -*-===//

#ifndef HELIX_TRANSLATE_IMPORTHFCONFIG_H
#define HELIX_TRANSLATE_IMPORTHFCONFIG_H

#include "helix/Import/HFConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace helix {

/// Imports the config at `path` and builds verified model IR. On failure
/// returns null and sets `error` to one line naming the file and the field.
mlir::OwningOpRef<mlir::ModuleOp> importHFConfigToIR(mlir::MLIRContext &context,
                                                     const std::string &path,
                                                     const ImportOptions &opts,
                                                     std::string &error);

/// Same, from config text; `sourceName` stands for the file in messages.
mlir::OwningOpRef<mlir::ModuleOp>
importHFConfigStringToIR(mlir::MLIRContext &context, const std::string &json,
                         const std::string &sourceName,
                         const ImportOptions &opts, std::string &error);

/// Registers `--import-hf-config` with mlir-translate style tools.
void registerImportHFConfigTranslation();

} // namespace helix

#endif // HELIX_TRANSLATE_IMPORTHFCONFIG_H
