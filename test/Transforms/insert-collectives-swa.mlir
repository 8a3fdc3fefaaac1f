// helix-insert-collectives on a hand-written gpt-oss-like model: a
// sliding-window layer then a full one, q/k/v and output biases, learned
// sinks, fused (interleaved gate_up) experts with biases.

// RUN: helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=4,tpa=2,tpf=2,ep=4 batch=2 context=8192" \
// RUN:   | helix-opt --helix-insert-collectives | FileCheck %s

// Helix kvp=4 x tpa=2 on 8 GPUs: a TPA slice has 2 heads for 4 KVP ranks,
// so each head's partial output is cut in head_split = 2 pieces (each with
// the head's LSE) and the all-to-all spreads 8 pieces over 8 ranks.
// CHECK: shard.grid @helix_attn(shape = 1x1x4x2)
// CHECK: shard.grid @helix_ffn(shape = 1x1x4x2)
// CHECK: helix.weight "model.layers.0.self_attn.q_proj.bias" [128] view [4, 32] : tensor<4x32xbf16, #helix.dist<@helix_attn, {{\[\[}}3]]>>
// CHECK: helix.qkv {{.*}} bias({{.*}}) {config = #helix.attn<{{.*}}sinks = true, window = 64>
// CHECK: %[[P:.*]] = helix.attention_partial {{.*}}head_split = 2 : i64
// CHECK-SAME: -> tensor<4x2x8x17xf32, #helix.dist<@helix_attn, {{\[\[}}2], [], [3]]>>
// CHECK: %[[X:.*]] = helix.collective all_to_all %[[P]] on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0
// The sinks join the LSE once, in the combine; a rank holds its head's.
// CHECK: %[[SINKS:.*]] = helix.weight "model.layers.0.self_attn.sinks" [4] : tensor<4xbf16, #helix.dist<@helix_attn, {{\[\[}}3, 2]]>>
// CHECK: %[[O:.*]] = helix.lse_combine %[[X]] sinks(%[[SINKS]] : {{.*}}) : {{.*}} -> tensor<2x128xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3, 2]]>>
// The output bias is part of the row-parallel sum (partition keeps it on
// one rank).
// CHECK: %[[BO:.*]] = helix.weight "model.layers.0.self_attn.o_proj.bias" [128] : tensor<128xbf16>
// CHECK: helix.matmul %[[O]], %{{.*}} bias(%[[BO]]) {{.*}} -> tensor<2x128xbf16, #helix.dist<@helix_attn, partial = [2, 3]>>
// gpt-oss experts: gate_up [E, H, 2I] with interleaved columns, so a TPF
// slice of columns holds whole (gate, up) pairs; router bias.
// CHECK: helix.weight "model.layers.0.mlp.router.bias" [4] : tensor<4xbf16>
// CHECK: helix.weight "model.layers.0.mlp.experts.gate_up_proj" [4, 128, 128] : tensor<4x128x128xbf16, #helix.dist<@helix_ffn, {{\[\[}}2], [], [3]]>>
// CHECK: helix.weight "model.layers.0.mlp.experts.down_proj" [4, 64, 128] : tensor<4x64x128xbf16, #helix.dist<@helix_ffn, {{\[\[}}2], [3]]>>
// CHECK: helix.weight "model.layers.0.mlp.experts.down_proj_bias" [4, 128] : tensor<4x128xbf16, #helix.dist<@helix_ffn, {{\[\[}}2]]>>
// CHECK: helix.moe_experts {{.*}} experts({{.*}}) expert_bias({{.*}}) {{{.*}}fused_gate_up}
// CHECK-SAME: -> tensor<4x2x128xbf16, #helix.dist<@helix_ffn, {{\[\[}}2]], partial = [3]>>
// The full-attention layer has no window.
// CHECK: helix.attention_partial {{.*}}config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 32, v_head_dim = 32, qkv_bias = true, out_bias = true, sinks = true>, head_split = 2 : i64, layer = 1 : i64
