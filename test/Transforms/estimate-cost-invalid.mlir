// helix-estimate-cost on input it cannot price: one line saying why.

// No plan: model IR that was never planned.
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-estimate-cost 2>&1 | FileCheck %s --check-prefix=NOPLAN
// NOPLAN: error: helix-estimate-cost: the decode step has no helix.plan (run helix-search-layouts or helix-apply-layout first)

// Unknown hardware, unknown format.
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" --helix-estimate-cost=hardware=tpu9 2>&1 | FileCheck %s --check-prefix=HW
// HW: error: helix-estimate-cost: unknown hardware 'tpu9': not a preset ({{.*}}) and no such file
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" --helix-estimate-cost=kv-dtype=fp6 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: helix-estimate-cost: kv-dtype: unknown number format 'fp6' (expected fp4, fp8 or bf16)

// The plan cannot run on the hardware asked for.
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" --helix-estimate-cost=hardware=h100 2>&1 | FileCheck %s --check-prefix=FP4
// FP4: error: helix-estimate-cost: the plan's helix kvp=2,tpa=2,tpf=4,ep=1 is invalid on h100: hardware 'h100' has no fp4 arithmetic; choose another compute format

// Global-view sharded IR is not priced (planned IR and rank IR are).
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" --helix-insert-collectives --helix-estimate-cost 2>&1 | FileCheck %s --check-prefix=GLOBAL
// GLOBAL: error: helix-estimate-cost: global-view sharded IR (after helix-insert-collectives) is not priced; run it on planned IR or on rank IR
// Rank IR whose layer index is not a constant at its call.
// RUN: not helix-opt %s --split-input-file --helix-estimate-cost 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: helix-estimate-cost: a layer function is called with a constant layer index

// Planned IR with an op that lost its layout, or has another one.
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" | sed -e '/helix.ffn.*layer = 1/s/, layout = #helix.layout<[^>]*>//' | not helix-opt --helix-estimate-cost 2>&1 | FileCheck %s --check-prefix=NOLAYOUT
// NOLAYOUT: error: helix-estimate-cost: helix.ffn of layer 1 has no layout (run helix-search-layouts or helix-apply-layout first)
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" | sed -e '/layers.1.self_attn.o_proj/s/kvp = 2, tpa = 2, tpf = 4>/kvp = 4, tpf = 4>/' | not helix-opt --helix-estimate-cost 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: error: helix-estimate-cost: helix.linear has layout #helix.layout<gpus = 4, kvp = 4, tpf = 4> but the plan's helix kvp=2,tpa=2,tpf=4,ep=1 gives it #helix.layout<gpus = 4, kvp = 2, tpa = 2, tpf = 4>

// -----

module attributes {helix.model = #helix.model<name = "m", model_type = "llama", hidden = 8, vocab = 16, layers = 1>,
    helix.plan = #helix.plan<strategy = tp, hardware = "h100", gpus = 1, batch = 1, context_length = 64, weights = bf16, kv_cache = bf16, compute = bf16>} {
  shard.grid @helix_attn(shape = 1x1x1x1)
  shard.grid @helix_ffn(shape = 1x1x1x1)
  func.func private @decode_step_stage0_layer_kind0(%l: index) attributes {helix.layers = array<i64: 0>} {
    return
  }
  func.func @decode_step_stage0(%l: index {helix.name = "micro_batch_row"}) attributes {helix.stage = 0 : i64} {
    call @decode_step_stage0_layer_kind0(%l) : (index) -> ()
    return
  }
}

// -----

// RANK: error: helix-estimate-cost: the module has no helix.model
module attributes {helix.plan = #helix.plan<strategy = tp, hardware = "h100", gpus = 1, batch = 1, context_length = 64, weights = bf16, kv_cache = bf16, compute = bf16>} {
  shard.grid @helix_attn(shape = 1x1x1x1)
  func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
    return
  }
}

// -----

// RANK: error: helix-estimate-cost: rank IR needs the 4-axis grids @helix_attn and @helix_ffn
module attributes {helix.model = #helix.model<name = "m", model_type = "llama", hidden = 8, vocab = 16, layers = 1>,
    helix.plan = #helix.plan<strategy = tp, hardware = "h100", gpus = 1, batch = 1, context_length = 64, weights = bf16, kv_cache = bf16, compute = bf16>} {
  shard.grid @helix_attn(shape = 1)
  func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
    return
  }
}

// -----

// RANK: error: helix-estimate-cost: layer 0 has no attention or no FFN in the stage programs
module attributes {helix.model = #helix.model<name = "m", model_type = "llama", hidden = 8, vocab = 16, layers = 1>,
    helix.plan = #helix.plan<strategy = tp, hardware = "h100", gpus = 1, batch = 1, context_length = 64, weights = bf16, kv_cache = bf16, compute = bf16>} {
  shard.grid @helix_attn(shape = 1x1x1x1)
  shard.grid @helix_ffn(shape = 1x1x1x1)
  func.func private @decode_step_stage0_layer_kind0(%l: index) attributes {helix.layers = array<i64: 0>} {
    return
  }
  func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
    %c0 = arith.constant 0 : index
    call @decode_step_stage0_layer_kind0(%c0) : (index) -> ()
    return
  }
}
