//===- EmitCpp.cpp - helix-translate --emit-cpp ---------------------------===//

#include "helix/Codegen/EmitCpp.h"
#include "helix/Conversion/Passes.h"
#include "helix/Dialect/Helix/HelixDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/Cpp/CppEmitter.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;

namespace helix {

LogicalResult lowerRankIRToEmitC(ModuleOp module,
                                 const std::string &programName) {
  bool rankIR = false;
  module.walk([&](Operation *op) {
    if (!isa<ModuleOp>(op) && !isa<emitc::EmitCDialect>(op->getDialect()))
      rankIR = true;
  });
  if (!rankIR)
    return success();
  PassManager pm(module.getContext());
  mlir::helix::ConvertHelixToEmitCOptions options;
  options.programName = programName;
  pm.addPass(mlir::helix::createConvertHelixToEmitC(options));
  return pm.run(module);
}

LogicalResult emitCpp(ModuleOp module, llvm::raw_ostream &os) {
  if (failed(lowerRankIRToEmitC(module)))
    return failure();
  return emitc::translateToCpp(module, os);
}

void registerEmitCppTranslation() {
  TranslateFromMLIRRegistration reg(
      "emit-cpp",
      "lower rank IR (convert-helix-to-emitc) and print it as C++ host code "
      "against the helix runtime",
      [](Operation *op, llvm::raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError("--emit-cpp: expects a module");
        return emitCpp(module, os);
      },
      [](DialectRegistry &registry) {
        registry.insert<mlir::helix::HelixDialect, func::FuncDialect,
                        arith::ArithDialect, tensor::TensorDialect,
                        shard::ShardDialect, emitc::EmitCDialect>();
      });
}

} // namespace helix
