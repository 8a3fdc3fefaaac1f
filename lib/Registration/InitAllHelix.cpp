//===- InitAllHelix.cpp - Register everything helix provides --------------===//

#include "helix/InitAllHelix.h"
#include "helix/Codegen/EmitCpp.h"
#include "helix/Conversion/Passes.h"
#include "helix/Dialect/Helix/HelixDialect.h"
#include "helix/Transforms/Passes.h"
#include "helix/Transforms/Pipeline.h"
#include "helix/Translate/ImportHFConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

void helix::registerAllHelixDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::helix::HelixDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::shard::ShardDialect, mlir::emitc::EmitCDialect>();
}

void helix::registerAllHelixPasses() {
  mlir::helix::registerHelixPasses();
  registerShardingPipeline();
  mlir::helix::registerHelixConversionPasses();
}

void helix::registerAllHelixTranslations() {
  registerImportHFConfigTranslation();
  registerEmitCppTranslation();
}
