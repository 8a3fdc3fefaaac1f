//===- WeightFormats.h - Which format each weight is kept in ----*- C++ -*-===//
//
// One rule for the planner, the rank IR and the program
// (docs/quantization.md): the planned weights format applies to the linear
// weights of the decoder layers; embeddings, the LM head, norms, biases,
// routers and sinks stay BF16, as do linear weights the checkpoint's
// quantization_config leaves unquantized. helix-resident-formats sets the
// element types by it and the EmitC lowering reads them back.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_DIALECT_HELIX_WEIGHTFORMATS_H
#define HELIX_DIALECT_HELIX_WEIGHTFORMATS_H

#include "helix/Common/DType.h"
#include "helix/Common/ElementType.h"
#include "helix/Common/WeightFormat.h"
#include "helix/Dialect/Helix/HelixOps.h"

#include <string>
#include <vector>

namespace mlir {
namespace helix {

/// Whether `w` is a linear weight of a decoder layer: a matrix (its
/// checkpoint tensor has rank >= 2) named model.layers.* that is no bias
/// (gpt-oss's expert biases are [E, n]), no MTP layer's embed_tokens or
/// shared_head.head (kept like the model's embedding and LM head) and
/// that no router reads.
bool isLayerLinearWeight(WeightOp w);

/// Whether the plan's weights format applies to `w`: a layer linear
/// weight the checkpoint does not exclude.
bool takesPlannedFormat(WeightOp w, ModelAttr model);

/// Whether `w` is a zero-centred RMSNorm weight (#helix.model
/// zero_centered_norms: the weight of a helix.norm_rows or a helix.qkv's
/// q/k norm): loaded as 1 + w and kept in f32, as engines compute
/// x * (1 + w.float()) (in BF16, 1 + w would lose w's low bits).
bool isZeroCenteredNormWeight(WeightOp w, ModelAttr model);

/// How the checkpoint stores `w`: its quant_format for the weights that
/// take the planned format, else BF16 (unquantized).
::helix::CheckpointFormat checkpointFormatOf(WeightOp w, ModelAttr model);

/// The element type a format keeps values in: bf16, f8E4M3FN, f4E2M1FN.
Type elementTypeOf(MLIRContext *ctx, ::helix::DType format);
/// The resident format of an element type (f32 / bf16 / f8E4M3FN /
/// f4E2M1FN: ElementType F32 / BF16 / F8E4M3 / F4E2M1); failure for
/// another type.
FailureOr<::helix::ElementType> residentFormatOf(Type element);

/// The model's unquantized module patterns (#helix.model's quant_exclude).
std::vector<std::string> excludedModules(ModelAttr model);

} // namespace helix
} // namespace mlir

#endif // HELIX_DIALECT_HELIX_WEIGHTFORMATS_H
