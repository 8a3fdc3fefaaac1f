//===- HelixLayerKind.td - Kinds of decoder layer halves ---*- tablegen -*-===//
//
// The kinds of layer a per-layer plan gives its own layout, defined once:
// the enum `::helix::LayerKind` (with stringifyLayerKind /
// symbolizeLayerKind: "full_attention", "window_attention", "dense_ffn",
// "moe_ffn", "linear_attention", "mamba", "sparse_attention") is generated from here into HelixLayerKind.h.inc for the cost
// model (helix/Common/LayerKind.h, docs/per-layer-layouts.md) and is the
// `kind` of #helix.kind_layout. Generated on its own, like the strategy
// enum, so that the cost model includes it without the dialect.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LAYERKIND_TD
#define HELIX_LAYERKIND_TD

include "mlir/IR/EnumAttr.td"

def Helix_LayerKind : I32EnumAttr<"LayerKind", "kind of layer half", [
    I32EnumAttrCase<"FullAttention", 0, "full_attention">,
    I32EnumAttrCase<"WindowAttention", 1, "window_attention">,
    I32EnumAttrCase<"DenseFFN", 2, "dense_ffn">,
    I32EnumAttrCase<"MoEFFN", 3, "moe_ffn">,
    I32EnumAttrCase<"LinearAttention", 4, "linear_attention">,
    I32EnumAttrCase<"Mamba", 5, "mamba">,
    I32EnumAttrCase<"SparseAttention", 6, "sparse_attention">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::helix";
}

#endif // HELIX_LAYERKIND_TD
