//===- HelixInterfaces.td - helix op interfaces ------------*- tablegen -*-===//
//
// Generated on its own (HelixInterfaces.h.inc / .cpp.inc): op-interface
// generators emit only the interfaces of their main file.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_INTERFACES_TD
#define HELIX_INTERFACES_TD

include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def Helix_LayoutKind : I32EnumAttr<"LayoutKind",
    "which part of a #helix.layout an op is sharded by", [
    I32EnumAttrCase<"attention", 0>, I32EnumAttrCase<"linear", 1>,
    I32EnumAttrCase<"ffn", 2>, I32EnumAttrCase<"moe", 3>,
    I32EnumAttrCase<"lm_head", 4>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::helix";
}

def Helix_LayoutCarrier : OpInterface<"LayoutCarrier"> {
  let cppNamespace = "::mlir::helix";
  let description = [{
    An op of model IR that carries a `#helix.layout` once planned (its
    optional `layout` attribute): the ops the planner annotates and the
    sharding passes read. `getLayoutKind` says which part of the layout
    shards it: `attention` (KVP x TPA: helix.qkv_proj, helix.attention),
    `linear` (the output projection, TP over the stage), `ffn` (a dense FFN,
    TPF), `moe` (TPF x EP) or `lm_head` (TP over the vocabulary).
  }];
  let methods = [
    InterfaceMethod<"The op's layout (null when not planned).",
      "::mlir::helix::LayoutAttr", "getLayoutOrNull", (ins), [{}],
      [{ return $_op.getLayoutAttr(); }]>,
    InterfaceMethod<"Sets the op's layout (null removes it).",
      "void", "setLayoutOrNull", (ins "::mlir::helix::LayoutAttr":$layout),
      [{}], [{ $_op.setLayoutAttr(layout); }]>,
    InterfaceMethod<"Which part of the layout shards the op.",
      "::mlir::helix::LayoutKind", "getLayoutKind">
  ];
}

#endif // HELIX_INTERFACES_TD
