//===- HelixDialect.cpp - helix dialect registration ----------------------===//

#include "helix/Dialect/Helix/HelixDialect.h"
#include "helix/Dialect/Helix/HelixOps.h"

using namespace mlir;
using namespace mlir::helix;

#include "helix/Dialect/Helix/HelixDialect.cpp.inc"

void HelixDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "helix/Dialect/Helix/HelixOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}
