// Per-layer layouts (docs/per-layer-layouts.md): helix-apply-layout's
// layer-layouts gives each op its own layer's layout and lists the kinds'
// in #helix.plan; helix-insert-collectives lowers each op on the grids of
// its layout; the rest of the pipeline runs unchanged on the mixed program.

// A gpt-oss-like model (a sliding-window layer, then a full one; MoE) on 4
// GPUs: the window layer at kvp = 1 with its 2 KV heads duplicated over
// tpa = 4 (no all-to-all), the full layer at kvp = 2 x tpa = 2 (the Helix
// all-to-all), the experts in two replicas of a tpf = 2 group.
// RUN: helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=2,ep=2 batch=2 context=8192 layer-layouts=window_attention=kvp=1,tpa=4;moe_ffn=tpf=2,ep=1" \
// RUN:   | FileCheck %s --check-prefix=PLAN
// PLAN: layouts = [#helix.kind_layout<kind = full_attention, layers = 1, kvp = 2, tpa = 2>, #helix.kind_layout<kind = window_attention, layers = 1, tpa = 4>, #helix.kind_layout<kind = moe_ffn, layers = 2, tpf = 2, replicas = 2>]
// PLAN: helix.attention {{.*}}window = 64{{.*}}layout = #helix.layout<gpus = 4, tpa = 4, tpf = 2>
// PLAN: helix.moe {{.*}}layer = 0 {{.*}}layout = #helix.layout<gpus = 4, tpa = 4, tpf = 2>
// PLAN: helix.attention {{.*}}layout = #helix.layout<gpus = 4, kvp = 2, tpa = 2, tpf = 2>
// PLAN: helix.moe {{.*}}layer = 1 {{.*}}layout = #helix.layout<gpus = 4, kvp = 2, tpa = 2, tpf = 2>

// RUN: helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=2,ep=2 batch=2 context=8192 layer-layouts=window_attention=kvp=1,tpa=4;moe_ffn=tpf=2,ep=1" \
// RUN:   | helix-opt --helix-insert-collectives | FileCheck %s --check-prefix=GV
// GV-DAG: shard.grid @helix_attn(shape = 1x1x2x2)
// GV-DAG: shard.grid @helix_ffn(shape = 1x2x1x2)
// GV-DAG: shard.grid @helix_attn_kvp1_tpa4(shape = 1x1x1x4)
// The window layer: no exchange, the output projection over its own grid.
// GV: helix.attention_partial {{.*}} -> tensor<1x2x4x33xf32, #helix.dist<@helix_attn_kvp1_tpa4, {{\[\[}}], [], [3]]>>
// GV-NOT: all_to_all
// GV: helix.collective all_reduce {{.*}} on @helix_attn_kvp1_tpa4 grid_axes = [3]
// Each expert replica all-reduces over its own group only (axis 3, TPF).
// GV: helix.collective all_reduce {{.*}} on @helix_ffn grid_axes = [3]
// The full layer: the Helix all-to-all over KVP.
// GV: helix.collective all_to_all {{.*}} on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0
// GV: helix.collective all_reduce {{.*}} on @helix_attn grid_axes = [2, 3]
// GV: helix.collective all_reduce {{.*}} on @helix_ffn grid_axes = [3]

// The whole pipeline to rank IR: the two layers become two layer functions,
// each rank's window shard holds one (duplicated) KV head.
// RUN: helix-opt %S/Inputs/swa.mlir --helix-sharding-pipeline="layout=kvp=2,tpa=2,tpf=2,ep=2 batch=2 context=8192 layer-layouts=window_attention=kvp=1,tpa=4;moe_ffn=tpf=2,ep=1" \
// RUN:   | FileCheck %s --check-prefix=RANK
// RANK: func.func private @decode_step_stage0_layer_kind0({{.*}}!helix.kv_shard<rows = 2, tokens = 80, heads = 1, key_dim = 32, value_dim = 32, element = f4E2M1FN, window = 64>
// RANK: shard.process_multi_index on @helix_attn_kvp1_tpa4
// RANK: func.func private @decode_step_stage0_layer_kind1({{.*}}!helix.kv_shard<rows = 2, tokens = 4096, heads = 1, key_dim = 32, value_dim = 32, element = f4E2M1FN>
// RANK: shard.all_to_all {{.*}} on @helix_attn grid_axes = [2]

// A DeepSeek-like model (a dense layer, then an MoE layer): the dense FFN in
// two replicas of a tpf = 2 group, the experts over tpf = 2 x ep = 2.
// RUN: helix-opt %S/Inputs/mla-moe.mlir --helix-apply-layout="layout=kvp=4,tpa=1,tpf=2,ep=2 batch=2 context=8192 layer-layouts=dense_ffn=tpf=2" \
// RUN:   | helix-opt --helix-insert-collectives | FileCheck %s --check-prefix=DENSE
// DENSE-DAG: shard.grid @helix_ffn(shape = 1x1x2x2)
// DENSE-DAG: shard.grid @helix_ffn_tpf2_ep1(shape = 1x2x1x2)
// DENSE: helix.collective all_reduce {{.*}} on @helix_ffn_tpf2_ep1 grid_axes = [3]
// DENSE: helix.collective all_reduce {{.*}} on @helix_ffn grid_axes = [3]
// DENSE: helix.collective all_gather {{.*}} on @helix_ffn grid_axes = [2]

// Bad per-layer layouts: one line naming the kind and the rule.
// RUN: not helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=2,ep=2 batch=2 context=8192 layer-layouts=window_attention=kvp=1,tpa=3" 2>&1 | FileCheck %s --check-prefix=ERR1
// ERR1: error: helix-apply-layout: window attention kvp=1,tpa=3: kvp x tpa must be the 4 GPUs
// RUN: not helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=2,ep=2 batch=2 context=8192 layer-layouts=dense_ffn=tpf=2" 2>&1 | FileCheck %s --check-prefix=ERR2
// ERR2: error: helix-apply-layout: tiny-swa has no dense FFN layers
// RUN: not helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=2,ep=2 batch=2 context=8192 layer-layouts=moe_ffn=tpf=3" 2>&1 | FileCheck %s --check-prefix=ERR3
// ERR3: error: helix-apply-layout: MoE FFN tpf=3,ep=1: the group of tpf x ep = 3 GPUs must divide the 4 GPUs
// RUN: not helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=2,ep=2 batch=2 context=8192 layer-layouts=moe_ffn=kvp=2" 2>&1 | FileCheck %s --check-prefix=ERR4
// ERR4: error: helix-apply-layout: per-layer layout 'moe_ffn=kvp=2': moe_ffn takes tpf and ep, not 'kvp'
// RUN: not helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=2,ep=2 batch=2 context=8192 layer-layouts=sliding=kvp=4" 2>&1 | FileCheck %s --check-prefix=ERR5
// ERR5: error: helix-apply-layout: per-layer layout 'sliding=kvp=4' is not KIND=LAYOUT
// RUN: not helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=2,ep=2 batch=2 context=8192 strategy=tp layer-layouts=moe_ffn=tpf=2" 2>&1 | FileCheck %s --check-prefix=ERR6
// ERR6: error: helix-apply-layout: per-layer layouts are Helix plans with HOP-B (not tp)

// An op whose layout is not its layer's kind's: readPlan refuses the plan.
// RUN: helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=2,ep=2 batch=2 context=8192 layer-layouts=window_attention=kvp=1,tpa=4" \
// RUN:   | sed -e '0,/layout = #helix.layout<gpus = 4, tpa = 4, tpf = 2, ep = 2>/s//layout = #helix.layout<gpus = 4, kvp = 4, tpf = 2, ep = 2>/' \
// RUN:   | not helix-opt --helix-insert-collectives 2>&1 | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: error: helix-insert-collectives: helix.qkv_proj of layer 0 has layout #helix.layout<gpus = 4, kvp = 4, tpf = 2, ep = 2> but the plan's per-layer layout gives it #helix.layout<gpus = 4, tpa = 4, tpf = 2, ep = 2>

// helix-search-layouts per-layer=true: the per-layer search's choice on the
// GPUs at the batch, recorded the same way.
// RUN: helix-opt %S/Inputs/swa.mlir --helix-search-layouts="gpus=4 batch=2 context=8192 per-layer=true" | FileCheck %s --check-prefix=SEARCH
// SEARCH: helix.plan = #helix.plan<strategy = helix, {{.*}}gpus = 4, batch = 2, {{.*}}layouts = [#helix.kind_layout<kind = full_attention, layers = 1, {{.*}}>, #helix.kind_layout<kind = window_attention, layers = 1, {{.*}}>, #helix.kind_layout<kind = moe_ffn, layers = 2, {{.*}}>]>
// RUN: not helix-opt %S/Inputs/swa.mlir --helix-search-layouts="batch=2 context=8192 per-layer=true" 2>&1 | FileCheck %s --check-prefix=SEARCHERR
// SEARCHERR: error: helix-search-layouts: per-layer layouts need the GPUs and a batch of at least 1
