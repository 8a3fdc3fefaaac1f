//===- ProjectWriter.h - A CMake project for a compiled plan ----*- C++ -*-===//
//
// `helix compile ... --emit project -o DIR`: the rank IR of a plan lowered
// to C++ host code (convert-helix-to-emitc, one source per rank and a main)
// and written as a self-contained CMake project against the installed
// helix runtime:
//
//   DIR/CMakeLists.txt   find_package(Helix), the helix-decode executable
//   DIR/README.md        how to build and launch it, what the plan is
//   DIR/plan.json        the plan, for the record (and what it costs)
//   DIR/src/main.cpp, DIR/src/rank<R>.cpp
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_CODEGEN_PROJECTWRITER_H
#define HELIX_CODEGEN_PROJECTWRITER_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace helix {

struct ProjectOptions {
  /// The project directory (created; existing generated files replaced).
  std::string outputDir;
  /// "cpu" (links Helix::HelixRuntime) or "cuda" (also
  /// Helix::HelixRuntimeCUDA; sources compiled by nvcc; the CUDA backend is
  /// the default one).
  std::string backend = "cpu";
  /// The executable's name.
  std::string programName = "helix-decode";
  /// The cost model's evaluation of the plan (JSON), recorded in plan.json
  /// under "cost" when not empty.
  std::string costJson;
  /// helix-estimate-cost's price of the planned IR the program was compiled
  /// from (JSON), recorded in plan.json under "estimate" when not empty.
  std::string estimateJson;
  /// How the project was made (recorded in the README), e.g. the command.
  std::string origin;
};

/// Writes the project for `rankIR` (left unchanged). Returns false with a
/// one-line `error` when the IR cannot be lowered or a file not written.
bool writeProject(mlir::ModuleOp rankIR, const ProjectOptions &options,
                  std::string &error);

} // namespace helix

#endif // HELIX_CODEGEN_PROJECTWRITER_H
