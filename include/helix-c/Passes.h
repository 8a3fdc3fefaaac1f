/*===- helix-c/Passes.h - helix passes for the C API --------------*- C -*-===*\
|*                                                                            *|
|* Registers every helix pass and pipeline (helix-search-layouts,             *|
|* helix-insert-collectives, helix-hopb, helix-partition, ...,               *|
|* helix-sharding-pipeline) so that mlirParsePassPipeline and                 *|
|* mlirOpPassManagerAddPipeline find them by name, as helix-opt does.        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef HELIX_C_PASSES_H
#define HELIX_C_PASSES_H

#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_CAPI_EXPORTED void helixRegisterPasses(void);

#ifdef __cplusplus
}
#endif

#endif /* HELIX_C_PASSES_H */
