// helix-insert-collectives on a hand-written Llama-like GQA model (8 query
// heads, 2 KV heads), planned by helix-apply-layout in a separate run so
// that the pass runs alone on planned IR. One RUN line per strategy.

// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" \
// RUN:   | helix-opt --helix-insert-collectives | FileCheck %s --check-prefix=HELIX
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=tpa=4,tpf=4 strategy=tp batch=4 context=8192" \
// RUN:   | helix-opt --helix-insert-collectives | FileCheck %s --check-prefix=TP
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=2 strategy=kvp batch=4 context=8192" \
// RUN:   | helix-opt --helix-insert-collectives | FileCheck %s --check-prefix=KVP
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=tpa=2,tpf=2,pp=2 strategy=tp-pp batch=3 context=8192" \
// RUN:   | helix-opt --helix-insert-collectives | FileCheck %s --check-prefix=PP
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=tpa=1,dp=4,tpf=4 strategy=ep batch=6 context=8192" \
// RUN:   | helix-opt --helix-insert-collectives | FileCheck %s --check-prefix=EP

// Helix kvp=2 x tpa=2 on 4 GPUs: two grids over the same 4 ranks, the batch
// fixed to the plan's, a vocabulary-parallel embedding.
// HELIX: shard.grid @helix_attn(shape = 1x1x2x2)
// HELIX: shard.grid @helix_ffn(shape = 1x1x1x4)
// HELIX-LABEL: func.func @decode_step(%{{.*}}: tensor<4xi64> {helix.name = "tokens"}, %{{.*}}: tensor<4xi64> {helix.name = "positions"}
// HELIX-SAME: -> tensor<4x1024xf32>
// HELIX: %[[TABLE:.*]] = helix.weight "model.embed_tokens.weight" [1024, 256] : tensor<1024x256xbf16, #helix.dist<@helix_attn, {{\[\[}}2, 3]]>>
// HELIX: %[[E:.*]] = helix.embed_rows %{{.*}}, %[[TABLE]] {{.*}}-> tensor<4x256xbf16, #helix.dist<@helix_attn, partial = [2, 3]>>
// HELIX: %[[H:.*]] = helix.collective all_reduce %[[E]] on @helix_attn grid_axes = [2, 3] : {{.*}} -> tensor<4x256xbf16>
// Each rank projects its TPA slice of heads (q heads and KV heads split over
// axis 3) for the whole batch, replicated over the KVP ranks.
// HELIX: helix.weight "model.layers.0.self_attn.q_proj.weight" [256, 256] view [8, 32, 256] : tensor<8x32x256xbf16, #helix.dist<@helix_attn, {{\[\[}}3]]>>
// HELIX: helix.weight "model.layers.0.self_attn.k_proj.weight" [64, 256] view [2, 32, 256] : tensor<2x32x256xbf16, #helix.dist<@helix_attn, {{\[\[}}3]]>>
// HELIX: %[[Q:.*]], %[[K:.*]], %[[V:.*]] = helix.qkv
// HELIX-SAME: -> (tensor<4x8x32xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3]]>>, tensor<4x2x32xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3]]>>, tensor<4x2x32xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3]]>>)
// Partial outputs with their LSE over each KV shard, one all-to-all over the
// query-head axis within the KVP group (axis 2), the exact combine.
// HELIX: %[[P:.*]] = helix.attention_partial %[[Q]], %[[K]], %[[V]] cache(%{{.*}}) {cache_rows = 4 : i64
// HELIX-SAME: -> tensor<2x4x8x33xf32, #helix.dist<@helix_attn, {{\[\[}}2], [], [3]]>>
// HELIX: %[[X:.*]] = helix.collective all_to_all %[[P]] on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0
// HELIX-SAME: -> tensor<2x4x8x33xf32, #helix.dist<@helix_attn, {{\[\[}}], [], [3, 2]]>>
// HELIX: %[[O:.*]] = helix.lse_combine %[[X]] : {{.*}} -> tensor<4x256xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3, 2]]>>
// Output projection TP = N (row-parallel over the heads each rank now
// holds), all-reduce over N.
// HELIX: %[[WO:.*]] = helix.weight "model.layers.0.self_attn.o_proj.weight" [256, 256] : tensor<256x256xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3, 2]]>>
// HELIX: %[[PO:.*]] = helix.matmul %[[O]], %[[WO]] {{.*}}-> tensor<4x256xbf16, #helix.dist<@helix_attn, partial = [2, 3]>>
// HELIX: %[[AO:.*]] = helix.collective all_reduce %[[PO]] on @helix_attn grid_axes = [2, 3]
// HELIX: %[[R:.*]] = helix.add %[[H]], %[[AO]] : tensor<4x256xbf16>
// Dense FFN TPF = 4: column-parallel gate/up, row-parallel down, all-reduce.
// HELIX: helix.weight "model.layers.0.mlp.gate_proj.weight" [512, 256] : tensor<512x256xbf16, #helix.dist<@helix_ffn, {{\[\[}}3]]>>
// HELIX: helix.weight "model.layers.0.mlp.down_proj.weight" [256, 512] : tensor<256x512xbf16, #helix.dist<@helix_ffn, {{\[\[}}], [3]]>>
// HELIX: %[[F:.*]] = helix.gated_mlp {{.*}}-> tensor<4x256xbf16, #helix.dist<@helix_ffn, partial = [3]>>
// HELIX: helix.collective all_reduce %[[F]] on @helix_ffn grid_axes = [3]
// HELIX: helix.collective all_to_all
// Vocabulary-parallel LM head, logits gathered.
// HELIX: %[[L:.*]] = helix.matmul {{.*}}-> tensor<4x1024xf32, #helix.dist<@helix_attn, {{\[\[}}], [2, 3]]>>
// HELIX: %[[LG:.*]] = helix.collective all_gather %[[L]] on @helix_attn grid_axes = [2, 3] gather_axis = 1 {{.*}} -> tensor<4x1024xf32>
// HELIX: return %[[LG]] : tensor<4x1024xf32>

// Plain TP over 4 GPUs with 2 KV heads: TP > K duplicates each KV head on 2
// ranks (the dimension of 2 heads split over 4 ranks); no exchange, the
// output projection's all-reduce only.
// TP: shard.grid @helix_attn(shape = 1x1x1x4)
// TP: helix.weight "model.layers.0.self_attn.k_proj.weight" [64, 256] view [2, 32, 256] : tensor<2x32x256xbf16, #helix.dist<@helix_attn, {{\[\[}}3]]>>
// TP: %[[P:.*]] = helix.attention_partial {{.*}}-> tensor<1x4x8x33xf32, #helix.dist<@helix_attn, {{\[\[}}], [], [3]]>>
// TP-NOT: all_to_all
// TP: helix.lse_combine %[[P]] : {{.*}} -> tensor<4x256xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3]]>>
// TP: helix.collective all_reduce %{{.*}} on @helix_attn grid_axes = [3]

// Medha-style kvp: the partials are all-gathered over KVP, the output
// projection and FFN run on the TPA group, replicated over KVP (the FFN grid
// has 2 replicas).
// KVP: shard.grid @helix_attn(shape = 1x1x2x2)
// KVP: shard.grid @helix_ffn(shape = 1x2x1x2)
// KVP: %[[P:.*]] = helix.attention_partial {{.*}}-> tensor<2x4x8x33xf32, #helix.dist<@helix_attn, {{\[\[}}2], [], [3]]>>
// KVP: %[[G:.*]] = helix.collective all_gather %[[P]] on @helix_attn grid_axes = [2] gather_axis = 0 {{.*}}-> tensor<2x4x8x33xf32, #helix.dist<@helix_attn, {{\[\[}}], [], [3]]>>
// KVP: helix.lse_combine %[[G]] : {{.*}} -> tensor<4x256xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3]]>>
// KVP: helix.collective all_reduce %{{.*}} on @helix_attn grid_axes = [3]
// KVP: helix.gated_mlp {{.*}}-> tensor<4x256xbf16, #helix.dist<@helix_ffn, partial = [3]>>

// TP x PP. 2 micro-batches of 2 requests (batch 3), each stage's values on
// their stage, the residual stream sent from stage 0 to stage 1, the cache
// rows of the micro-batch given by an extra argument.
// PP-LABEL: func.func @decode_step(%{{.*}}: tensor<2xi64> {helix.name = "tokens"}, %{{.*}}: tensor<2xi64> {helix.name = "positions"}
// PP-SAME: %[[ROW:[a-z0-9]+]]: index {helix.name = "micro_batch_row"}) -> tensor<2x1024xf32, #helix.dist<@helix_attn, stage = 1>>
// PP-SAME: helix.micro_batches = 2 : i64
// PP: helix.attention_partial {{.*}} row_base(%[[ROW]]) {cache_rows = 4 : i64
// PP: %[[S:.*]] = helix.collective send_recv %{{.*}} on @helix_attn grid_axes = [0] source = [0] destination = [1] : tensor<2x256xbf16, #helix.dist<@helix_attn>> -> tensor<2x256xbf16, #helix.dist<@helix_attn, stage = 1>>
// PP: helix.norm_rows %[[S]], {{.*}} : tensor<2x256xbf16, #helix.dist<@helix_attn, stage = 1>>
// PP-NOT: send_recv
// PP: return

// DP attention + TP FFN (ep strategy on a dense model): batch 6 padded to
// 8 rows for 4 replicas, the stream split over them, tokens gathered for the
// FFN and reduce-scattered back.
// EP-LABEL: func.func @decode_step(%{{.*}}: tensor<8xi64>
// EP: helix.collective all_slice %{{.*}} on @helix_attn grid_axes = [1] slice_axis = 0 : tensor<8x256xbf16> -> tensor<8x256xbf16, #helix.dist<@helix_attn, {{\[\[}}1]]>>
// EP: helix.attention_partial {{.*}}-> tensor<1x8x8x33xf32, #helix.dist<@helix_attn, {{\[\[}}], [1]]>>
// EP: %[[G:.*]] = helix.collective all_gather %{{.*}} on @helix_attn grid_axes = [1] gather_axis = 0 {{.*}}-> tensor<8x256xbf16>
// EP: %[[F:.*]] = helix.gated_mlp %[[G]], {{.*}}-> tensor<8x256xbf16, #helix.dist<@helix_attn, partial = [1]>>
// EP: helix.collective reduce_scatter %[[F]] on @helix_attn grid_axes = [1] scatter_axis = 0 {{.*}}-> tensor<8x256xbf16, #helix.dist<@helix_attn, {{\[\[}}1]]>>
