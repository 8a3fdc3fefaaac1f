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

def Helix_LinearAttentionOp : Helix_Op<"linear_attention", [Helix_CarriesLayout]> {
  let summary = "One decode step of a recurrent linear-attention layer";
  let description = [{
    Gated DeltaNet or Kimi Delta Attention (`config`): projects the
    normalised input into q, k, v and the gates, passes q, k and v through
    the causal convolution whose last inputs `state` keeps, decays each
    value head's key x value state by its gate and updates it by the delta
    rule with the new key and value, reads it with the query, and applies
    the gated RMSNorm (its gate projected from the input). The result is
    the value heads' outputs [B, value_heads * value_head_dim], ready for
    the output projection. The state has a fixed size per request, whatever
    the context: a Helix layout shards it over heads, never over the
    sequence. Its `#helix.layout` reads `tpa` as the TP group of its heads
    (the widest divisor of tpa that divides them) and `kvp` as that group's
    replicas, each holding every request's state; a per-layer plan that
    asks KV parallelism of the kind (#helix.kind_layout kvp > 1) is
    refused.

    ```mlir
    %o = helix.linear_attention %x
        state(%s : !helix.recurrent_state<heads = 64, rows = 128, cols = 128,
              conv_channels = 12288, conv_kernel = 4, element = f32>)
        {config = #helix.linear_attn<variant = gated_deltanet, key_heads = 16,
        value_heads = 64, key_head_dim = 128, value_head_dim = 128>,
        layer = 0 : i64, prefix = "model.layers.0.linear_attn"}
        : tensor<?x4096xbf16> -> tensor<?x8192xbf16>
    ```
  }];
  let arguments = (ins Helix_Activation2D:$input,
                   Arg<Helix_RecurrentStateType, "the layer's state",
                       [MemRead, MemWrite]>:$state,
                   Helix_LinearAttentionConfigAttr:$config, I64Attr:$layer,
                   StrAttr:$prefix, OptionalAttr<Helix_LayoutAttr>:$layout);
  let results = (outs Helix_Activation2D:$result);
  let assemblyFormat = [{
    $input `state` `(` $state `:` qualified(type($state)) `)` attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Helix_MambaOp : Helix_Op<"mamba", [Helix_CarriesLayout]> {
  let summary = "One decode step of a Mamba-2 layer";
  let description = [{
    Projects the normalised input into z, x, B, C and dt, passes x, B and C
    through the causal convolution whose last inputs `state` keeps, updates
    each head's head_dim x state_size SSM state (`h = exp(dt A) h + dt x B`)
    and reads it (`y = h C + D x`), then applies the RMSNorm gated by z.
    The result [B, heads * head_dim] feeds the output projection. Like
    helix.linear_attention, its state is sharded over heads, never over the
    sequence.

    ```mlir
    %o = helix.mamba %x
        state(%s : !helix.recurrent_state<heads = 128, rows = 64, cols = 128,
              conv_channels = 10240, conv_kernel = 4, element = f32>)
        {config = #helix.mamba<heads = 128, head_dim = 64, state_size = 128,
        groups = 8, conv_kernel = 4, conv_bias = true>, layer = 0 : i64,
        prefix = "backbone.layers.0.mixer"}
        : tensor<?x4096xbf16> -> tensor<?x8192xbf16>
    ```
  }];
  let arguments = (ins Helix_Activation2D:$input,
                   Arg<Helix_RecurrentStateType, "the layer's state",
                       [MemRead, MemWrite]>:$state,
                   Helix_MambaConfigAttr:$config, I64Attr:$layer,
                   StrAttr:$prefix, OptionalAttr<Helix_LayoutAttr>:$layout);
  let results = (outs Helix_Activation2D:$result);
  let assemblyFormat = [{
    $input `state` `(` $state `:` qualified(type($state)) `)` attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Helix_DSAIndexerOp : Helix_Op<"dsa_indexer", [Helix_CarriesLayout]> {
  let summary = "DeepSeek Sparse Attention's lightning indexer";
  let description = [{
    Appends the new token's index key (`wk`, a LayerNorm, RoPE on the first
    `rope_dim` values, FP8 with its scale) to `cache`, projects the layer's
    q latent (the MLA's normalised `q_a_proj` output, from `input`) into
    the index heads' queries, scores every cached token
    (`sum_h w_h * relu(q_h . k)`, `w` projected from `input`) and returns
    the positions of the `top_k` best per query [B, top_k] (all of them,
    then -1, while fewer are cached). Under KV parallelism each rank scores
    its shard and keeps its local top-k; one all-gather of the k candidate
    scores per rank gives the global threshold, so the selection is exact.

    ```mlir
    %sel = helix.dsa_indexer %x, %pos
        cache(%ic : !helix.index_cache<head_dim = 128>)
        {config = #helix.indexer<heads = 64, head_dim = 128, top_k = 2048,
        rope_dim = 64>, q_lora_rank = 1536 : i64, layer = 3 : i64,
        prefix = "model.layers.3.self_attn.indexer"}
        : (tensor<?x7168xbf16>, tensor<?xi64>) -> tensor<?x2048xi64>
    ```
  }];
  let arguments = (ins Helix_Activation2D:$input, Helix_TokenIds:$positions,
                   Arg<Helix_IndexCacheType, "the layer's index keys",
                       [MemRead, MemWrite]>:$cache,
                   Helix_IndexerConfigAttr:$config, I64Attr:$q_lora_rank,
                   I64Attr:$layer, StrAttr:$prefix,
                   OptionalAttr<Helix_LayoutAttr>:$layout);
  let results = (outs 2DTensorOf<[AnyInteger]>:$selected);
  let assemblyFormat = [{
    $input `,` $positions `cache` `(` $cache `:` qualified(type($cache)) `)`
    attr-dict `:` `(` type($input) `,` type($positions) `)` `->`
    type($selected)
  }];
  let hasVerifier = 1;
}

def Helix_SparseAttentionOp : Helix_Op<"sparse_attention", [Helix_CarriesLayout]> {
  let summary = "MLA decode attention over the indexer's selected tokens";
  let description = [{
    Appends the new token's latent to `cache` like helix.attention, then
    attends each query head only over the cached tokens `selected` names
    (the layer's, or the previous layer's for a layer that reuses its
    selection). `config` is the layer's MLA; the result is the head outputs
    [B, heads * v_head_dim]. Under a Helix layout each KVP rank attends to
    the selected tokens it holds and the usual log-sum-exp combine finishes
    the step.

    ```mlir
    %o = helix.sparse_attention %q, %k, %sel
        cache(%cache : !helix.kv_cache<heads = 1, key_dim = 576, value_dim = 512,
              element = bf16, latent = true>)
        {config = #helix.attn<kind = mla, heads = 128, kv_heads = 1, head_dim = 192,
        v_head_dim = 128, q_lora_rank = 1536, kv_lora_rank = 512, rope_dim = 64>,
        layer = 3 : i64, prefix = "model.layers.3.self_attn"}
        : (tensor<?x128x576xbf16>, tensor<?x1x576xbf16>, tensor<?x2048xi64>)
        -> tensor<?x16384xbf16>
    ```
  }];
  let arguments = (ins 3DTensorOf<[AnyFloat]>:$q, 3DTensorOf<[AnyFloat]>:$k,
                   2DTensorOf<[AnyInteger]>:$selected,
                   Arg<Helix_KVCacheType, "the layer's KV cache",
                       [MemRead, MemWrite]>:$cache,
                   Helix_AttentionConfigAttr:$config, I64Attr:$layer,
                   StrAttr:$prefix, OptionalAttr<Helix_LayoutAttr>:$layout);
  let results = (outs Helix_Activation2D:$result);
  let assemblyFormat = [{
    $q `,` $k `,` $selected `cache` `(` $cache `:` qualified(type($cache)) `)`
    attr-dict `:` `(` type($q) `,` type($k) `,` type($selected) `)` `->`
    type($result)
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
