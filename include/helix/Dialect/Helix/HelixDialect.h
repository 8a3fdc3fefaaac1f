//===- HelixDialect.h - helix dialect ---------------------------*- C++ -*-===//

#ifndef HELIX_DIALECT_HELIX_HELIXDIALECT_H
#define HELIX_DIALECT_HELIX_HELIXDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "helix/Dialect/Helix/HelixDialect.h.inc"

namespace mlir {
namespace helix {
/// The names of the dialect's discardable attributes, as HelixDialect.td
/// declares them (its `discardableAttrs`): C++ spells no `helix.*` name.
namespace attrs {
inline constexpr llvm::StringLiteral plan =
    HelixDialect::PlanAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral model =
    HelixDialect::ModelAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral mtp =
    HelixDialect::MtpAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral microBatches =
    HelixDialect::MicroBatchesAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral stage =
    HelixDialect::StageAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral layers =
    HelixDialect::LayersAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral draftStage =
    HelixDialect::DraftStageAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral cost =
    HelixDialect::CostAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral weightBase =
    HelixDialect::WeightBaseAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral name =
    HelixDialect::NameAttrHelper::getNameStr();
inline constexpr llvm::StringLiteral kvLayer =
    HelixDialect::KvLayerAttrHelper::getNameStr();
} // namespace attrs
} // namespace helix
} // namespace mlir

#endif // HELIX_DIALECT_HELIX_HELIXDIALECT_H
