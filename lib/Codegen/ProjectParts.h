//===- ProjectParts.h - Pieces of a generated project -----------*- C++ -*-===//
//
// Private to lib/Codegen: what the project files say about the program,
// the C++ sources (one per pipeline stage and a main) and the other files'
// text.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_CODEGEN_PROJECTPARTS_H
#define HELIX_LIB_CODEGEN_PROJECTPARTS_H

#include "helix/Codegen/ProjectWriter.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace helix::codegen {

/// The facts of a rank-IR program the README and plan.json state.
struct ProgramSummary {
  std::string model, modelType;
  int64_t hidden = 0, vocab = 0, layers = 0;
  std::string strategy, hardware, dtype;
  int64_t gpus = 0, batch = 0, context = 0;
  bool hopb = false;
  int64_t slices = 0;   // batch slices of the HOP-B / TP overlap (0: none)
  int64_t kvBlock = 16; // KV tokens per round-robin block
  double ttlS = 0;
  /// Rows each step runs (the rank programs' batch, padded for DP; with
  /// MTP, draftTokens + 1 per request).
  int64_t stepRows = 0;
  /// Speculative decoding (helix.mtp): drafts per step (0: none) and the
  /// acceptance the plan was priced with.
  int64_t draftTokens = 0;
  double acceptance = 0;
  std::vector<std::pair<std::string, std::vector<int64_t>>> grids;
  /// A per-layer plan's layouts (#helix.plan's `layouts`): kind, then its
  /// widths by name (layers, kvp, tpa or tpf, ep, replicas).
  std::vector<
      std::pair<std::string, std::vector<std::pair<std::string, int64_t>>>>
      layouts;
};

/// Reads the summary from rank IR (before lowering).
ProgramSummary summarize(mlir::ModuleOp rankIR);

/// Lowers a copy of `rankIR` and prints it as sources: file name (under
/// src/) -> C++ text, one per pipeline stage and main.cpp.
bool emitSources(mlir::ModuleOp rankIR, const ProjectOptions &options,
                 std::map<std::string, std::string> &sources,
                 std::string &error);

std::string cmakeLists(const ProgramSummary &s, const ProjectOptions &o,
                       const std::vector<std::string> &sources);
std::string readme(const ProgramSummary &s, const ProjectOptions &o);
std::string planJson(const ProgramSummary &s, const ProjectOptions &o);

} // namespace helix::codegen

#endif // HELIX_LIB_CODEGEN_PROJECTPARTS_H
