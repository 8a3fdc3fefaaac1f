//===- HelixAttributes.h - helix attributes and types -----------*- C++ -*-===//

#ifndef HELIX_DIALECT_HELIX_HELIXATTRIBUTES_H
#define HELIX_DIALECT_HELIX_HELIXATTRIBUTES_H

#include "helix/Common/DType.h"
#include "helix/Common/LayerKind.h"
#include "helix/Common/Rope.h"
#include "helix/Common/Routing.h"
#include "helix/Common/Speculative.h"
#include "helix/Common/Strategy.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Types.h"

#include "helix/Dialect/Helix/HelixEnums.h.inc"

namespace mlir::helix {
/// Parsers/printers of the scalar parameters used by the attribute structs.
FailureOr<bool> parseBoolParameter(AsmParser &parser);
FailureOr<llvm::APFloat> parseF64Parameter(AsmParser &parser);
/// Prints an estimate to 6 significant digits, always as a float literal
/// ("44.0", "2.78758e+06"), where printFloat would fall back to hex for
/// integral values such as byte counts.
void printEstimateParameter(AsmPrinter &printer, const llvm::APFloat &value);
/// A strategy name, as a keyword or a string.
FailureOr<::helix::Strategy> parseStrategyParameter(AsmParser &parser);
/// A number format: fp4, fp8 or bf16.
FailureOr<::helix::DType> parseDTypeParameter(AsmParser &parser);
/// A kind of layer: full_attention, window_attention, dense_ffn, moe_ffn.
FailureOr<::helix::LayerKind> parseLayerKindParameter(AsmParser &parser);
} // namespace mlir::helix

#define GET_ATTRDEF_CLASSES
#include "helix/Dialect/Helix/HelixAttributes.h.inc"

namespace mlir::helix {
/// A per-layer plan's layouts: `[#helix.kind_layout<...>, ...]` (used by the
/// generated parser and printer of #helix.plan).
FailureOr<llvm::SmallVector<KindLayoutAttr>>
parseKindLayoutList(AsmParser &parser);
void printKindLayoutList(AsmPrinter &printer,
                         llvm::ArrayRef<KindLayoutAttr> layouts);
} // namespace mlir::helix

#define GET_TYPEDEF_CLASSES
#include "helix/Dialect/Helix/HelixTypes.h.inc"

#endif // HELIX_DIALECT_HELIX_HELIXATTRIBUTES_H
