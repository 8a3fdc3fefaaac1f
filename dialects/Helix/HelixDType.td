//===- HelixDType.td - Number formats of a workload --------*- tablegen -*-===//
//
// The number formats the cost model prices and #helix.plan records, defined
// once: `::helix::DType` (with stringifyDType / symbolizeDType) is generated
// from here into HelixDType.h.inc (helix/Common/DType.h), on its own like
// HelixStrategy.td so that the cost model includes it without the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_DTYPE_TD
#define HELIX_DTYPE_TD

include "mlir/IR/EnumAttr.td"

// See include/helix/Cost/Precision.h for the bytes per value of each.
def Helix_DType : I32EnumAttr<"DType", "number format", [
    I32EnumAttrCase<"FP4", 0, "fp4">,
    I32EnumAttrCase<"FP8", 1, "fp8">,
    I32EnumAttrCase<"BF16", 2, "bf16">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::helix";
}

#endif // HELIX_DTYPE_TD
