// helix-partition: global view to one SPMD program per pipeline stage,
// local static shapes, checkpoint slices and offsets computed from the
// rank's grid coordinates, KV shards, upstream shard collectives.

// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192 hopb=false" --helix-insert-collectives --helix-kv-placement \
// RUN:   | helix-opt --helix-partition=layer-functions=false | FileCheck %s --check-prefix=GQA
// RUN: helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=4,tpa=2,tpf=2,ep=4 batch=2 context=8192 hopb=false" --helix-insert-collectives --helix-kv-placement \
// RUN:   | helix-opt --helix-partition=layer-functions=false | FileCheck %s --check-prefix=SWA
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=tpa=2,tpf=2,pp=2 strategy=tp-pp batch=3 context=8192" --helix-insert-collectives --helix-kv-placement \
// RUN:   | helix-opt --helix-partition=layer-functions=false | FileCheck %s --check-prefix=PP
// RUN: helix-opt %S/Inputs/mla-moe.mlir --helix-apply-layout="layout=tpa=1,dp=4,tpf=1,ep=4 strategy=ep batch=4 context=8192" --helix-insert-collectives --helix-kv-placement \
// RUN:   | helix-opt --helix-partition=layer-functions=false | FileCheck %s --check-prefix=EP
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192 hopb=false" --helix-insert-collectives --helix-kv-placement \
// RUN:   | helix-opt --helix-partition | FileCheck %s --check-prefix=LAYERS
// RUN: helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=4,tpa=2,tpf=2,ep=4 batch=2 context=8192 hopb=false" --helix-insert-collectives --helix-kv-placement \
// RUN:   | helix-opt --helix-partition | FileCheck %s --check-prefix=SWALAYERS
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" --helix-insert-collectives \
// RUN:   | not helix-opt --helix-partition 2>&1 | FileCheck %s --check-prefix=NOPLACEMENT
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-partition 2>&1 | FileCheck %s --check-prefix=NOGRID

// Helix kvp=2 x tpa=2 on 4 GPUs: one SPMD program (no pipeline stages),
// run by every rank; the plan moves to the module.
// GQA: module attributes {helix.model = {{.*}}, helix.plan = #helix.plan<strategy = helix
// GQA: shard.grid @helix_attn(shape = 1x1x2x2)
// GQA-NOT: func.func
// Every rank holds 4 of the 8 query heads and 1 of the 2 KV heads, 4096 of
// the 8192 token slots per request (placement block 16), 64 columns of the
// output projection (its query heads after the all-to-all), a quarter of
// the vocabulary and of the FFN: the shapes are static, the offsets
// computed from the rank's coordinates (KVP = axis 2, TPA = axis 3).
// GQA-LABEL: func.func @decode_step_stage0(
// GQA-SAME: %{{.*}}: tensor<4xi64> {helix.name = "tokens"}, %[[POS:.*]]: tensor<4xi64> {helix.name = "positions"},
// GQA-SAME: %[[C0:.*]]: !helix.kv_shard<rows = 4, tokens = 4096, heads = 1, key_dim = 32, value_dim = 32, element = bf16> {helix.kv_layer = 0 : i64}
// GQA-SAME: -> tensor<4x1024xf32>
// GQA-SAME: attributes {helix.stage = 0 : i64}
// GQA: %[[A:.*]]:4 = shard.process_multi_index on @helix_attn axes = [0, 1, 2, 3] : index, index, index, index
// The rank's index over KVP x TPA, times 256 vocabulary rows.
// GQA: %[[C2:.*]] = arith.constant 2 : index
// GQA: %[[M:.*]] = arith.muli %[[A]]#2, %[[C2]] : index
// GQA: %[[KT:.*]] = arith.addi %[[M]], %[[A]]#3 : index
// GQA: %[[C256:.*]] = arith.constant 256 : index
// GQA: %[[VOCAB:.*]] = arith.muli %[[KT]], %[[C256]] : index
// GQA: %[[C4:.*]] = arith.constant 4 : index
// GQA: %[[QH:.*]] = arith.muli %[[A]]#3, %[[C4]] : index
// The output projection's columns: TPA major (the heads after the
// all-to-all), 64 per rank.
// GQA: %[[TK:.*]] = arith.addi %{{.*}}, %[[A]]#2 : index
// GQA: %[[COL:.*]] = arith.muli %[[TK]], %{{.*}} : index
// GQA: %[[F:.*]]:4 = shard.process_multi_index on @helix_ffn
// GQA: %[[FFN:.*]] = arith.muli %[[F]]#3, %{{.*}} : index
// GQA: %[[SLOTS:.*]], %[[SPANS:.*]] = helix.kv_slots %[[POS]] rank_offset(%[[A]]#2) {placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 4096>} : tensor<4xi64> -> tensor<1x4xi64>, tensor<1x4x2xi64>
// GQA: %[[TABLE:.*]] = helix.weight "model.embed_tokens.weight" [1024, 256] offsets [%[[VOCAB]], 0] : tensor<256x256xbf16>
// GQA: helix.embed_rows %{{.*}}, %[[TABLE]] vocab_offset(%[[VOCAB]]) : (tensor<4xi64>, tensor<256x256xbf16>, index) -> tensor<4x256xbf16>
// GQA: shard.all_reduce %{{.*}} on @helix_attn grid_axes = [2, 3] : tensor<4x256xbf16> -> tensor<4x256xbf16>
// GQA: helix.weight "model.layers.0.self_attn.q_proj.weight" [256, 256] view [8, 32, 256] offsets [%[[QH]], 0, 0] : tensor<4x32x256xbf16>
// GQA: helix.weight "model.layers.0.self_attn.k_proj.weight" [64, 256] view [2, 32, 256] offsets [%[[A]]#3, 0, 0] : tensor<1x32x256xbf16>
// GQA: helix.qkv {{.*}} -> (tensor<4x4x32xbf16>, tensor<4x1x32xbf16>, tensor<4x1x32xbf16>)
// GQA: %[[P:.*]] = helix.attention_partial %{{.*}}, %{{.*}}, %{{.*}} cache(%[[C0]]) kv(%[[SLOTS]], %[[SPANS]]) {{.*}} -> tensor<1x4x4x33xf32>
// The all-to-all's group: the rank's KVP ranks (its TPA coordinate fixed).
// GQA: %[[X:.*]] = shard.all_to_all %[[P]] on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0 : tensor<1x4x4x33xf32> -> tensor<2x4x2x33xf32>
// GQA: %[[O:.*]] = helix.lse_combine %[[X]] : tensor<2x4x2x33xf32> -> tensor<4x64xbf16>
// GQA: %[[WO:.*]] = helix.weight "model.layers.0.self_attn.o_proj.weight" [256, 256] offsets [0, %[[COL]]] : tensor<256x64xbf16>
// GQA: %[[Y:.*]] = helix.matmul %[[O]], %[[WO]] : (tensor<4x64xbf16>, tensor<256x64xbf16>) -> tensor<4x256xbf16>
// GQA: shard.all_reduce %[[Y]] on @helix_attn grid_axes = [2, 3] : tensor<4x256xbf16> -> tensor<4x256xbf16>
// GQA: helix.weight "model.layers.0.mlp.gate_proj.weight" [512, 256] offsets [%[[FFN]], 0] : tensor<128x256xbf16>
// GQA: helix.weight "model.layers.0.mlp.down_proj.weight" [256, 512] offsets [0, %[[FFN]]] : tensor<256x128xbf16>
// GQA: shard.all_reduce %{{.*}} on @helix_ffn grid_axes = [3] : tensor<4x256xbf16> -> tensor<4x256xbf16>
// GQA: %[[L:.*]] = shard.all_gather %{{.*}} on @helix_attn grid_axes = [2, 3] gather_axis = 1 : tensor<4x256xf32> -> tensor<4x1024xf32>
// GQA: return %[[L]] : tensor<4x1024xf32>
// GQA-NOT: func.func

// gpt-oss-like, kvp=4 x tpa=2: each rank holds half a head after the
// all-to-all and that head's sink (head (TPA x KVP index) / 2); the
// output-projection bias is added by the rank holding its first columns
// only, each expert's down bias by the first TPF rank of its group only
// (helix.keep_if); experts are the rank's EP coordinate; the window
// layer's KV shard is a 32-slot ring.
// SWA-LABEL: func.func @decode_step_stage0(
// SWA-SAME: !helix.kv_shard<rows = 2, tokens = 32, heads = 1, key_dim = 32, value_dim = 32, element = bf16, window = 64> {helix.kv_layer = 0 : i64}
// SWA-SAME: !helix.kv_shard<rows = 2, tokens = 2048, heads = 1, key_dim = 32, value_dim = 32, element = bf16> {helix.kv_layer = 1 : i64}
// SWA: %[[A:.*]]:4 = shard.process_multi_index on @helix_attn
// SWA: %[[TK:.*]] = arith.addi %{{.*}}, %[[A]]#2 : index
// SWA: %[[SINK:.*]] = arith.divui %[[TK]], %{{.*}} : index
// SWA: %[[COL:.*]] = arith.muli %[[TK]], %{{.*}} : index
// SWA: %[[C0:.*]] = arith.constant 0 : index
// SWA: %[[FIRSTCOL:.*]] = arith.cmpi eq, %[[COL]], %[[C0]] : index
// SWA: %[[F:.*]]:4 = shard.process_multi_index on @helix_ffn
// SWA: %[[C32:.*]] = arith.constant 32 : index
// SWA: %[[DOWN:.*]] = arith.muli %[[F]]#3, %[[C32]] : index
// SWA: %[[FIRSTDOWN:.*]] = arith.cmpi eq, %[[DOWN]], %[[C0]] : index
// SWA: helix.weight "model.layers.0.self_attn.sinks" [4] offsets [%[[SINK]]] : tensor<1xbf16>
// SWA: helix.lse_combine %{{.*}} sinks(%{{.*}} : tensor<1xbf16>) : tensor<4x2x1x17xf32> -> tensor<2x16xbf16>
// SWA: %[[B:.*]] = helix.weight "model.layers.0.self_attn.o_proj.bias" [128] : tensor<128xbf16>
// SWA: %[[KB:.*]] = helix.keep_if %[[FIRSTCOL]], %[[B]] : tensor<128xbf16>
// SWA: helix.matmul %{{.*}}, %{{.*}} bias(%[[KB]]) : (tensor<2x16xbf16>, tensor<128x16xbf16>, tensor<128xbf16>) -> tensor<2x128xbf16>
// SWA: helix.weight "model.layers.0.mlp.experts.down_proj" [4, 64, 128] offsets [%[[F]]#2, %[[DOWN]], 0] : tensor<1x32x128xbf16>
// SWA: %[[DB:.*]] = helix.weight "model.layers.0.mlp.experts.down_proj_bias" [4, 128] offsets [%[[F]]#2, 0] : tensor<1x128xbf16>
// SWA: %[[KDB:.*]] = helix.keep_if %[[FIRSTDOWN]], %[[DB]] : tensor<1x128xbf16>
// SWA: helix.moe_experts {{.*}} expert_bias(%{{.*}}, %[[KDB]]) expert_offset(%[[F]]#2) {{{.*}}fused_gate_up}
// SWA: shard.all_reduce %{{.*}} on @helix_ffn grid_axes = [3] : tensor<1x2x128xbf16> -> tensor<1x2x128xbf16>
// SWA: shard.all_gather %{{.*}} on @helix_ffn grid_axes = [2] gather_axis = 0 : tensor<1x2x128xbf16> -> tensor<4x2x128xbf16>
// SWA: helix.group_sum %{{.*}} : tensor<4x2x128xbf16> -> tensor<2x128xbf16>

// Tensor and pipeline parallelism, one program per stage. Stage 0 sends the residual stream to its
// peer on stage 1, which receives it into a buffer; only stage 1 returns
// the logits. Cache rows hold both micro-batches.
// PP-LABEL: func.func @decode_step_stage0(
// PP-SAME: !helix.kv_shard<rows = 4, tokens = 8192, heads = 1, key_dim = 32, value_dim = 32, element = bf16> {helix.kv_layer = 0 : i64}, %[[ROW:[a-z0-9]+]]: index {helix.name = "micro_batch_row"}) attributes {helix.stage = 0 : i64}
// PP: helix.attention_partial {{.*}} row_base(%[[ROW]])
// PP: shard.send %{{.*}} on @helix_attn grid_axes = [0] destination = [1] : (tensor<2x256xbf16>) -> tensor<2x256xbf16>
// PP-NEXT: return{{$}}
// PP-LABEL: func.func @decode_step_stage1(
// PP-SAME: {helix.kv_layer = 1 : i64}
// PP-SAME: -> tensor<2x1024xf32> attributes {helix.stage = 1 : i64}
// PP: %[[BUF:.*]] = tensor.empty() : tensor<2x256xbf16>
// PP-NEXT: %[[IN:.*]] = shard.recv %[[BUF]] on @helix_attn grid_axes = [0] source = [0] : (tensor<2x256xbf16>) -> tensor<2x256xbf16>
// PP: helix.norm_rows %[[IN]],
// PP: return %{{.*}} : tensor<2x1024xf32>
// PP-NOT: func.func

// DP attention + EP. Each replica (axis 1) attends for its request over its
// one-row KV shard and holds 2 experts (its EP coordinate x 2).
// EP-LABEL: func.func @decode_step_stage0(
// EP-SAME: !helix.kv_shard<rows = 1, tokens = 8192, heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>
// EP: %[[F:.*]]:4 = shard.process_multi_index on @helix_ffn
// EP: %[[C2:.*]] = arith.constant 2 : index
// EP: %[[E:.*]] = arith.muli %[[F]]#2, %[[C2]] : index
// EP: shard.all_slice %{{.*}} on @helix_attn grid_axes = [1] slice_axis = 0 : tensor<4x128xbf16> -> tensor<1x128xbf16>
// EP: helix.attention_partial {{.*}} -> tensor<1x1x4x17xf32>
// EP: helix.weight "model.layers.1.mlp.experts.{expert}.gate_proj.weight" [64, 128] view [8, 64, 128] offsets [%[[E]], 0, 0] : tensor<2x64x128xbf16>
// EP: helix.moe_experts {{.*}}expert_offset(%[[E]])
// EP-SAME: -> tensor<4x128xbf16>
// EP: shard.reduce_scatter %{{.*}} on @helix_attn grid_axes = [1] scatter_axis = 0 : tensor<4x128xbf16> -> tensor<1x128xbf16>

// Layer functions (the default): the two identical layers of the GQA model
// are one function, called with each layer's index; its weights are the
// called layer's (`model.layers.{layer}.*`) and its offsets recomputed from
// the rank's coordinates; shared values (positions, KV slots) are passed.
// LAYERS-LABEL: func.func private @decode_step_stage0_layer_kind0(
// LAYERS-SAME: %[[L:[a-z0-9]+]]: index, %[[H:[a-z0-9]+]]: tensor<4x256xbf16>, %[[POS:[a-z0-9]+]]: tensor<4xi64>, %[[C:[a-z0-9]+]]: !helix.kv_shard<rows = 4, tokens = 4096, heads = 1, key_dim = 32, value_dim = 32, element = bf16>, %[[SLOTS:[a-z0-9]+]]: tensor<1x4xi64>, %[[SPANS:[a-z0-9]+]]: tensor<1x4x2xi64>) -> tensor<4x256xbf16>
// LAYERS-SAME: attributes {helix.layers = array<i64: 0, 1>}
// LAYERS: helix.weight "model.layers.{layer}.input_layernorm.weight" layer(%[[L]]) [256] : tensor<256xbf16>
// LAYERS: %[[A:.*]]:4 = shard.process_multi_index on @helix_attn
// LAYERS: helix.weight "model.layers.{layer}.self_attn.k_proj.weight" layer(%[[L]]) [64, 256] view [2, 32, 256] offsets [%[[A]]#3, 0, 0] : tensor<1x32x256xbf16>
// LAYERS: helix.attention_partial %{{.*}}, %{{.*}}, %{{.*}} cache(%[[C]]) kv(%[[SLOTS]], %[[SPANS]])
// LAYERS: shard.all_to_all
// LAYERS: return %{{.*}} : tensor<4x256xbf16>
// LAYERS-LABEL: func.func @decode_step_stage0(
// LAYERS-SAME: %[[TOK:[a-z0-9]+]]: tensor<4xi64> {helix.name = "tokens"}, %[[P:[a-z0-9]+]]: tensor<4xi64> {helix.name = "positions"}, %[[C0:[a-z0-9]+]]: !helix.kv_shard<{{.*}}> {helix.kv_layer = 0 : i64}, %[[C1:[a-z0-9]+]]: !helix.kv_shard<{{.*}}> {helix.kv_layer = 1 : i64})
// LAYERS: %[[S:.*]], %[[SP:.*]] = helix.kv_slots %[[P]] rank_offset(
// LAYERS: %[[E:.*]] = shard.all_reduce
// LAYERS: %[[I0:.*]] = arith.constant 0 : index
// LAYERS-NEXT: %[[H0:.*]] = call @decode_step_stage0_layer_kind0(%[[I0]], %[[E]], %[[P]], %[[C0]], %[[S]], %[[SP]])
// LAYERS: %[[I1:.*]] = arith.constant 1 : index
// LAYERS-NEXT: %[[H1:.*]] = call @decode_step_stage0_layer_kind0(%[[I1]], %[[H0]], %[[P]], %[[C1]], %[[S]], %[[SP]])
// LAYERS: helix.norm_rows %[[H1]],
// LAYERS-NOT: func.func

// The gpt-oss-like model alternates window and full attention: two kinds.
// SWALAYERS: func.func private @decode_step_stage0_layer_kind0({{.*}}helix.layers = array<i64: 0>
// SWALAYERS: helix.keep_if
// SWALAYERS: func.func private @decode_step_stage0_layer_kind1({{.*}}helix.layers = array<i64: 1>
// SWALAYERS: func.func @decode_step_stage0(

// NOPLACEMENT: error: 'helix.attention_partial' op helix-partition: stage 0: the attention has no KV placement (run helix-kv-placement first)
// NOGRID: error: helix-partition: the module has no shard.grid (run helix-insert-collectives first)
