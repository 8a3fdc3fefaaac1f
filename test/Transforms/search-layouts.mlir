// RUN: helix-opt %s -split-input-file --helix-search-layouts="gpus=8 batch=4 context=65536" | FileCheck %s --check-prefix=FIXED
// RUN: helix-opt %s -split-input-file --helix-search-layouts="gpus=8 batch=4 context=65536 strategy=tp" | FileCheck %s --check-prefix=TP
// RUN: helix-opt %s -split-input-file --helix-search-layouts="max-gpus=16 context=65536 dtype=bf16 hardware=h200" | FileCheck %s --check-prefix=SEARCH
// RUN: helix-opt %s -split-input-file --helix-search-layouts="max-gpus=16 context=65536 ttl-ms=50" | FileCheck %s --check-prefix=BUDGET

// A two-layer GQA model (16 query heads, 8 KV heads, dense FFN) written by hand.

// Helix on 8 GPUs never duplicates KV: TPA <= 8 KV heads, KVP x TPA = 8,
// every layout-carrying op gets the same layout, the FFN runs TPF = 8.
// FIXED-LABEL: func.func @decode_step
// FIXED-SAME: helix.plan = #helix.plan<strategy = helix, hardware = "gb200-nvl72", gpus = 8, batch = 4, context_length = 65536, {{(hopb = true, )?}}ttl_s = {{[0-9.eE+-]+}}{{(, overlap = true)?}}{{(, slices = [0-9]+)?}}>
// FIXED: helix.qkv_proj {{.*}}layout = #helix.layout<gpus = 8, [[L:(kvp = [0-9]+, )?(tpa = [0-9]+, )?]]tpf = 8>
// FIXED: helix.attention {{.*}}layout = #helix.layout<gpus = 8, [[L]]tpf = 8>
// FIXED: helix.linear {{.*}}layout = #helix.layout<gpus = 8, [[L]]tpf = 8>
// FIXED: helix.ffn {{.*}}layout = #helix.layout<gpus = 8, [[L]]tpf = 8>
// FIXED: helix.qkv_proj {{.*}}layout = #helix.layout<gpus = 8, [[L]]tpf = 8>
// FIXED: helix.lm_head {{.*}}layout = #helix.layout<gpus = 8, [[L]]tpf = 8>

// Plain TP on 8 GPUs: attention TP = 8 over the 8 KV heads.
// TP: helix.plan = #helix.plan<strategy = tp, {{.*}}gpus = 8, batch = 4
// TP: helix.attention {{.*}}layout = #helix.layout<gpus = 8, tpa = 8, tpf = 8>

// Without gpus and batch, the fastest configuration within 1..16 GPUs.
// SEARCH: helix.plan = #helix.plan<strategy = helix, hardware = "h200", gpus = {{[0-9]+}}, batch = {{[0-9]+}}, context_length = 65536, weights = bf16, kv_cache = bf16, compute = bf16
// SEARCH: helix.attention {{.*}}layout = #helix.layout<

// Under a budget, the most tokens/s/GPU within 50 ms per token.
// BUDGET: helix.plan = #helix.plan<strategy = helix, {{.*}}ttl_s = {{[0-9.eE+-]+}}{{(, overlap = true)?}}{{(, slices = [0-9]+)?}}>
func.func @decode_step(%tokens: tensor<?xi64>, %pos: tensor<?xi64>,
    %c0: !helix.kv_cache<heads = 8, key_dim = 64, value_dim = 64, element = bf16>,
    %c1: !helix.kv_cache<heads = 8, key_dim = 64, value_dim = 64, element = bf16>) -> tensor<?x32000xf32>
    attributes {helix.model = #helix.model<name = "tiny-gqa", model_type = "llama", hidden = 1024, vocab = 32000, layers = 2>} {
  %h = helix.embed %tokens {vocab = 32000 : i64, weight = "model.embed_tokens.weight"} : tensor<?xi64> -> tensor<?x1024xbf16>
  %q, %k, %v = helix.qkv_proj %h, %pos {config = #helix.attn<kind = gqa, heads = 16, kv_heads = 8, head_dim = 64, v_head_dim = 64>, layer = 0 : i64, prefix = "model.layers.0.self_attn", rope = #helix.rope<>}
      : (tensor<?x1024xbf16>, tensor<?xi64>) -> (tensor<?x16x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8x64xbf16>)
  %o = helix.attention %q, %k, %v cache(%c0 : !helix.kv_cache<heads = 8, key_dim = 64, value_dim = 64, element = bf16>) {config = #helix.attn<kind = gqa, heads = 16, kv_heads = 8, head_dim = 64, v_head_dim = 64>, layer = 0 : i64, prefix = "model.layers.0.self_attn"}
      : (tensor<?x16x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8x64xbf16>) -> tensor<?x1024xbf16>
  %p = helix.linear %o {weight = "model.layers.0.self_attn.o_proj.weight"} : tensor<?x1024xbf16> -> tensor<?x1024xbf16>
  %f = helix.ffn %p {intermediate = 4096 : i64, layer = 0 : i64, prefix = "model.layers.0.mlp"} : tensor<?x1024xbf16>
  %q1, %k1, %v1 = helix.qkv_proj %f, %pos {config = #helix.attn<kind = gqa, heads = 16, kv_heads = 8, head_dim = 64, v_head_dim = 64>, layer = 1 : i64, prefix = "model.layers.1.self_attn", rope = #helix.rope<>}
      : (tensor<?x1024xbf16>, tensor<?xi64>) -> (tensor<?x16x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8x64xbf16>)
  %o1 = helix.attention %q1, %k1, %v1 cache(%c1 : !helix.kv_cache<heads = 8, key_dim = 64, value_dim = 64, element = bf16>) {config = #helix.attn<kind = gqa, heads = 16, kv_heads = 8, head_dim = 64, v_head_dim = 64>, layer = 1 : i64, prefix = "model.layers.1.self_attn"}
      : (tensor<?x16x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8x64xbf16>) -> tensor<?x1024xbf16>
  %f1 = helix.ffn %o1 {intermediate = 4096 : i64, layer = 1 : i64, prefix = "model.layers.1.mlp"} : tensor<?x1024xbf16>
  %l = helix.lm_head %f1 {weight = "lm_head.weight"} : tensor<?x1024xbf16> -> tensor<?x32000xf32>
  return %l : tensor<?x32000xf32>
}
