// RUN: helix-opt %s | FileCheck %s
// RUN: helix-opt %s | helix-opt | FileCheck %s
// RUN: helix-opt %s --mlir-print-op-generic | helix-opt | FileCheck %s

// Every sharding op, attribute and type prints and parses back to the same
// text: a global-view GQA layer (tensors carry #helix.dist encodings), an MLA
// + MoE piece, the collectives of every kind, and a rank program with local
// shapes, a KV shard and HOP-B's async start/wait.

shard.grid @helix_attn(shape = 2x1x2x2)
shard.grid @helix_ffn(shape = 2x1x2x2)

// CHECK-LABEL: func.func @global_gqa
// CHECK: helix.weight "model.embed_tokens.weight" [512, 64] : tensor<512x64xbf16, #helix.dist<@helix_attn, {{\[\[}}2, 3]]>>
// CHECK: helix.embed_rows %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : (tensor<4xi64>, tensor<512x64xbf16, #helix.dist<@helix_attn, {{\[\[}}2, 3]]>>) -> tensor<4x64xbf16, #helix.dist<@helix_attn, partial = [2, 3]>>
// CHECK: helix.collective all_reduce %{{[a-z0-9_]+}} on @helix_attn grid_axes = [2, 3] : tensor<4x64xbf16, #helix.dist<@helix_attn, partial = [2, 3]>> -> tensor<4x64xbf16>
// CHECK: helix.norm_rows %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} {eps = 1.000000e-05 : f64} : tensor<4x64xbf16>, tensor<64xbf16>
// CHECK: helix.weight "model.layers.0.self_attn.q_proj.weight" [64, 64] view [4, 16, 64] : tensor<4x16x64xbf16, #helix.dist<@helix_attn, {{\[\[}}3]]>>
// CHECK: helix.qkv %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} weights(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) bias(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) qk_norm(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16, qkv_bias = true, qk_norm = true>
// CHECK: helix.kv_slots %{{[a-z0-9_]+}} {placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 64>} : tensor<4xi64> -> tensor<2x4xi64, #helix.dist<@helix_attn, {{\[\[}}2]]>>, tensor<2x4x2xi64, #helix.dist<@helix_attn, {{\[\[}}2]]>>
// CHECK: helix.attention_partial %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} cache(%{{[a-z0-9_]+}}) kv(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {cache_rows = 4 : i64
// CHECK-SAME: -> tensor<2x4x4x17xf32, #helix.dist<@helix_attn, {{\[\[}}2], [], [3]]>>
// CHECK: helix.collective all_to_all %{{[a-z0-9_]+}} on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0
// CHECK-SAME: -> tensor<2x4x4x17xf32, #helix.dist<@helix_attn, {{\[\[}}], [], [3, 2]]>>
// CHECK: helix.lse_combine %{{[a-z0-9_]+}} sinks(%{{[a-z0-9_]+}} : tensor<4xbf16, #helix.dist<@helix_attn, {{\[\[}}3, 2]]>>) : tensor<2x4x4x17xf32, #helix.dist<@helix_attn, {{\[\[}}], [], [3, 2]]>> -> tensor<4x64xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3, 2]]>>
// CHECK: helix.matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} bias(%{{[a-z0-9_]+}}) : (tensor<4x64xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3, 2]]>>, tensor<64x64xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3, 2]]>>, tensor<64xbf16>) -> tensor<4x64xbf16, #helix.dist<@helix_attn, partial = [2, 3]>>
// CHECK: helix.gated_mlp %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} bias(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) down_bias(%{{[a-z0-9_]+}}) {activation = "gelu"}
func.func @global_gqa(%tokens: tensor<4xi64>, %pos: tensor<4xi64>,
    %c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>)
    -> tensor<4x64xbf16, #helix.dist<@helix_ffn, partial = [2, 3]>> {
  %table = helix.weight "model.embed_tokens.weight" [512, 64] : tensor<512x64xbf16, #helix.dist<@helix_attn, [[2, 3]]>>
  %e = helix.embed_rows %tokens, %table : (tensor<4xi64>, tensor<512x64xbf16, #helix.dist<@helix_attn, [[2, 3]]>>) -> tensor<4x64xbf16, #helix.dist<@helix_attn, partial = [2, 3]>>
  %h = helix.collective all_reduce %e on @helix_attn grid_axes = [2, 3] : tensor<4x64xbf16, #helix.dist<@helix_attn, partial = [2, 3]>> -> tensor<4x64xbf16>
  %wn = helix.weight "model.layers.0.input_layernorm.weight" [64] : tensor<64xbf16>
  %n = helix.norm_rows %h, %wn {eps = 1.0e-05 : f64} : tensor<4x64xbf16>, tensor<64xbf16>
  %wq = helix.weight "model.layers.0.self_attn.q_proj.weight" [64, 64] view [4, 16, 64] : tensor<4x16x64xbf16, #helix.dist<@helix_attn, [[3]]>>
  %wk = helix.weight "model.layers.0.self_attn.k_proj.weight" [32, 64] view [2, 16, 64] : tensor<2x16x64xbf16, #helix.dist<@helix_attn, [[3]]>>
  %wv = helix.weight "model.layers.0.self_attn.v_proj.weight" [32, 64] view [2, 16, 64] : tensor<2x16x64xbf16, #helix.dist<@helix_attn, [[3]]>>
  %bq = helix.weight "model.layers.0.self_attn.q_proj.bias" [64] view [4, 16] : tensor<4x16xbf16, #helix.dist<@helix_attn, [[3]]>>
  %bk = helix.weight "model.layers.0.self_attn.k_proj.bias" [32] view [2, 16] : tensor<2x16xbf16, #helix.dist<@helix_attn, [[3]]>>
  %bv = helix.weight "model.layers.0.self_attn.v_proj.bias" [32] view [2, 16] : tensor<2x16xbf16, #helix.dist<@helix_attn, [[3]]>>
  %qn = helix.weight "model.layers.0.self_attn.q_norm.weight" [16] : tensor<16xbf16>
  %kn = helix.weight "model.layers.0.self_attn.k_norm.weight" [16] : tensor<16xbf16>
  %q, %k, %v = helix.qkv %n, %pos weights(%wq, %wk, %wv) bias(%bq, %bk, %bv) qk_norm(%qn, %kn) {config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16, qkv_bias = true, qk_norm = true>, layer = 0 : i64, rope = #helix.rope<>}
    : (tensor<4x64xbf16>, tensor<4xi64>, tensor<4x16x64xbf16, #helix.dist<@helix_attn, [[3]]>>, tensor<2x16x64xbf16, #helix.dist<@helix_attn, [[3]]>>, tensor<2x16x64xbf16, #helix.dist<@helix_attn, [[3]]>>, tensor<4x16xbf16, #helix.dist<@helix_attn, [[3]]>>, tensor<2x16xbf16, #helix.dist<@helix_attn, [[3]]>>, tensor<2x16xbf16, #helix.dist<@helix_attn, [[3]]>>, tensor<16xbf16>, tensor<16xbf16>)
    -> (tensor<4x4x16xbf16, #helix.dist<@helix_attn, [[], [3]]>>, tensor<4x2x16xbf16, #helix.dist<@helix_attn, [[], [3]]>>, tensor<4x2x16xbf16, #helix.dist<@helix_attn, [[], [3]]>>)
  %slots, %spans = helix.kv_slots %pos {placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 64>} : tensor<4xi64> -> tensor<2x4xi64, #helix.dist<@helix_attn, [[2]]>>, tensor<2x4x2xi64, #helix.dist<@helix_attn, [[2]]>>
  %p = helix.attention_partial %q, %k, %v cache(%c) kv(%slots, %spans) {cache_rows = 4 : i64, config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16, qkv_bias = true, qk_norm = true>, layer = 0 : i64, placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 64>}
    : (tensor<4x4x16xbf16, #helix.dist<@helix_attn, [[], [3]]>>, tensor<4x2x16xbf16, #helix.dist<@helix_attn, [[], [3]]>>, tensor<4x2x16xbf16, #helix.dist<@helix_attn, [[], [3]]>>, !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>, tensor<2x4xi64, #helix.dist<@helix_attn, [[2]]>>, tensor<2x4x2xi64, #helix.dist<@helix_attn, [[2]]>>)
    -> tensor<2x4x4x17xf32, #helix.dist<@helix_attn, [[2], [], [3]]>>
  %x = helix.collective all_to_all %p on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0 : tensor<2x4x4x17xf32, #helix.dist<@helix_attn, [[2], [], [3]]>> -> tensor<2x4x4x17xf32, #helix.dist<@helix_attn, [[], [], [3, 2]]>>
  %sinks = helix.weight "model.layers.0.self_attn.sinks" [4] : tensor<4xbf16, #helix.dist<@helix_attn, [[3, 2]]>>
  %o = helix.lse_combine %x sinks(%sinks : tensor<4xbf16, #helix.dist<@helix_attn, [[3, 2]]>>) : tensor<2x4x4x17xf32, #helix.dist<@helix_attn, [[], [], [3, 2]]>> -> tensor<4x64xbf16, #helix.dist<@helix_attn, [[], [3, 2]]>>
  %wo = helix.weight "model.layers.0.self_attn.o_proj.weight" [64, 64] : tensor<64x64xbf16, #helix.dist<@helix_attn, [[], [3, 2]]>>
  %bo = helix.weight "model.layers.0.self_attn.o_proj.bias" [64] : tensor<64xbf16>
  %po = helix.matmul %o, %wo bias(%bo) : (tensor<4x64xbf16, #helix.dist<@helix_attn, [[], [3, 2]]>>, tensor<64x64xbf16, #helix.dist<@helix_attn, [[], [3, 2]]>>, tensor<64xbf16>) -> tensor<4x64xbf16, #helix.dist<@helix_attn, partial = [2, 3]>>
  %r = helix.collective all_reduce %po on @helix_attn grid_axes = [2, 3] : tensor<4x64xbf16, #helix.dist<@helix_attn, partial = [2, 3]>> -> tensor<4x64xbf16>
  %wg = helix.weight "model.layers.0.mlp.gate_proj.weight" [128, 64] : tensor<128x64xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>
  %wu = helix.weight "model.layers.0.mlp.up_proj.weight" [128, 64] : tensor<128x64xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>
  %wd = helix.weight "model.layers.0.mlp.down_proj.weight" [64, 128] : tensor<64x128xbf16, #helix.dist<@helix_ffn, [[], [2, 3]]>>
  %bg = helix.weight "model.layers.0.mlp.gate_proj.bias" [128] : tensor<128xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>
  %bu = helix.weight "model.layers.0.mlp.up_proj.bias" [128] : tensor<128xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>
  %bd = helix.weight "model.layers.0.mlp.down_proj.bias" [64] : tensor<64xbf16>
  %f = helix.gated_mlp %r, %wg, %wu, %wd bias(%bg, %bu) down_bias(%bd) {activation = "gelu"} : (tensor<4x64xbf16>, tensor<128x64xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>, tensor<128x64xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>, tensor<64x128xbf16, #helix.dist<@helix_ffn, [[], [2, 3]]>>, tensor<128xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>, tensor<128xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>, tensor<64xbf16>) -> tensor<4x64xbf16, #helix.dist<@helix_ffn, partial = [2, 3]>>
  return %f : tensor<4x64xbf16, #helix.dist<@helix_ffn, partial = [2, 3]>>
}

// CHECK-LABEL: func.func @global_mla_moe
// CHECK: helix.mla_qkv %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} q_lora(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) weights(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}})
// CHECK-SAME: -> (tensor<4x4x40xbf16>, tensor<4x1x40xbf16>)
// CHECK: helix.attention_partial %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} cache(%{{[a-z0-9_]+}}) w_uv(%{{[a-z0-9_]+}}) {cache_rows = 4 : i64, {{.*}}head_split = 2 : i64
// CHECK-SAME: -> tensor<2x4x8x9xf32, #helix.dist<@helix_attn, {{\[\[}}2], [], [3]]>>
// CHECK: helix.collective all_gather %{{[a-z0-9_]+}} on @helix_attn grid_axes = [2] gather_axis = 0
// CHECK: helix.moe_router %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} bias(%{{[a-z0-9_]+}}) {config = #helix.moe<
// CHECK-SAME: -> (tensor<4x2xf32>, tensor<4x2xi32>)
// CHECK: helix.moe_experts %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} experts(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) shared(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}})
// CHECK-SAME: -> tensor<2x4x64xbf16, #helix.dist<@helix_ffn, {{\[\[}}2]], partial = [3]>>
// CHECK: helix.collective all_reduce %{{[a-z0-9_]+}} on @helix_ffn grid_axes = [3]
// CHECK: helix.collective all_gather %{{[a-z0-9_]+}} on @helix_ffn grid_axes = [2] gather_axis = 0
// CHECK: helix.group_sum %{{[a-z0-9_]+}} : tensor<2x4x64xbf16> -> tensor<4x64xbf16>
// CHECK: helix.moe_experts %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} experts(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) expert_bias(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) {config = {{.*}}, fused_gate_up}
// CHECK: helix.collective reduce_scatter %{{[a-z0-9_]+}} on @helix_ffn grid_axes = [2, 3] scatter_axis = 0
// CHECK: helix.collective all_slice %{{[a-z0-9_]+}} on @helix_ffn grid_axes = [1] slice_axis = 1
// CHECK: helix.collective broadcast %{{[a-z0-9_]+}} on @helix_ffn grid_axes = [2] root = [0]
// CHECK: helix.collective send_recv %{{[a-z0-9_]+}} on @helix_ffn grid_axes = [0] source = [0] destination = [1]
// CHECK-SAME: -> tensor<4x64xbf16, #helix.dist<@helix_ffn, stage = 1>>
func.func @global_mla_moe(%n: tensor<4x64xbf16>, %pos: tensor<4xi64>,
    %c: !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>)
    -> tensor<4x64xbf16, #helix.dist<@helix_ffn, stage = 1>> {
  %wqa = helix.weight "model.layers.0.self_attn.q_a_proj.weight" [48, 64] : tensor<48x64xbf16>
  %qn = helix.weight "model.layers.0.self_attn.q_a_layernorm.weight" [48] : tensor<48xbf16>
  %wqb = helix.weight "model.layers.0.self_attn.q_b_proj.weight" [96, 48] view [4, 24, 48] : tensor<4x24x48xbf16>
  %wkva = helix.weight "model.layers.0.self_attn.kv_a_proj_with_mqa.weight" [40, 64] : tensor<40x64xbf16>
  %kvn = helix.weight "model.layers.0.self_attn.kv_a_layernorm.weight" [32] : tensor<32xbf16>
  %wkvb = helix.weight "model.layers.0.self_attn.kv_b_proj.weight" [128, 32] view [4, 32, 32] : tensor<4x32x32xbf16>
  %q, %lat = helix.mla_qkv %n, %pos q_lora(%wqa, %qn) weights(%wqb, %wkva, %kvn, %wkvb) {config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, q_lora_rank = 48, kv_lora_rank = 32, rope_dim = 8>, layer = 0 : i64, rope = #helix.rope<>}
    : (tensor<4x64xbf16>, tensor<4xi64>, tensor<48x64xbf16>, tensor<48xbf16>, tensor<4x24x48xbf16>, tensor<40x64xbf16>, tensor<32xbf16>, tensor<4x32x32xbf16>) -> (tensor<4x4x40xbf16>, tensor<4x1x40xbf16>)
  %p = helix.attention_partial %q, %lat cache(%c) w_uv(%wkvb) {cache_rows = 4 : i64, config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, q_lora_rank = 48, kv_lora_rank = 32, rope_dim = 8>, head_split = 2 : i64, layer = 0 : i64}
    : (tensor<4x4x40xbf16>, tensor<4x1x40xbf16>, !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>, tensor<4x32x32xbf16>) -> tensor<2x4x8x9xf32, #helix.dist<@helix_attn, [[2], [], [3]]>>
  %g = helix.collective all_gather %p on @helix_attn grid_axes = [2] gather_axis = 0 : tensor<2x4x8x9xf32, #helix.dist<@helix_attn, [[2], [], [3]]>> -> tensor<2x4x8x9xf32, #helix.dist<@helix_attn, [[], [], [3]]>>
  %wr = helix.weight "model.layers.0.mlp.gate.weight" [8, 64] : tensor<8x64xbf16>
  %br = helix.weight "model.layers.0.mlp.gate.e_score_correction_bias" [8] : tensor<8xf32>
  %w, %ids = helix.moe_router %n, %wr bias(%br) {config = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 32, shared_experts = 1, shared_intermediate = 32>} : (tensor<4x64xbf16>, tensor<8x64xbf16>, tensor<8xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
  %eg = helix.weight "model.layers.0.mlp.experts.{expert}.gate_proj.weight" [32, 64] view [8, 32, 64] : tensor<8x32x64xbf16, #helix.dist<@helix_ffn, [[2], [3]]>>
  %eu = helix.weight "model.layers.0.mlp.experts.{expert}.up_proj.weight" [32, 64] view [8, 32, 64] : tensor<8x32x64xbf16, #helix.dist<@helix_ffn, [[2], [3]]>>
  %ed = helix.weight "model.layers.0.mlp.experts.{expert}.down_proj.weight" [64, 32] view [8, 64, 32] : tensor<8x64x32xbf16, #helix.dist<@helix_ffn, [[2], [], [3]]>>
  %sg = helix.weight "model.layers.0.mlp.shared_experts.gate_proj.weight" [32, 64] : tensor<32x64xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>
  %su = helix.weight "model.layers.0.mlp.shared_experts.up_proj.weight" [32, 64] : tensor<32x64xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>
  %sd = helix.weight "model.layers.0.mlp.shared_experts.down_proj.weight" [64, 32] : tensor<64x32xbf16, #helix.dist<@helix_ffn, [[], [2, 3]]>>
  %m = helix.moe_experts %n, %w, %ids experts(%eg, %eu, %ed) shared(%sg, %su, %sd) {config = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 32, shared_experts = 1, shared_intermediate = 32>}
    : (tensor<4x64xbf16>, tensor<4x2xf32>, tensor<4x2xi32>, tensor<8x32x64xbf16, #helix.dist<@helix_ffn, [[2], [3]]>>, tensor<8x32x64xbf16, #helix.dist<@helix_ffn, [[2], [3]]>>, tensor<8x64x32xbf16, #helix.dist<@helix_ffn, [[2], [], [3]]>>, tensor<32x64xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>, tensor<32x64xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>, tensor<64x32xbf16, #helix.dist<@helix_ffn, [[], [2, 3]]>>)
    -> tensor<2x4x64xbf16, #helix.dist<@helix_ffn, [[2]], partial = [3]>>
  %m1 = helix.collective all_reduce %m on @helix_ffn grid_axes = [3] : tensor<2x4x64xbf16, #helix.dist<@helix_ffn, [[2]], partial = [3]>> -> tensor<2x4x64xbf16, #helix.dist<@helix_ffn, [[2]]>>
  %m2 = helix.collective all_gather %m1 on @helix_ffn grid_axes = [2] gather_axis = 0 : tensor<2x4x64xbf16, #helix.dist<@helix_ffn, [[2]]>> -> tensor<2x4x64xbf16>
  %y = helix.group_sum %m2 : tensor<2x4x64xbf16> -> tensor<4x64xbf16>
  %fgu = helix.weight "model.layers.0.mlp.experts.gate_up_proj" [8, 64, 64] : tensor<8x64x64xbf16, #helix.dist<@helix_ffn, [[2], [], [3]]>>
  %fd = helix.weight "model.layers.0.mlp.experts.down_proj" [8, 32, 64] : tensor<8x32x64xbf16, #helix.dist<@helix_ffn, [[2], [3]]>>
  %fbgu = helix.weight "model.layers.0.mlp.experts.gate_up_proj_bias" [8, 64] : tensor<8x64xbf16, #helix.dist<@helix_ffn, [[2], [3]]>>
  %fbd = helix.weight "model.layers.0.mlp.experts.down_proj_bias" [8, 64] : tensor<8x64xbf16, #helix.dist<@helix_ffn, [[2]]>>
  %fm = helix.moe_experts %y, %w, %ids experts(%fgu, %fd) expert_bias(%fbgu, %fbd) {config = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 32, expert_bias = true>, fused_gate_up}
    : (tensor<4x64xbf16>, tensor<4x2xf32>, tensor<4x2xi32>, tensor<8x64x64xbf16, #helix.dist<@helix_ffn, [[2], [], [3]]>>, tensor<8x32x64xbf16, #helix.dist<@helix_ffn, [[2], [3]]>>, tensor<8x64xbf16, #helix.dist<@helix_ffn, [[2], [3]]>>, tensor<8x64xbf16, #helix.dist<@helix_ffn, [[2]]>>)
    -> tensor<4x64xbf16, #helix.dist<@helix_ffn, partial = [2, 3]>>
  %rs = helix.collective reduce_scatter %fm on @helix_ffn grid_axes = [2, 3] scatter_axis = 0 : tensor<4x64xbf16, #helix.dist<@helix_ffn, partial = [2, 3]>> -> tensor<4x64xbf16, #helix.dist<@helix_ffn, [[2, 3]]>>
  %ag = helix.collective all_gather %rs on @helix_ffn grid_axes = [2, 3] gather_axis = 0 : tensor<4x64xbf16, #helix.dist<@helix_ffn, [[2, 3]]>> -> tensor<4x64xbf16>
  %sl = helix.collective all_slice %ag on @helix_ffn grid_axes = [1] slice_axis = 1 : tensor<4x64xbf16> -> tensor<4x64xbf16, #helix.dist<@helix_ffn, [[], [1]]>>
  %bc = helix.collective broadcast %ag on @helix_ffn grid_axes = [2] root = [0] : tensor<4x64xbf16> -> tensor<4x64xbf16>
  %s0 = helix.collective all_reduce %bc on @helix_ffn grid_axes = [] : tensor<4x64xbf16> -> tensor<4x64xbf16, #helix.dist<@helix_ffn>>
  %s1 = helix.collective send_recv %s0 on @helix_ffn grid_axes = [0] source = [0] destination = [1] : tensor<4x64xbf16, #helix.dist<@helix_ffn>> -> tensor<4x64xbf16, #helix.dist<@helix_ffn, stage = 1>>
  return %s1 : tensor<4x64xbf16, #helix.dist<@helix_ffn, stage = 1>>
}

// An SPMD stage program: local static shapes, the KV shard, offsets from
// the rank's coordinates, a bias one rank adds, HOP-B's async pair.
// CHECK-LABEL: func.func @rank
// CHECK-SAME: !helix.kv_shard<rows = 4, tokens = 32, heads = 1, key_dim = 16, value_dim = 16, element = bf16>
// CHECK: %[[I:.*]]:4 = shard.process_multi_index on @helix_attn axes = [0, 1, 2, 3] : index, index, index, index
// CHECK: helix.weight "model.layers.0.self_attn.q_proj.weight" [64, 64] view [4, 16, 64] offsets [%{{[a-z0-9_]+}}, 0, 0] : tensor<2x16x64xbf16>
// CHECK: helix.weight "model.layers.0.self_attn.o_proj.weight" [64, 64] offsets [0, %{{[a-z0-9_]+}}] : tensor<64x32xbf16>
// CHECK: %[[B:.*]] = helix.keep_if %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} : tensor<64xbf16>
// CHECK: helix.matmul %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} bias(%[[B]])
// CHECK: helix.kv_slots %{{[a-z0-9_]+}} rank_offset(%[[I]]#2) {placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 32>} : tensor<4xi64> -> tensor<1x4xi64>, tensor<1x4x2xi64>
// CHECK: %[[T:.*]] = helix.async_start {
// CHECK-NEXT: %[[X:.*]] = shard.all_to_all %{{[a-z0-9_]+}} on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0 : tensor<1x2x2x17xf32> -> tensor<2x2x1x17xf32>
// CHECK-NEXT: helix.async_yield %[[X]] : tensor<2x2x1x17xf32>
// CHECK-NEXT: } : !helix.async<tensor<2x2x1x17xf32>>
// CHECK: helix.async_wait %[[T]] : !helix.async<tensor<2x2x1x17xf32>> -> tensor<2x2x1x17xf32>
func.func @rank(%n: tensor<4x64xbf16>, %pos: tensor<4xi64>,
    %c: !helix.kv_shard<rows = 4, tokens = 32, heads = 1, key_dim = 16, value_dim = 16, element = bf16>) -> tensor<2x2x1x17xf32>
    attributes {helix.stage = 0 : i64} {
  %i:4 = shard.process_multi_index on @helix_attn axes = [0, 1, 2, 3] : index, index, index, index
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %head = arith.muli %i#3, %c2 : index
  %col = arith.muli %i#2, %c32 : index
  %first = arith.cmpi eq, %col, %c0 : index
  %wq = helix.weight "model.layers.0.self_attn.q_proj.weight" [64, 64] view [4, 16, 64] offsets [%head, 0, 0] : tensor<2x16x64xbf16>
  %wk = helix.weight "model.layers.0.self_attn.k_proj.weight" [32, 64] view [2, 16, 64] offsets [%i#3, 0, 0] : tensor<1x16x64xbf16>
  %wv = helix.weight "model.layers.0.self_attn.v_proj.weight" [32, 64] view [2, 16, 64] offsets [%i#3, 0, 0] : tensor<1x16x64xbf16>
  %wo = helix.weight "model.layers.0.self_attn.o_proj.weight" [64, 64] offsets [0, %col] : tensor<64x32xbf16>
  %bo = helix.weight "model.layers.0.self_attn.o_proj.bias" [64] : tensor<64xbf16>
  %b = helix.keep_if %first, %bo : tensor<64xbf16>
  %o = tensor.empty() : tensor<4x32xbf16>
  %y = helix.matmul %o, %wo bias(%b) : (tensor<4x32xbf16>, tensor<64x32xbf16>, tensor<64xbf16>) -> tensor<4x64xbf16>
  %q, %k, %v = helix.qkv %n, %pos weights(%wq, %wk, %wv) {config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, rope = #helix.rope<>}
    : (tensor<4x64xbf16>, tensor<4xi64>, tensor<2x16x64xbf16>, tensor<1x16x64xbf16>, tensor<1x16x64xbf16>) -> (tensor<4x2x16xbf16>, tensor<4x1x16xbf16>, tensor<4x1x16xbf16>)
  %slots, %spans = helix.kv_slots %pos rank_offset(%i#2) {placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 32>} : tensor<4xi64> -> tensor<1x4xi64>, tensor<1x4x2xi64>
  %q0 = tensor.extract_slice %q[0, 0, 0] [2, 2, 16] [1, 1, 1] : tensor<4x2x16xbf16> to tensor<2x2x16xbf16>
  %k0 = tensor.extract_slice %k[0, 0, 0] [2, 1, 16] [1, 1, 1] : tensor<4x1x16xbf16> to tensor<2x1x16xbf16>
  %v0 = tensor.extract_slice %v[0, 0, 0] [2, 1, 16] [1, 1, 1] : tensor<4x1x16xbf16> to tensor<2x1x16xbf16>
  %s0 = tensor.extract_slice %slots[0, 0] [1, 2] [1, 1] : tensor<1x4xi64> to tensor<1x2xi64>
  %p0 = tensor.extract_slice %spans[0, 0, 0] [1, 2, 2] [1, 1, 1] : tensor<1x4x2xi64> to tensor<1x2x2xi64>
  %part = helix.attention_partial %q0, %k0, %v0 cache(%c) kv(%s0, %p0) {cache_rows = 4 : i64, config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 32>}
    : (tensor<2x2x16xbf16>, tensor<2x1x16xbf16>, tensor<2x1x16xbf16>, !helix.kv_shard<rows = 4, tokens = 32, heads = 1, key_dim = 16, value_dim = 16, element = bf16>, tensor<1x2xi64>, tensor<1x2x2xi64>) -> tensor<1x2x2x17xf32>
  %t = helix.async_start {
    %x = shard.all_to_all %part on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0 : tensor<1x2x2x17xf32> -> tensor<2x2x1x17xf32>
    helix.async_yield %x : tensor<2x2x1x17xf32>
  } : !helix.async<tensor<2x2x1x17xf32>>
  %r = helix.async_wait %t : !helix.async<tensor<2x2x1x17xf32>> -> tensor<2x2x1x17xf32>
  return %r : tensor<2x2x1x17xf32>
}
