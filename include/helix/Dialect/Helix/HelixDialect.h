//===- HelixDialect.h - helix dialect ---------------------------*- C++ -*-===//

#ifndef HELIX_DIALECT_HELIX_HELIXDIALECT_H
#define HELIX_DIALECT_HELIX_HELIXDIALECT_H

#include "mlir/IR/Dialect.h"

#include "helix/Dialect/Helix/HelixDialect.h.inc"

#endif // HELIX_DIALECT_HELIX_HELIXDIALECT_H
