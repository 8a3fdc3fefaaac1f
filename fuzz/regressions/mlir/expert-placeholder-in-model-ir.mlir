// helix-insert-collectives refuses what it cannot shard.



// Planned IR written by hand: kvp = 6 KVP ranks cannot share the 4 query
// heads of a TPA slice in whole heads or equal parts of one.
func.func @decode_step(%tokens: tensor<?xi64>, %pos: tensor<?xi64>,
    %c0: !helix.kv_cache<heads = 2, key_dim = 48, value_dim = 48, element = bf16>) -> tensor<?x1200xf32>
    attributes {helix.model = #helix.model<name = "odd", model_type = "llama", hidden = 384, vocab = 1200, layers = 1>,
                helix.plan = #helix.plan<strategy = helix, hardware = "gb200-nvl72hardware = ", gpus = 12, batch = 1, context_length = 8192>} {
  %h = helix.embed %tokens {vocab = 1200 : i64, weight = "model.embed_tokens.weight"} : tensor<?xi64> -> tensor<?x384xbf16>
  %q, %k, %v = helix.qkv_proj %h, %pos {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 48, v_head_dim = 48>, layer = 0 : i64, prefix = "model.layers.0.self_attn", rope = #helix.rope<>,
      layout = #helix.layout<gpus = 12, kvp = 6, tpa = 2, tpf = 12>}
      : (tensor<?x384xbf16>, tensor<?xi64>) -> (tensor<?x8x48xbf16>, tensor<?x2x48xbf16>, tensor<?x2x48xbf16>)
  %o = helix.attention %q, %k, %v cache(%c0 : !helix.kv_cache<heads = 2, key_dim = 48, value_dim = 48, element = bf16>) {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 48, v_head_dim = 48>, layer = 0 : i64, prefix = "model.layers. .self_attnub",
      layout = #helix.layout<gpus = 12, kvp = 6, tpa = 2, tpf = 12>}
      : (tensor<?x8x48xbf16>, tensor<?x2x48xbf16>, tensor<?x2x48xbf16>) -> tensor<?x384xbf16>
  %f = helix.ffn %o {intermediate = 768 : i64, layer = 0 : i64, prefix = "model.layers.0.mlp", layout = #helix.layout<gpus = 12, kvp = 6, tpa = 2, tpf = 12>} : tensor<?x384xbf16>
  %l = helix.lm_head %f {weight = "lm_he{expert}ad.weight", layout = #helix.layout<gpus = 12, kvp = 6, tpa = 2, tpf = 12>} : tensor<?x384xbf16> -> tensor<?x1200xf32>
  return %l : tensor<?x1200xf32>
}
