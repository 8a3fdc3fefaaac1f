/*===- helix-c/Driver.h - plan, cost and compile for the C API ----*- C -*-===*\
|*                                                                            *|
|* helix's commands as functions. Each takes the model as text (a Hugging     *|
|* Face config.json, or helix model IR) and the options as the command line   *|
|* spells them ("--hardware", "h200", "--context", "131072", ...), and        *|
|* returns a HelixResult: the exit code, what the command printed, and its    *|
|* product (the plan JSON `helix plan --json` writes, the cost JSON of        *|
|* `helix cost --json`, the IR `helix compile` prints). Errors are the CLI's  *|
|* one-line messages in helixResultGetError; nothing aborts or exits the      *|
|* host process. A result is freed with helixResultDestroy.                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef HELIX_C_DRIVER_H
#define HELIX_C_DRIVER_H

#include "mlir-c/Support.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The outcome of one command; owns its strings.
typedef struct HelixResult {
  void *ptr;
} HelixResult;

/// Searches layouts (`helix plan`): the result's product is the JSON that
/// `helix plan --json` writes. `args` are plan's options but --model and
/// --json (e.g. "--hardware", "gb200-nvl72", "--max-gpus", "64").
MLIR_CAPI_EXPORTED HelixResult helixPlan(MlirStringRef model, intptr_t nargs,
                                         const char *const *args);

/// Prices one configuration (`helix cost`): the product is the JSON that
/// `helix cost --json` writes. `args` must give --batch and --layout.
MLIR_CAPI_EXPORTED HelixResult helixCost(MlirStringRef model, intptr_t nargs,
                                         const char *const *args);

/// Compiles one configuration (`helix compile`): the product is the rank IR
/// (or, with "--emit" "planned-ir", the planned IR). With "--emit"
/// "project" and "-o" DIR the project is written to DIR and the product is
/// empty.
MLIR_CAPI_EXPORTED HelixResult helixCompile(MlirStringRef model, intptr_t nargs,
                                            const char *const *args);

/// Any command (`args[0]` is the subcommand: import, plan, cost, compile,
/// calibrate), with `input` as what `--model -` or `helix import -` read.
/// The product is what the command printed.
MLIR_CAPI_EXPORTED HelixResult helixRun(intptr_t nargs, const char *const *args,
                                        MlirStringRef input);

/// 0 on success, as the command's exit code.
MLIR_CAPI_EXPORTED int helixResultGetExitCode(HelixResult result);
static inline bool helixResultSucceeded(HelixResult result) {
  return helixResultGetExitCode(result) == 0;
}
/// The product (see each function); valid until helixResultDestroy.
MLIR_CAPI_EXPORTED MlirStringRef helixResultGetProduct(HelixResult result);
/// What the command printed on standard output (plan's summary table).
MLIR_CAPI_EXPORTED MlirStringRef helixResultGetOutput(HelixResult result);
/// Its errors and warnings, one line each ("helix plan: error: ...").
MLIR_CAPI_EXPORTED MlirStringRef helixResultGetError(HelixResult result);
MLIR_CAPI_EXPORTED void helixResultDestroy(HelixResult result);

#ifdef __cplusplus
}
#endif

#endif /* HELIX_C_DRIVER_H */
