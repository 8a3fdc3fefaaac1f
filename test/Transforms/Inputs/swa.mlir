// A two-layer gpt-oss-like model written by hand: GQA with biases and
// learned sinks, a sliding-window layer then a full one, and MoE experts
// stored fused (gate_up interleaved) with biases.
func.func @decode_step(%tokens: tensor<?xi64> {helix.name = "tokens"}, %pos: tensor<?xi64> {helix.name = "positions"},
    %c0: !helix.kv_cache<heads = 2, key_dim = 32, value_dim = 32, element = bf16, window = 64>,
    %c1: !helix.kv_cache<heads = 2, key_dim = 32, value_dim = 32, element = bf16>) -> tensor<?x512xf32>
    attributes {helix.model = #helix.model<name = "tiny-swa", model_type = "gpt_oss", hidden = 128, vocab = 512, layers = 2>} {
  %h = helix.embed %tokens {vocab = 512 : i64, weight = "model.embed_tokens.weight"} : tensor<?xi64> -> tensor<?x128xbf16>
  %n = helix.rms_norm %h {eps = 1.0e-05 : f64, weight = "model.layers.0.input_layernorm.weight"} : tensor<?x128xbf16>
  %q, %k, %v = helix.qkv_proj %n, %pos {config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 32, v_head_dim = 32, qkv_bias = true, out_bias = true, sinks = true, window = 64>, layer = 0 : i64, prefix = "model.layers.0.self_attn", rope = #helix.rope<theta = 1.500000e+05>}
      : (tensor<?x128xbf16>, tensor<?xi64>) -> (tensor<?x4x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>)
  %o = helix.attention %q, %k, %v cache(%c0 : !helix.kv_cache<heads = 2, key_dim = 32, value_dim = 32, element = bf16, window = 64>) {config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 32, v_head_dim = 32, qkv_bias = true, out_bias = true, sinks = true, window = 64>, layer = 0 : i64, prefix = "model.layers.0.self_attn"}
      : (tensor<?x4x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>) -> tensor<?x128xbf16>
  %p = helix.linear %o {bias = "model.layers.0.self_attn.o_proj.bias", weight = "model.layers.0.self_attn.o_proj.weight"} : tensor<?x128xbf16> -> tensor<?x128xbf16>
  %r = helix.add %h, %p : tensor<?x128xbf16>
  %n2 = helix.rms_norm %r {eps = 1.0e-05 : f64, weight = "model.layers.0.post_attention_layernorm.weight"} : tensor<?x128xbf16>
  %f = helix.moe %n2 {config = #helix.moe<experts = 4, top_k = 2, expert_intermediate = 64, norm_topk_prob = true, activation = "swiglu", expert_bias = true>, layer = 0 : i64, prefix = "model.layers.0.mlp"} : tensor<?x128xbf16>
  %h1 = helix.add %r, %f : tensor<?x128xbf16>
  %m = helix.rms_norm %h1 {eps = 1.0e-05 : f64, weight = "model.layers.1.input_layernorm.weight"} : tensor<?x128xbf16>
  %q1, %k1, %v1 = helix.qkv_proj %m, %pos {config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 32, v_head_dim = 32, qkv_bias = true, out_bias = true, sinks = true>, layer = 1 : i64, prefix = "model.layers.1.self_attn", rope = #helix.rope<theta = 1.500000e+05>}
      : (tensor<?x128xbf16>, tensor<?xi64>) -> (tensor<?x4x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>)
  %o1 = helix.attention %q1, %k1, %v1 cache(%c1 : !helix.kv_cache<heads = 2, key_dim = 32, value_dim = 32, element = bf16>) {config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 32, v_head_dim = 32, qkv_bias = true, out_bias = true, sinks = true>, layer = 1 : i64, prefix = "model.layers.1.self_attn"}
      : (tensor<?x4x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>) -> tensor<?x128xbf16>
  %p1 = helix.linear %o1 {bias = "model.layers.1.self_attn.o_proj.bias", weight = "model.layers.1.self_attn.o_proj.weight"} : tensor<?x128xbf16> -> tensor<?x128xbf16>
  %r1 = helix.add %h1, %p1 : tensor<?x128xbf16>
  %n3 = helix.rms_norm %r1 {eps = 1.0e-05 : f64, weight = "model.layers.1.post_attention_layernorm.weight"} : tensor<?x128xbf16>
  %f1 = helix.moe %n3 {config = #helix.moe<experts = 4, top_k = 2, expert_intermediate = 64, norm_topk_prob = true, activation = "swiglu", expert_bias = true>, layer = 1 : i64, prefix = "model.layers.1.mlp"} : tensor<?x128xbf16>
  %h2 = helix.add %r1, %f1 : tensor<?x128xbf16>
  %nf = helix.rms_norm %h2 {eps = 1.0e-05 : f64, weight = "model.norm.weight"} : tensor<?x128xbf16>
  %l = helix.lm_head %nf {weight = "lm_head.weight"} : tensor<?x128xbf16> -> tensor<?x512xf32>
  return %l : tensor<?x512xf32>
}
