//===- Passes.td - helix transformation passes -------------*- tablegen -*-===//

#ifndef HELIX_TRANSFORMS_PASSES_TD
#define HELIX_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def HelixSearchLayouts : Pass<"helix-search-layouts", "mlir::ModuleOp"> {
  let summary = "Choose a sharding layout per op with the cost model";
  let description = [{
    Runs the helix planner (roofline + collective cost model, memory
    capacity, HOP-B) on the model IR's decode step and annotates it with the
    chosen plan: every `helix.qkv_proj`, `helix.attention`, `helix.linear`,
    `helix.ffn`, `helix.moe` and `helix.lm_head` gets a `layout`
    (`#helix.layout<...>`: KVP x TPA for attention, TPF x EP for the FFN,
    TPF = N for dense FFNs of MoE models), and the function gets
    `helix.plan = #helix.plan<...>` with the strategy, GPUs, batch, context,
    precision, HOP-B and the predicted token-to-token latency.

    Which configuration: with `gpus` and `batch` both set, the fastest
    layout of `strategy` on exactly that many GPUs at that batch; with
    `ttl-ms`, the configuration with the most tokens/s/GPU whose latency
    meets the budget; otherwise the fastest (lowest latency) one. Unset
    `gpus` searches 1..`max-gpus`; unset `batch` sweeps batch sizes up to
    what fits in memory. The pass fails with a diagnostic when nothing fits.

    Example:

    ```mlir
    // helix-opt --helix-search-layouts="gpus=32 batch=8 context=1048576" model.mlir
    func.func @decode_step(...) attributes {
        helix.plan = #helix.plan<strategy = helix, hardware = "gb200-nvl72",
          gpus = 32, batch = 8, context_length = 1048576, hopb = true, ttl_s = ...>} {
      %o = helix.attention %q, %k, %v cache(...) {...,
          layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>} ...
      %f = helix.ffn %x {..., layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>} ...
    ```
  }];
  let options = [
    Option<"hardware", "hardware", "std::string", "\"gb200-nvl72\"",
           "hardware preset (gb200-nvl72, b200, gb300-nvl72, h100, h200) or "
           "a hardware JSON file; PRESET+ENGINE (b200+vllm) prices with "
           "that engine's profile">,
    Option<"gpus", "gpus", "int64_t", "0",
           "GPUs to plan for (0: search 1..max-gpus)">,
    Option<"maxGpus", "max-gpus", "int64_t", "64",
           "largest GPU count searched when gpus is 0">,
    Option<"batch", "batch", "int64_t", "0",
           "concurrent requests (0: sweep batch sizes)">,
    Option<"context", "context", "int64_t", "1048576",
           "KV context length in tokens">,
    Option<"dtype", "dtype", "std::string", "\"\"",
           "precision of weights, KV cache and math: fp4, fp8 or bf16 "
           "(default: the hardware's narrowest native format, fp4 on "
           "Blackwell, fp8 on Hopper)">,
    Option<"ttlMs", "ttl-ms", "double", "0.0",
           "token-to-token latency budget in ms (0: none)">,
    Option<"strategy", "strategy", "std::string", "\"helix\"",
           "helix, helix-no-hopb, tp, tp-pp, ep or kvp">,
    Option<"perLayer", "per-layer", "bool", "false",
           "one Helix layout per kind of layer (window / full attention, "
           "dense / MoE FFN) on `gpus` GPUs at `batch`: the fastest that "
           "fits (docs/per-layer-layouts.md)">,
    Option<"routingSkew", "routing-skew", "double",
           "::helix::kDefaultRoutingSkew",
           "MoE: Zipf exponent of expert popularity, 0 = uniform (the step "
           "waits for the busiest EP rank)">
  ];
}

def HelixApplyLayout : Pass<"helix-apply-layout", "mlir::ModuleOp"> {
  let summary = "Annotate model IR with a given layout (no search)";
  let description = [{
    The explicit-layout twin of `helix-search-layouts`: checks `layout`
    (`kvp=4,tpa=8,tpf=32,ep=1`, with optional `pp=` and `dp=`) against the
    model and hardware under `strategy` (the same validation as
    `helix cost`), prices it at `batch` and fails with a one-line reason
    when it is invalid or the batch does not fit in memory; otherwise
    annotates the IR exactly as the search would have with that layout
    (`layout` on every layout-carrying op, `helix.plan` on the function).

    `layer-layouts` makes it a per-layer Helix plan
    (docs/per-layer-layouts.md): `KIND=LAYOUT;...` with KIND
    `full_attention` / `window_attention` (`kvp=..,tpa=..`) or `dense_ffn` /
    `moe_ffn` (`tpf=..,ep=..`, the group replicated over the GPUs); kinds
    not listed take `layout`'s widths. Each op then carries its own layer's
    layout and `helix.plan` lists the kinds' in `layouts`:

    ```mlir
    // helix-opt --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=256
    //     layer-layouts=window_attention=kvp=1,tpa=4;moe_ffn=tpf=2,ep=1"
    func.func @decode_step(...) attributes {helix.plan = #helix.plan<...,
        layouts = [#helix.kind_layout<kind = full_attention, layers = 2, kvp = 2, tpa = 2>,
                   #helix.kind_layout<kind = window_attention, layers = 2, tpa = 4>,
                   #helix.kind_layout<kind = moe_ffn, layers = 4, tpf = 2, replicas = 2>]>} {
      %a = helix.attention ... {..., layout = #helix.layout<gpus = 4, tpa = 4, tpf = 2>}  // a window layer
    ```

    Example:

    ```mlir
    // helix-opt --helix-apply-layout="layout=kvp=4,tpa=8,tpf=32 batch=8 context=1048576"
    func.func @decode_step(...) attributes {helix.plan = #helix.plan<strategy = helix,
        hardware = "gb200-nvl72", gpus = 32, batch = 8, context_length = 1048576,
        hopb = true, ttl_s = ...>} {
      %o = helix.attention ... {..., layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>}
    ```
  }];
  let options = [
    Option<"layout", "layout", "std::string", "\"\"",
           "the layout: kvp=..,tpa=..,tpf=..,ep=.. (pp=.., dp=.. optional)">,
    Option<"strategy", "strategy", "std::string", "\"helix\"",
           "helix, helix-no-hopb, tp, tp-pp, ep or kvp">,
    Option<"gpus", "gpus", "int64_t", "0",
           "GPUs expected (0: the layout's; checked against it)">,
    Option<"batch", "batch", "int64_t", "1", "concurrent requests">,
    Option<"context", "context", "int64_t", "1048576",
           "KV context length in tokens">,
    Option<"hardware", "hardware", "std::string", "\"gb200-nvl72\"",
           "hardware preset or a hardware JSON file; PRESET+ENGINE with an "
           "engine profile">,
    Option<"dtype", "dtype", "std::string", "\"\"",
           "precision of weights, KV cache and math: fp4, fp8 or bf16 "
           "(default: the hardware's narrowest native format, fp4 on "
           "Blackwell, fp8 on Hopper)">,
    Option<"hopb", "hopb", "bool", "true",
           "HOP-B overlap of the attention exchange (Helix with kvp > 1)">,
    Option<"layerLayouts", "layer-layouts", "std::string", "\"\"",
           "per-layer Helix: KIND=LAYOUT;... (full_attention / "
           "window_attention: kvp=..,tpa=..; dense_ffn / moe_ffn: "
           "tpf=..,ep=..)">,
    Option<"routingSkew", "routing-skew", "double",
           "::helix::kDefaultRoutingSkew",
           "MoE: Zipf exponent of expert popularity, 0 = uniform (the step "
           "waits for the busiest EP rank)">
  ];
}

def HelixEstimateCost : Pass<"helix-estimate-cost", "mlir::ModuleOp"> {
  let summary = "Price planned IR op by op, or rank IR layer by layer";
  let description = [{
    Prices the planned decode step (after `helix-apply-layout` or
    `helix-search-layouts`) with the cost model's per-op functions, the same
    ones `helix cost` and the planner sum (`helix/Cost/OpCosts.h`), so the
    total is their token-to-token latency. The configuration is the one the
    IR records: the strategy, batch, context, precision, HOP-B / overlap and
    hardware of `helix.plan`, the widths of the ops' `#helix.layout`s (every
    op must carry the layout the plan gives it).

    Every priced op gets a discardable `helix.cost = #helix.cost<...>`: its
    time on one GPU (kernels plus the exposed part of the collectives that
    follow it), where that time goes, the time spent in its collectives,
    its HBM bytes and FLOPs. `helix.qkv_proj` includes the norm before it;
    `helix.attention` the attention kernel, the KVP combine and the
    exchange of partial outputs (HOP-B-overlapped for Helix);
    `helix.linear` (the output projection) its all-reduce; `helix.ffn` and
    `helix.moe` the norm before them and their collectives; `helix.embed`
    the new-token broadcast; `helix.lm_head` the final norm and sampling.
    Norms and residual adds carry no cost of their own. The function gets
    the step: `time_us` is the token-to-token latency, including the
    stage-to-stage transfers and pipeline stall of `tp-pp` that belong to no
    single op; `bytes` and `flops` sum the ops.

    Options override the plan's hardware (a preset or a hardware JSON
    file) and precision (`dtype` for all three formats, then
    `weights-dtype`, `kv-dtype`, `compute-dtype`), to price the same
    program elsewhere. Fails with a diagnostic when the function has no plan,
    an op has no layout, the hardware is unknown or the configuration is
    invalid on it.

    On rank IR (after `helix-partition`) it prices the program as emitted:
    the model is read back from the stage programs (each layer's attention
    configuration, dense FFN or MoE), the plan from the module's
    `helix.plan` and the widths from the grids. Each layer is priced where
    it runs: the call of its layer function gets the layer's four parts
    summed, an inline layer's `helix.qkv` / `helix.mla_qkv`, first
    `helix.attention_partial`, output-projection `helix.matmul` and
    `helix.gated_mlp` / `helix.moe_experts` their parts; `helix.embed_rows`
    and the LM head `helix.matmul` theirs; the module gets the step. Every
    layer must run exactly once, on the pipeline stage the plan puts it on,
    or the pass fails naming it. A speculative program (`helix.mtp`, with
    its MTP drafter `@draft_step_stage0`) is priced as it runs: the stage
    program gets the verify step (K + 1 rows per request), the drafter one
    draft pass (its `eh_proj` and shared head included), and the module the
    time per accepted token, (verify + K x draft) / (1 + A + ... + A^K).
    Global-view sharded IR (after `helix-insert-collectives`) is not priced.

    Example (the two-layer GQA model of the lit tests, Helix kvp = 2,
    tpa = 2 on 4 GB200s, batch 4, 8K context: the step is 186 us, 61 us of
    it exposed communication, 124 us fixed kernel costs from the preset's
    measured kernel curves):

    ```mlir
    // helix-opt --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192"
    //           --helix-estimate-cost model.mlir
    func.func @decode_step(...) attributes {helix.cost = #helix.cost<time_us = 189.725,
        kv_read_us = 0.182044, weight_read_us = 0.0719259, overhead_us = 128.29,
        comm_us = 61.1809, comm_total_us = 61.1809, bytes = 1.35603e+06,
        flops = 1.9926e+07>, ...} {
      ...
      %o = helix.attention %q, %k, %v cache(%c) {..., helix.cost = #helix.cost<
          time_us = 28.2912, kv_read_us = 0.0910222, weight_read_us = 0.00018,
          overhead_us = 18.3, comm_us = 9.9, comm_total_us = 9.9,
          bytes = 525440.0, flops = 8.39014e+06>, layout = ...}
    ```
  }];
  let options = [
    Option<"hardware", "hardware", "std::string", "\"\"",
           "hardware preset or a hardware JSON file, PRESET+ENGINE with an "
           "engine profile (default: the plan's)">,
    Option<"dtype", "dtype", "std::string", "\"\"",
           "precision of weights, KV cache and math: fp4, fp8 or bf16 "
           "(default: the plan's)">,
    Option<"weightsDtype", "weights-dtype", "std::string", "\"\"",
           "precision of the weights (overrides dtype)">,
    Option<"kvDtype", "kv-dtype", "std::string", "\"\"",
           "precision of the KV cache (overrides dtype)">,
    Option<"computeDtype", "compute-dtype", "std::string", "\"\"",
           "precision of the arithmetic (overrides dtype)">
  ];
}

def HelixInsertCollectives : Pass<"helix-insert-collectives",
                                  "mlir::ModuleOp"> {
  let summary = "Rewrite planned IR into the sharded algorithm, in global view";
  let description = [{
    Takes planned IR (after `helix-search-layouts` or `helix-apply-layout`)
    and rewrites the decode step into the algorithm its strategy runs,
    still in global view: every value is the logical tensor, and its
    `#helix.dist` encoding says how the ranks hold it. It

    - specialises the batch to the plan's (the micro-batch for `tp-pp`,
      padded to a multiple of `dp` for `ep`);
    - creates the device grids `@helix_attn` (pp x dp x kvp x tpa) and
      `@helix_ffn` (pp x replicas x ep x tpf) over the same GPUs, ranks
      row-major;
    - materialises every weight as a `helix.weight` (the Hugging Face
      tensor, seen per head where heads are split) and rewrites each op
      into the sharded ops with their weights as operands;
    - makes every communication an explicit `helix.collective`.

    Attention (KVP x TPA): each rank projects its TPA heads for the whole
    batch (`helix.qkv` / `helix.mla_qkv`), attends over its KV shard
    (`helix.attention_partial`, partial outputs with their log-sum-exp),
    one all-to-all over the query-head axis within the KVP group, and the
    exact `helix.lse_combine`; the output projection runs TP = N
    (row-parallel) and an all-reduce over N follows. Dense FFNs run TPF = N
    (`helix.gated_mlp`) and an all-reduce; MoE blocks run TPF x EP: a
    replicated router, each expert group's experts (and its slice of the
    shared experts) with TP inside the group, then an intra-expert
    all-reduce, an inter-expert all-gather and a local `helix.group_sum`.
    The baselines: `tp` (attention TP, KV heads duplicated when
    TP > KV heads), `tp-pp` (the same per stage, stages joined by
    `send_recv`), `ep` (data-parallel attention, every expert on its own
    GPU, tokens gathered for the FFN and reduce-scattered back) and `kvp`
    (Medha: an all-gather of the partials, the output projection and FFN
    on the TPA group, replicated over KVP). The embedding and LM head are
    vocabulary-parallel over the GPUs of their stage.

    Example (Llama-like GQA layer, helix kvp=2, tpa=2 on 4 GPUs):

    ```mlir
    %q, %k, %v = helix.qkv %n, %pos weights(%wq, %wk, %wv) {...}
        : (...) -> (tensor<4x32x128xbf16, #helix.dist<@helix_attn, [[], [3]]>>, ...)
    %p = helix.attention_partial %q, %k, %v cache(%c) {cache_rows = 4 : i64, ...}
        : (...) -> tensor<2x4x32x129xf32, #helix.dist<@helix_attn, [[2], [], [3]]>>
    %x = helix.collective all_to_all %p on @helix_attn grid_axes = [2]
        split_axis = 2 concat_axis = 0 : ... -> tensor<2x4x32x129xf32,
        #helix.dist<@helix_attn, [[], [], [3, 2]]>>
    %o = helix.lse_combine %x : ... -> tensor<4x4096xbf16, #helix.dist<@helix_attn, [[], [3, 2]]>>
    %y = helix.matmul %o, %wo : ... -> tensor<4x4096xbf16, #helix.dist<@helix_attn, partial = [2, 3]>>
    %r = helix.collective all_reduce %y on @helix_attn grid_axes = [2, 3] : ... -> tensor<4x4096xbf16>
    ```
  }];
  let dependentDialects = ["mlir::shard::ShardDialect"];
}

def HelixHopB : Pass<"helix-hopb", "mlir::ModuleOp"> {
  let summary = "HOP-B: overlap the attention exchange with attention, batch-wise";
  let description = [{
    Splits the batch of every attention whose partials go through an
    all-to-all (Helix with KVP > 1) into slices and makes a two-stage
    software pipeline of it: slice i's exchange is started
    (`helix.async_start`) before slice i + 1 attends and waited for
    (`helix.async_wait`) only then, followed by its LSE combine; the
    combined slices are concatenated back (`tensor.concat`). The inputs of
    each slice are `tensor.extract_slice`s of the batch rows. The
    computation is the same, row by row; only the order and the overlap
    change. Code generation maps the async pair onto a second CUDA stream
    (events) or non-blocking MPI.

    Without an exchange (tp, tp-pp, Helix with KVP = 1), where the plan
    overlaps communication (`#helix.plan`'s `overlap`), it pipelines the
    output projection's all-reduce the same way: each slice attends,
    combines and projects, and its all-reduce is in flight while the next
    slice does; the reduced slices are concatenated. DP attention (ep) is
    left alone.

    The slice count is `slices` when given (0: one per request), else the
    plan's (`#helix.plan`'s `slices`, what the plan is priced with); the
    pass writes the count it used back into the plan. Runs only where
    `helix.plan` asks for HOP-B or overlap (or the function has no plan);
    `enable=false` turns it off.

    Example (2 slices):

    ```mlir
    %p0 = helix.attention_partial %q0, %k0, %v0 cache(%c) {batch_offset = 0 : i64, ...}
    %t0 = helix.async_start {
      %x = helix.collective all_to_all %p0 ... ; helix.async_yield %x : ...
    } : !helix.async<...>
    %p1 = helix.attention_partial %q1, %k1, %v1 cache(%c) {batch_offset = 2 : i64, ...}
    %t1 = helix.async_start { ... }
    %x0 = helix.async_wait %t0 ...
    %o0 = helix.lse_combine %x0 ...
    %x1 = helix.async_wait %t1 ...
    %o1 = helix.lse_combine %x1 ...
    %o = tensor.concat dim(0) %o0, %o1 ...
    ```
  }];
  let options = [
    Option<"enable", "enable", "bool", "true", "apply HOP-B (false: no-op)">,
    Option<"slices", "slices", "int64_t", "0",
           "batch slices per attention (0: one per request; default: the "
           "plan's)">
  ];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def HelixKVPlacement : Pass<"helix-kv-placement", "mlir::ModuleOp"> {
  let summary = "Round-robin KV placement over the KVP ranks (paper 2.3)";
  let description = [{
    Records where every layer's KV entries live: the new tokens' entries go
    to one KVP rank at a time, `block` tokens per rank in round-robin order
    (token position `p` on rank `(p / block) mod kvp`). Every
    `helix.attention_partial` gets its `#helix.kv_placement` (block, KVP
    ranks, token slots per rank for the plan's context or the layer's
    window) and `kv(slots, spans)` operands from one `helix.kv_slots` per
    placement and stage: the slot each rank appends the new token to (-1
    on the others) and the local entries it attends over, so every rank's
    local context length is known at each step.

    Example (kvp = 4, 1M context):

    ```mlir
    %slots, %spans = helix.kv_slots %pos {placement = #helix.kv_placement<block = 16,
        kvp = 4, capacity = 262144>} : tensor<8xi64>
        -> tensor<4x8xi64, #helix.dist<@helix_attn, [[2]]>>,
           tensor<4x8x2xi64, #helix.dist<@helix_attn, [[2]]>>
    %p = helix.attention_partial %q, %k, %v cache(%c) kv(%slots, %spans)
        {placement = #helix.kv_placement<block = 16, kvp = 4, capacity = 262144>, ...}
    ```
  }];
  let options = [
    Option<"block", "block", "int64_t", "16",
           "tokens appended to one KVP rank before moving to the next">,
    Option<"context", "context", "int64_t", "0",
           "KV context length to size the shards for (0: the plan's)">
  ];
  let dependentDialects = ["mlir::tensor::TensorDialect"];
}

def HelixPartition : Pass<"helix-partition", "mlir::ModuleOp"> {
  let summary = "Global view to one SPMD program per pipeline stage";
  let description = [{
    Turns the global-view decode step into one SPMD program per pipeline
    stage, `func.func @decode_step_stage<S>` (`helix.stage = S`; one in
    total without pipeline parallelism), run by every rank of the stage,
    with static local shapes (the same on every rank). What differs
    between ranks is computed in the IR from the rank's coordinates on the
    grids (`shard.process_multi_index`, then `arith` on `index`):

    - each `helix.weight` becomes the slice a rank loads: its `offsets`
      into the view of the checkpoint tensor, an `index` value for every
      split dimension (the rank's index over the dimension's grid axes,
      first axis major, times the local size; divided by the duplication
      factor where there are more ranks than elements);
    - `helix.embed_rows` gets its `vocab_offset`, `helix.moe_experts` its
      `expert_offset`, `helix.kv_slots` its `rank_offset` (the rank's KVP
      coordinate: the KV positions it owns);
    - a row-parallel result's bias (output projection, dense and expert
      down projections) passes through `helix.keep_if`: only the rank
      holding the first slice of the contraction adds it;
    - each KV cache becomes the rank's `!helix.kv_shard`, each
      `helix.collective` the upstream `shard` collective on its grid axes
      (the group is the rank's: the runtime derives the members from the
      grid), `send_recv` a `shard.send` on the sending stage and a
      `shard.recv` on the receiving one; a stage keeps only its own ops.

    The program's size does not depend on the number of GPUs. The global
    function is removed and the plan moves to the module; the result is
    checked by `helix-verify-partition`, which evaluates the offsets for
    every rank.

    This is the last step of `helix-sharding-pipeline`, which runs the
    layout search (`layout=search`) or `helix-apply-layout` (an explicit
    `layout=kvp=..,tpa=..,tpf=..,ep=..`; none for IR planned already), then
    `helix-insert-collectives`, `helix-hopb`, `helix-kv-placement` and this
    pass. Its options: `layout`, `strategy`, `hardware`, `gpus`, `max-gpus`,
    `batch`, `context`, `dtype`, `ttl-ms` (search), `hopb`, `slices`,
    `kv-block`; e.g.
    `helix-opt --helix-sharding-pipeline='layout="kvp=4,tpa=8,tpf=32" batch=8 context=1048576'`.

    Example (the insert-collectives example, KVP = 2 x TPA = 2, 64K
    context):

    ```mlir
    func.func @decode_step_stage0(%tokens: tensor<4xi64>, %pos: tensor<4xi64>,
        %c: !helix.kv_shard<rows = 4, tokens = 32768, heads = 4, ...>) -> tensor<4x128256xf32>
        attributes {helix.stage = 0 : i64} {
      %a:4 = shard.process_multi_index on @helix_attn axes = [0, 1, 2, 3] : index, index, index, index
      %c16 = arith.constant 16 : index
      %heads = arith.muli %a#3, %c16 : index
      %slots, %spans = helix.kv_slots %pos rank_offset(%a#2) {...}
      %wq = helix.weight "model.layers.0.self_attn.q_proj.weight" [4096, 4096]
          view [32, 128, 4096] offsets [%heads, 0, 0] : tensor<16x128x4096xbf16>
      ...
      %x = shard.all_to_all %p on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0
          : tensor<1x4x16x129xf32> -> tensor<2x4x8x129xf32>
    ```
  }];
  let options = [
    Option<"layerFunctions", "layer-functions", "bool", "true",
           "outline the decoder layers into one function per distinct kind "
           "of layer, called per layer">
  ];
  let dependentDialects = ["mlir::shard::ShardDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect"];
}

def HelixResidentFormats : Pass<"helix-resident-formats", "mlir::ModuleOp"> {
  let summary = "Weights and KV shards in the formats the plan keeps them in";
  let description = [{
    Gives every `helix.weight` and `!helix.kv_shard` of SPMD rank IR the
    element type of the number format the program keeps it in
    (docs/quantization.md), from the module's `#helix.plan` (`weights`,
    `kv_cache`) and `#helix.model` (`quant_format`, `quant_exclude`): the
    linear weights of the decoder layers take the planned weights format
    (`bf16`, `f8E4M3FN`, `f4E2M1FN`), unless the checkpoint keeps their
    module unquantized; embeddings, the LM head, norms, biases, routers and
    sinks stay `bf16`. KV shards take the planned KV format. The EmitC
    lowering passes these formats to the runtime's loads and allocations,
    and the planner's memory terms count the same split.

    Example (`weights = fp8`, `kv_cache = fp8`):

    ```mlir
    %wq = helix.weight "model.layers.{layer}.self_attn.q_proj.weight" layer(%l)
        [256, 256] offsets [%o, 0] : tensor<64x256xbf16>
    %wn = helix.weight "model.layers.{layer}.input_layernorm.weight" layer(%l)
        [256] : tensor<256xbf16>
    // becomes
    %wq = helix.weight ... : tensor<64x256xf8E4M3FN>
    %wn = helix.weight ... : tensor<256xbf16>
    // and !helix.kv_shard<..., element = bf16> becomes element = f8E4M3FN
    ```
  }];
}

def HelixVerifyPartition : Pass<"helix-verify-partition", "mlir::ModuleOp"> {
  let summary = "Check that SPMD rank IR is complete and consistent";
  let description = [{
    Checks the output of `helix-partition`: one `@decode_step_stage<S>`
    per pipeline stage of the grids (`helix.stage = S`); every tensor
    static and local (no `#helix.dist`, no global `!helix.kv_cache`, no
    `helix.collective`). Then, for every rank of the grids, it evaluates
    the rank-dependent values of its stage's program (the offsets and
    conditions computed from `shard.process_multi_index` with `arith`
    constants, `+ - * / %` and `==` / `!=`; anything else is an error) and
    checks: every collective is issued by every member of its group (the
    rank's group over the op's grid axes) in the same order with the same
    shapes and attributes; every `shard.send` meets its `shard.recv`;
    every weight slice lies inside its checkpoint tensor and every
    checkpoint tensor is covered exactly by the slices the ranks load
    (replicas aside).

    Example: `helix-opt --helix-verify-partition rank.mlir` fails with
    ```
    error: helix-verify-partition: rank 1 loads [6, 10) of dimension 0 of
    w, outside its view of 8
    ```
    for a stage program whose `helix.weight "w" [8, 8] offsets [%o, 0]`
    computes `%o` as 6 x the rank's coordinate on axis 1 of a 1 x 2 grid.
  }];
}

#endif // HELIX_TRANSFORMS_PASSES_TD
