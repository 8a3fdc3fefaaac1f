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
        helix.plan = #helix.plan<strategy = "helix", hardware = "gb200-nvl72",
          gpus = 32, batch = 8, context_length = 1048576, hopb = true, ttl_s = ...>} {
      %o = helix.attention %q, %k, %v cache(...) {...,
          layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>} ...
      %f = helix.ffn %x {..., layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>} ...
    ```
  }];
  let options = [
    Option<"hardware", "hardware", "std::string", "\"gb200-nvl72\"",
           "hardware preset (gb200-nvl72, b200, gb300-nvl72, h100, h200) or "
           "a hardware JSON file">,
    Option<"gpus", "gpus", "int64_t", "0",
           "GPUs to plan for (0: search 1..max-gpus)">,
    Option<"maxGpus", "max-gpus", "int64_t", "64",
           "largest GPU count searched when gpus is 0">,
    Option<"batch", "batch", "int64_t", "0",
           "concurrent requests (0: sweep batch sizes)">,
    Option<"context", "context", "int64_t", "1048576",
           "KV context length in tokens">,
    Option<"dtype", "dtype", "std::string", "\"fp4\"",
           "precision of weights, KV cache and math: fp4, fp8 or bf16">,
    Option<"ttlMs", "ttl-ms", "double", "0.0",
           "token-to-token latency budget in ms (0: none)">,
    Option<"strategy", "strategy", "std::string", "\"helix\"",
           "helix, helix-no-hopb, tp, tp-pp, ep or kvp">
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

    Example:

    ```mlir
    // helix-opt --helix-apply-layout="layout=kvp=4,tpa=8,tpf=32 batch=8 context=1048576"
    func.func @decode_step(...) attributes {helix.plan = #helix.plan<strategy = "helix",
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
           "hardware preset or a hardware JSON file">,
    Option<"dtype", "dtype", "std::string", "\"fp4\"",
           "precision of weights, KV cache and math: fp4, fp8 or bf16">,
    Option<"hopb", "hopb", "bool", "true",
           "HOP-B overlap of the attention exchange (Helix with kvp > 1)">
  ];
}

#endif // HELIX_TRANSFORMS_PASSES_TD
