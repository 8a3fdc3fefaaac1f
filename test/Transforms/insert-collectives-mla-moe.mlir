// helix-insert-collectives on a hand-written DeepSeek-V3-like model: MLA,
// a dense layer, an MoE layer with grouped sigmoid routing and a shared
// expert.

// RUN: helix-opt %S/Inputs/mla-moe.mlir --helix-apply-layout="layout=kvp=4,tpa=1,tpf=2,ep=2 batch=4 context=8192" \
// RUN:   | helix-opt --helix-insert-collectives | FileCheck %s --check-prefix=HELIX
// RUN: helix-opt %S/Inputs/mla-moe.mlir --helix-apply-layout="layout=tpa=1,dp=4,tpf=1,ep=4 strategy=ep batch=4 context=8192" \
// RUN:   | helix-opt --helix-insert-collectives | FileCheck %s --check-prefix=EP
// RUN: helix-opt %S/Inputs/mla-moe.mlir --helix-apply-layout="layout=tpa=4,tpf=4 strategy=tp batch=4 context=8192" \
// RUN:   | helix-opt --helix-insert-collectives | FileCheck %s --check-prefix=TP

// MLA has one latent KV head: Helix runs KVP = 4, TPA = 1. Every rank
// projects all heads and the latent; kv_b_proj feeds both W_UK (in the
// projection) and W_UV (in the attention, before the exchange).
// HELIX: shard.grid @helix_attn(shape = 1x1x4x1)
// HELIX: shard.grid @helix_ffn(shape = 1x1x2x2)
// HELIX: helix.weight "model.layers.1.self_attn.q_a_proj.weight" [64, 128] : tensor<64x128xbf16>
// HELIX: %[[WKVB:.*]] = helix.weight "model.layers.1.self_attn.kv_b_proj.weight" [128, 32] view [4, 32, 32] : tensor<4x32x32xbf16>
// HELIX: %[[Q:.*]], %[[LAT:.*]] = helix.mla_qkv {{.*}} q_lora({{.*}}) weights({{.*}}, %[[WKVB]])
// HELIX-SAME: -> (tensor<4x4x40xbf16>, tensor<4x1x40xbf16>)
// HELIX: %[[P:.*]] = helix.attention_partial %[[Q]], %[[LAT]] cache(%{{.*}}) w_uv(%[[WKVB]])
// HELIX-SAME: -> tensor<4x4x4x17xf32, #helix.dist<@helix_attn, {{\[\[}}2]]>>
// HELIX: helix.collective all_to_all %[[P]] on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0
// HELIX-SAME: -> tensor<4x4x4x17xf32, #helix.dist<@helix_attn, {{\[\[}}], [], [2]]>>
// HELIX: helix.collective all_reduce %{{.*}} on @helix_attn grid_axes = [2]
// The MoE on the TPF x EP = 2 x 2 grid: replicated router (with DeepSeek-V3's
// score correction), experts stacked over EP and TP-sliced over TPF, the
// shared expert's intermediate over all 4 ranks; intra-expert all-reduce,
// inter-expert all-gather, local reduction.
// HELIX: helix.weight "model.layers.1.mlp.gate.e_score_correction_bias" [8] : tensor<8xbf16>
// HELIX: %[[W:.*]], %[[IDS:.*]] = helix.moe_router {{.*}} -> (tensor<4x2xf32>, tensor<4x2xi32>)
// HELIX: helix.weight "model.layers.1.mlp.experts.{expert}.gate_proj.weight" [64, 128] view [8, 64, 128] : tensor<8x64x128xbf16, #helix.dist<@helix_ffn, {{\[\[}}2], [3]]>>
// HELIX: helix.weight "model.layers.1.mlp.experts.{expert}.down_proj.weight" [128, 64] view [8, 128, 64] : tensor<8x128x64xbf16, #helix.dist<@helix_ffn, {{\[\[}}2], [], [3]]>>
// HELIX: helix.weight "model.layers.1.mlp.shared_experts.gate_proj.weight" [64, 128] : tensor<64x128xbf16, #helix.dist<@helix_ffn, {{\[\[}}2, 3]]>>
// HELIX: %[[M:.*]] = helix.moe_experts %{{.*}}, %[[W]], %[[IDS]] experts({{.*}}) shared({{.*}})
// HELIX-SAME: -> tensor<2x4x128xbf16, #helix.dist<@helix_ffn, {{\[\[}}2]], partial = [3]>>
// HELIX: %[[AR:.*]] = helix.collective all_reduce %[[M]] on @helix_ffn grid_axes = [3]
// HELIX: %[[AG:.*]] = helix.collective all_gather %[[AR]] on @helix_ffn grid_axes = [2] gather_axis = 0 {{.*}} -> tensor<2x4x128xbf16>
// HELIX: %[[S:.*]] = helix.group_sum %[[AG]] : tensor<2x4x128xbf16> -> tensor<4x128xbf16>
// HELIX: helix.add %{{.*}}, %[[S]] : tensor<4x128xbf16>

// DP attention + EP over all GPUs: each replica attends for its requests,
// tokens are all-gathered for the MoE and the partial sums reduce-scattered
// back to the replicas.
// EP: shard.grid @helix_attn(shape = 1x4x1x1)
// EP: shard.grid @helix_ffn(shape = 1x1x4x1)
// EP: helix.attention_partial {{.*}} -> tensor<1x4x4x17xf32, #helix.dist<@helix_attn, {{\[\[}}], [1]]>>
// EP: helix.collective reduce_scatter
// EP: %[[G:.*]] = helix.collective all_gather %{{.*}} on @helix_attn grid_axes = [1] gather_axis = 0
// EP: helix.moe_router %[[G]],
// EP: %[[M:.*]] = helix.moe_experts %[[G]], {{.*}} -> tensor<4x128xbf16, #helix.dist<@helix_attn, partial = [1]>>
// EP: helix.collective reduce_scatter %[[M]] on @helix_attn grid_axes = [1] scatter_axis = 0 {{.*}} -> tensor<4x128xbf16, #helix.dist<@helix_attn, {{\[\[}}1]]>>

// Plain TP. The query heads split over 4 ranks, the latent duplicated on
// each; experts TP x EP = 4 x 1, so no expert groups to gather.
// TP: helix.weight "model.layers.1.self_attn.kv_b_proj.weight" [128, 32] view [4, 32, 32] : tensor<4x32x32xbf16, #helix.dist<@helix_attn, {{\[\[}}3]]>>
// TP: helix.mla_qkv {{.*}} -> (tensor<4x4x40xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3]]>>, tensor<4x1x40xbf16>)
// TP: %[[M:.*]] = helix.moe_experts {{.*}} -> tensor<4x128xbf16, #helix.dist<@helix_ffn, partial = [3]>>
// TP: helix.collective all_reduce %[[M]] on @helix_ffn grid_axes = [3]
// TP-NOT: group_sum
