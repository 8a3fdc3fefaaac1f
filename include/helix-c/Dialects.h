/*===- helix-c/Dialects.h - The helix dialect for the C API -------*- C -*-===*\
|*                                                                            *|
|* Registration of the helix dialect in MLIR's C API style (mlir-c/IR.h):     *|
|* mlirGetDialectHandle__helix__() for one context, and                       *|
|* helixRegisterAllDialects() for the upstream dialects helix IR is made of   *|
|* as well (func, arith, tensor, shard, emitc).                               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef HELIX_C_DIALECTS_H
#define HELIX_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Helix, helix);

/// Inserts the helix dialect and the upstream dialects its model IR and
/// rank IR use into `registry`.
MLIR_CAPI_EXPORTED void helixRegisterAllDialects(MlirDialectRegistry registry);

#ifdef __cplusplus
}
#endif

#endif /* HELIX_C_DIALECTS_H */
