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

// Sharded and rank IR are not priced yet.
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" --helix-insert-collectives --helix-estimate-cost 2>&1 | FileCheck %s --check-prefix=GLOBAL
// GLOBAL: error: helix-estimate-cost: sharded IR (it has `shard.grid`) is not supported yet; run it on planned IR (after helix-apply-layout or helix-search-layouts)
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-sharding-pipeline='layout="kvp=2,tpa=2,tpf=4" batch=4 context=8192' --helix-estimate-cost 2>&1 | FileCheck %s --check-prefix=RANK
// RANK: error: helix-estimate-cost: rank IR (after helix-partition) is not supported yet; run it on planned IR (after helix-apply-layout or helix-search-layouts)

// Planned IR with an op that lost its layout, or has another one.
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" | sed -e '/helix.ffn.*layer = 1/s/, layout = #helix.layout<[^>]*>//' | not helix-opt --helix-estimate-cost 2>&1 | FileCheck %s --check-prefix=NOLAYOUT
// NOLAYOUT: error: helix-estimate-cost: helix.ffn of layer 1 has no layout (run helix-search-layouts or helix-apply-layout first)
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" | sed -e '/layers.1.self_attn.o_proj/s/kvp = 2, tpa = 2, tpf = 4>/kvp = 4, tpf = 4>/' | not helix-opt --helix-estimate-cost 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: error: helix-estimate-cost: helix.linear has layout #helix.layout<gpus = 4, kvp = 4, tpf = 4> but the plan's helix kvp=2,tpa=2,tpf=4,ep=1 gives it #helix.layout<gpus = 4, kvp = 2, tpa = 2, tpf = 4>
