//===- EmitCpp.h - Rank IR to C++ host code ---------------------*- C++ -*-===//
//
// The translation behind `helix-translate --emit-cpp`: rank IR lowered by
// convert-helix-to-emitc and printed by emitc::translateToCpp, as one
// translation unit (every rank's functions, then main).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_CODEGEN_EMITCPP_H
#define HELIX_CODEGEN_EMITCPP_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace helix {

/// Lowers rank IR in place to EmitC (convert-helix-to-emitc); a module
/// already in EmitC is left as it is.
mlir::LogicalResult
lowerRankIRToEmitC(mlir::ModuleOp module,
                   const std::string &programName = "helix-decode");

/// Lowers rank IR and prints it as C++ (one translation unit).
mlir::LogicalResult emitCpp(mlir::ModuleOp module, llvm::raw_ostream &os);

/// Registers the --emit-cpp translation.
void registerEmitCppTranslation();

} // namespace helix

#endif // HELIX_CODEGEN_EMITCPP_H
