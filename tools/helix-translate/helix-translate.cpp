//===- helix-translate.cpp - translations into and out of helix IR -------===//

#include "helix/InitAllHelix.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  helix::registerAllHelixTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "helix translation driver\n"));
}
