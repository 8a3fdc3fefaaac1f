// RUN: helix-opt %s | FileCheck %s
// RUN: helix-opt %s | helix-opt | FileCheck %s
// RUN: helix-opt %s --mlir-print-op-generic | helix-opt | FileCheck %s

// The long-context layers' ops, attributes and types print and parse back
// to the same text: Gated DeltaNet and KDA (helix.linear_attention), Mamba-2
// (helix.mamba), DeepSeek Sparse Attention (helix.dsa_indexer and
// helix.sparse_attention), a gated MLA output, a latent relu2 MoE.

// CHECK-LABEL: func.func @gated_deltanet
// CHECK-SAME: !helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 256, conv_kernel = 4, element = f32>
// CHECK: helix.linear_attention %{{.*}} state(%{{.*}} : !helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 256, conv_kernel = 4, element = f32>)
// CHECK-SAME: config = #helix.linear_attn<variant = gated_deltanet, key_heads = 2, value_heads = 4, key_head_dim = 32, value_head_dim = 32>
// CHECK-SAME: layout = #helix.layout<gpus = 4, kvp = 2, tpa = 2, tpf = 4>
// CHECK-SAME: : tensor<?x128xbf16> -> tensor<?x128xbf16>
func.func @gated_deltanet(%x: tensor<?x128xbf16>,
    %s: !helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 256, conv_kernel = 4, element = f32>)
    -> tensor<?x128xbf16> {
  %o = helix.linear_attention %x state(%s : !helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 256, conv_kernel = 4, element = f32>)
      {config = #helix.linear_attn<variant = gated_deltanet, key_heads = 2, value_heads = 4, key_head_dim = 32, value_head_dim = 32, conv_kernel = 4>,
       layer = 0 : i64, prefix = "model.layers.0.linear_attn",
       layout = #helix.layout<gpus = 4, kvp = 2, tpa = 2, tpf = 4>}
      : tensor<?x128xbf16> -> tensor<?x128xbf16>
  return %o : tensor<?x128xbf16>
}

// CHECK-LABEL: func.func @kda
// CHECK: config = #helix.linear_attn<variant = kda, key_heads = 4, value_heads = 4, key_head_dim = 32, value_head_dim = 32, full_rank_gate = true, gate_lower_bound = -5.000000e+00>
func.func @kda(%x: tensor<?x128xbf16>,
    %s: !helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 384, conv_kernel = 4, element = f32>)
    -> tensor<?x128xbf16> {
  %o = helix.linear_attention %x state(%s : !helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 384, conv_kernel = 4, element = f32>)
      {config = #helix.linear_attn<variant = kda, key_heads = 4, value_heads = 4, key_head_dim = 32, value_head_dim = 32, full_rank_gate = true, gate_lower_bound = -5.0>,
       layer = 1 : i64, prefix = "model.layers.1.self_attn"}
      : tensor<?x128xbf16> -> tensor<?x128xbf16>
  return %o : tensor<?x128xbf16>
}

// CHECK-LABEL: func.func @mamba2
// CHECK: helix.mamba %{{.*}} state(%{{.*}} : !helix.recurrent_state<heads = 8, rows = 32, cols = 16, conv_channels = 320, conv_kernel = 4, element = f32>)
// CHECK-SAME: config = #helix.mamba<heads = 8, head_dim = 32, state_size = 16, groups = 2, conv_bias = true>
// CHECK-SAME: : tensor<?x128xbf16> -> tensor<?x256xbf16>
func.func @mamba2(%x: tensor<?x128xbf16>,
    %s: !helix.recurrent_state<heads = 8, rows = 32, cols = 16, conv_channels = 320, conv_kernel = 4, element = f32>)
    -> tensor<?x256xbf16> {
  %o = helix.mamba %x state(%s : !helix.recurrent_state<heads = 8, rows = 32, cols = 16, conv_channels = 320, conv_kernel = 4, element = f32>)
      {config = #helix.mamba<heads = 8, head_dim = 32, state_size = 16, groups = 2, conv_kernel = 4, conv_bias = true>,
       layer = 0 : i64, prefix = "model.layers.0.mixer"}
      : tensor<?x128xbf16> -> tensor<?x256xbf16>
  return %o : tensor<?x256xbf16>
}

// CHECK-LABEL: func.func @dsa
// CHECK: %[[SEL:.*]] = helix.dsa_indexer %{{.*}}, %{{.*}} cache(%{{.*}} : !helix.index_cache<head_dim = 16>)
// CHECK-SAME: config = #helix.indexer<heads = 4, head_dim = 16, top_k = 16, rope_dim = 8>
// CHECK-SAME: -> tensor<?x16xi64>
// CHECK: helix.sparse_attention %{{.*}}, %{{.*}}, %[[SEL]] cache(
// CHECK-SAME: config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, q_lora_rank = 64, kv_lora_rank = 32, rope_dim = 8, output_gate = true>
// CHECK-SAME: -> tensor<?x64xbf16>
func.func @dsa(%x: tensor<?x128xbf16>, %pos: tensor<?xi64>,
    %q: tensor<?x4x40xbf16>, %k: tensor<?x1x40xbf16>,
    %ic: !helix.index_cache<head_dim = 16>,
    %c: !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>)
    -> tensor<?x64xbf16> {
  %sel = helix.dsa_indexer %x, %pos cache(%ic : !helix.index_cache<head_dim = 16>)
      {config = #helix.indexer<heads = 4, head_dim = 16, top_k = 16, rope_dim = 8>,
       q_lora_rank = 64 : i64, layer = 0 : i64, prefix = "model.layers.0.self_attn.indexer"}
      : (tensor<?x128xbf16>, tensor<?xi64>) -> tensor<?x16xi64>
  %o = helix.sparse_attention %q, %k, %sel cache(%c : !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>)
      {config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, q_lora_rank = 64, kv_lora_rank = 32, rope_dim = 8, output_gate = true>,
       layer = 0 : i64, prefix = "model.layers.0.self_attn"}
      : (tensor<?x4x40xbf16>, tensor<?x1x40xbf16>, tensor<?x16xi64>) -> tensor<?x64xbf16>
  return %o : tensor<?x64xbf16>
}

// CHECK-LABEL: func.func private @attrs
// CHECK-SAME: #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 32, v_head_dim = 32, qk_norm = true, output_gate = true, no_rope = true, partial_rotary = 2.500000e-01>
// CHECK-SAME: #helix.moe<experts = 8, top_k = 2, expert_intermediate = 64, shared_experts = 1, shared_intermediate = 128, activation = "relu2", latent_size = 64, shared_expert_gate = true>
// CHECK-SAME: #helix.kind_layout<kind = linear_attention, layers = 3, tpa = 2, replicas = 2>
// CHECK-SAME: #helix.kind_layout<kind = mamba, layers = 3, tpa = 4>
// CHECK-SAME: #helix.kind_layout<kind = sparse_attention, layers = 3, kvp = 4>
func.func private @attrs() attributes {
  a = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 32, v_head_dim = 32, qk_norm = true, output_gate = true, no_rope = true, partial_rotary = 0.25>,
  b = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 64, shared_experts = 1, shared_intermediate = 128, activation = "relu2", latent_size = 64, shared_expert_gate = true>,
  c = #helix.kind_layout<kind = linear_attention, layers = 3, tpa = 2, replicas = 2>,
  d = #helix.kind_layout<kind = mamba, layers = 3, tpa = 4>,
  e = #helix.kind_layout<kind = sparse_attention, layers = 3, kvp = 4>}
