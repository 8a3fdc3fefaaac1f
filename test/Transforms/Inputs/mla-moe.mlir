// A two-layer DeepSeek-V3-like model written by hand: MLA (absorbed form,
// q LoRA), a dense FFN layer, then an MoE layer with sigmoid grouped routing
// and a shared expert.
func.func @decode_step(%tokens: tensor<?xi64> {helix.name = "tokens"}, %pos: tensor<?xi64> {helix.name = "positions"},
    %c0: !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>,
    %c1: !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>) -> tensor<?x512xf32>
    attributes {helix.model = #helix.model<name = "tiny-mla-moe", model_type = "deepseek_v3", hidden = 128, vocab = 512, layers = 2>} {
  %h = helix.embed %tokens {vocab = 512 : i64, weight = "model.embed_tokens.weight"} : tensor<?xi64> -> tensor<?x128xbf16>
  %n = helix.rms_norm %h {eps = 1.0e-06 : f64, weight = "model.layers.0.input_layernorm.weight"} : tensor<?x128xbf16>
  %q, %k = helix.qkv_proj %n, %pos {config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, q_lora_rank = 64, kv_lora_rank = 32, rope_dim = 8>, layer = 0 : i64, prefix = "model.layers.0.self_attn", rope = #helix.rope<>}
      : (tensor<?x128xbf16>, tensor<?xi64>) -> (tensor<?x4x40xbf16>, tensor<?x1x40xbf16>)
  %o = helix.attention %q, %k cache(%c0 : !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>) {config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, q_lora_rank = 64, kv_lora_rank = 32, rope_dim = 8>, layer = 0 : i64, prefix = "model.layers.0.self_attn"}
      : (tensor<?x4x40xbf16>, tensor<?x1x40xbf16>) -> tensor<?x64xbf16>
  %p = helix.linear %o {weight = "model.layers.0.self_attn.o_proj.weight"} : tensor<?x64xbf16> -> tensor<?x128xbf16>
  %r = helix.add %h, %p : tensor<?x128xbf16>
  %n2 = helix.rms_norm %r {eps = 1.0e-06 : f64, weight = "model.layers.0.post_attention_layernorm.weight"} : tensor<?x128xbf16>
  %f = helix.ffn %n2 {intermediate = 256 : i64, layer = 0 : i64, prefix = "model.layers.0.mlp"} : tensor<?x128xbf16>
  %h1 = helix.add %r, %f : tensor<?x128xbf16>
  %m = helix.rms_norm %h1 {eps = 1.0e-06 : f64, weight = "model.layers.1.input_layernorm.weight"} : tensor<?x128xbf16>
  %q1, %k1 = helix.qkv_proj %m, %pos {config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, q_lora_rank = 64, kv_lora_rank = 32, rope_dim = 8>, layer = 1 : i64, prefix = "model.layers.1.self_attn", rope = #helix.rope<>}
      : (tensor<?x128xbf16>, tensor<?xi64>) -> (tensor<?x4x40xbf16>, tensor<?x1x40xbf16>)
  %o1 = helix.attention %q1, %k1 cache(%c1 : !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>) {config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, q_lora_rank = 64, kv_lora_rank = 32, rope_dim = 8>, layer = 1 : i64, prefix = "model.layers.1.self_attn"}
      : (tensor<?x4x40xbf16>, tensor<?x1x40xbf16>) -> tensor<?x64xbf16>
  %p1 = helix.linear %o1 {weight = "model.layers.1.self_attn.o_proj.weight"} : tensor<?x64xbf16> -> tensor<?x128xbf16>
  %r1 = helix.add %h1, %p1 : tensor<?x128xbf16>
  %n3 = helix.rms_norm %r1 {eps = 1.0e-06 : f64, weight = "model.layers.1.post_attention_layernorm.weight"} : tensor<?x128xbf16>
  %e = helix.moe %n3 {config = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 64, shared_experts = 1, shared_intermediate = 64, n_group = 2, routed_scaling = 2.500000e+00, norm_topk_prob = true, scoring = sigmoid>, layer = 1 : i64, prefix = "model.layers.1.mlp"} : tensor<?x128xbf16>
  %h2 = helix.add %r1, %e : tensor<?x128xbf16>
  %nf = helix.rms_norm %h2 {eps = 1.0e-06 : f64, weight = "model.norm.weight"} : tensor<?x128xbf16>
  %l = helix.lm_head %nf {weight = "lm_head.weight"} : tensor<?x128xbf16> -> tensor<?x512xf32>
  return %l : tensor<?x512xf32>
}
