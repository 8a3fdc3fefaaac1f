// helix-partition: global view to one SPMD program per rank, local shapes,
// checkpoint slices, KV shards, upstream shard collectives.

// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192 hopb=false" --helix-insert-collectives --helix-kv-placement \
// RUN:   | helix-opt --helix-partition | FileCheck %s --check-prefix=GQA
// RUN: helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=4,tpa=2,tpf=2,ep=4 batch=2 context=8192 hopb=false" --helix-insert-collectives --helix-kv-placement \
// RUN:   | helix-opt --helix-partition | FileCheck %s --check-prefix=SWA
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=tpa=2,tpf=2,pp=2 strategy=tp-pp batch=3 context=8192" --helix-insert-collectives --helix-kv-placement \
// RUN:   | helix-opt --helix-partition | FileCheck %s --check-prefix=PP
// RUN: helix-opt %S/Inputs/mla-moe.mlir --helix-apply-layout="layout=tpa=1,dp=4,tpf=1,ep=4 strategy=ep batch=4 context=8192" --helix-insert-collectives --helix-kv-placement \
// RUN:   | helix-opt --helix-partition | FileCheck %s --check-prefix=EP
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" --helix-insert-collectives \
// RUN:   | not helix-opt --helix-partition 2>&1 | FileCheck %s --check-prefix=NOPLACEMENT
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-partition 2>&1 | FileCheck %s --check-prefix=NOGRID

// Helix kvp=2 x tpa=2: 4 rank programs; the plan moves to the module.
// GQA: module attributes {helix.model = {{.*}}, helix.plan = #helix.plan<strategy = helix
// GQA: shard.grid @helix_attn(shape = 1x1x2x2)
// GQA-LABEL: func.func @decode_step_rank0(
// GQA-LABEL: func.func @decode_step_rank1(
// GQA-LABEL: func.func @decode_step_rank2(
// Rank 3 is KVP rank 1 and TPA rank 1: it holds query heads 4..7 and KV
// head 1, 4096 of the 8192 token slots per request (placement block 16),
// columns 192.. of the output projection (query heads 6..7 after the
// all-to-all), rows 768.. of the vocabulary and 384.. of the FFN.
// GQA-LABEL: func.func @decode_step_rank3(
// GQA-SAME: %{{.*}}: tensor<4xi64> {helix.name = "tokens"}, %[[POS:.*]]: tensor<4xi64> {helix.name = "positions"},
// GQA-SAME: %[[C0:.*]]: !helix.kv_shard<rows = 4, tokens = 4096, heads = 1, key_dim = 32, value_dim = 32, element = bf16> {helix.kv_layer = 0 : i64}
// GQA-SAME: -> tensor<4x1024xf32>
// GQA-SAME: attributes {helix.coords = {helix_attn = array<i64: 0, 0, 1, 1>, helix_ffn = array<i64: 0, 0, 0, 3>}, helix.rank = 3 : i64}
// GQA: %[[SLOTS:.*]], %[[SPANS:.*]] = helix.kv_slots %[[POS]] {placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 4096>, rank_offset = 1 : i64} : tensor<4xi64> -> tensor<1x4xi64>, tensor<1x4x2xi64>
// GQA: %[[TABLE:.*]] = helix.weight "model.embed_tokens.weight" [1024, 256] offsets [768, 0] : tensor<256x256xbf16>
// GQA: helix.embed_rows %{{.*}}, %[[TABLE]] {vocab_offset = 768 : i64} : (tensor<4xi64>, tensor<256x256xbf16>) -> tensor<4x256xbf16>
// GQA: shard.all_reduce %{{.*}} on @helix_attn grid_axes = [2, 3] {helix.group = array<i64: 0, 1, 2, 3>} : tensor<4x256xbf16> -> tensor<4x256xbf16>
// GQA: helix.weight "model.layers.0.self_attn.q_proj.weight" [256, 256] view [8, 32, 256] offsets [4, 0, 0] : tensor<4x32x256xbf16>
// GQA: helix.weight "model.layers.0.self_attn.k_proj.weight" [64, 256] view [2, 32, 256] offsets [1, 0, 0] : tensor<1x32x256xbf16>
// GQA: helix.qkv {{.*}} -> (tensor<4x4x32xbf16>, tensor<4x1x32xbf16>, tensor<4x1x32xbf16>)
// GQA: %[[P:.*]] = helix.attention_partial %{{.*}}, %{{.*}}, %{{.*}} cache(%[[C0]]) kv(%[[SLOTS]], %[[SPANS]]) {{.*}} -> tensor<1x4x4x33xf32>
// The all-to-all's group: the KVP ranks of TPA rank 1.
// GQA: %[[X:.*]] = shard.all_to_all %[[P]] on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0 {helix.group = array<i64: 1, 3>} : tensor<1x4x4x33xf32> -> tensor<2x4x2x33xf32>
// GQA: %[[O:.*]] = helix.lse_combine %[[X]] : tensor<2x4x2x33xf32> -> tensor<4x64xbf16>
// GQA: %[[WO:.*]] = helix.weight "model.layers.0.self_attn.o_proj.weight" [256, 256] offsets [0, 192] : tensor<256x64xbf16>
// GQA: %[[Y:.*]] = helix.matmul %[[O]], %[[WO]] : (tensor<4x64xbf16>, tensor<256x64xbf16>) -> tensor<4x256xbf16>
// GQA: shard.all_reduce %[[Y]] on @helix_attn grid_axes = [2, 3] {helix.group = array<i64: 0, 1, 2, 3>} : tensor<4x256xbf16> -> tensor<4x256xbf16>
// GQA: helix.weight "model.layers.0.mlp.gate_proj.weight" [512, 256] offsets [384, 0] : tensor<128x256xbf16>
// GQA: helix.weight "model.layers.0.mlp.down_proj.weight" [256, 512] offsets [0, 384] : tensor<256x128xbf16>
// GQA: shard.all_reduce %{{.*}} on @helix_ffn grid_axes = [3] {helix.group = array<i64: 0, 1, 2, 3>} : tensor<4x256xbf16> -> tensor<4x256xbf16>
// GQA: %[[L:.*]] = shard.all_gather %{{.*}} on @helix_attn grid_axes = [2, 3] gather_axis = 1 {helix.group = array<i64: 0, 1, 2, 3>} : tensor<4x256xf32> -> tensor<4x1024xf32>
// GQA: return %[[L]] : tensor<4x1024xf32>
// GQA-NOT: func.func @decode_step(

// gpt-oss-like, kvp=4 x tpa=2: each rank holds half a head after the
// all-to-all and that head's sink; the output-projection bias is loaded and
// added by rank 0 only, each expert's down bias by the first TPF rank of
// its group only; the window layer's KV shard is a 32-slot ring.
// SWA-LABEL: func.func @decode_step_rank0(
// SWA-SAME: !helix.kv_shard<rows = 2, tokens = 32, heads = 1, key_dim = 32, value_dim = 32, element = bf16, window = 64> {helix.kv_layer = 0 : i64}
// SWA-SAME: !helix.kv_shard<rows = 2, tokens = 2048, heads = 1, key_dim = 32, value_dim = 32, element = bf16> {helix.kv_layer = 1 : i64}
// SWA: helix.weight "model.layers.0.self_attn.sinks" [4] offsets [0] : tensor<1xbf16>
// SWA: helix.lse_combine %{{.*}} sinks(%{{.*}} : tensor<1xbf16>) : tensor<4x2x1x17xf32> -> tensor<2x16xbf16>
// SWA: %[[B:.*]] = helix.weight "model.layers.0.self_attn.o_proj.bias" [128] : tensor<128xbf16>
// SWA: helix.matmul %{{.*}}, %{{.*}} bias(%[[B]])
// SWA: helix.moe_experts {{.*}} expert_bias(%{{.*}}, %{{.*}}) {{{.*}}fused_gate_up}
// SWA-LABEL: func.func @decode_step_rank5(
// SWA-SAME: helix.coords = {helix_attn = array<i64: 0, 0, 2, 1>, helix_ffn = array<i64: 0, 0, 2, 1>}
// SWA: helix.weight "model.layers.0.self_attn.sinks" [4] offsets [3] : tensor<1xbf16>
// SWA-NOT: o_proj.bias
// SWA: helix.matmul %{{.*}}, %{{.*}} : (tensor<2x16xbf16>, tensor<128x16xbf16>) -> tensor<2x128xbf16>
// SWA: helix.weight "model.layers.0.mlp.experts.down_proj" [4, 64, 128] offsets [2, 32, 0] : tensor<1x32x128xbf16>
// SWA-NOT: down_proj_bias
// SWA: helix.moe_experts {{.*}} expert_bias(%{{[0-9]+}}) {{{.*}}expert_offset = 2 : i64, fused_gate_up}
// SWA: shard.all_reduce %{{.*}} on @helix_ffn grid_axes = [3] {helix.group = array<i64: 4, 5>} : tensor<1x2x128xbf16> -> tensor<1x2x128xbf16>
// SWA: shard.all_gather %{{.*}} on @helix_ffn grid_axes = [2] gather_axis = 0 {helix.group = array<i64: 1, 3, 5, 7>} : tensor<1x2x128xbf16> -> tensor<4x2x128xbf16>
// SWA: helix.group_sum %{{.*}} : tensor<4x2x128xbf16> -> tensor<2x128xbf16>

// TP x PP. Stage 0 (ranks 0, 1) sends the residual stream to its peer on
// stage 1 (ranks 2, 3), which receives it into a buffer; only stage 1
// returns the logits. Cache rows hold both micro-batches.
// PP-LABEL: func.func @decode_step_rank0(
// PP-SAME: !helix.kv_shard<rows = 4, tokens = 8192, heads = 1, key_dim = 32, value_dim = 32, element = bf16> {helix.kv_layer = 0 : i64}, %[[ROW:[a-z0-9]+]]: index {helix.name = "micro_batch_row"}) attributes
// PP: helix.attention_partial {{.*}} row_base(%[[ROW]])
// PP: shard.send %{{.*}} on @helix_attn grid_axes = [0] destination = [1] {helix.group = array<i64: 0, 2>} : (tensor<2x256xbf16>) -> tensor<2x256xbf16>
// PP-NEXT: return{{$}}
// PP-LABEL: func.func @decode_step_rank2(
// PP-SAME: {helix.kv_layer = 1 : i64}
// PP-SAME: -> tensor<2x1024xf32>
// PP: %[[BUF:.*]] = tensor.empty() : tensor<2x256xbf16>
// PP-NEXT: %[[IN:.*]] = shard.recv %[[BUF]] on @helix_attn grid_axes = [0] source = [0] {helix.group = array<i64: 0, 2>} : (tensor<2x256xbf16>) -> tensor<2x256xbf16>
// PP: helix.norm %[[IN]],
// PP: return %{{.*}} : tensor<2x1024xf32>

// DP attention + EP. Replica 2 attends for request 2 over its one-row KV
// shard and holds experts 4 and 5.
// EP-LABEL: func.func @decode_step_rank2(
// EP-SAME: !helix.kv_shard<rows = 1, tokens = 8192, heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>
// EP: shard.all_slice %{{.*}} on @helix_attn grid_axes = [1] slice_axis = 0 {helix.group = array<i64: 0, 1, 2, 3>} : tensor<4x128xbf16> -> tensor<1x128xbf16>
// EP: helix.attention_partial {{.*}} -> tensor<1x1x4x17xf32>
// EP: helix.weight "model.layers.1.mlp.experts.{expert}.gate_proj.weight" [64, 128] view [8, 64, 128] offsets [4, 0, 0] : tensor<2x64x128xbf16>
// EP: helix.moe_experts {{.*}}expert_offset = 4 : i64
// EP-SAME: -> tensor<4x128xbf16>
// EP: shard.reduce_scatter %{{.*}} on @helix_attn grid_axes = [1] scatter_axis = 0 {helix.group = array<i64: 0, 1, 2, 3>} : tensor<4x128xbf16> -> tensor<1x128xbf16>

// NOPLACEMENT: error: 'helix.attention_partial' op helix-partition: rank 0: the attention has no KV placement (run helix-kv-placement first)
// NOGRID: error: helix-partition: the module has no shard.grid (run helix-insert-collectives first)
