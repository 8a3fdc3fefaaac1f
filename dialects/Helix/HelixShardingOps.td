//===- HelixShardingOps.td - sharded decode ops ------------*- tablegen -*-===//
//
// What the sharding passes produce: the distribution of a value over the
// device grids (#helix.dist, a tensor encoding), the KV placement, the local
// KV cache shard, the ops of the sharded algorithm with their weights as SSA
// values, the global-view collective and the asynchronous start/wait of
// HOP-B. The same compute ops carry global shapes (with #helix.dist
// encodings) after helix-insert-collectives and local static shapes after
// helix-partition; see docs/sharding.md.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_SHARDING_OPS_TD
#define HELIX_SHARDING_OPS_TD

include "HelixDialect.td"
include "HelixAttributes.td"
include "HelixTypes.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def Helix_DistAttr : Helix_Attr<"Dist", "dist"> {
  let summary = "Distribution of a global-view tensor over a device grid";
  let description = [{
    Used as the encoding of a ranked tensor in global-view IR (after
    `helix-insert-collectives`): the tensor is the logical value, the
    encoding says which ranks hold which part of it.

    - `split`: one list of grid axes per tensor dimension (trailing
      dimensions may be left out): the dimension is split over those axes,
      the first axis major. A dimension with fewer elements than ranks that
      divides their number is duplicated (rank `i` of `n` holds element
      `i / (n / size)`), which is how KV heads are duplicated under plain
      TP.
    - `partial`: grid axes over which the ranks hold partial sums; the
      logical value is their sum.
    - `stage`: the pipeline stage (grid axis 0) holding the value.

    Every other grid axis holds replicas. A tensor without encoding is
    replicated on every rank of every stage.

    ```mlir
    // Heads split over the TPA axis (3) of the attention grid.
    tensor<8x128x128xbf16, #helix.dist<@helix_attn, [[], [3]]>>
    // Partial sums over the whole KVP x TPA group, on pipeline stage 1.
    tensor<8x16384xbf16, #helix.dist<@helix_attn, partial = [2, 3], stage = 1>>
    ```
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$grid,
    ArrayRefParameter<"::mlir::DenseI16ArrayAttr", "split axes per dim">:$split,
    ArrayRefParameter<"int16_t", "partial-sum axes">:$partial,
    "int64_t":$stage
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Grid axes dimension `dim` is split over (empty past the listed dims).
    ::llvm::ArrayRef<int16_t> getSplitAxes(unsigned dim) const;
    /// The same distribution with `split`, `partial` or `stage` replaced.
    DistAttr withSplit(::llvm::ArrayRef<::llvm::SmallVector<int16_t>> split) const;
    DistAttr withPartial(::llvm::ArrayRef<int16_t> partial) const;
    DistAttr withStage(int64_t stage) const;
    /// Builds a distribution from plain axis lists (trailing empty dims
    /// dropped).
    static DistAttr getFromAxes(::mlir::MLIRContext *ctx,
                                ::mlir::FlatSymbolRefAttr grid,
                                ::llvm::ArrayRef<::llvm::SmallVector<int16_t>> split,
                                ::llvm::ArrayRef<int16_t> partial, int64_t stage);
  }];
}

def Helix_KVPlacementAttr : Helix_Attr<"KVPlacement", "kv_placement"> {
  let summary = "Round-robin placement of a KV cache over the KVP ranks";
  let description = [{
    Section 2.3 of the Helix paper: the new tokens' KV entries go to one KVP
    rank at a time, `block` tokens per rank in round-robin order, so token
    position `p` lives on KVP rank `(p / block) mod kvp` at local index
    `(p / (block * kvp)) * block + p mod block`. `capacity` is the number of
    token slots each rank allocates per request (a whole number of blocks);
    a sliding-window layer (`window` > 0) keeps only the positions in its
    window and uses its slots as a ring (slot = local index mod capacity).

    ```mlir
    #helix.kv_placement<block = 16, kvp = 4, capacity = 262144>
    #helix.kv_placement<block = 16, kvp = 8, capacity = 32, window = 128>
    ```
  }];
  let parameters = (ins
    "int64_t":$block,
    "int64_t":$kvp,
    "int64_t":$capacity,
    Helix_I64Parameter<"sliding window (0: full)", "0">:$window
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Helix_CollectiveKind : I32EnumAttr<"CollectiveKind",
    "communication of a global-view collective", [
    I32EnumAttrCase<"all_to_all", 0>, I32EnumAttrCase<"all_reduce", 1>,
    I32EnumAttrCase<"all_gather", 2>, I32EnumAttrCase<"reduce_scatter", 3>,
    I32EnumAttrCase<"all_slice", 4>, I32EnumAttrCase<"send_recv", 5>,
    I32EnumAttrCase<"broadcast", 6>]> {
  let cppNamespace = "::mlir::helix";
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Helix_AsyncType : TypeDef<Helix_Dialect, "Async"> {
  let mnemonic = "async";
  let summary = "A value being produced by communication in flight";
  let description = [{
    The result of `helix.async_start`: the communication it started may
    still be running; `helix.async_wait` yields the value once it is done.

    ```mlir
    !helix.async<tensor<4x2x32x129xf32>>
    ```
  }];
  let parameters = (ins "::mlir::Type":$value);
  let assemblyFormat = "`<` $value `>`";
}

def Helix_KVShardType : TypeDef<Helix_Dialect, "KVShard"> {
  let mnemonic = "kv_shard";
  let summary = "One rank's shard of one layer's KV cache";
  let description = [{
    What a rank allocates for one layer after `helix-partition`: `rows`
    requests, each with `tokens` slots of `heads` local KV heads (`key_dim`
    key and `value_dim` value values; for MLA one latent of `key_dim` values
    whose first `value_dim` are the values). Slots are filled as the
    `#helix.kv_placement` of the layer's attention says.

    ```mlir
    !helix.kv_shard<rows = 8, tokens = 262144, heads = 1, key_dim = 128,
                    value_dim = 128, element = bf16>
    ```
  }];
  let parameters = (ins
    "int64_t":$rows,
    "int64_t":$tokens,
    "int64_t":$heads,
    "int64_t":$key_dim,
    "int64_t":$value_dim,
    "Type":$element,
    Helix_BoolParameter<"MLA latent cache">:$latent,
    Helix_I64Parameter<"sliding window (0: full)", "0">:$window
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Helix_StateShardType : TypeDef<Helix_Dialect, "StateShard"> {
  let mnemonic = "state_shard";
  let summary = "One rank's recurrent state of one layer";
  let description = [{
    What a rank allocates for one recurrent layer after `helix-partition`
    (the shard of a `!helix.recurrent_state`): `rows` requests of `values`
    f32 each, zeroed at start. For a Gated DeltaNet layer whose rank holds
    `hk` key heads and `hv` value heads a row is the `hv` states
    [key_dim, value_dim], then the last `conv_kernel - 1` inputs of each of
    its `2 * hk * key_dim + hv * value_dim` convolution channels (q, k, v).

    ```mlir
    !helix.state_shard<rows = 8, values = 67584>
    ```
  }];
  let parameters = (ins "int64_t":$rows, "int64_t":$values);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

// Ops whose values may be #helix.dist-distributed (and helix.collective,
// which names its grid): their grids must be shard.grid symbols with the
// axes they use (verifySymbolUses).
defvar Helix_UsesGrids = DeclareOpInterfaceMethods<SymbolUserOpInterface>;

//===----------------------------------------------------------------------===//
// Weights and element-wise pieces
//===----------------------------------------------------------------------===//

def Helix_WeightOp : Helix_Op<"weight",
    [Helix_UsesGrids, Pure, AttrSizedOperandSegments]> {
  let summary = "A slice of a checkpoint tensor";
  let description = [{
    The weight `name` of the Hugging Face checkpoint, whose stored shape is
    `shape`, seen as the row-major `view` (default: `shape`; e.g. the
    `[heads * head_dim, hidden]` q projection seen as
    `[heads, head_dim, hidden]`), and the slice of that view starting at
    `offsets` (default: zeros) with the result's shape; an offset may be an
    `index` value (SPMD rank IR computes it from the rank's grid
    coordinates). A name containing
    `{expert}` stands for one tensor per expert: the view's first dimension
    enumerates experts and `shape` is one expert's tensor. A name
    containing `{layer}` takes the `layer(..)` operand there: a layer
    function of SPMD rank IR loads the weights of the layer it is called
    for.

    In global-view IR the result is the whole view (with a `#helix.dist`
    saying how it is split); after `helix-partition` it is the slice one
    rank loads, its offsets computed from the rank's coordinates.

    ```mlir
    %wq = helix.weight "model.layers.0.self_attn.q_proj.weight" [16384, 16384]
        view [128, 128, 16384] offsets [32, 0, 0] : tensor<4x128x16384xbf16>
    %wg = helix.weight "model.layers.3.mlp.experts.{expert}.gate_proj.weight"
        [2048, 7168] view [256, 2048, 7168] offsets [32, 0, 0]
        : tensor<32x2048x7168xbf16>
    %wo = helix.weight "model.layers.0.self_attn.o_proj.weight" [16384, 16384]
        offsets [0, %col] : tensor<16384x512xbf16>
    %wn = helix.weight "model.layers.{layer}.input_layernorm.weight" layer(%l)
        [16384] : tensor<16384xbf16>
    ```
  }];
  let arguments = (ins StrAttr:$name, DenseI64ArrayAttr:$shape,
                   OptionalAttr<DenseI64ArrayAttr>:$view,
                   Variadic<Index>:$dynamic_offsets,
                   OptionalAttr<DenseI64ArrayAttr>:$offsets,
                   Optional<Index>:$layer);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $name (`layer` `(` $layer^ `)`)? $shape (`view` $view^)?
    (`offsets` custom<DynamicIndexList>($dynamic_offsets, $offsets)^)?
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The view's shape (`view`, or `shape` when absent).
    ::llvm::SmallVector<int64_t> getViewShape();
    /// The slice's static offsets (zeros when absent); an offset computed
    /// in the IR (an SSA index, SPMD rank IR) is ShapedType::kDynamic.
    ::llvm::SmallVector<int64_t> getSliceOffsets();
    /// Every offset: an IntegerAttr or the index value computing it.
    ::llvm::SmallVector<::mlir::OpFoldResult> getMixedSliceOffsets();
    /// The name with `{layer}` replaced by `layer`.
    std::string getNameOfLayer(int64_t layer);
  }];
}

def Helix_EmbedRowsOp : Helix_Op<"embed_rows", [Helix_UsesGrids, Pure]> {
  let summary = "Embedding lookup against a slice of the vocabulary";
  let description = [{
    Row `t - vocab_offset` of `table` for every token id `t` in
    `[vocab_offset, vocab_offset + rows(table))`, zeros for the others: the
    vocabulary-parallel embedding, whose partial results an all-reduce sums.
    `vocab_offset` (an index, default 0) is the rank's first row of the
    vocabulary, computed from its grid coordinates in SPMD rank IR.

    ```mlir
    %e = helix.embed_rows %tokens, %table vocab_offset(%v)
        : (tensor<8xi64>, tensor<4008x16384xbf16>, index) -> tensor<8x16384xbf16>
    ```
  }];
  let arguments = (ins 1DTensorOf<[AnyInteger]>:$tokens,
                   2DTensorOf<[AnyFloat]>:$table,
                   Optional<Index>:$vocab_offset);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $tokens `,` $table (`vocab_offset` `(` $vocab_offset^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Helix_NormRowsOp : Helix_Op<"norm_rows", [Helix_UsesGrids, Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "RMSNorm of each row, its weight an operand (rank IR)";
  let description = [{
    `y = x / sqrt(mean(x^2) + eps) * w` over the last dimension of each row.
    The rank-IR form of model IR's `helix.rms_norm`: the same math, with the
    weight a value (loaded by `helix.weight`, as rank IR holds every
    tensor) instead of a checkpoint name, as `helix.embed_rows` is
    `helix.embed`'s.

    ```mlir
    %n = helix.norm_rows %h, %w {eps = 1.0e-05 : f64} : tensor<8x16384xbf16>, tensor<16384xbf16>
    ```
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$input,
                   1DTensorOf<[AnyFloat]>:$weight, F64Attr:$eps);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` type($input) `,` type($weight)
  }];
  let hasVerifier = 1;
}

def Helix_MatmulOp : Helix_Op<"matmul", [Helix_UsesGrids, Pure]> {
  let summary = "y = x W^T (+ b) with W as an operand";
  let description = [{
    `x` [B, K], `weight` [N, K] (the checkpoint's [out, in] layout), optional
    `bias` [N]: one GEMM. Row-parallel uses (a slice of K per rank) yield
    partial sums; `helix-partition` keeps the bias on one rank of the group
    only, so the sum adds it once.

    ```mlir
    %p = helix.matmul %o, %wo : (tensor<8x512xbf16>, tensor<16384x512xbf16>)
        -> tensor<8x16384xbf16>
    ```
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$input,
                   2DTensorOf<[AnyFloat]>:$weight,
                   Optional<1DTensorOf<[AnyFloat]>>:$bias);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Helix_KeepIfOp : Helix_Op<"keep_if",
    [Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "A value on the ranks where a condition holds, zeros elsewhere";
  let description = [{
    `value` where `condition` is true, a zero tensor of its type elsewhere.
    SPMD rank IR uses it for a row-parallel bias: every rank of the
    reduction group runs the same program, and only the one holding the
    first slice of the contraction adds the bias, so the sum adds it once.
    The runtime passes an absent bias instead of zeros.

    ```mlir
    %c0 = arith.constant 0 : index
    %first = arith.cmpi eq, %col, %c0 : index
    %b = helix.keep_if %first, %bias : tensor<2880xbf16>
    %y = helix.matmul %o, %wo bias(%b) : (...) -> tensor<8x2880xbf16>
    ```
  }];
  let arguments = (ins I1:$condition, AnyRankedTensor:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $condition `,` $value attr-dict `:` type($value)
  }];
}

def Helix_GroupSumOp : Helix_Op<"group_sum", [Helix_UsesGrids, Pure]> {
  let summary = "Sum over the leading (expert-group) dimension";
  let description = [{
    [G, B, H] -> [B, H]: the local reduction that ends Helix's MoE, after
    the inter-expert all-gather brought every group's sum to every rank.

    ```mlir
    %y = helix.group_sum %g : tensor<8x8x7168xbf16> -> tensor<8x7168xbf16>
    ```
  }];
  let arguments = (ins 3DTensorOf<[AnyFloat]>:$input);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Helix_QKVOp : Helix_Op<"qkv", [Helix_UsesGrids, Pure, AttrSizedOperandSegments]> {
  let summary = "QKV projection (MHA/GQA/MQA) with weights as operands";
  let description = [{
    Projects `input` [B, hidden] into q [B, Hq, D], k [B, K, D] and
    v [B, K, Dv] with the weights seen per head (`wq` [Hq, D, hidden], `wk`
    [K, D, hidden], `wv` [K, Dv, hidden]), adds the biases ([Hq, D], [K, D],
    [K, Dv]) and applies per-head QK-norm ([D] weights) when the config has
    them, then RoPE at `positions`. Under Helix every KVP rank computes the
    heads of its TPA slice for the whole batch.

    ```mlir
    %q, %k, %v = helix.qkv %n, %pos weights(%wq, %wk, %wv) {config = #helix.attn<...>,
        layer = 0 : i64, rope = #helix.rope<theta = 5.000000e+05>}
        : (tensor<8x16384xbf16>, tensor<8xi64>, tensor<16x128x16384xbf16>,
           tensor<1x128x16384xbf16>, tensor<1x128x16384xbf16>)
        -> (tensor<8x16x128xbf16>, tensor<8x1x128xbf16>, tensor<8x1x128xbf16>)
    ```
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$input,
                   1DTensorOf<[AnyInteger]>:$positions,
                   3DTensorOf<[AnyFloat]>:$wq, 3DTensorOf<[AnyFloat]>:$wk,
                   3DTensorOf<[AnyFloat]>:$wv,
                   Optional<2DTensorOf<[AnyFloat]>>:$bq,
                   Optional<2DTensorOf<[AnyFloat]>>:$bk,
                   Optional<2DTensorOf<[AnyFloat]>>:$bv,
                   Optional<1DTensorOf<[AnyFloat]>>:$q_norm,
                   Optional<1DTensorOf<[AnyFloat]>>:$k_norm,
                   Helix_AttentionConfigAttr:$config, Helix_RopeAttr:$rope,
                   I64Attr:$layer);
  let results = (outs 3DTensorOf<[AnyFloat]>:$q, 3DTensorOf<[AnyFloat]>:$k,
                      3DTensorOf<[AnyFloat]>:$v);
  let assemblyFormat = [{
    $input `,` $positions `weights` `(` $wq `,` $wk `,` $wv `)`
    (`bias` `(` $bq^ `,` $bk `,` $bv `)`)?
    (`qk_norm` `(` $q_norm^ `,` $k_norm `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Helix_MLAQKVOp : Helix_Op<"mla_qkv", [Helix_UsesGrids, Pure, AttrSizedOperandSegments]> {
  let summary = "MLA query and latent projections (absorbed form)";
  let description = [{
    DeepSeek's latent attention for decode: `q` [B, Hq, kv_lora + rope] (the
    no-RoPE part multiplied by W_UK, the first qk_nope rows of each head of
    `wkv_b`) and the new token's `latent` [B, 1, kv_lora + rope] (normalised
    compressed KV and the RoPE key). Weights: `q_lora(wq_a [q_lora,
    hidden], q_norm [q_lora])` when the config has a q LoRA, `wq_b`
    [Hq, qk_nope + rope, q_lora or hidden], `wkv_a` [kv_lora + rope, hidden],
    `kv_norm` [kv_lora], `wkv_b` [Hq, qk_nope + v_head_dim, kv_lora].

    ```mlir
    %q, %lat = helix.mla_qkv %n, %pos q_lora(%wqa, %qn) weights(%wqb, %wkva, %kvn, %wkvb)
        {config = #helix.attn<kind = mla, ...>, layer = 0 : i64, rope = #helix.rope<>}
        : (...) -> (tensor<8x128x576xbf16>, tensor<8x1x576xbf16>)
    ```
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$input,
                   1DTensorOf<[AnyInteger]>:$positions,
                   Optional<2DTensorOf<[AnyFloat]>>:$wq_a,
                   Optional<1DTensorOf<[AnyFloat]>>:$q_norm,
                   3DTensorOf<[AnyFloat]>:$wq_b, 2DTensorOf<[AnyFloat]>:$wkv_a,
                   1DTensorOf<[AnyFloat]>:$kv_norm,
                   3DTensorOf<[AnyFloat]>:$wkv_b,
                   Helix_AttentionConfigAttr:$config, Helix_RopeAttr:$rope,
                   I64Attr:$layer);
  let results = (outs 3DTensorOf<[AnyFloat]>:$q,
                      3DTensorOf<[AnyFloat]>:$latent);
  let assemblyFormat = [{
    $input `,` $positions (`q_lora` `(` $wq_a^ `,` $q_norm `)`)?
    `weights` `(` $wq_b `,` $wkv_a `,` $kv_norm `,` $wkv_b `)`
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Helix_AttentionPartialOp : Helix_Op<"attention_partial",
    [Helix_UsesGrids, AttrSizedOperandSegments]> {
  let summary = "Decode attention over one KV shard: partial outputs and LSE";
  let description = [{
    Appends the new token's keys and values (`k`, `v`; for MLA the latent
    `k`) to `cache` and attends every query head of `q` over the tokens the
    shard holds (its window, for sliding-window layers). For MLA the
    absorbed W_UV (rows qk_nope.. of each head of `w_uv`, the `kv_b_proj`
    slice) maps the latent outputs to v_head_dim values; the rescale-and-sum
    commutes with it.

    The result is [P, B, Hq * s, Dv / s + 1] f32, P the KV shards (KVP
    ranks): each head's softmax-normalised partial output over the shard,
    cut into `head_split` = s pieces, each followed by the head's
    log-sum-exp. Packing them lets one all-to-all move both; `s` > 1 when
    there are fewer heads than ranks to spread them over.

    The requests are rows `batch_offset ..` of the step's batch and cache
    rows `row_base + batch_offset ..` of `cache_rows`. A speculative verify
    step (`queries` = K + 1 > 1, `helix.mtp`) has `queries` consecutive
    query rows per request, at consecutive positions: query row `i` reads
    and appends to cache row `row_base + (batch_offset + i) / queries`,
    every row's KV entry is appended before any row attends, and each row
    attends over the entries its own span (its position) covers, so the
    request's later drafts stay invisible to its earlier rows;
    `batch_offset` and the rows are whole requests. After
    `helix-kv-placement`, `placement` and the `kv(slots, spans)` operands
    (from `helix.kv_slots`) say where each request's new entry goes (slot,
    or -1 when another rank owns the position) and which local entries
    [begin, end) it attends over.

    DeepSeek Sparse Attention: with `selected` ([B, top_k] positions from
    `helix.topk_merge`) each request attends only to the selected tokens
    its shard holds (found by the placement; `kvp_rank`, set by
    `helix-partition`, is the rank's index in its KVP group); the usual
    combine of the partials finishes the step.

    ```mlir
    %p = helix.attention_partial %q, %k, %v cache(%c) kv(%slots, %spans)
        {cache_rows = 8 : i64, config = #helix.attn<...>, layer = 0 : i64,
         placement = #helix.kv_placement<block = 16, kvp = 4, capacity = 262144>}
        : (tensor<8x16x128xbf16>, tensor<8x1x128xbf16>, tensor<8x1x128xbf16>,
           !helix.kv_shard<...>, tensor<1x8xi64>, tensor<1x8x2xi64>)
        -> tensor<1x8x16x129xf32>
    ```
  }];
  let arguments = (ins 3DTensorOf<[AnyFloat]>:$q, 3DTensorOf<[AnyFloat]>:$k,
                   Optional<3DTensorOf<[AnyFloat]>>:$v,
                   Arg<AnyType, "the layer's KV cache or its shard",
                       [MemRead, MemWrite]>:$cache,
                   Optional<3DTensorOf<[AnyFloat]>>:$w_uv,
                   Optional<2DTensorOf<[I64]>>:$slots,
                   Optional<3DTensorOf<[I64]>>:$spans,
                   Optional<Index>:$row_base,
                   Optional<2DTensorOf<[I64]>>:$selected,
                   Optional<Index>:$kvp_rank,
                   Helix_AttentionConfigAttr:$config, I64Attr:$layer,
                   DefaultValuedAttr<I64Attr, "1">:$head_split,
                   DefaultValuedAttr<I64Attr, "0">:$batch_offset,
                   I64Attr:$cache_rows,
                   OptionalAttr<Helix_KVPlacementAttr>:$placement,
                   DefaultValuedAttr<I64Attr, "1">:$queries);
  let results = (outs 4DTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $q `,` $k (`,` $v^)? `cache` `(` $cache `)` (`w_uv` `(` $w_uv^ `)`)?
    (`kv` `(` $slots^ `,` $spans `)`)? (`row_base` `(` $row_base^ `)`)?
    (`selected` `(` $selected^ `)`)? (`kvp_rank` `(` $kvp_rank^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Helix_LSECombineOp : Helix_Op<"lse_combine", [Helix_UsesGrids, Pure]> {
  let summary = "Exact log-sum-exp rescale-and-sum of KV-shard partials";
  let description = [{
    `partials` [P, B, Hs, d + 1] (as `helix.attention_partial` packs them)
    -> [B, Hs * d]: with `lse = log(sum_i exp(lse_i) (+ exp(sink)))`,
    `out = sum_i exp(lse_i - lse) * o_i`. Exact: the result equals attention
    over the whole context. `sinks` (gpt-oss) holds one learned logit per
    local head, added once to the denominator here.

    ```mlir
    %o = helix.lse_combine %x : tensor<4x8x4x129xf32> -> tensor<8x512xbf16>
    ```
  }];
  let arguments = (ins 4DTensorOf<[F32]>:$partials,
                   Optional<1DTensorOf<[AnyFloat]>>:$sinks);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $partials (`sinks` `(` $sinks^ `:` type($sinks) `)`)? attr-dict `:`
    type($partials) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Helix_KVSlotsOp : Helix_Op<"kv_slots", [Pure]> {
  let summary = "Where each KVP rank appends the new tokens and what it holds";
  let description = [{
    For each KVP rank `r` in `[rank_offset, rank_offset + P)` and each
    request with new-token position `p` (`positions`): `slots[r, b]` is the
    local slot the rank writes the new KV entry to, or -1 when
    `(p / block) mod kvp != r`; `spans[r, b] = [begin, end)` are the local
    indices of the entries the rank holds for that request after the append
    (its local context length is `end - begin`). With
    `count_r(n) = (n / (block * kvp)) * block + clamp(n mod (block * kvp) - r * block, 0, block)`
    positions below `n` owned by rank `r`: `end = count_r(p + 1)` and
    `begin = count_r(max(0, p + 1 - window))` (0 without window); a slot is
    `(end - 1) mod capacity`.

    ```mlir
    %slots, %spans = helix.kv_slots %pos rank_offset(%kvp_rank)
        {placement = #helix.kv_placement<block = 16, kvp = 4, capacity = 262144>}
        : tensor<8xi64> -> tensor<1x8xi64>, tensor<1x8x2xi64>
    ```

    `rank_offset` (an index, default 0) is the first KVP rank described; in
    SPMD rank IR the rank's own KVP coordinate.
  }];
  let arguments = (ins 1DTensorOf<[AnyInteger]>:$positions,
                   Optional<Index>:$rank_offset,
                   Helix_KVPlacementAttr:$placement);
  let results = (outs 2DTensorOf<[I64]>:$slots, 3DTensorOf<[I64]>:$spans);
  let assemblyFormat = [{
    $positions (`rank_offset` `(` $rank_offset^ `)`)? attr-dict `:`
    type($positions) `->` type($slots) `,` type($spans)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// FFN and MoE
//===----------------------------------------------------------------------===//

def Helix_GatedMLPOp : Helix_Op<"gated_mlp", [Helix_UsesGrids, Pure, AttrSizedOperandSegments]> {
  let summary = "Dense gated FFN with its weights as operands";
  let description = [{
    `down(act(gate(x)) * up(x))`: `w_gate` and `w_up` [I, H], `w_down`
    [H, I], optional biases [I], [I] and `down_bias` [H]. Column-parallel
    gate/up and row-parallel down give partial sums over the TP group; the
    down bias is then kept on one rank of the group.

    ```mlir
    %f = helix.gated_mlp %n, %wg, %wu, %wd {activation = "silu"}
        : (tensor<8x16384xbf16>, tensor<1664x16384xbf16>, tensor<1664x16384xbf16>,
           tensor<16384x1664xbf16>) -> tensor<8x16384xbf16>
    ```
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$input,
                   2DTensorOf<[AnyFloat]>:$w_gate,
                   2DTensorOf<[AnyFloat]>:$w_up,
                   2DTensorOf<[AnyFloat]>:$w_down,
                   Optional<1DTensorOf<[AnyFloat]>>:$b_gate,
                   Optional<1DTensorOf<[AnyFloat]>>:$b_up,
                   Optional<1DTensorOf<[AnyFloat]>>:$b_down,
                   DefaultValuedStrAttr<StrAttr, "silu">:$activation);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $w_gate `,` $w_up `,` $w_down
    (`bias` `(` $b_gate^ `,` $b_up `)`)? (`down_bias` `(` $b_down^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Helix_MoERouterOp : Helix_Op<"moe_router", [Helix_UsesGrids, Pure]> {
  let summary = "MoE router: top-k expert ids and weights per token";
  let description = [{
    Scores every expert (`weight` [E, H], optional `bias` [E]: the score
    correction of DeepSeek-V3 or the router bias of gpt-oss), applies
    grouped top-k, renormalisation and routed scaling as `config` says, and
    yields each token's `top_k` expert ids and weights. Replicated: every
    rank routes every token it holds.

    ```mlir
    %w, %ids = helix.moe_router %n, %wr {config = #helix.moe<...>}
        : (tensor<8x7168xbf16>, tensor<256x7168xbf16>) -> (tensor<8x8xf32>, tensor<8x8xi32>)
    ```
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$input,
                   2DTensorOf<[AnyFloat]>:$weight,
                   Optional<1DTensorOf<[AnyFloat]>>:$bias,
                   Helix_MoEConfigAttr:$config);
  let results = (outs 2DTensorOf<[F32]>:$weights,
                      2DTensorOf<[AnyInteger]>:$ids);
  let assemblyFormat = [{
    $input `,` $weight (`bias` `(` $bias^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Helix_MoEExpertsOp : Helix_Op<"moe_experts",
    [Helix_UsesGrids, Pure, AttrSizedOperandSegments]> {
  let summary = "Routed experts of one expert group (and a shared-expert slice)";
  let description = [{
    For every token of `input` [B, H] and each of its routed experts in
    `[expert_offset, expert_offset + E)` (the experts whose weights are
    operands), adds `weight * expert(x)`; with `shared(...)` also adds this
    rank's slice of the shared experts. Expert weights are stacked over the
    E local experts, each expert's intermediate possibly TP-sliced:
    `experts(gate [E, I, H], up [E, I, H], down [E, H, I])`, or with
    `fused_gate_up` (gpt-oss) `experts(gate_up [E, H, 2I] interleaved,
    down [E, I, H])`; `expert_bias(...)` holds the matching biases ([E, I]
    or [E, 2I], and [E, H] for down, which only one rank of a TPF group
    adds: the others leave it out).

    The result is the group's contribution: [G, B, H] with this group's
    sum in its slot of the leading expert-group dimension (Helix: an
    all-reduce over TPF, an all-gather over EP and `helix.group_sum`
    follow), or [B, H] partial sums.

    ```mlir
    %g = helix.moe_experts %n, %w, %ids experts(%wg, %wu, %wd) shared(%sg, %su, %sd)
        expert_offset(%first) {config = #helix.moe<...>}
        : (...) -> tensor<1x8x7168xbf16>
    ```

    `expert_offset` (an index, default 0): the first of the local experts,
    computed from the rank's EP coordinate in SPMD rank IR.
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$input,
                   2DTensorOf<[F32]>:$weights,
                   2DTensorOf<[AnyInteger]>:$ids,
                   Variadic<3DTensorOf<[AnyFloat]>>:$expert_weights,
                   Variadic<2DTensorOf<[AnyFloat]>>:$expert_biases,
                   Variadic<2DTensorOf<[AnyFloat]>>:$shared_weights,
                   Optional<Index>:$expert_offset,
                   Helix_MoEConfigAttr:$config,
                   UnitAttr:$fused_gate_up);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $weights `,` $ids `experts` `(` $expert_weights `)`
    (`expert_bias` `(` $expert_biases^ `)`)?
    (`shared` `(` $shared_weights^ `)`)?
    (`expert_offset` `(` $expert_offset^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Communication
//===----------------------------------------------------------------------===//

def Helix_GDNStepOp : Helix_Op<"gdn_step", [Helix_UsesGrids]> {
  let summary = "One Gated DeltaNet decode step of the rank's heads";
  let description = [{
    The sharded form of a Gated DeltaNet `helix.linear_attention`: the
    key heads of the rank's slice (`wqkvz` [hk, 2 * key_dim + 2 * r *
    value_dim, hidden] and `wba` [hk, 2 * r, hidden]: in_proj_qkvz and
    in_proj_ba seen per key head, r value heads per key head) with their
    `hv = hk * r` value heads (`conv_q`, `conv_k` [hk * key_dim, K],
    `conv_v` [hv * value_dim, K]: the rank's channels of conv1d;
    `a_log`, `dt_bias` [hv]; `norm` [value_dim], the gated norm). Each
    request's row of `state` (at `row_base` + its index, for a
    micro-batch) keeps its delta-rule states and convolution inputs; a
    request at position 0 starts from zeros. The result [B, hv *
    value_dim] holds the rank's value heads, ready for the row-parallel
    output projection. `eps` is the gated norm's.

    ```mlir
    %o = helix.gdn_step %x, %pos weights(%qkvz, %ba, %cq, %ck, %cv, %alog, %dt, %nw)
        state(%s : !helix.state_shard<rows = 4, values = 4608>)
        {config = #helix.linear_attn<variant = gated_deltanet, key_heads = 2,
        value_heads = 4, key_head_dim = 32, value_head_dim = 32>,
        eps = 1.0e-06 : f64, layer = 0 : i64}
        : (tensor<4x128xf32>, tensor<4xi64>, tensor<1x192x128xf32>,
           tensor<1x4x128xf32>, tensor<32x4xf32>, tensor<32x4xf32>,
           tensor<64x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<32xf32>)
        -> tensor<4x64xf32>
    ```
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$input,
                   1DTensorOf<[AnyInteger]>:$positions,
                   3DTensorOf<[AnyFloat]>:$wqkvz, 3DTensorOf<[AnyFloat]>:$wba,
                   2DTensorOf<[AnyFloat]>:$conv_q,
                   2DTensorOf<[AnyFloat]>:$conv_k,
                   2DTensorOf<[AnyFloat]>:$conv_v,
                   1DTensorOf<[AnyFloat]>:$a_log,
                   1DTensorOf<[AnyFloat]>:$dt_bias,
                   1DTensorOf<[AnyFloat]>:$norm,
                   Arg<AnyType, "the layer's state", [MemRead, MemWrite]>:$state,
                   Optional<Index>:$row_base,
                   Helix_LinearAttentionConfigAttr:$config, F64Attr:$eps,
                   I64Attr:$layer);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $input `,` $positions `weights` `(` $wqkvz `,` $wba `,` $conv_q `,`
    $conv_k `,` $conv_v `,` $a_log `,` $dt_bias `,` $norm `)`
    `state` `(` $state `:` type($state) `)` (`row_base` `(` $row_base^ `)`)?
    attr-dict `:` `(` type($input) `,` type($positions) `,` type($wqkvz) `,`
    type($wba) `,` type($conv_q) `,` type($conv_k) `,` type($conv_v) `,`
    type($a_log) `,` type($dt_bias) `,` type($norm) `)` `->` type($result)
  }];
  let hasVerifier = 1;
}

def Helix_IndexCandidatesOp : Helix_Op<"index_candidates",
    [Helix_UsesGrids, AttrSizedOperandSegments]> {
  let summary = "DSA's lightning indexer on one KV shard: its top-k candidates";
  let description = [{
    The sharded form of `helix.dsa_indexer`. Every rank of a KVP group
    computes the new token's index query (`wq_b` [heads, head_dim, q_lora]
    over the normalised q latent from `wq_a` and `q_norm`) and index key
    (`wk` [head_dim, hidden], the LayerNorm `k_norm`, `k_norm_bias`; RoPE on
    the first `rope_dim` values) and the head weights (`w_proj` [heads,
    hidden]), appends the key to its shard of the index keys (`cache`: a
    `!helix.state_shard` of `capacity` x (head_dim + 1) values per request,
    the key and its position, after `helix-partition`) where the layer's KV
    placement puts the token (`kv(slots, spans)`, as the layer's
    `helix.attention_partial` gets them), scores the keys it holds
    (`sum_h w_h * relu(q_h . k)`) and keeps its best `top_k`. The result
    [P, B, top_k, 2] f32 holds each KV shard's candidates, (score,
    position), best first (ties: the lower position), padded with (-inf,
    -1): one all-gather over the KVP group and `helix.topk_merge` select the
    global top-k exactly.

    ```mlir
    %c = helix.index_candidates %x, %pos weights(%wqa, %qn, %wqb, %wk, %kn, %kb, %wp)
        cache(%ic : !helix.state_shard<rows = 4, values = 1088>) kv(%slots, %spans)
        {cache_rows = 4 : i64, config = #helix.indexer<heads = 4, head_dim = 16,
         top_k = 16, rope_dim = 8>, eps = 1.0e-06 : f64, layer = 1 : i64,
         placement = #helix.kv_placement<block = 16, kvp = 1, capacity = 64>,
         rope = #helix.rope<>}
        : (...) -> tensor<1x4x16x2xf32>
    ```
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$input,
                   1DTensorOf<[AnyInteger]>:$positions,
                   2DTensorOf<[AnyFloat]>:$wq_a, 1DTensorOf<[AnyFloat]>:$q_norm,
                   3DTensorOf<[AnyFloat]>:$wq_b, 2DTensorOf<[AnyFloat]>:$wk,
                   1DTensorOf<[AnyFloat]>:$k_norm,
                   1DTensorOf<[AnyFloat]>:$k_norm_bias,
                   2DTensorOf<[AnyFloat]>:$w_proj,
                   Arg<AnyType, "the layer's index keys or their shard",
                       [MemRead, MemWrite]>:$cache,
                   Optional<2DTensorOf<[I64]>>:$slots,
                   Optional<3DTensorOf<[I64]>>:$spans,
                   Optional<Index>:$row_base,
                   Helix_IndexerConfigAttr:$config, Helix_RopeAttr:$rope,
                   F64Attr:$eps, I64Attr:$layer, I64Attr:$cache_rows,
                   OptionalAttr<Helix_KVPlacementAttr>:$placement);
  let results = (outs 4DTensorOf<[F32]>:$result);
  let assemblyFormat = [{
    $input `,` $positions `weights` `(` $wq_a `,` $q_norm `,` $wq_b `,` $wk
    `,` $k_norm `,` $k_norm_bias `,` $w_proj `)` `cache` `(` $cache `:`
    type($cache) `)` (`kv` `(` $slots^ `,` $spans `)`)?
    (`row_base` `(` $row_base^ `)`)? attr-dict `:` `(` type($input) `,`
    type($positions) `,` type($wq_a) `,` type($q_norm) `,` type($wq_b) `,`
    type($wk) `,` type($k_norm) `,` type($k_norm_bias) `,` type($w_proj)
    (`,` type($slots)^ `,` type($spans))? `)` `->` type($result)
  }];
  let hasVerifier = 1;
}

def Helix_TopkMergeOp : Helix_Op<"topk_merge", [Helix_UsesGrids, Pure]> {
  let summary = "The exact global top-k of every KV shard's candidates";
  let description = [{
    `candidates` [P, B, k, 2] (every KVP rank's `helix.index_candidates`,
    all-gathered) -> the positions [B, top_k] of the `top_k` best scores of
    each request over all shards (ties: the lower position; -1 padding
    while fewer tokens are cached): the same on every rank, and the same as
    an unsharded indexer selects.

    ```mlir
    %sel = helix.topk_merge %c {top_k = 16 : i64} : tensor<2x4x16x2xf32> -> tensor<4x16xi64>
    ```
  }];
  let arguments = (ins 4DTensorOf<[F32]>:$candidates, I64Attr:$top_k);
  let results = (outs 2DTensorOf<[I64]>:$selected);
  let assemblyFormat = [{
    $candidates attr-dict `:` type($candidates) `->` type($selected)
  }];
  let hasVerifier = 1;
}

def Helix_OutputGateOp : Helix_Op<"output_gate", [Helix_UsesGrids, Pure]> {
  let summary = "The sigmoid gate on the attention output (Qwen3-Next, Qwen3.5)";
  let description = [{
    `attention` [B, h * d] (the combined heads a rank holds) times
    `sigmoid(input W_gate^T)`, `w_gate` [h, d, hidden] the gate rows of
    those heads in q_proj (each head's second d rows: q_proj yields q and
    the gate per head). The result feeds the output projection.

    ```mlir
    %g = helix.output_gate %o, %x weights(%wg)
        : (tensor<4x64xf32>, tensor<4x128xf32>, tensor<2x32x128xbf16>) -> tensor<4x64xf32>
    ```
  }];
  let arguments = (ins 2DTensorOf<[AnyFloat]>:$attention,
                   2DTensorOf<[AnyFloat]>:$input,
                   3DTensorOf<[AnyFloat]>:$w_gate);
  let results = (outs 2DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $attention `,` $input `weights` `(` $w_gate `)` attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Helix_CollectiveOp : Helix_Op<"collective", [Helix_UsesGrids, Pure]> {
  let summary = "Global-view twin of an upstream shard collective";
  let description = [{
    Upstream `shard` collectives are defined on the tensors each device
    holds; in global-view IR a value is the logical tensor, so a collective
    is the identity on it and changes only its distribution (the
    `#helix.dist` encoding of the result). `kind`, `grid`, `grid_axes` and
    the axes are named exactly as on the upstream op `helix-partition`
    lowers it to (reductions are sums):

    | kind | upstream op | distribution change |
    |---|---|---|
    | `all_to_all` | `shard.all_to_all` | `grid_axes` move from the end of `concat_axis`'s split to the end of `split_axis`'s |
    | `all_reduce` | `shard.all_reduce` | `grid_axes` leave `partial` |
    | `all_gather` | `shard.all_gather` | `grid_axes` leave the end of `gather_axis`'s split |
    | `reduce_scatter` | `shard.reduce_scatter` | `grid_axes` leave `partial` and join `scatter_axis`'s split |
    | `all_slice` | `shard.all_slice` | `grid_axes` join `slice_axis`'s split (no data moves) |
    | `send_recv` | `shard.send` on `source`, `shard.recv` on `destination` | pipeline stage `source` -> `destination` (`grid_axes = [0]`) |
    | `broadcast` | `shard.broadcast` | none: the `root` copy replaces the others |

    ```mlir
    %x = helix.collective all_to_all %p on @helix_attn grid_axes = [2]
        split_axis = 2 concat_axis = 0
        : tensor<4x8x128x129xf32, #helix.dist<@helix_attn, [[2], [], [3]]>>
        -> tensor<4x8x128x129xf32, #helix.dist<@helix_attn, [[], [], [3, 2]]>>
    ```
  }];
  let arguments = (ins Helix_CollectiveKind:$kind, AnyRankedTensor:$input,
                   FlatSymbolRefAttr:$grid, DenseI16ArrayAttr:$grid_axes,
                   OptionalAttr<I64Attr>:$split_axis,
                   OptionalAttr<I64Attr>:$concat_axis,
                   OptionalAttr<I64Attr>:$gather_axis,
                   OptionalAttr<I64Attr>:$scatter_axis,
                   OptionalAttr<I64Attr>:$slice_axis,
                   OptionalAttr<DenseI64ArrayAttr>:$root,
                   OptionalAttr<DenseI64ArrayAttr>:$source,
                   OptionalAttr<DenseI64ArrayAttr>:$destination);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $kind $input `on` $grid `grid_axes` `=` $grid_axes
    (`split_axis` `=` $split_axis^)? (`concat_axis` `=` $concat_axis^)?
    (`gather_axis` `=` $gather_axis^)? (`scatter_axis` `=` $scatter_axis^)?
    (`slice_axis` `=` $slice_axis^)? (`root` `=` $root^)?
    (`source` `=` $source^)? (`destination` `=` $destination^)?
    attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Helix_AsyncStartOp : Helix_Op<"async_start", [RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"AsyncYieldOp">]> {
  let summary = "Start communication without waiting for it";
  let description = [{
    Runs its region (one collective and the value it yields) as
    communication in flight, e.g. on a communication CUDA stream after an
    event recorded on the compute stream, or as non-blocking MPI; the ops
    that follow do not wait for it. `helix.async_wait` waits. HOP-B uses
    the pair to overlap the exchange of one batch slice with the attention
    of the next.

    ```mlir
    %t = helix.async_start {
      %x = shard.all_to_all %p on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0
          : tensor<1x4x32x129xf32> -> tensor<4x4x8x129xf32>
      helix.async_yield %x : tensor<4x4x8x129xf32>
    } : !helix.async<tensor<4x4x8x129xf32>>
    ```
  }];
  let results = (outs Helix_AsyncType:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$body attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def Helix_AsyncYieldOp : Helix_Op<"async_yield", [Pure, Terminator,
    HasParent<"AsyncStartOp">]> {
  let summary = "The value a helix.async_start produces";
  let description = [{
    ```mlir
    helix.async_yield %x : tensor<4x4x8x129xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ValueRange()); }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Helix_AsyncWaitOp : Helix_Op<"async_wait"> {
  let summary = "Wait for communication started by helix.async_start";
  let description = [{
    ```mlir
    %x = helix.async_wait %t : !helix.async<tensor<4x4x8x129xf32>> -> tensor<4x4x8x129xf32>
    ```
  }];
  let arguments = (ins Helix_AsyncType:$token);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $token attr-dict `:` qualified(type($token)) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // HELIX_SHARDING_OPS_TD
