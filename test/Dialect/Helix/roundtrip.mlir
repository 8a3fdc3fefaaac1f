// RUN: helix-opt %s | FileCheck %s
// RUN: helix-opt %s | helix-opt | FileCheck %s
// RUN: helix-opt %s --mlir-print-op-generic | helix-opt | FileCheck %s

// Every op, attribute and type prints and parses back to the same text.

// CHECK-LABEL: func.func @gqa_dense_layer
// CHECK-SAME: %[[TOK:.*]]: tensor<?xi64>, %[[POS:.*]]: tensor<?xi64>, %[[C:.*]]: !helix.kv_cache<heads = 8, key_dim = 128, value_dim = 128, element = bf16>
// CHECK-SAME: helix.model = #helix.model<name = "Llama", model_type = "llama", hidden = 16384, vocab = 128256, layers = 1, max_position = 131072>
// CHECK: %[[H:.*]] = helix.embed %[[TOK]] {vocab = 128256 : i64, weight = "model.embed_tokens.weight"} : tensor<?xi64> -> tensor<?x16384xbf16>
// CHECK: %[[N:.*]] = helix.rms_norm %[[H]] {eps = 1.000000e-05 : f64, weight = "model.layers.0.input_layernorm.weight"} : tensor<?x16384xbf16>
// CHECK: %[[Q:.*]], %[[K:.*]], %[[V:.*]] = helix.qkv_proj %[[N]], %[[POS]]
// CHECK-SAME: config = #helix.attn<kind = gqa, heads = 128, kv_heads = 8, head_dim = 128, v_head_dim = 128>
// CHECK-SAME: layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>
// CHECK-SAME: rope = #helix.rope<theta = 5.000000e+05, scaling = "llama3", factor = 8.000000e+00, original_max_position = 8192, low_freq_factor = 1.000000e+00, high_freq_factor = 4.000000e+00>
// CHECK-SAME: -> (tensor<?x128x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>)
// CHECK: %[[O:.*]] = helix.attention %[[Q]], %[[K]], %[[V]] cache(%[[C]] : !helix.kv_cache<heads = 8, key_dim = 128, value_dim = 128, element = bf16>)
// CHECK-SAME: -> tensor<?x16384xbf16>
// CHECK: %[[P:.*]] = helix.linear %[[O]] {layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>, weight = "model.layers.0.self_attn.o_proj.weight"}
// CHECK: %[[R:.*]] = helix.add %[[H]], %[[P]] : tensor<?x16384xbf16>
// CHECK: %[[F:.*]] = helix.ffn %[[R]] {intermediate = 53248 : i64, layer = 0 : i64, layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>, prefix = "model.layers.0.mlp"} : tensor<?x16384xbf16>
// CHECK: %[[L:.*]] = helix.lm_head %[[F]] {weight = "lm_head.weight"} : tensor<?x16384xbf16> -> tensor<?x128256xf32>
// CHECK: return %[[L]]
func.func @gqa_dense_layer(%tokens: tensor<?xi64>, %pos: tensor<?xi64>,
    %cache: !helix.kv_cache<heads = 8, key_dim = 128, value_dim = 128, element = bf16>)
    -> tensor<?x128256xf32> attributes {helix.model = #helix.model<name = "Llama", model_type = "llama", hidden = 16384, vocab = 128256, layers = 1, max_position = 131072>} {
  %h = helix.embed %tokens {vocab = 128256 : i64, weight = "model.embed_tokens.weight"} : tensor<?xi64> -> tensor<?x16384xbf16>
  %n = helix.rms_norm %h {eps = 1.0e-05 : f64, weight = "model.layers.0.input_layernorm.weight"} : tensor<?x16384xbf16>
  %q, %k, %v = helix.qkv_proj %n, %pos {
      config = #helix.attn<kind = gqa, heads = 128, kv_heads = 8, head_dim = 128, v_head_dim = 128>,
      layer = 0 : i64, prefix = "model.layers.0.self_attn",
      layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32, ep = 1, pp = 1>,
      rope = #helix.rope<theta = 500000.0, scaling = "llama3", factor = 8.0, original_max_position = 8192, low_freq_factor = 1.0, high_freq_factor = 4.0>}
      : (tensor<?x16384xbf16>, tensor<?xi64>) -> (tensor<?x128x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>)
  %o = helix.attention %q, %k, %v cache(%cache : !helix.kv_cache<heads = 8, key_dim = 128, value_dim = 128, element = bf16>) {
      config = #helix.attn<kind = gqa, heads = 128, kv_heads = 8, head_dim = 128, v_head_dim = 128>,
      layer = 0 : i64, prefix = "model.layers.0.self_attn",
      layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>}
      : (tensor<?x128x128xbf16>, tensor<?x8x128xbf16>, tensor<?x8x128xbf16>) -> tensor<?x16384xbf16>
  %p = helix.linear %o {weight = "model.layers.0.self_attn.o_proj.weight", layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>} : tensor<?x16384xbf16> -> tensor<?x16384xbf16>
  %r = helix.add %h, %p : tensor<?x16384xbf16>
  %f = helix.ffn %r {intermediate = 53248 : i64, layer = 0 : i64, prefix = "model.layers.0.mlp", layout = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 32>} : tensor<?x16384xbf16>
  %l = helix.lm_head %f {weight = "lm_head.weight"} : tensor<?x16384xbf16> -> tensor<?x128256xf32>
  return %l : tensor<?x128256xf32>
}

// CHECK-LABEL: func.func @mla_moe
// CHECK: %[[Q:.*]], %[[LAT:.*]] = helix.qkv_proj
// CHECK-SAME: config = #helix.attn<kind = mla, heads = 128, kv_heads = 1, head_dim = 192, v_head_dim = 128, q_lora_rank = 1536, kv_lora_rank = 512, rope_dim = 64>
// Hugging Face's yarn betas (32, 1) are the defaults: not printed.
// CHECK-SAME: rope = #helix.rope<scaling = "yarn", factor = 4.000000e+01, original_max_position = 4096, mscale = 1.000000e+00, mscale_all_dim = 1.000000e+00>
// CHECK-SAME: -> (tensor<4x128x576xbf16>, tensor<4x1x576xbf16>)
// CHECK: helix.attention %[[Q]], %[[LAT]] cache(%{{.*}} : !helix.kv_cache<heads = 1, key_dim = 576, value_dim = 512, element = bf16, latent = true>)
// CHECK-SAME: layout = #helix.layout<gpus = 64, kvp = 64, tpf = 8, ep = 8>
// CHECK: helix.moe
// CHECK-SAME: config = #helix.moe<experts = 256, top_k = 8, expert_intermediate = 2048, shared_experts = 1, shared_intermediate = 2048, n_group = 8, topk_group = 4, routed_scaling = 2.500000e+00, norm_topk_prob = true, scoring = sigmoid>
// CHECK-SAME: layout = #helix.layout<gpus = 64, kvp = 64, tpf = 8, ep = 8>
func.func @mla_moe(%x: tensor<4x7168xbf16>, %pos: tensor<4xi64>,
    %cache: !helix.kv_cache<heads = 1, key_dim = 576, value_dim = 512, element = bf16, latent = true>) -> tensor<4x7168xbf16> {
  %q, %lat = helix.qkv_proj %x, %pos {
      config = #helix.attn<kind = mla, heads = 128, kv_heads = 1, head_dim = 192, v_head_dim = 128, q_lora_rank = 1536, kv_lora_rank = 512, rope_dim = 64>,
      layer = 3 : i64, prefix = "model.layers.3.self_attn",
      rope = #helix.rope<theta = 10000.0, scaling = "yarn", factor = 40.0, original_max_position = 4096, beta_fast = 32.0, beta_slow = 1.0, mscale = 1.0, mscale_all_dim = 1.0>}
      : (tensor<4x7168xbf16>, tensor<4xi64>) -> (tensor<4x128x576xbf16>, tensor<4x1x576xbf16>)
  %o = helix.attention %q, %lat cache(%cache : !helix.kv_cache<heads = 1, key_dim = 576, value_dim = 512, element = bf16, latent = true>) {
      config = #helix.attn<kind = mla, heads = 128, kv_heads = 1, head_dim = 192, v_head_dim = 128, q_lora_rank = 1536, kv_lora_rank = 512, rope_dim = 64>,
      layer = 3 : i64, prefix = "model.layers.3.self_attn",
      layout = #helix.layout<gpus = 64, kvp = 64, tpa = 1, tpf = 8, ep = 8>}
      : (tensor<4x128x576xbf16>, tensor<4x1x576xbf16>) -> tensor<4x16384xbf16>
  %p = helix.linear %o {weight = "model.layers.3.self_attn.o_proj.weight"} : tensor<4x16384xbf16> -> tensor<4x7168xbf16>
  %m = helix.moe %p {config = #helix.moe<experts = 256, top_k = 8, expert_intermediate = 2048, shared_experts = 1, shared_intermediate = 2048, n_group = 8, topk_group = 4, routed_scaling = 2.5, norm_topk_prob = true, scoring = sigmoid, activation = "silu">,
      layer = 3 : i64, prefix = "model.layers.3.mlp", layout = #helix.layout<gpus = 64, kvp = 64, tpf = 8, ep = 8>} : tensor<4x7168xbf16>
  return %m : tensor<4x7168xbf16>
}

// CHECK-LABEL: func.func @sliding_window_sinks
// CHECK: config = #helix.attn<kind = gqa, heads = 64, kv_heads = 8, head_dim = 64, v_head_dim = 64, qkv_bias = true, out_bias = true, sinks = true, window = 128>
// CHECK: helix.attention %{{.*}} cache(%{{.*}} : !helix.kv_cache<heads = 8, key_dim = 64, value_dim = 64, element = bf16, window = 128>)
// CHECK: helix.linear %{{.*}} {bias = "model.layers.0.self_attn.o_proj.bias", weight = "model.layers.0.self_attn.o_proj.weight"}
// CHECK: helix.moe %{{.*}} {config = #helix.moe<experts = 128, top_k = 4, expert_intermediate = 2880, expert_bias = true>
// CHECK: helix.ffn %{{.*}} {activation = "gelu", bias, intermediate = 256 : i64
func.func @sliding_window_sinks(%x: tensor<?x2880xbf16>, %pos: tensor<?xi64>,
    %cache: !helix.kv_cache<heads = 8, key_dim = 64, value_dim = 64, element = bf16, window = 128>) -> tensor<?x2880xbf16> {
  %q, %k, %v = helix.qkv_proj %x, %pos {
      config = #helix.attn<kind = gqa, heads = 64, kv_heads = 8, head_dim = 64, v_head_dim = 64, qkv_bias = true, out_bias = true, sinks = true, window = 128>,
      layer = 0 : i64, prefix = "model.layers.0.self_attn", rope = #helix.rope<theta = 150000.0>}
      : (tensor<?x2880xbf16>, tensor<?xi64>) -> (tensor<?x64x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8x64xbf16>)
  %o = helix.attention %q, %k, %v cache(%cache : !helix.kv_cache<heads = 8, key_dim = 64, value_dim = 64, element = bf16, window = 128>) {
      config = #helix.attn<kind = gqa, heads = 64, kv_heads = 8, head_dim = 64, v_head_dim = 64, qkv_bias = true, out_bias = true, sinks = true, window = 128>,
      layer = 0 : i64, prefix = "model.layers.0.self_attn"}
      : (tensor<?x64x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8x64xbf16>) -> tensor<?x4096xbf16>
  %p = helix.linear %o {weight = "model.layers.0.self_attn.o_proj.weight", bias = "model.layers.0.self_attn.o_proj.bias"} : tensor<?x4096xbf16> -> tensor<?x2880xbf16>
  %m = helix.moe %p {config = #helix.moe<experts = 128, top_k = 4, expert_intermediate = 2880, expert_bias = true>, layer = 0 : i64, prefix = "model.layers.0.mlp"} : tensor<?x2880xbf16>
  %f = helix.ffn %m {intermediate = 256 : i64, activation = "gelu", bias, layer = 0 : i64, prefix = "model.layers.0.mlp"} : tensor<?x2880xbf16>
  return %f : tensor<?x2880xbf16>
}

// CHECK-LABEL: func.func @mha_mqa_qknorm
// CHECK: #helix.attn<kind = mha, heads = 16, kv_heads = 16, head_dim = 64, v_head_dim = 64>
// CHECK: #helix.attn<kind = mqa, heads = 16, kv_heads = 1, head_dim = 64, v_head_dim = 64, qk_norm = true>
// CHECK: !helix.kv_cache<heads = 1, key_dim = 64, value_dim = 64, element = f16>
func.func @mha_mqa_qknorm(%x: tensor<2x1024xf16>, %pos: tensor<2xi64>,
    %c: !helix.kv_cache<heads = 1, key_dim = 64, value_dim = 64, element = f16>) -> tensor<2x1024xf16> {
  %q, %k, %v = helix.qkv_proj %x, %pos {config = #helix.attn<kind = mha, heads = 16, kv_heads = 16, head_dim = 64, v_head_dim = 64>, layer = 0 : i64, prefix = "a", rope = #helix.rope<>}
      : (tensor<2x1024xf16>, tensor<2xi64>) -> (tensor<2x16x64xf16>, tensor<2x16x64xf16>, tensor<2x16x64xf16>)
  %q2, %k2, %v2 = helix.qkv_proj %x, %pos {config = #helix.attn<kind = mqa, heads = 16, kv_heads = 1, head_dim = 64, v_head_dim = 64, qk_norm = true>, layer = 1 : i64, prefix = "b", rope = #helix.rope<>}
      : (tensor<2x1024xf16>, tensor<2xi64>) -> (tensor<2x16x64xf16>, tensor<2x1x64xf16>, tensor<2x1x64xf16>)
  %o = helix.attention %q2, %k2, %v2 cache(%c : !helix.kv_cache<heads = 1, key_dim = 64, value_dim = 64, element = f16>) {config = #helix.attn<kind = mqa, heads = 16, kv_heads = 1, head_dim = 64, v_head_dim = 64, qk_norm = true>, layer = 1 : i64, prefix = "b"}
      : (tensor<2x16x64xf16>, tensor<2x1x64xf16>, tensor<2x1x64xf16>) -> tensor<2x1024xf16>
  return %o : tensor<2x1024xf16>
}

// CHECK-LABEL: func.func private @plan_and_dp
// CHECK-SAME: helix.plan = #helix.plan<strategy = ep, hardware = "b200", gpus = 8, batch = 64, context_length = 131072, weights = fp8, kv_cache = fp8, nvfp4_scales = true, hopb = true, ttl_s = 1.250000e-02>
// CHECK-SAME: layout = #helix.layout<gpus = 8, ep = 8, dp = 8>
func.func private @plan_and_dp() attributes {helix.plan = #helix.plan<strategy = ep, hardware = "b200", gpus = 8, batch = 64, context_length = 131072, weights = fp8, kv_cache = fp8, compute = fp4, nvfp4_scales = true, hopb = true, ttl_s = 0.0125>, layout = #helix.layout<gpus = 8, tpf = 1, ep = 8, dp = 8>}

// Speculative decoding: the drafts per step and the acceptance the plan was
// priced with (the default, 0.85, is not printed).
// CHECK-LABEL: func.func private @speculative
// CHECK-SAME: helix.mtp = #helix.mtp<draft_tokens = 3, acceptance = 9.000000e-01>
func.func private @speculative() attributes {helix.mtp = #helix.mtp<draft_tokens = 3, acceptance = 0.9>}
// CHECK-LABEL: func.func private @speculative_default
// CHECK-SAME: helix.mtp = #helix.mtp<draft_tokens = 1>}
func.func private @speculative_default() attributes {helix.mtp = #helix.mtp<draft_tokens = 1, acceptance = 0.85>}

// The MoE routing the plan was priced with; the default skew is not printed.
// CHECK-LABEL: func.func private @plan_routing
// CHECK-SAME: helix.plan = #helix.plan<strategy = ep, hardware = "h200", gpus = 8, batch = 16, context_length = 4096, ttl_s = 1.000000e-02, routing_skew = 0.000000e+00, balanced_experts = true>
func.func private @plan_routing() attributes {helix.plan = #helix.plan<strategy = ep, hardware = "h200", gpus = 8, batch = 16, context_length = 4096, ttl_s = 0.01, routing_skew = 0.0, balanced_experts = true>}
// CHECK-LABEL: func.func private @plan_default_routing
// CHECK-SAME: ttl_s = 1.000000e-02>
func.func private @plan_default_routing() attributes {helix.plan = #helix.plan<strategy = ep, hardware = "h200", gpus = 8, batch = 16, context_length = 4096, ttl_s = 0.01, routing_skew = 0.64>}

// A per-layer plan: one layout per kind of layer; widths at 1 are not printed.
// CHECK-LABEL: func.func private @plan_per_layer
// CHECK-SAME: layouts = [#helix.kind_layout<kind = full_attention, layers = 18, kvp = 32, tpa = 2>, #helix.kind_layout<kind = window_attention, layers = 18, tpa = 64>, #helix.kind_layout<kind = moe_ffn, layers = 36, tpf = 16, replicas = 4>]>
func.func private @plan_per_layer() attributes {helix.plan = #helix.plan<strategy = helix, hardware = "gb200-nvl72", gpus = 64, batch = 2, context_length = 1048576, hopb = true, layouts = [#helix.kind_layout<kind = full_attention, layers = 18, kvp = 32, tpa = 2>, #helix.kind_layout<kind = window_attention, layers = 18, kvp = 1, tpa = 64>, #helix.kind_layout<kind = moe_ffn, layers = 36, tpf = 16, ep = 1, replicas = 4>]>}

// Zero cost fields are not printed.
// CHECK-LABEL: func.func private @cost
// CHECK-SAME: helix.cost = #helix.cost<time_us = 12.5, kv_read_us = 8.0, overhead_us = 2.0, comm_us = 2.5, comm_total_us = 6.0, bytes = 1.0e+06, flops = 2.0e+09>
// CHECK-SAME: plan = #helix.plan<strategy = tp, {{.*}}ttl_s = 1.250000e-02, overlap = true>
func.func private @cost() attributes {helix.cost = #helix.cost<time_us = 12.5, kv_read_us = 8.0, weight_read_us = 0.0, overhead_us = 2.0, comm_us = 2.5, comm_total_us = 6.0, bytes = 1.0e6, flops = 2.0e9>, plan = #helix.plan<strategy = "tp", hardware = "b200", gpus = 8, batch = 64, context_length = 131072, ttl_s = 0.0125, overlap = true>}

// RoPE parameters left out take Hugging Face's defaults (helix/Common/Rope.h,
// shared with the importer and the runtime); only other values print.
// CHECK-LABEL: func.func private @rope_defaults
// CHECK-SAME: explicit = #helix.rope<scaling = "yarn", factor = 4.000000e+00, beta_fast = 1.600000e+01, beta_slow = 2.000000e+00>
// CHECK-SAME: left_out = #helix.rope<scaling = "yarn", factor = 4.000000e+00>
// CHECK-SAME: spelled_out = #helix.rope<scaling = "yarn", factor = 4.000000e+00>
func.func private @rope_defaults() attributes {
  explicit = #helix.rope<scaling = "yarn", factor = 4.0, beta_fast = 16.0, beta_slow = 2.0>,
  left_out = #helix.rope<scaling = "yarn", factor = 4.0>,
  spelled_out = #helix.rope<theta = 10000.0, scaling = "yarn", factor = 4.0, beta_fast = 32.0, beta_slow = 1.0, mscale = 0.0>}

// Strategies are keywords, quoted when the name has a '-'; either spelling
// parses.
// CHECK-LABEL: func.func private @strategies
// CHECK-SAME: a = #helix.plan<strategy = helix, hardware = "h100", gpus = 8, batch = 1, context_length = 1024>
// CHECK-SAME: b = #helix.plan<strategy = "helix-no-hopb", hardware = "h100", gpus = 8, batch = 1, context_length = 1024>
// CHECK-SAME: c = #helix.plan<strategy = "tp-pp", hardware = "h100", gpus = 8, batch = 1, context_length = 1024>
// CHECK-SAME: d = #helix.plan<strategy = kvp, hardware = "h100", gpus = 8, batch = 1, context_length = 1024>
func.func private @strategies() attributes {
  a = #helix.plan<strategy = "helix", hardware = "h100", gpus = 8, batch = 1, context_length = 1024>,
  b = #helix.plan<strategy = "helix-no-hopb", hardware = "h100", gpus = 8, batch = 1, context_length = 1024>,
  c = #helix.plan<strategy = "tp-pp", hardware = "h100", gpus = 8, batch = 1, context_length = 1024>,
  d = #helix.plan<strategy = kvp, hardware = "h100", gpus = 8, batch = 1, context_length = 1024>}
