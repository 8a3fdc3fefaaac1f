//===- HelixAttributes.td - helix attributes ---------------*- tablegen -*-===//

#ifndef HELIX_ATTRIBUTES_TD
#define HELIX_ATTRIBUTES_TD

include "HelixDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

class Helix_BoolParameter<string desc>
    : AttrOrTypeParameter<"bool", desc> {
  let parser = "::mlir::helix::parseBoolParameter($_parser)";
  let printer = "$_printer << ($_self ? \"true\" : \"false\")";
  let defaultValue = "false";
}

// A double, stored as an APFloat (hashable, compared bitwise).
class Helix_F64Parameter<string desc, string default>
    : APFloatParameter<desc> {
  let parser = "::mlir::helix::parseF64Parameter($_parser)";
  let printer = "$_printer.printFloat($_self)";
  let defaultValue = "::llvm::APFloat(double(" # default # "))";
}

// An estimate (a double), printed to 6 significant digits.
class Helix_EstimateParameter<string desc>
    : Helix_F64Parameter<desc, "0.0"> {
  let printer = "::mlir::helix::printEstimateParameter($_printer, $_self)";
}

class Helix_I64Parameter<string desc, string default = "">
    : AttrOrTypeParameter<"int64_t", desc> {
  let defaultValue = default;
}

// A sharding strategy (helix/Common/Strategy.h, generated from
// HelixStrategy.td): a keyword, or a string for the names with '-'.
def Helix_StrategyParameter : AttrParameter<"::helix::Strategy",
    "sharding strategy: helix, helix-no-hopb, tp, tp-pp, ep or kvp"> {
  let parser = "::mlir::helix::parseStrategyParameter($_parser)";
  let printer =
      "$_printer.printKeywordOrString(::helix::stringifyStrategy($_self))";
}

// A kind of layer half (helix/Common/LayerKind.h, generated from
// HelixLayerKind.td): full_attention, window_attention, dense_ffn, moe_ffn.
def Helix_LayerKindParameter : AttrParameter<"::helix::LayerKind",
    "kind of layer: full_attention, window_attention, dense_ffn or moe_ffn"> {
  let parser = "::mlir::helix::parseLayerKindParameter($_parser)";
  let printer = "$_printer << ::helix::stringifyLayerKind($_self)";
}

// A number format (helix/Common/DType.h, generated from HelixDType.td), fp4
// when left out.
class Helix_DTypeParameter<string desc>
    : AttrParameter<"::helix::DType", desc # ": fp4, fp8 or bf16"> {
  let parser = "::mlir::helix::parseDTypeParameter($_parser)";
  let printer = "$_printer << ::helix::stringifyDType($_self)";
  let defaultValue = "::helix::DType::FP4";
}

// The default of a RoPE parameter: a constant of helix/Common/Rope.h.
class Helix_RopeDefault<string name> {
  string value = "::helix::rope_defaults::" # name;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Helix_AttentionKind : I32EnumAttr<"AttentionKind", "attention variant", [
    I32EnumAttrCase<"mha", 0>, I32EnumAttrCase<"gqa", 1>,
    I32EnumAttrCase<"mqa", 2>, I32EnumAttrCase<"mla", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::helix";
}

def Helix_LinearAttnVariant : I32EnumAttr<"LinearAttnVariant",
    "recurrent linear-attention variant", [
    I32EnumAttrCase<"gated_deltanet", 0>, I32EnumAttrCase<"kda", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::helix";
}

def Helix_ScoringFunc : I32EnumAttr<"ScoringFunc", "MoE router scoring", [
    I32EnumAttrCase<"softmax", 0>, I32EnumAttrCase<"sigmoid", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::helix";
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Helix_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Helix_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Helix_AttentionConfigAttr : Helix_Attr<"AttentionConfig", "attn"> {
  let summary = "Dimensions and features of one layer's attention";
  let description = [{
    Describes the attention of one layer. `kind` is `mha`, `gqa`, `mqa` or
    `mla`. For MLA (DeepSeek's latent attention, absorbed form) `kv_heads` is
    1: one latent of `kv_lora_rank + rope_dim` values per token per layer,
    shared by all query heads; `head_dim` is the q/k head size
    (qk_nope + qk_rope) and `v_head_dim` the value head size.
    `window` is the sliding-window size in tokens (0: full attention).
    `output_gate` multiplies the head outputs by a sigmoid gate projected
    from the layer input (Qwen3.5, Kimi-K3's MLA); `no_rope` applies no
    positions (Kimi Linear's MLA, Nemotron-H); `partial_rotary` is the
    fraction of each head RoPE rotates (Qwen3.5: 0.25).

    ```mlir
    #helix.attn<kind = gqa, heads = 128, kv_heads = 8, head_dim = 128, v_head_dim = 128>
    #helix.attn<kind = mla, heads = 128, kv_heads = 1, head_dim = 192,
                v_head_dim = 128, q_lora_rank = 1536, kv_lora_rank = 512, rope_dim = 64>
    #helix.attn<kind = gqa, heads = 64, kv_heads = 8, head_dim = 64, v_head_dim = 64,
                qkv_bias = true, out_bias = true, sinks = true, window = 128>
    ```
  }];
  let parameters = (ins
    EnumParameter<Helix_AttentionKind>:$kind,
    "int64_t":$heads,
    "int64_t":$kv_heads,
    "int64_t":$head_dim,
    "int64_t":$v_head_dim,
    Helix_I64Parameter<"MLA q LoRA rank (0: none)", "0">:$q_lora_rank,
    Helix_I64Parameter<"MLA KV latent rank", "0">:$kv_lora_rank,
    Helix_I64Parameter<"MLA decoupled RoPE dims", "0">:$rope_dim,
    Helix_BoolParameter<"bias on q/k/v">:$qkv_bias,
    Helix_BoolParameter<"bias on the output projection">:$out_bias,
    Helix_BoolParameter<"RMSNorm on q and k per head">:$qk_norm,
    Helix_BoolParameter<"learned attention sinks">:$sinks,
    Helix_I64Parameter<"sliding window (0: full)", "0">:$window,
    Helix_BoolParameter<"sigmoid gate on the attention output">:$output_gate,
    Helix_BoolParameter<"no RoPE (the rope dims are cached unrotated)">:$no_rope,
    Helix_F64Parameter<"fraction of each q/k head RoPE rotates", "1.0">:$partial_rotary
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    bool isMLA() const { return getKind() == AttentionKind::mla; }
    /// Values cached per token per layer, all KV heads together.
    int64_t getKVValuesPerToken() const;
    /// Width of the attention output (heads x v_head_dim).
    int64_t getOutputDim() const { return getHeads() * getVHeadDim(); }
  }];
}

def Helix_RopeAttr : Helix_Attr<"Rope", "rope"> {
  let summary = "Rotary position embedding and its scaling";
  let description = [{
    RoPE base and the scaled variants Hugging Face configs use (`scaling` is
    "" for none, or "linear", "dynamic", "yarn", "llama3", "longrope").
    Parameters left out take Hugging Face's defaults, defined once for the
    importer, this attribute and the runtime in `helix/Common/Rope.h`
    (e.g. yarn `beta_fast = 32`, `beta_slow = 1`).

    ```mlir
    #helix.rope<theta = 5.000000e+05, scaling = "llama3", factor = 8.000000e+00,
                original_max_position = 8192, low_freq_factor = 1.000000e+00,
                high_freq_factor = 4.000000e+00>
    ```
  }];
  let parameters = (ins
    Helix_F64Parameter<"base", Helix_RopeDefault<"kTheta">.value>:$theta,
    StringRefParameter<"scaling type", "\"\"">:$scaling,
    Helix_F64Parameter<"scaling factor", Helix_RopeDefault<"kFactor">.value>:$factor,
    Helix_I64Parameter<"original max positions (0: max_position_embeddings)",
                       Helix_RopeDefault<"kOriginalMaxPosition">.value>:$original_max_position,
    Helix_F64Parameter<"llama3 low freq factor",
                       Helix_RopeDefault<"kLowFreqFactor">.value>:$low_freq_factor,
    Helix_F64Parameter<"llama3 high freq factor",
                       Helix_RopeDefault<"kHighFreqFactor">.value>:$high_freq_factor,
    Helix_F64Parameter<"yarn beta_fast", Helix_RopeDefault<"kBetaFast">.value>:$beta_fast,
    Helix_F64Parameter<"yarn beta_slow", Helix_RopeDefault<"kBetaSlow">.value>:$beta_slow,
    Helix_F64Parameter<"yarn mscale", Helix_RopeDefault<"kMscale">.value>:$mscale,
    Helix_F64Parameter<"yarn mscale_all_dim",
                       Helix_RopeDefault<"kMscaleAllDim">.value>:$mscale_all_dim
  );
  let builders = [
    AttrBuilder<(ins "const ::helix::RopeParams &":$params)>
  ];
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The parameters as the importer and the runtime hold them.
    ::helix::RopeParams getParams() const;
  }];
}

def Helix_MoEConfigAttr : Helix_Attr<"MoEConfig", "moe"> {
  let summary = "Mixture-of-experts configuration of one layer";
  let description = [{
    Routed experts with top-k routing, optional grouped top-k (DeepSeek's
    `n_group` / `topk_group`), shared experts, routed scaling and
    `norm_topk_prob`.

    ```mlir
    #helix.moe<experts = 256, top_k = 8, expert_intermediate = 2048,
               shared_experts = 1, shared_intermediate = 2048, n_group = 8,
               topk_group = 4, routed_scaling = 2.500000e+00,
               norm_topk_prob = true, scoring = sigmoid>
    ```
  }];
  let parameters = (ins
    "int64_t":$experts,
    "int64_t":$top_k,
    "int64_t":$expert_intermediate,
    Helix_I64Parameter<"shared experts", "0">:$shared_experts,
    Helix_I64Parameter<"intermediate size per shared expert", "0">:$shared_intermediate,
    Helix_I64Parameter<"expert groups", "1">:$n_group,
    Helix_I64Parameter<"groups kept per token", "1">:$topk_group,
    Helix_F64Parameter<"routed scaling factor", "1.0">:$routed_scaling,
    Helix_BoolParameter<"renormalise the top-k weights">:$norm_topk_prob,
    DefaultValuedParameter<"ScoringFunc", "ScoringFunc::softmax",
                           "router scoring">:$scoring,
    StringRefParameter<"activation", "\"silu\"">:$activation,
    Helix_BoolParameter<"experts have biases">:$expert_bias,
    Helix_I64Parameter<"latent width of the routed experts (0: hidden)", "0">:$latent_size,
    Helix_BoolParameter<"RMSNorm on the latent expert output">:$latent_norm,
    Helix_BoolParameter<"sigmoid gate on the shared experts">:$shared_expert_gate
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Helix_LinearAttentionConfigAttr
    : Helix_Attr<"LinearAttentionConfig", "linear_attn"> {
  let summary = "A recurrent linear-attention mixer (Gated DeltaNet, KDA)";
  let description = [{
    The sizes of one linear-attention layer. `variant` is `gated_deltanet`
    (Qwen3-Next, Qwen3.5: a scalar decay per value head) or `kda` (Kimi
    Delta Attention: a per-channel decay, whose lower bound is
    `gate_lower_bound`, and an output gate that is one full-rank projection
    when `full_rank_gate`). Each of the `value_heads` heads keeps a
    `key_head_dim` x `value_head_dim` state in `state_dtype`; q and k have
    `key_heads` heads (each shared by value_heads / key_heads value heads);
    q, k and v pass a causal convolution of `conv_kernel` taps.

    ```mlir
    #helix.linear_attn<variant = gated_deltanet, key_heads = 16, value_heads = 64,
                       key_head_dim = 128, value_head_dim = 128, conv_kernel = 4>
    ```
  }];
  let parameters = (ins
    EnumParameter<Helix_LinearAttnVariant>:$variant,
    "int64_t":$key_heads,
    "int64_t":$value_heads,
    "int64_t":$key_head_dim,
    "int64_t":$value_head_dim,
    Helix_I64Parameter<"causal convolution taps", "4">:$conv_kernel,
    Helix_BoolParameter<"KDA: full-rank output gate">:$full_rank_gate,
    Helix_F64Parameter<"KDA: decay lower bound", "0.0">:$gate_lower_bound,
    StringRefParameter<"state dtype", "\"float32\"">:$state_dtype
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Values of the short convolution's channels (q, k, v).
    int64_t getConvChannels() const {
      return 2 * getKeyHeads() * getKeyHeadDim() +
             getValueHeads() * getValueHeadDim();
    }
    int64_t getOutputDim() const { return getValueHeads() * getValueHeadDim(); }
  }];
}

def Helix_MambaConfigAttr : Helix_Attr<"MambaConfig", "mamba"> {
  let summary = "A Mamba-2 mixer";
  let description = [{
    The sizes of one Mamba-2 layer (Nemotron-H): `heads` heads of
    `head_dim` channels, each with a `head_dim` x `state_size` SSM state in
    `state_dtype`; B and C are shared by the heads of each of `groups`
    groups; x, B and C pass a causal convolution of `conv_kernel` taps
    (with a bias when `conv_bias`).

    ```mlir
    #helix.mamba<heads = 128, head_dim = 64, state_size = 128, groups = 8,
                 conv_kernel = 4, conv_bias = true>
    ```
  }];
  let parameters = (ins
    "int64_t":$heads,
    "int64_t":$head_dim,
    "int64_t":$state_size,
    Helix_I64Parameter<"groups sharing B and C", "1">:$groups,
    Helix_I64Parameter<"causal convolution taps", "4">:$conv_kernel,
    Helix_BoolParameter<"bias on the convolution">:$conv_bias,
    StringRefParameter<"state dtype", "\"float32\"">:$state_dtype
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getInnerSize() const { return getHeads() * getHeadDim(); }
    int64_t getConvChannels() const {
      return getInnerSize() + 2 * getGroups() * getStateSize();
    }
  }];
}

def Helix_IndexerConfigAttr : Helix_Attr<"IndexerConfig", "indexer"> {
  let summary = "DeepSeek Sparse Attention's lightning indexer";
  let description = [{
    Every cached token keeps one index key of `head_dim` values (FP8 with
    an FP32 scale); each query scores all of them with `heads` index heads
    (`sum_h w_h * relu(q_h . k)`, RoPE on the first `rope_dim` values,
    interleaved pairs when `rope_interleave`) and the layer's MLA attends
    to the `top_k` best. A layer that `reuses_previous` keeps no index keys
    and attends to the previous layer's selection (GLM-5's shared layers).

    ```mlir
    #helix.indexer<heads = 64, head_dim = 128, top_k = 2048, rope_dim = 64>
    ```
  }];
  let parameters = (ins
    "int64_t":$heads,
    "int64_t":$head_dim,
    "int64_t":$top_k,
    Helix_I64Parameter<"dims RoPE rotates", "0">:$rope_dim,
    Helix_BoolParameter<"interleaved RoPE pairs">:$rope_interleave,
    Helix_BoolParameter<"reuses the previous layer's selection">:$reuses_previous
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Helix_LayoutAttr : Helix_Attr<"Layout", "layout"> {
  let summary = "Sharding layout of one op over a device grid";
  let description = [{
    The Helix layout of one layer over `gpus` devices: attention as
    `kvp` x `tpa` (KV parallelism over the sequence x tensor parallelism over
    KV heads), the FFN as `tpf` x `ep`, and `pp` pipeline stages. `dp` is
    data-parallel attention (the `ep` baseline: each replica attends for its
    share of the batch). Within one pipeline stage, attention and FFN reuse
    the same GPUs, so `kvp * tpa * dp * pp == gpus`; the FFN grid
    `tpf * ep * pp` equals `gpus` (Helix) or divides it, the FFN being
    replicated over the remaining GPUs (the Medha-style `kvp` baseline ties
    the FFN to the attention TP group).

    ```mlir
    #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>
    #helix.layout<gpus = 64, kvp = 64, tpf = 8, ep = 8>
    #helix.layout<gpus = 8, dp = 8, ep = 8>
    ```
  }];
  let parameters = (ins
    "int64_t":$gpus,
    Helix_I64Parameter<"KV parallel width", "1">:$kvp,
    Helix_I64Parameter<"attention TP width", "1">:$tpa,
    Helix_I64Parameter<"FFN TP width", "1">:$tpf,
    Helix_I64Parameter<"expert parallel width", "1">:$ep,
    Helix_I64Parameter<"pipeline stages", "1">:$pp,
    Helix_I64Parameter<"data-parallel attention replicas", "1">:$dp
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Helix_ModelAttr : Helix_Attr<"Model", "model"> {
  let summary = "Model-level facts of an imported model";
  let description = [{
    Carried on the decode-step function as `helix.model`: where the model came
    from and the facts that are not per-op.

    ```mlir
    #helix.model<name = "DeepSeek-R1", model_type = "deepseek_v3", hidden = 7168,
                 vocab = 129280, layers = 61, checkpoint_dtype = "bfloat16",
                 quant_method = "fp8", quant_format = "fp8-block",
                 max_position = 163840>
    ```

    `quant_format` is how the checkpoint stores its quantized linear weights
    (`fp8-block`, `fp8-tensor`, `nvfp4`, `mxfp4`; docs/quantization.md) and
    `quant_exclude` the modules it keeps unquantized, comma-separated
    patterns in which `*` matches any text (gpt-oss:
    `"model.layers.*.self_attn,model.layers.*.mlp.router,..."`).
    `zero_centered_norms` says the decoder's RMSNorm weights are stored as
    `w` and applied as `1 + w` (Qwen3-Next, Qwen3.5).
  }];
  let parameters = (ins
    StringRefParameter<"model name">:$name,
    StringRefParameter<"Hugging Face model_type">:$model_type,
    "int64_t":$hidden,
    "int64_t":$vocab,
    "int64_t":$layers,
    StringRefParameter<"checkpoint dtype", "\"bfloat16\"">:$checkpoint_dtype,
    StringRefParameter<"checkpoint quantization", "\"\"">:$quant_method,
    StringRefParameter<"checkpoint format of quantized weights", "\"\"">:$quant_format,
    StringRefParameter<"unquantized modules (patterns)", "\"\"">:$quant_exclude,
    Helix_I64Parameter<"max position embeddings", "0">:$max_position,
    Helix_BoolParameter<"embedding and LM head share weights">:$tied_embeddings,
    Helix_BoolParameter<"RMSNorm weights applied as 1 + w">:$zero_centered_norms
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Helix_KindLayoutAttr : Helix_Attr<"KindLayout", "kind_layout"> {
  let summary = "The layout of one kind of layer in a per-layer plan";
  let description = [{
    One entry of `#helix.plan`'s `layouts` (docs/per-layer-layouts.md): the
    layout every layer of one kind runs on the plan's GPUs. An attention
    kind (`full_attention`, `window_attention`) runs `kvp` x `tpa` (`tpa`
    dividing the KV heads, or at `kvp = 1` a multiple of them, each KV head
    then duplicated) with the output projection over all GPUs; an FFN kind
    (`dense_ffn`, `moe_ffn`) runs one group of `tpf` x `ep` GPUs, `replicas`
    times side by side, each replica computing every token and
    all-reducing over its own group. `layers` counts the model's layers of
    the kind.

    ```mlir
    #helix.kind_layout<kind = window_attention, layers = 18, kvp = 1, tpa = 64>
    #helix.kind_layout<kind = moe_ffn, layers = 36, tpf = 32, replicas = 2>
    ```
  }];
  let parameters = (ins
    Helix_LayerKindParameter:$kind,
    "int64_t":$layers,
    Helix_I64Parameter<"KV parallel width (attention)", "1">:$kvp,
    Helix_I64Parameter<"attention TP width (attention)", "1">:$tpa,
    Helix_I64Parameter<"TP width of an FFN group", "1">:$tpf,
    Helix_I64Parameter<"expert-parallel width of an FFN group", "1">:$ep,
    Helix_I64Parameter<"FFN groups side by side", "1">:$replicas
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

// The per-layer layouts of a plan: `[#helix.kind_layout<...>, ...]`.
def Helix_KindLayoutListParameter
    : OptionalArrayRefParameter<"::mlir::helix::KindLayoutAttr",
                                "per-layer layouts, one per kind of layer"> {
  let parser = "::mlir::helix::parseKindLayoutList($_parser)";
  let printer = "::mlir::helix::printKindLayoutList($_printer, $_self)";
}

def Helix_PlanAttr : Helix_Attr<"Plan", "plan"> {
  let summary = "The workload and sharding plan chosen for a decode step";
  let description = [{
    Carried on the decode-step function as `helix.plan` once a plan is
    chosen (by `helix-search-layouts` or a user): the strategy (`helix`,
    `"helix-no-hopb"`, `tp`, `"tp-pp"`, `ep` or `kvp`: names with a `-` are
    quoted), the GPUs, the batch and context it was planned for, the number
    formats (`fp4`, `fp8` or `bf16`; default `fp4`) of the `weights`, the
    `kv_cache` and the `compute`, whether NVFP4 block scales were counted,
    whether HOP-B overlaps the attention exchange, the hardware, and the
    cost model's predicted token-to-token latency. `overlap` says whether
    that prediction overlaps the layer's attention-side collective with
    attention compute, batch-wise: HOP-B's all-to-all for Helix, the
    output-projection all-reduce for tp, tp-pp, ep and Helix with kvp = 1
    (`Config::overlapsCommunication`); `helix-estimate-cost` prices the
    plan with it. `slices` is the number of HOP-B batch slices the program
    runs (what `helix-hopb` takes when not told otherwise, and what the
    latency is priced with; 0: the cost model's best count, before a
    program fixes it) and `kv_block` the round-robin KV block
    (`helix-kv-placement`'s default). For MoE models `routing_skew` is the
    Zipf exponent of expert popularity the latency was priced with (the
    step waits for the busiest EP rank; default 0.64, from measured
    DeepSeek-R1 routing, docs/cost-model.md) and `balanced_experts` prices
    every rank at the mean load instead.

    ```mlir
    #helix.plan<strategy = helix, hardware = "gb200-nvl72", gpus = 64,
                batch = 32, context_length = 1048576, kv_cache = fp8,
                hopb = true, ttl_s = 1.250000e-02, overlap = true>
    ```

    A per-layer plan (Helix on one stage, docs/per-layer-layouts.md) lists
    one `#helix.kind_layout` per kind of layer the model has in `layouts`;
    its ops then carry their own layer's layout (`helix-apply-layout`
    with `layer-layouts`, `helix compile --per-layer on`):

    ```mlir
    #helix.plan<strategy = helix, hardware = "gb200-nvl72", gpus = 4,
                batch = 4, context_length = 256, hopb = true, overlap = true,
                layouts = [#helix.kind_layout<kind = full_attention, layers = 2, kvp = 2, tpa = 2>,
                           #helix.kind_layout<kind = window_attention, layers = 2, tpa = 4>,
                           #helix.kind_layout<kind = moe_ffn, layers = 4, tpf = 2, replicas = 2>]>
    ```
  }];
  let parameters = (ins
    Helix_StrategyParameter:$strategy,
    StringRefParameter<"hardware preset or file, PRESET+ENGINE with an "
                       "engine profile">:$hardware,
    "int64_t":$gpus,
    "int64_t":$batch,
    "int64_t":$context_length,
    Helix_DTypeParameter<"weights format">:$weights,
    Helix_DTypeParameter<"KV cache format">:$kv_cache,
    Helix_DTypeParameter<"arithmetic format">:$compute,
    Helix_BoolParameter<"NVFP4 block scales counted">:$nvfp4_scales,
    Helix_BoolParameter<"HOP-B overlap">:$hopb,
    Helix_F64Parameter<"predicted token-to-token latency (s)", "0.0">:$ttl_s,
    Helix_BoolParameter<"attention-side collective overlapped batch-wise">:$overlap,
    Helix_I64Parameter<"HOP-B batch slices of the program (0: the best count)", "0">:$slices,
    Helix_I64Parameter<"KV tokens appended to one KVP rank before the next", "16">:$kv_block,
    Helix_F64Parameter<"MoE: Zipf exponent of expert popularity", "::helix::kDefaultRoutingSkew">:$routing_skew,
    Helix_BoolParameter<"MoE: every EP rank priced at the mean load">:$balanced_experts,
    Helix_KindLayoutListParameter:$layouts
  );
  let extraClassDeclaration = [{
    /// "fp4 weights, fp8 KV, bf16 math", as the reports describe it.
    std::string getPrecisionText() const {
      return ::helix::describePrecision(getWeights(), getKvCache(),
                                        getCompute(), getNvfp4Scales());
    }
  }];
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Helix_MTPAttr : Helix_Attr<"MTP", "mtp"> {
  let summary = "Speculative decoding with the model's MTP layer";
  let description = [{
    Carried on the decode-step function (and, in rank IR, on the module) as
    `helix.mtp` when the plan decodes speculatively
    (docs/speculative-decoding.md): each step verifies `draft_tokens` + 1
    query tokens per request (the accepted token and the drafts), after
    `draft_tokens` passes of the multi-token-prediction layer; the plan's
    `ttl_s` is then the time per accepted token, priced with `acceptance`,
    the probability that each draft is accepted given the ones before it.

    ```mlir
    #helix.mtp<draft_tokens = 2, acceptance = 8.500000e-01>
    ```
  }];
  let parameters = (ins
    "int64_t":$draft_tokens,
    Helix_F64Parameter<"probability that each draft is accepted", "::helix::kDefaultMTPAcceptance">:$acceptance
  );
  let extraClassDeclaration = [{
    /// Query rows per request of the verify step.
    int64_t getQueryTokens() const { return getDraftTokens() + 1; }
  }];
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Helix_CostAttr : Helix_Attr<"Cost", "cost"> {
  let summary = "Predicted time and traffic of an op, or of the whole step";
  let description = [{
    Attached by `helix-estimate-cost` (a discardable `helix.cost`
    attribute): on each priced op of planned IR its cost on one GPU at the
    plan's batch (the micro-batch for tp-pp), and on the decode-step
    function the whole step. All times are microseconds.

    - `time_us`: what the op adds to the step: its kernels (roofline
      `max(compute, memory)` plus the fixed per-kernel overhead) and the
      exposed part of the collectives that follow it. On the function: the
      token-to-token latency.
    - `kv_read_us`, `weight_read_us`, `compute_us`, `overhead_us`,
      `comm_us`, `stall_us`: where `time_us` goes (they sum to it): KV
      streaming, weight and activation reads, math, kernel overhead,
      exposed communication, pipeline stall (function only, tp-pp).
      Zero fields are not printed; the others to 6 significant digits.
    - `comm_total_us`: time spent in collectives, hidden or not (HOP-B
      hides part of it behind the attention kernel).
    - `bytes`: HBM traffic of the kernels (weights, KV cache, activations);
      `flops`: their floating-point operations. On the function: the sum
      over the ops a token passes (every layer once).

    ```mlir
    %o = helix.attention ... {helix.cost = #helix.cost<time_us = 16.7733,
        kv_read_us = 0.0728178, weight_read_us = 0.00018, overhead_us = 6.0,
        comm_us = 10.7003, comm_total_us = 10.7003, bytes = 525440.0,
        flops = 8.39014e+06>, ...}
    func.func @decode_step(...) attributes {helix.cost = #helix.cost<
        time_us = 109.785, kv_read_us = 0.145636, weight_read_us = 0.03244,
        overhead_us = 48.0, comm_us = 61.6066, comm_total_us = 61.6066,
        bytes = 1.25619e+06, flops = 1.9926e+07>, ...}
    ```
  }];
  let parameters = (ins
    Helix_EstimateParameter<"time added to the step (us)">:$time_us,
    Helix_EstimateParameter<"KV cache streaming (us)">:$kv_read_us,
    Helix_EstimateParameter<"weight and activation reads (us)">:$weight_read_us,
    Helix_EstimateParameter<"compute-bound math (us)">:$compute_us,
    Helix_EstimateParameter<"fixed kernel overhead (us)">:$overhead_us,
    Helix_EstimateParameter<"exposed communication (us)">:$comm_us,
    Helix_EstimateParameter<"pipeline stall (us)">:$stall_us,
    Helix_EstimateParameter<"all time in collectives (us)">:$comm_total_us,
    Helix_EstimateParameter<"HBM bytes">:$bytes,
    Helix_EstimateParameter<"floating-point operations">:$flops
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // HELIX_ATTRIBUTES_TD
