//===- HelixOps.h - helix operations ----------------------------*- C++ -*-===//

#ifndef HELIX_DIALECT_HELIX_HELIXOPS_H
#define HELIX_DIALECT_HELIX_HELIXOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "helix/Dialect/Helix/HelixAttributes.h"
#include "helix/Dialect/Helix/HelixDialect.h"

#include "helix/Dialect/Helix/HelixInterfaces.h.inc"

#define GET_OP_CLASSES
#include "helix/Dialect/Helix/HelixOps.h.inc"

namespace mlir::helix {
/// Values of one request's Gated DeltaNet state (!helix.state_shard) on a
/// rank holding `keyHeads` key heads and `valueHeads` value heads.
int64_t gdnStateValues(LinearAttentionConfigAttr config, int64_t keyHeads,
                       int64_t valueHeads);
} // namespace mlir::helix

#endif // HELIX_DIALECT_HELIX_HELIXOPS_H
