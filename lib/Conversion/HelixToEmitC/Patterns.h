//===- Patterns.h - convert-helix-to-emitc internals ------------*- C++ -*-===//
//
// Private to lib/Conversion/HelixToEmitC. The module facts the patterns
// share (grids, the model), the type converter, the stage programs'
// skeletons (RankPrograms.cpp) and one populate function per op family.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_CONVERSION_HELIXTOEMITC_PATTERNS_H
#define HELIX_LIB_CONVERSION_HELIXTOEMITC_PATTERNS_H

#include "EmitCBuilder.h"
#include "helix/Dialect/Helix/HelixDialect.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace helix::emitc_codegen {

/// What the patterns need to know about the module.
struct ModuleFacts {
  /// shard.grid shapes by name.
  llvm::StringMap<llvm::SmallVector<int64_t>> grids;
  int64_t devices = 0;
  std::string modelType;
  int64_t vocab = 0;
  int64_t maxPosition = 0;
  /// Planned context (positions per row) and batch of every rank program.
  int64_t context = 0;
  int64_t batch = 0;
  /// rms_norm_eps (the first helix.norm_rows's), for QK-norm.
  double normEps = 1e-6;
  /// Each layer's #helix.rope (from its helix.qkv / helix.mla_qkv).
  llvm::DenseMap<int64_t, mlir::Attribute> layerRope;

  /// Reads grids, #helix.model and #helix.plan; fails with a diagnostic.
  static mlir::FailureOr<ModuleFacts> read(mlir::ModuleOp module);
};

/// Rank-IR types to their C++ types.
class HelixTypeConverter : public mlir::TypeConverter {
public:
  explicit HelixTypeConverter(mlir::MLIRContext *ctx);
};

/// On a step's return: the names of the results past the logits, set as
/// outputs of the rank state (the verify step's and drafter's "hidden").
inline constexpr const char *kOutputNamesAttr = "output_names";

/// The step function's Context& and RankState& arguments.
mlir::Value contextOf(mlir::Operation *op);
mlir::Value stateOf(mlir::Operation *op);

/// Rewrites every `func.func @decode_step_stage<S>` into its load, prepare
/// and step functions and registration (the step body still holds the
/// rank-IR ops, their inputs cast from the step's calls), registers the
/// grids, and adds `main`.
mlir::LogicalResult buildRankPrograms(mlir::ModuleOp module,
                                      const ModuleFacts &facts,
                                      llvm::StringRef programName);

void populateComputePatterns(mlir::RewritePatternSet &patterns,
                             const mlir::TypeConverter &converter,
                             const ModuleFacts &facts);
void populateAttentionPatterns(mlir::RewritePatternSet &patterns,
                               const mlir::TypeConverter &converter,
                               const ModuleFacts &facts);
void populateCollectivePatterns(mlir::RewritePatternSet &patterns,
                                const mlir::TypeConverter &converter,
                                const ModuleFacts &facts);
void populateRecurrentPatterns(mlir::RewritePatternSet &patterns,
                               const mlir::TypeConverter &converter,
                               const ModuleFacts &facts);
void populateIndexPatterns(mlir::RewritePatternSet &patterns,
                           const mlir::TypeConverter &converter,
                           const ModuleFacts &facts);
void populateTensorPatterns(mlir::RewritePatternSet &patterns,
                            const mlir::TypeConverter &converter);

/// Base of the patterns: the converter and the shared facts.
template <typename Op>
struct HelixPattern : public mlir::OpConversionPattern<Op> {
  HelixPattern(const mlir::TypeConverter &converter, mlir::MLIRContext *ctx,
               const ModuleFacts &facts)
      : mlir::OpConversionPattern<Op>(converter, ctx), facts(facts) {}
  const ModuleFacts &facts;
};

} // namespace helix::emitc_codegen

#endif // HELIX_LIB_CONVERSION_HELIXTOEMITC_PATTERNS_H
