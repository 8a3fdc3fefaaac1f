// helix-estimate-cost: planned IR priced op by op, the step on the function.
// (unittests/Transforms/EstimateCostTest.cpp checks the numbers against
// `helix cost` for every strategy and the real models.)

// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" --helix-estimate-cost | FileCheck %s --check-prefix=HELIX
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=tpa=2,tpf=2 strategy=tp batch=4 context=8192" --helix-estimate-cost | FileCheck %s --check-prefix=TP
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=tpa=1,tpf=1,pp=2 strategy=tp-pp batch=4 context=8192" --helix-estimate-cost | FileCheck %s --check-prefix=PP
// RUN: helix-opt %S/Inputs/mla-moe.mlir --helix-apply-layout="layout=kvp=4,tpf=2,ep=2 batch=8 context=65536" --helix-estimate-cost="hardware=h200 dtype=fp8 kv-dtype=bf16" | FileCheck %s --check-prefix=MOE
// The rank IR helix-partition emits prices to the same step, layer by layer
// at the calls of its layer functions (or at the ops of inline layers).
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-sharding-pipeline='layout="kvp=2,tpa=2,tpf=4" batch=4 context=8192' --helix-estimate-cost | FileCheck %s --check-prefix=RANK
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-sharding-pipeline='layout="kvp=2,tpa=2,tpf=4" batch=4 context=8192 layer-functions=false' --helix-estimate-cost | FileCheck %s --check-prefix=INLINE

// The function carries the step: the token-to-token latency and where it
// goes (fields that are zero are not printed), the time in collectives,
// bytes and FLOPs.
// HELIX-LABEL: func.func @decode_step
// HELIX-SAME: helix.cost = #helix.cost<time_us = {{[^,>]+}}, {{.*}}overhead_us = {{[^,>]+}}, comm_us = {{[^,>]+}}, comm_total_us = {{[^,>]+}}, bytes = {{[^,>]+}}, flops = {{[^,>]+}}>
// Embedding: a lookup (no FLOPs) and the broadcast of the new tokens' rows.
// HELIX: helix.embed {{.*}}helix.cost = #helix.cost<time_us = {{[^,>]+}}, weight_read_us = {{[^,>]+}}, overhead_us = {{[^,>]+}}, comm_us = {{[^,>]+}}, comm_total_us = {{[^,>]+}}, bytes = {{[^,>]+}}>
// Norms and residual adds have no cost of their own; the projections
// communicate nothing.
// HELIX-NOT: helix.cost
// HELIX: helix.rms_norm
// HELIX-NOT: helix.cost
// HELIX: helix.qkv_proj {{.*}}helix.cost = #helix.cost<time_us = {{[^,>]+}}, {{.*}}overhead_us = {{[^,>]+}}, bytes = {{[^,>]+}}, flops = {{[^,>]+}}>
// The attention carries the KVP all-to-all of its partial outputs.
// HELIX: helix.attention {{.*}}helix.cost = #helix.cost<time_us = {{[^,>]+}}, {{.*}}comm_us = {{[^,>]+}}, comm_total_us = {{[^,>]+}}, bytes = {{[^,>]+}}, flops = {{[^,>]+}}>
// The output projection carries its all-reduce over the 4 GPUs.
// HELIX: helix.linear {{.*}}helix.cost = #helix.cost<time_us = {{[^,>]+}}, {{.*}}comm_us = {{[^,>]+}}, comm_total_us = {{[^,>]+}}, bytes = {{[^,>]+}}, flops = {{[^,>]+}}>
// HELIX-NOT: helix.cost
// HELIX: helix.add
// HELIX-NOT: helix.cost
// HELIX: helix.rms_norm
// HELIX-NOT: helix.cost
// HELIX: helix.ffn {{.*}}helix.cost = #helix.cost<time_us = {{[^,>]+}}, {{.*}}comm_us = {{[^,>]+}}, comm_total_us = {{[^,>]+}}, bytes = {{[^,>]+}}, flops = {{[^,>]+}}>
// HELIX: helix.lm_head {{.*}}helix.cost = #helix.cost<time_us = {{[^,>]+}}, {{.*}}comm_us = {{[^,>]+}}, comm_total_us = {{[^,>]+}}, bytes = {{[^,>]+}}, flops = {{[^,>]+}}>

// TP has no attention exchange: its attention communicates nothing; the
// output-projection all-reduce is overlapped with it.
// TP: helix.plan = #helix.plan<strategy = tp, {{.*}}overlap = true{{.*}}>
// TP: helix.attention {{.*}}helix.cost = #helix.cost<time_us = {{[^>]*}}overhead_us = {{[^,>]+}}, bytes
// TP: helix.linear {{.*}}helix.cost = #helix.cost<{{.*}}comm_total_us

// tp-pp: the stage-to-stage transfer (and any pipeline stall) is the
// step's; the ops are priced at the micro-batch.
// PP: func.func @decode_step{{.*}}helix.cost = #helix.cost<time_us = {{.*}}comm_us = {{.*}}>
// PP: helix.qkv_proj {{.*}}helix.cost = #helix.cost<time_us

// An MLA + MoE model priced on H200 in FP8 with a BF16 KV cache.
// MOE: helix.cost = #helix.cost<time_us
// MOE: helix.attention {{.*}}helix.cost = #helix.cost<time_us = {{.*}}kv_read_us
// MOE: helix.moe {{.*}}helix.cost = #helix.cost<time_us

// RANK: module attributes {helix.cost = #helix.cost<time_us = 189.725,
// RANK: helix.embed_rows {{.*}}helix.cost = #helix.cost<
// RANK: call @decode_step_stage0_layer_kind0({{.*}}) {helix.cost = #helix.cost<
// RANK: call @decode_step_stage0_layer_kind0({{.*}}) {helix.cost = #helix.cost<
// RANK: helix.matmul {{.*}}helix.cost = #helix.cost<

// INLINE: module attributes {helix.cost = #helix.cost<time_us = 189.725,
// INLINE: helix.qkv {{.*}}helix.cost = #helix.cost<
// INLINE: helix.attention_partial {{.*}}helix.cost = #helix.cost<time_us = 28.2912,
// INLINE: helix.matmul {{.*}}helix.cost = #helix.cost<
// INLINE: helix.gated_mlp {{.*}}helix.cost = #helix.cost<
