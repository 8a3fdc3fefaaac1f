//===- ModelIR.h - ModelSpec <-> helix model IR -----------------*- C++ -*-===//
//
// Builds the model IR of one decode step from a ModelSpec, and recovers the
// ModelSpec from model IR (so that passes such as the layout search can run
// the cost model on IR a user hands them).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_MODELIR_MODELIR_H
#define HELIX_MODELIR_MODELIR_H

#include "helix/Dialect/Helix/HelixAttributes.h"
#include "helix/Model/ModelSpec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace mlir {
class MLIRContext;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace helix {

/// Name of the decode-step function the importer creates.
inline constexpr const char *kDecodeStepFunc = "decode_step";
/// Name of the function attribute carrying the #helix.model attribute.
inline constexpr const char *kModelAttrName = "helix.model";

/// Builds a module holding `func.func @decode_step` for `spec`: embedding,
/// every layer (norm, QKV projection, attention, output projection, residual,
/// norm, FFN or MoE, residual), final norm and LM head. The batch dimension is
/// dynamic. With `returnHidden` (the verify step of speculative decoding)
/// it also returns the final norm's output, the hidden state the MTP
/// drafter reads (result `helix.name` "hidden"). Does not verify the
/// result.
mlir::OwningOpRef<mlir::ModuleOp> buildModelIR(mlir::MLIRContext &context,
                                               const ModelSpec &spec,
                                               bool returnHidden = false);

/// The draft pass of speculative decoding, as a decode-step function the
/// sharding passes take: the model's first MTP layer (mtpLayerOf) over
/// (tokens, positions, hidden states [B, H], its KV cache), returning its
/// logits and its output hidden state (before shared_head.norm, what the
/// next draft pass reads). Needs spec.mtpLayers > 0.
mlir::OwningOpRef<mlir::ModuleOp> buildDraftModelIR(mlir::MLIRContext &context,
                                                    const ModelSpec &spec);

/// The model-level fields of a ModelSpec (no layers) from #helix.model.
ModelSpec modelSpecBasics(mlir::helix::ModelAttr model);

/// Recovers the ModelSpec of the decode-step function `func`. Emits a
/// diagnostic on `func` and fails if it is not helix model IR.
mlir::FailureOr<ModelSpec> extractModelSpec(mlir::func::FuncOp func);

/// The model description of an attention / MoE configuration attribute.
AttentionSpec attentionSpecOf(mlir::helix::AttentionConfigAttr config,
                              mlir::helix::RopeAttr rope);
MoESpec moeSpecOf(mlir::helix::MoEConfigAttr config);
LinearAttentionSpec linearSpecOf(mlir::helix::LinearAttentionConfigAttr config);
IndexerSpec indexerSpecOf(mlir::helix::IndexerConfigAttr config);

/// L of a checkpoint tensor named `model.layers.<L>.*`.
std::optional<int64_t> layerOfCheckpointName(llvm::StringRef name);

/// The decoder layer a model-IR op belongs to: its `layer` attribute, or
/// the layer of its checkpoint weight (helix.linear, helix.rms_norm);
/// nullopt outside the layers (embedding, final norm, LM head).
std::optional<int64_t> layerOfOp(mlir::Operation *op);

/// Finds the decode-step function in `module`: @decode_step, or the only
/// function carrying `helix.model`.
mlir::func::FuncOp findDecodeStep(mlir::ModuleOp module);

/// The decode step of `module` and its ModelSpec, for passes: emits
/// "<pass>: no decode-step function ..." on the module (or the extractor's
/// diagnostic) and fails when there is none.
mlir::FailureOr<std::pair<mlir::func::FuncOp, ModelSpec>>
findDecodeStepModel(mlir::ModuleOp module, llvm::StringRef pass);

/// Prints a readable summary of the model IR in `module`: the model, its
/// parameter counts, the op counts, the layer pattern and the KV cache size
/// per token. Fails (with a diagnostic) if it is not helix model IR.
mlir::LogicalResult printModelSummary(mlir::ModuleOp module,
                                      llvm::raw_ostream &os);

} // namespace helix

#endif // HELIX_MODELIR_MODELIR_H
