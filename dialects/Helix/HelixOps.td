//===- HelixOps.td - helix operations ----------------------*- tablegen -*-===//

#ifndef HELIX_OPS_TD
#define HELIX_OPS_TD

include "HelixDialect.td"
include "HelixAttributes.td"
include "HelixTypes.td"
include "HelixInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

// The ops a plan annotates with a #helix.layout (each says its layout kind).
defvar Helix_CarriesLayout =
    DeclareOpInterfaceMethods<Helix_LayoutCarrier, ["getLayoutKind"]>;

// Activations: [batch, features] with a dynamic or static batch.
def Helix_Activation2D : 2DTensorOf<[AnyFloat]>;
def Helix_TokenIds : 1DTensorOf<[AnyInteger]>;

def Helix_EmbedOp : Helix_Op<"embed", [Pure]> {
  let summary = "Token embedding lookup";
  let description = [{
    Looks up the embedding row of each token: [B] ids -> [B, hidden].
    `weight` names the [vocab, hidden] table in the checkpoint.

    ```mlir
    %h = helix.embed %tokens {vocab = 129280 : i64, weight = "model.embed_tokens.weight"}
        : tensor<?xi64> -> tensor<?x7168xbf16>
    ```
  }];
  let arguments = (ins Helix_TokenIds:$tokens, I64Attr:$vocab, StrAttr:$weight);
  let results = (outs Helix_Activation2D:$result);
  let assemblyFormat = "$tokens attr-dict `:` type($tokens) `->` type($result)";
  let hasVerifier = 1;
}

def Helix_RMSNormOp : Helix_Op<"rms_norm", [Pure, SameOperandsAndResultType]> {
  let summary = "RMSNorm over the feature dimension";
  let description = [{
    `y = x / sqrt(mean(x^2) + eps) * w`, with `w` the checkpoint tensor named by
    `weight`.

    ```mlir
    %y = helix.rms_norm %x {eps = 1.0e-06 : f64, weight = "model.norm.weight"}
        : tensor<?x7168xbf16>
    ```
  }];
  let arguments = (ins Helix_Activation2D:$input, F64Attr:$eps, StrAttr:$weight);
  let results = (outs Helix_Activation2D:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Helix_QKVProjOp : Helix_Op<"qkv_proj", [Helix_CarriesLayout, Pure]> {
  let summary = "Query/key/value projection of one attention layer (with RoPE)";
  let description = [{
    Projects the normalised hidden state into per-head queries and the new
    token's keys and values, applying QK-norm, biases and RoPE (at
    `positions`) as the config says.

    For MHA/GQA/MQA there are three results: q [B, heads, head_dim],
    k [B, kv_heads, head_dim], v [B, kv_heads, v_head_dim].
    For MLA (absorbed form) there are two: q [B, heads, kv_lora_rank +
    rope_dim] (the no-RoPE part already multiplied by W_UK) and the new
    latent [B, 1, kv_lora_rank + rope_dim]; `v` is absent.

    Under a layout, each attention rank computes this projection for its TPA
    slice of heads, replicated across its KVP group.

    ```mlir
    %q, %k, %v = helix.qkv_proj %x, %pos {config = #helix.attn<kind = gqa,
        heads = 128, kv_heads = 8, head_dim = 128, v_head_dim = 128>,
        layer = 0 : i64, prefix = "model.layers.0.self_attn",
        rope = #helix.rope<theta = 5.000000e+05>}
        : (tensor<?x16384xbf16>, tensor<?xi64>)
        -> (tensor<?x128x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>)
    ```
  }];
  let arguments = (ins Helix_Activation2D:$input, Helix_TokenIds:$positions,
                   Helix_AttentionConfigAttr:$config, Helix_RopeAttr:$rope,
                   I64Attr:$layer, StrAttr:$prefix,
                   OptionalAttr<Helix_LayoutAttr>:$layout);
  let results = (outs 3DTensorOf<[AnyFloat]>:$q,
                      3DTensorOf<[AnyFloat]>:$k,
                      Optional<3DTensorOf<[AnyFloat]>>:$v);
  let assemblyFormat = [{
    $input `,` $positions attr-dict `:` `(` type($input) `,` type($positions)
    `)` `->` `(` type($q) `,` type($k) (`,` type($v)^)? `)`
  }];
  let hasVerifier = 1;
}

def Helix_AttentionOp : Helix_Op<"attention", [Helix_CarriesLayout]> {
  let summary = "Decode attention over a KV cache";
  let description = [{
    Appends the new token's keys and values to `cache` and attends each
    query head over the cached context (its window, for sliding-window
    layers; with learned sinks where the config says). The result is the
    concatenated head outputs [B, heads * v_head_dim] (for MLA after the
    absorbed W_UV up-projection), ready for the output projection.

    Under a Helix layout the cache is sharded over `kvp` ranks along the
    sequence and `tpa` ranks over KV heads; each rank yields partial outputs
    and log-sum-exp that one all-to-all recombines.

    ```mlir
    %o = helix.attention %q, %k, %v
        cache(%cache : !helix.kv_cache<heads = 8, key_dim = 128, value_dim = 128, element = bf16>)
        {config = #helix.attn<kind = gqa, heads = 128, kv_heads = 8,
        head_dim = 128, v_head_dim = 128>, layer = 0 : i64,
        prefix = "model.layers.0.self_attn"}
        : (tensor<?x128x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>)
        -> tensor<?x16384xbf16>
    ```
  }];
  let arguments = (ins 3DTensorOf<[AnyFloat]>:$q,
                   3DTensorOf<[AnyFloat]>:$k,
                   Optional<3DTensorOf<[AnyFloat]>>:$v,
                   Arg<Helix_KVCacheType, "the layer's KV cache",
                       [MemRead, MemWrite]>:$cache,
                   Helix_AttentionConfigAttr:$config, I64Attr:$layer,
                   StrAttr:$prefix, OptionalAttr<Helix_LayoutAttr>:$layout);
  let results = (outs Helix_Activation2D:$result);
  let assemblyFormat = [{
    $q `,` $k (`,` $v^)? `cache` `(` $cache `:` qualified(type($cache)) `)`
    attr-dict `:` `(` type($q) `,` type($k) (`,` type($v)^)? `)` `->` type($result)
  }];
  let hasVerifier = 1;
}

def Helix_LinearOp : Helix_Op<"linear", [Helix_CarriesLayout, Pure]> {
  let summary = "Dense projection y = x W^T (+ b)";
  let description = [{
    A linear layer whose [out, in] weight (and optional bias) are named in
    the checkpoint. The attention output projection is one.

    ```mlir
    %y = helix.linear %x {weight = "model.layers.0.self_attn.o_proj.weight"}
        : tensor<?x16384xbf16> -> tensor<?x16384xbf16>
    ```
  }];
  let arguments = (ins Helix_Activation2D:$input, StrAttr:$weight,
                   OptionalAttr<StrAttr>:$bias,
                   OptionalAttr<Helix_LayoutAttr>:$layout);
  let results = (outs Helix_Activation2D:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Helix_FFNOp : Helix_Op<"ffn", [Helix_CarriesLayout, Pure, SameOperandsAndResultType]> {
  let summary = "Dense gated FFN of one layer";
  let description = [{
    `down(act(gate(x)) * up(x))` with gate/up [intermediate, hidden] and down
    [hidden, intermediate] under `prefix` (`gate_proj`, `up_proj`,
    `down_proj`).

    ```mlir
    %y = helix.ffn %x {activation = "silu", intermediate = 18432 : i64,
        layer = 0 : i64, prefix = "model.layers.0.mlp"} : tensor<?x7168xbf16>
    ```
  }];
  let arguments = (ins Helix_Activation2D:$input, I64Attr:$intermediate,
                   DefaultValuedStrAttr<StrAttr, "silu">:$activation,
                   UnitAttr:$bias, I64Attr:$layer, StrAttr:$prefix,
                   OptionalAttr<Helix_LayoutAttr>:$layout);
  let results = (outs Helix_Activation2D:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Helix_MoEOp : Helix_Op<"moe", [Helix_CarriesLayout, Pure, SameOperandsAndResultType]> {
  let summary = "Mixture-of-experts block of one layer";
  let description = [{
    Router (softmax or sigmoid scoring, optional grouped top-k), top-k routed
    experts (each a gated FFN), shared experts, routed scaling.

    ```mlir
    %y = helix.moe %x {config = #helix.moe<experts = 256, top_k = 8,
        expert_intermediate = 2048, shared_experts = 1,
        shared_intermediate = 2048, n_group = 8, topk_group = 4,
        routed_scaling = 2.500000e+00, norm_topk_prob = true, scoring = sigmoid>,
        layer = 3 : i64, prefix = "model.layers.3.mlp"} : tensor<?x7168xbf16>
    ```
  }];
  let arguments = (ins Helix_Activation2D:$input, Helix_MoEConfigAttr:$config,
                   I64Attr:$layer, StrAttr:$prefix,
                   OptionalAttr<Helix_LayoutAttr>:$layout);
  let results = (outs Helix_Activation2D:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Helix_AddOp : Helix_Op<"add", [Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "Residual add";
  let description = [{
    ```mlir
    %y = helix.add %a, %b : tensor<?x7168xbf16>
    ```
  }];
  let arguments = (ins Helix_Activation2D:$lhs, Helix_Activation2D:$rhs);
  let results = (outs Helix_Activation2D:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Helix_LMHeadOp : Helix_Op<"lm_head", [Helix_CarriesLayout, Pure]> {
  let summary = "Projection to vocabulary logits";
  let description = [{
    [B, hidden] -> [B, vocab] logits. `weight` is `lm_head.weight`, or the
    embedding table when the model ties them.

    ```mlir
    %logits = helix.lm_head %x {weight = "lm_head.weight"}
        : tensor<?x7168xbf16> -> tensor<?x129280xf32>
    ```
  }];
  let arguments = (ins Helix_Activation2D:$input, StrAttr:$weight,
                   OptionalAttr<Helix_LayoutAttr>:$layout);
  let results = (outs Helix_Activation2D:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // HELIX_OPS_TD
