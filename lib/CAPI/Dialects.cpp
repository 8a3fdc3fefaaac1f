//===- Dialects.cpp - The helix dialect for the C API ---------------------===//

#include "helix-c/Dialects.h"

#include "helix/Dialect/Helix/HelixDialect.h"
#include "helix/InitAllHelix.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Helix, helix, mlir::helix::HelixDialect)

void helixRegisterAllDialects(MlirDialectRegistry registry) {
  helix::registerAllHelixDialects(*unwrap(registry));
}
