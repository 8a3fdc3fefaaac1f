//===- HelixDialect.td - The helix dialect -----------------*- tablegen -*-===//

#ifndef HELIX_DIALECT_TD
#define HELIX_DIALECT_TD

include "mlir/IR/OpBase.td"

def Helix_Dialect : Dialect {
  let name = "helix";
  let cppNamespace = "::mlir::helix";
  let summary = "Model IR for sharded LLM decoding";
  let description = [{
    The helix dialect describes one decode step of a decoder-only transformer
    at the granularity where sharding layouts change: token embedding,
    RMSNorm, the QKV projection, decode attention over a KV cache, linear
    projections, dense gated FFNs, mixture-of-experts blocks, residual adds
    and the LM head. Model dimensions live in typed attributes; layout
    attributes (KVP, TPA, TPF, EP, PP over a device grid) are attached by the
    planner.

    The batch dimension is dynamic (`?`): it is a workload choice, fixed by
    planning. Weights are not SSA values: each op names the Hugging Face
    tensors it reads through a `prefix` (e.g. `"model.layers.3.mlp"`), and its
    dimension attributes define their shapes, so that a partitioning pass can
    name the slices each rank loads.

    Discardable attributes, checked by the dialect wherever they appear:
    `helix.plan` (a `#helix.plan`) and `helix.model` (a `#helix.model`) and
    `helix.micro_batches` (a positive i64) on a decode-step function or, after
    `helix-partition`, its module; `helix.rank` (a non-negative i64) and
    `helix.coords` (grid name -> `array<i64>` of coordinates) on a rank's
    function and what is generated for it; `helix.group` (an `array<i64>` of
    distinct ranks) on a rank-IR collective; `helix.name` (a non-empty
    string) and `helix.kv_layer` (a non-negative i64) on function arguments.
    Any other `helix.*` attribute is an error.

    Example (one Llama layer, abbreviated):

    ```mlir
    %n = helix.rms_norm %h {eps = 1.0e-05 : f64, weight = "model.layers.0.input_layernorm.weight"}
        : tensor<?x4096xbf16>
    %q, %k, %v = helix.qkv_proj %n, %pos {config = #helix.attn<kind = gqa,
        heads = 32, kv_heads = 8, head_dim = 128, v_head_dim = 128>,
        layer = 0 : i64, prefix = "model.layers.0.self_attn"}
        : (tensor<?x4096xbf16>, tensor<?xi64>)
        -> (tensor<?x32x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>)
    %o = helix.attention %q, %k, %v cache(%cache : !helix.kv_cache<...>)
        {config = #helix.attn<...>, layer = 0 : i64, prefix = "..."}
        : (...) -> tensor<?x4096xbf16>
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  // The discardable attributes the passes put on functions, modules, ops
  // and function arguments and results: declared here once, with their
  // names (HelixDialect::<Name>AttrHelper::getNameStr(), `helix::attrs` in
  // HelixDialect.h); what each may hold and where, checked by
  // lib/Dialect/Helix/HelixAttrVerifier.cpp. The helix attributes are
  // typed `Attribute` here (the dialect class comes before them).
  let discardableAttrs = (ins
    // On a decode-step function or, after helix-partition, its module.
    "::mlir::Attribute":$plan,          // #helix.plan
    "::mlir::Attribute":$model,         // #helix.model
    "::mlir::Attribute":$mtp,           // #helix.mtp
    "::mlir::IntegerAttr":$micro_batches, // > 0
    // On SPMD rank IR: a stage program (and what code generation makes of
    // it), a layer function's layers, the MTP drafter's stage.
    "::mlir::IntegerAttr":$stage,       // >= 0
    "::mlir::DenseI64ArrayAttr":$layers, // distinct, >= 0
    "::mlir::IntegerAttr":$draft_stage, // >= 0
    // On a priced op (helix-estimate-cost).
    "::mlir::Attribute":$cost,          // #helix.cost
    // During code generation, on a layer call.
    "::mlir::IntegerAttr":$weight_base, // >= 0
    // On function arguments (and results: name).
    "::mlir::StringAttr":$name,         // non-empty
    "::mlir::IntegerAttr":$kv_layer     // >= 0
  );
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let useDefaultTypePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();
  }];
}

class Helix_Op<string mnemonic, list<Trait> traits = []>
    : Op<Helix_Dialect, mnemonic, traits>;

#endif // HELIX_DIALECT_TD
