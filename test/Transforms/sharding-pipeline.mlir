// helix-sharding-pipeline: planning (when asked), insert-collectives, hopb,
// kv-placement and partition in one go.

// The search, then everything else.
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-sharding-pipeline='layout=search gpus=4 batch=2 context=8192' | FileCheck %s --check-prefix=SEARCH
// SEARCH: module attributes {{{.*}}helix.plan = #helix.plan<strategy = helix, {{.*}}gpus = 4, batch = 2, context_length = 8192
// SEARCH: func.func @decode_step_stage0(

// An explicit layout, HOP-B per request, 32-token KV blocks (the plan
// records both).
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-sharding-pipeline='layout="kvp=2,tpa=2,tpf=4" batch=2 context=8192 kv-block=32 slices=0' | FileCheck %s --check-prefix=EXPLICIT
// EXPLICIT: helix.plan = #helix.plan<{{.*}}slices = 2, kv_block = 32>
// EXPLICIT: func.func private @decode_step_stage0_layer_kind0(
// EXPLICIT-SAME: helix.layers = array<i64: 0, 1>
// EXPLICIT: helix.async_start
// EXPLICIT: helix.async_start
// EXPLICIT: func.func @decode_step_stage0(
// EXPLICIT-SAME: !helix.kv_shard<rows = 2, tokens = 4096,
// EXPLICIT: helix.kv_slots %{{.*}} rank_offset(%{{.*}}) {placement = #helix.kv_placement<block = 32, kvp = 2, capacity = 4096>}

// Already planned IR (no layout option): the plan is kept; HOP-B off.
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=tpa=2,tpf=2,pp=2 strategy=tp-pp batch=2 context=8192" \
// RUN:   | helix-opt --helix-sharding-pipeline='hopb=false' | FileCheck %s --check-prefix=PLANNED
// PLANNED: helix.plan = #helix.plan<strategy = "tp-pp"
// PLANNED: func.func @decode_step_stage0(
// PLANNED-NOT: async

// Errors of any step stop the pipeline.
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-sharding-pipeline='layout="kvp=2,tpa=4,tpf=8" batch=2' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: helix-apply-layout: layout kvp=2,tpa=4,tpf=8,ep=1 does not fit tiny-gqa
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-sharding-pipeline 2>&1 | FileCheck %s --check-prefix=UNPLANNED
// UNPLANNED: error: helix-insert-collectives: the decode step has no helix.plan
