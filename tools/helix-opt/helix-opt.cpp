//===- helix-opt.cpp - mlir-opt with helix ------------------------------===//

#include "helix/InitAllHelix.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  helix::registerAllHelixDialects(registry);
  helix::registerAllHelixPasses();
  mlir::registerTransformsPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "helix optimizer driver\n", registry));
}
