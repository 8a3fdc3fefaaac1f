// RUN: helix-opt %s -split-input-file -verify-diagnostics

// Every verifier diagnostic of the helix dialect has a case here.

// expected-error@+1 {{'heads' must be positive, got 0}}
func.func private @f() attributes {a = #helix.attn<kind = gqa, heads = 0, kv_heads = 2, head_dim = 16, v_head_dim = 16>}

// -----

// expected-error@+1 {{'window' must not be negative, got -1}}
func.func private @f() attributes {a = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16, window = -1>}

// -----

// expected-error@+1 {{query heads (12) must be a multiple of kv_heads (5)}}
func.func private @f() attributes {a = #helix.attn<kind = gqa, heads = 12, kv_heads = 5, head_dim = 16, v_head_dim = 16>}

// -----

// expected-error@+1 {{mha needs kv_heads == heads, got kv_heads = 2 and heads = 8}}
func.func private @f() attributes {a = #helix.attn<kind = mha, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16>}

// -----

// expected-error@+1 {{mqa needs kv_heads == 1, got 2}}
func.func private @f() attributes {a = #helix.attn<kind = mqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16>}

// -----

// expected-error@+1 {{mla has one latent KV head shared by all query heads: kv_heads must be 1, got 8}}
func.func private @f() attributes {a = #helix.attn<kind = mla, heads = 8, kv_heads = 8, head_dim = 24, v_head_dim = 16, kv_lora_rank = 32, rope_dim = 8>}

// -----

// expected-error@+1 {{mla needs a positive kv_lora_rank}}
func.func private @f() attributes {a = #helix.attn<kind = mla, heads = 8, kv_heads = 1, head_dim = 24, v_head_dim = 16, rope_dim = 8>}

// -----

// expected-error@+1 {{mla needs 0 < rope_dim < head_dim, got rope_dim = 24 and head_dim = 24}}
func.func private @f() attributes {a = #helix.attn<kind = mla, heads = 8, kv_heads = 1, head_dim = 24, v_head_dim = 16, kv_lora_rank = 32, rope_dim = 24>}

// -----

// expected-error@+1 {{qk_norm and sinks are not defined for mla}}
func.func private @f() attributes {a = #helix.attn<kind = mla, heads = 8, kv_heads = 1, head_dim = 24, v_head_dim = 16, kv_lora_rank = 32, rope_dim = 8, sinks = true>}

// -----

// expected-error@+1 {{q_lora_rank, kv_lora_rank and rope_dim are only valid for mla}}
func.func private @f() attributes {a = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16, kv_lora_rank = 32>}

// -----

// expected-error@+1 {{rope 'theta' must be positive, got 0}}
func.func private @f() attributes {a = #helix.rope<theta = 0.0>}

// -----

// expected-error@+1 {{rope 'factor' must be positive, got -2}}
func.func private @f() attributes {a = #helix.rope<factor = -2.0>}

// -----

// expected-error@+1 {{'original_max_position' must not be negative}}
func.func private @f() attributes {a = #helix.rope<original_max_position = -1>}

// -----

// expected-error@+1 {{unknown rope scaling 'ntk': expected one of linear, dynamic, yarn, llama3, longrope}}
func.func private @f() attributes {a = #helix.rope<scaling = "ntk">}

// -----

// expected-error@+1 {{'experts' must be positive, got 0}}
func.func private @f() attributes {a = #helix.moe<experts = 0, top_k = 1, expert_intermediate = 8>}

// -----

// expected-error@+1 {{top_k (9) exceeds the number of experts (8)}}
func.func private @f() attributes {a = #helix.moe<experts = 8, top_k = 9, expert_intermediate = 8>}

// -----

// expected-error@+1 {{shared experts need a positive 'shared_intermediate'}}
func.func private @f() attributes {a = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 8, shared_experts = 1>}

// -----

// expected-error@+1 {{n_group (4) must divide the number of experts (10)}}
func.func private @f() attributes {a = #helix.moe<experts = 10, top_k = 2, expert_intermediate = 8, n_group = 4>}

// -----

// expected-error@+1 {{topk_group (5) exceeds n_group (4)}}
func.func private @f() attributes {a = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 8, n_group = 4, topk_group = 5>}

// -----

// expected-error@+1 {{top_k (4) exceeds the 2 experts in the topk_group selected groups}}
func.func private @f() attributes {a = #helix.moe<experts = 8, top_k = 4, expert_intermediate = 8, n_group = 4, topk_group = 1>}

// -----

// expected-error@+1 {{'routed_scaling' must be positive}}
func.func private @f() attributes {a = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 8, routed_scaling = 0.0>}

// -----

// expected-error@+1 {{'gpus' must be positive, got 0}}
func.func private @f() attributes {a = #helix.layout<gpus = 0>}

// -----

// expected-error@+1 {{attention layout kvp x tpa x dp x pp = 4 x 4 x 1 x 1 = 16 does not match the grid of 32 GPUs}}
func.func private @f() attributes {a = #helix.layout<gpus = 32, kvp = 4, tpa = 4, tpf = 32>}

// -----

// expected-error@+1 {{FFN layout tpf x ep x pp = 12 x 2 x 1 = 24 does not divide the grid of 32 GPUs}}
func.func private @f() attributes {a = #helix.layout<gpus = 32, kvp = 4, tpa = 8, tpf = 12, ep = 2>}

// -----

// Width products past 2^63 are reported, not wrapped (2^62 x 4 would wrap
// to 0 and "match" a grid of 0, or any other).
// expected-error@+1 {{attention layout kvp x tpa x dp x pp = 4611686018427387904 x 4 x 1 x 1 = more than 2^63 does not match the grid of 4 GPUs}}
func.func private @f() attributes {a = #helix.layout<gpus = 4, kvp = 4611686018427387904, tpa = 4>}

// -----

// expected-error@+1 {{FFN layout tpf x ep x pp = 4611686018427387904 x 4 x 1 = more than 2^63 does not divide the grid of 4 GPUs}}
func.func private @f() attributes {a = #helix.layout<gpus = 4, kvp = 4, tpf = 4611686018427387904, ep = 4>}

// -----

// expected-error@+1 {{'hidden' must be positive, got 0}}
func.func private @f() attributes {a = #helix.model<name = "m", model_type = "llama", hidden = 0, vocab = 10, layers = 1>}

// -----

// expected-error@+1 {{'max_position' must not be negative, got -5}}
func.func private @f() attributes {a = #helix.model<name = "m", model_type = "llama", hidden = 8, vocab = 10, layers = 1, max_position = -5>}

// -----

// expected-error@+1 {{model 'quant_format' must be fp8-block, fp8-tensor, nvfp4 or mxfp4, got "int4"}}
func.func private @f() attributes {a = #helix.model<name = "m", model_type = "llama", hidden = 8, vocab = 10, layers = 1, quant_format = "int4">}

// -----

// expected-error@+1 {{kv_cache 'heads', 'key_dim' and 'value_dim' must be positive, got 0, 16, 16}}
func.func private @f(%c: !helix.kv_cache<heads = 0, key_dim = 16, value_dim = 16, element = bf16>)

// -----

// expected-error@+1 {{kv_cache 'element' must be a float type, got 'i8'}}
func.func private @f(%c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = i8>)

// -----

// expected-error@+1 {{a latent (MLA) kv_cache has one head, got 2}}
func.func private @f(%c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16, latent = true>)

// -----

// expected-error@+1 {{a latent kv_cache's values are a prefix of its keys: value_dim (32) must not exceed key_dim (16)}}
func.func private @f(%c: !helix.kv_cache<heads = 1, key_dim = 16, value_dim = 32, element = bf16, latent = true>)

// -----

// expected-error@+1 {{kv_cache 'window' must not be negative}}
func.func private @f(%c: !helix.kv_cache<heads = 1, key_dim = 16, value_dim = 16, element = bf16, window = -2>)

// -----

// expected-error@+2 {{expected 'true' or 'false'}}
// expected-error@+1 {{failed to parse Helix_KVCacheType parameter 'latent' which is to be a `bool`}}
func.func private @f(%c: !helix.kv_cache<heads = 1, key_dim = 16, value_dim = 16, element = bf16, latent = 1>)

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{'vocab' must be positive}}
  %h = helix.embed %pos {vocab = 0 : i64, weight = "e"} : tensor<?xi64> -> tensor<?x32xf32>
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{'vocab' must be positive, got -5}}
  %h = helix.embed %pos {vocab = -5 : i64, weight = "e"} : tensor<?xi64> -> tensor<?x32xf32>
  return
}

// -----

func.func @f(%pos: tensor<4xi64>) {
  // expected-error@+1 {{result must have shape [4, 32], got [3, 32]}}
  %h = helix.embed %pos {vocab = 10 : i64, weight = "e"} : tensor<4xi64> -> tensor<3x32xf32>
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{'eps' must be positive}}
  %n = helix.rms_norm %x {eps = 0.0 : f64, weight = "n"} : tensor<?x32xf32>
  return
}

// -----

func.func @f(%x: tensor<4x32xf32>, %pos: tensor<3xi64>) {
  // expected-error@+1 {{positions must have one entry per batch row}}
  %q, %k, %v = helix.qkv_proj %x, %pos {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, prefix = "a", rope = #helix.rope<>} : (tensor<4x32xf32>, tensor<3xi64>) -> (tensor<4x8x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>)
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{gqa attention needs q, k and v}}
  %q, %k = helix.qkv_proj %x, %pos {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, prefix = "a", rope = #helix.rope<>} : (tensor<?x32xf32>, tensor<?xi64>) -> (tensor<?x8x16xf32>, tensor<?x2x16xf32>)
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{mla has no separate values: expected q and the latent only}}
  %q, %k, %v = helix.qkv_proj %x, %pos {config = #helix.attn<kind = mla, heads = 8, kv_heads = 1, head_dim = 24, v_head_dim = 16, kv_lora_rank = 32, rope_dim = 8>, layer = 0 : i64, prefix = "a", rope = #helix.rope<>} : (tensor<?x32xf32>, tensor<?xi64>) -> (tensor<?x8x40xf32>, tensor<?x1x40xf32>, tensor<?x1x40xf32>)
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{latent must have shape [?, 1, 40], got [?, 1, 24]}}
  %q, %k = helix.qkv_proj %x, %pos {config = #helix.attn<kind = mla, heads = 8, kv_heads = 1, head_dim = 24, v_head_dim = 16, kv_lora_rank = 32, rope_dim = 8>, layer = 0 : i64, prefix = "a", rope = #helix.rope<>} : (tensor<?x32xf32>, tensor<?xi64>) -> (tensor<?x8x40xf32>, tensor<?x1x24xf32>)
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{q must have shape [?, 8, 16], got [?, 4, 16]}}
  %q, %k, %v = helix.qkv_proj %x, %pos {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, prefix = "a", rope = #helix.rope<>} : (tensor<?x32xf32>, tensor<?xi64>) -> (tensor<?x4x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{tpa (3) must divide the query heads (8)}}
  %q, %k, %v = helix.qkv_proj %x, %pos {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, prefix = "a", rope = #helix.rope<>, layout = #helix.layout<gpus = 3, tpa = 3, tpf = 3>} : (tensor<?x32xf32>, tensor<?xi64>) -> (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>)
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{tpa (8) must divide the KV heads (6), or be a multiple of them when KV heads are duplicated}}
  %q, %k, %v = helix.qkv_proj %x, %pos {config = #helix.attn<kind = gqa, heads = 24, kv_heads = 6, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, prefix = "a", rope = #helix.rope<>, layout = #helix.layout<gpus = 8, tpa = 8, tpf = 8>} : (tensor<?x32xf32>, tensor<?xi64>) -> (tensor<?x24x16xf32>, tensor<?x6x16xf32>, tensor<?x6x16xf32>)
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{tpa (4) must divide the KV heads (6), or be a multiple of them when KV heads are duplicated}}
  %q, %k, %v = helix.qkv_proj %x, %pos {config = #helix.attn<kind = gqa, heads = 24, kv_heads = 6, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, prefix = "a", rope = #helix.rope<>, layout = #helix.layout<gpus = 4, tpa = 4, tpf = 4>} : (tensor<?x32xf32>, tensor<?xi64>) -> (tensor<?x24x16xf32>, tensor<?x6x16xf32>, tensor<?x6x16xf32>)
  return
}

// -----

func.func @f(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 8, element = f32>) {
  // expected-error@+1 {{does not match the attention config}}
  %o = helix.attention %q, %k, %v cache(%c : !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 8, element = f32>) {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, prefix = "a"} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x128xf32>
  return
}

// -----

func.func @f(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = f32, window = 64>) {
  // expected-error@+1 {{KV cache window (64) differs from the attention window (0)}}
  %o = helix.attention %q, %k, %v cache(%c : !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = f32, window = 64>) {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, prefix = "a"} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x128xf32>
  return
}

// -----

func.func @f(%q: tensor<?x8x16xf32>, %k: tensor<?x2x16xf32>, %v: tensor<?x2x16xf32>, %c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = f32>) {
  // expected-error@+1 {{result must have shape [?, 128], got [?, 64]}}
  %o = helix.attention %q, %k, %v cache(%c : !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = f32>) {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, prefix = "a"} : (tensor<?x8x16xf32>, tensor<?x2x16xf32>, tensor<?x2x16xf32>) -> tensor<?x64xf32>
  return
}

// -----

func.func @f(%q: tensor<?x8x16xf32>, %k: tensor<?x4x16xf32>, %v: tensor<?x2x16xf32>, %c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = f32>) {
  // expected-error@+1 {{k must have shape [?, 2, 16], got [?, 4, 16]}}
  %o = helix.attention %q, %k, %v cache(%c : !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = f32>) {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, prefix = "a"} : (tensor<?x8x16xf32>, tensor<?x4x16xf32>, tensor<?x2x16xf32>) -> tensor<?x128xf32>
  return
}

// -----

func.func @f(%x: tensor<4x32xf32>) {
  // expected-error@+1 {{input and result batch sizes differ}}
  %y = helix.linear %x {weight = "w"} : tensor<4x32xf32> -> tensor<2x32xf32>
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{the 3 GPUs of a stage must divide the input features (32)}}
  %y = helix.linear %x {weight = "w", layout = #helix.layout<gpus = 3, tpa = 3, tpf = 3>} : tensor<?x32xf32> -> tensor<?x32xf32>
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{'intermediate' must be positive, got 0}}
  %y = helix.ffn %x {intermediate = 0 : i64, layer = 0 : i64, prefix = "m"} : tensor<?x32xf32>
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{'intermediate' must be positive, got -96}}
  %y = helix.ffn %x {intermediate = -96 : i64, layer = 0 : i64, prefix = "m"} : tensor<?x32xf32>
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{'layer' must not be negative, got -1}}
  %y = helix.ffn %x {intermediate = 64 : i64, layer = -1 : i64, prefix = "m"} : tensor<?x32xf32>
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{a dense FFN has no experts: ep must be 1, got 2}}
  %y = helix.ffn %x {intermediate = 64 : i64, layer = 0 : i64, prefix = "m", layout = #helix.layout<gpus = 4, kvp = 4, tpf = 2, ep = 2>} : tensor<?x32xf32>
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{tpf (3) must divide the intermediate size (64)}}
  %y = helix.ffn %x {intermediate = 64 : i64, layer = 0 : i64, prefix = "m", layout = #helix.layout<gpus = 3, kvp = 3, tpf = 3>} : tensor<?x32xf32>
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{ep (3) must divide the number of experts (8)}}
  %y = helix.moe %x {config = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 64>, layer = 0 : i64, prefix = "m", layout = #helix.layout<gpus = 3, kvp = 3, ep = 3>} : tensor<?x32xf32>
  return
}

// -----

func.func @f(%x: tensor<?x32xf32>, %pos: tensor<?xi64>) {
  // expected-error@+1 {{tpf (3) must divide the expert intermediate size (64)}}
  %y = helix.moe %x {config = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 64>, layer = 0 : i64, prefix = "m", layout = #helix.layout<gpus = 6, kvp = 6, tpf = 3, ep = 2>} : tensor<?x32xf32>
  return
}

// -----

func.func @f(%x: tensor<4x32xf32>) {
  // expected-error@+1 {{input and result batch sizes differ}}
  %y = helix.lm_head %x {weight = "w"} : tensor<4x32xf32> -> tensor<2x10xf32>
  return
}

// -----

// expected-error@+1 {{mtp 'draft_tokens' must be in [1, 8], got 9}}
func.func private @f() attributes {a = #helix.mtp<draft_tokens = 9>}

// -----

// expected-error@+1 {{mtp 'acceptance' must be in (0, 1]}}
func.func private @f() attributes {a = #helix.mtp<draft_tokens = 1, acceptance = 0.0>}

// -----

// expected-error@+1 {{'batch' must be positive, got 0}}
func.func private @f() attributes {a = #helix.plan<strategy = helix, hardware = "gb200-nvl72", gpus = 8, batch = 0, context_length = 1024>}

// -----

// expected-error@+2 {{unknown strategy '': expected helix, helix-no-hopb, tp, tp-pp, ep or kvp}}
// expected-error@+1 {{failed to parse Helix_PlanAttr parameter 'strategy'}}
func.func private @f() attributes {a = #helix.plan<strategy = "", hardware = "h100", gpus = 8, batch = 1, context_length = 1024>}

// -----

// expected-error@+2 {{unknown strategy 'tensor_parallel': expected helix, helix-no-hopb, tp, tp-pp, ep or kvp}}
// expected-error@+1 {{failed to parse Helix_PlanAttr parameter 'strategy'}}
func.func private @f() attributes {a = #helix.plan<strategy = tensor_parallel, hardware = "h100", gpus = 8, batch = 1, context_length = 1024>}

// -----

// expected-error@+2 {{unknown number format 'int8': expected fp4, fp8 or bf16}}
// expected-error@+1 {{failed to parse Helix_PlanAttr parameter 'kv_cache'}}
func.func private @f() attributes {a = #helix.plan<strategy = tp, hardware = "h100", gpus = 8, batch = 1, context_length = 1024, kv_cache = int8>}

// -----

// expected-error@+1 {{plan 'ttl_s' must be finite and not negative}}
func.func private @f() attributes {a = #helix.plan<strategy = tp, hardware = "h100", gpus = 8, batch = 1, context_length = 1024, ttl_s = -1.0>}

// -----

// expected-error@+1 {{plan 'routing_skew' must be in [0, 4]}}
func.func private @f() attributes {a = #helix.plan<strategy = ep, hardware = "h100", gpus = 8, batch = 1, context_length = 1024, routing_skew = -0.5>}

// -----

// A NaN budget is not "no budget".
// expected-error@+1 {{plan 'ttl_s' must be finite and not negative}}
func.func private @f() attributes {a = #helix.plan<strategy = tp, hardware = "h100", gpus = 8, batch = 1, context_length = 1024, ttl_s = 0x7FF8000000000000>}

// -----

// expected-error@+1 {{'dp' must be positive, got 0}}
func.func private @f() attributes {a = #helix.layout<gpus = 8, dp = 0>}

// -----

// expected-error@+1 {{cost 'bytes' must be finite and not negative}}
func.func private @f() attributes {a = #helix.cost<time_us = 1.0, overhead_us = 1.0, bytes = -1.0>}

// -----

// expected-error@+1 {{cost categories sum to 3 us but time_us is 5}}
func.func private @f() attributes {a = #helix.cost<time_us = 5.0, compute_us = 1.0, overhead_us = 2.0>}

// -----

// expected-error@+1 {{plan 'slices' must not be negative}}
func.func private @f() attributes {helix.plan = #helix.plan<strategy = helix, hardware = "h100", gpus = 2, batch = 1, context_length = 1024, slices = -1>}

// -----

// expected-error@+1 {{'kv_block' must be positive, got 0}}
func.func private @f() attributes {helix.plan = #helix.plan<strategy = helix, hardware = "h100", gpus = 2, batch = 1, context_length = 1024, kv_block = 0>}

// -----

// Checkpoint names of model IR are tensor names; {layer} and {expert} are
// helix.weight's placeholders (found by fuzz/, helix-fuzz-mlir: the passes
// made helix.weight ops that did not verify).
func.func @f(%x: tensor<?x64xbf16>) -> tensor<?x128xf32> {
  // expected-error@+1 {{'weight' must not contain {layer} (a placeholder of helix.weight), got "model.layers.{layer}.lm_head"}}
  %l = helix.lm_head %x {weight = "model.layers.{layer}.lm_head"} : tensor<?x64xbf16> -> tensor<?x128xf32>
  return %l : tensor<?x128xf32>
}

// -----

func.func @f(%x: tensor<?x64xbf16>) -> tensor<?x64xbf16> {
  // expected-error@+1 {{'prefix' must not contain {expert} (a placeholder of helix.weight), got "model.layers.0.mlp.{expert}"}}
  %f = helix.ffn %x {intermediate = 128 : i64, layer = 0 : i64, prefix = "model.layers.0.mlp.{expert}"} : tensor<?x64xbf16>
  return %f : tensor<?x64xbf16>
}

// -----

// The attention and the projection that makes its q are one layer with one
// config (found by fuzz/, helix-fuzz-mlir: helix-insert-collectives shaped
// MLA's up-projection from one and the partial attention from the other).
func.func @f(%x: tensor<?x128xbf16>, %pos: tensor<?xi64>,
    %c: !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>) -> tensor<?x64xbf16> {
  %q, %k = helix.qkv_proj %x, %pos {config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 64, kv_lora_rank = 32, rope_dim = 8>, layer = 0 : i64, prefix = "model.layers.0.self_attn", rope = #helix.rope<>}
      : (tensor<?x128xbf16>, tensor<?xi64>) -> (tensor<?x4x40xbf16>, tensor<?x1x40xbf16>)
  // expected-error@+1 {{differs from the config of the helix.qkv_proj that makes its q}}
  %o = helix.attention %q, %k cache(%c : !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>) {config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, kv_lora_rank = 32, rope_dim = 8>, layer = 0 : i64, prefix = "model.layers.0.self_attn"}
      : (tensor<?x4x40xbf16>, tensor<?x1x40xbf16>) -> tensor<?x64xbf16>
  return %o : tensor<?x64xbf16>
}

// -----

func.func @f(%x: tensor<?x128xbf16>, %pos: tensor<?xi64>,
    %c: !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>) -> tensor<?x64xbf16> {
  %q, %k = helix.qkv_proj %x, %pos {config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, kv_lora_rank = 32, rope_dim = 8>, layer = 0 : i64, prefix = "model.layers.0.self_attn", rope = #helix.rope<>}
      : (tensor<?x128xbf16>, tensor<?xi64>) -> (tensor<?x4x40xbf16>, tensor<?x1x40xbf16>)
  // expected-error@+1 {{'layer' (6) differs from the layer of the helix.qkv_proj that makes its q (0)}}
  %o = helix.attention %q, %k cache(%c : !helix.kv_cache<heads = 1, key_dim = 40, value_dim = 32, element = bf16, latent = true>) {config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, kv_lora_rank = 32, rope_dim = 8>, layer = 6 : i64, prefix = "model.layers.0.self_attn"}
      : (tensor<?x4x40xbf16>, tensor<?x1x40xbf16>) -> tensor<?x64xbf16>
  return %o : tensor<?x64xbf16>
}

// -----

// Per-layer plans (#helix.kind_layout, #helix.plan's layouts).

// expected-error@+2 {{unknown kind of layer 'sliding': expected full_attention, window_attention, dense_ffn or moe_ffn}}
// expected-error@+1 {{failed to parse Helix_KindLayoutAttr parameter 'kind'}}
func.func private @f() attributes {a = #helix.kind_layout<kind = sliding, layers = 2, kvp = 2, tpa = 2>}

// -----

// expected-error@+1 {{window_attention layout: an attention kind has kvp and tpa only}}
func.func private @f() attributes {a = #helix.kind_layout<kind = window_attention, layers = 2, tpa = 2, tpf = 2>}

// -----

// expected-error@+1 {{moe_ffn layout: an FFN kind has tpf, ep and replicas only}}
func.func private @f() attributes {a = #helix.kind_layout<kind = moe_ffn, layers = 2, kvp = 2, tpf = 2>}

// -----

// expected-error@+1 {{dense_ffn layout: a dense FFN has no experts (ep must be 1)}}
func.func private @f() attributes {a = #helix.kind_layout<kind = dense_ffn, layers = 2, ep = 2>}

// -----

// expected-error@+1 {{'replicas' must be positive}}
func.func private @f() attributes {a = #helix.kind_layout<kind = dense_ffn, layers = 2, replicas = 0>}

// -----

// expected-error@+1 {{plan 'layouts': the moe_ffn layout does not cover the plan's 4 GPUs (tpf x ep x replicas must be 4)}}
func.func private @f() attributes {a = #helix.plan<strategy = helix, hardware = "h100", gpus = 4, batch = 1, context_length = 1024, layouts = [#helix.kind_layout<kind = full_attention, layers = 2, kvp = 2, tpa = 2>, #helix.kind_layout<kind = moe_ffn, layers = 2, tpf = 2>]>}

// -----

// expected-error@+1 {{plan 'layouts' lists full_attention twice}}
func.func private @f() attributes {a = #helix.plan<strategy = helix, hardware = "h100", gpus = 4, batch = 1, context_length = 1024, layouts = [#helix.kind_layout<kind = full_attention, layers = 2, kvp = 4>, #helix.kind_layout<kind = full_attention, layers = 2, tpa = 4>, #helix.kind_layout<kind = moe_ffn, layers = 2, tpf = 4>]>}

// -----

// expected-error@+1 {{plan 'layouts' (per-layer layouts) need the helix strategy, got tp}}
func.func private @f() attributes {a = #helix.plan<strategy = tp, hardware = "h100", gpus = 4, batch = 1, context_length = 1024, layouts = [#helix.kind_layout<kind = full_attention, layers = 2, tpa = 4>, #helix.kind_layout<kind = dense_ffn, layers = 2, tpf = 4>]>}

// -----

// expected-error@+1 {{plan 'layouts' need a token-mixer kind (attention, linear attention or Mamba) and an FFN kind}}
func.func private @f() attributes {a = #helix.plan<strategy = helix, hardware = "h100", gpus = 4, batch = 1, context_length = 1024, layouts = [#helix.kind_layout<kind = full_attention, layers = 2, tpa = 4>]>}

// -----

// The long-context layers: linear attention, Mamba-2, DeepSeek Sparse
// Attention.

// expected-error@+1 {{value_heads (6) must be a multiple of key_heads (4)}}
func.func private @f() attributes {a = #helix.linear_attn<variant = gated_deltanet, key_heads = 4, value_heads = 6, key_head_dim = 32, value_head_dim = 32>}

// -----

// expected-error@+1 {{kda has as many key heads as value heads, got 2 and 4}}
func.func private @f() attributes {a = #helix.linear_attn<variant = kda, key_heads = 2, value_heads = 4, key_head_dim = 32, value_head_dim = 32>}

// -----

// expected-error@+1 {{full_rank_gate and gate_lower_bound are kda's}}
func.func private @f() attributes {a = #helix.linear_attn<variant = gated_deltanet, key_heads = 2, value_heads = 4, key_head_dim = 32, value_head_dim = 32, full_rank_gate = true>}

// -----

// expected-error@+1 {{gate_lower_bound must be finite and <= 0}}
func.func private @f() attributes {a = #helix.linear_attn<variant = kda, key_heads = 4, value_heads = 4, key_head_dim = 32, value_head_dim = 32, gate_lower_bound = 1.0>}

// -----

// expected-error@+1 {{state_dtype must be "float32", "bfloat16" or "float16", got "int8"}}
func.func private @f() attributes {a = #helix.linear_attn<variant = gated_deltanet, key_heads = 2, value_heads = 4, key_head_dim = 32, value_head_dim = 32, state_dtype = "int8">}

// -----

// expected-error@+1 {{groups (3) must divide heads (8)}}
func.func private @f() attributes {a = #helix.mamba<heads = 8, head_dim = 32, state_size = 16, groups = 3>}

// -----

// expected-error@+1 {{rope_dim (32) must not exceed head_dim (16)}}
func.func private @f() attributes {a = #helix.indexer<heads = 4, head_dim = 16, top_k = 16, rope_dim = 32>}

// -----

// expected-error@+1 {{partial_rotary must be in (0, 1], got 1.5}}
func.func private @f() attributes {a = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 32, v_head_dim = 32, partial_rotary = 1.5>}

// -----

// expected-error@+1 {{latent_norm needs a latent_size}}
func.func private @f() attributes {a = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 64, latent_norm = true>}

// -----

// expected-error@+1 {{recurrent_state 'element' must be a float type, got 'i32'}}
func.func private @f(!helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 256, conv_kernel = 4, element = i32>)

// -----

// expected-error@+1 {{index_cache 'head_dim' must be positive, got 0}}
func.func private @f(!helix.index_cache<head_dim = 0>)

// -----

func.func @f(%x: tensor<?x128xbf16>, %s: !helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 256, conv_kernel = 4, element = bf16>) -> tensor<?x128xbf16> {
  // expected-error@+1 {{state '!helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 256, conv_kernel = 4, element = bf16>' does not match the config: expected 4 heads of 32 x 32 float32 values and 256 convolution channels of 4 taps}}
  %o = helix.linear_attention %x state(%s : !helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 256, conv_kernel = 4, element = bf16>) {config = #helix.linear_attn<variant = gated_deltanet, key_heads = 2, value_heads = 4, key_head_dim = 32, value_head_dim = 32>, layer = 0 : i64, prefix = "model.layers.0.linear_attn"} : tensor<?x128xbf16> -> tensor<?x128xbf16>
  return %o : tensor<?x128xbf16>
}

// -----

func.func @f(%x: tensor<?x128xbf16>, %s: !helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 256, conv_kernel = 4, element = f32>) -> tensor<?x64xbf16> {
  // expected-error@+1 {{result must have shape [?, 128], got [?, 64]}}
  %o = helix.linear_attention %x state(%s : !helix.recurrent_state<heads = 4, rows = 32, cols = 32, conv_channels = 256, conv_kernel = 4, element = f32>) {config = #helix.linear_attn<variant = gated_deltanet, key_heads = 2, value_heads = 4, key_head_dim = 32, value_head_dim = 32>, layer = 0 : i64, prefix = "model.layers.0.linear_attn"} : tensor<?x128xbf16> -> tensor<?x64xbf16>
  return %o : tensor<?x64xbf16>
}

// -----

func.func @f(%x: tensor<?x128xbf16>, %s: !helix.recurrent_state<heads = 8, rows = 32, cols = 16, conv_channels = 300, conv_kernel = 4, element = f32>) -> tensor<?x256xbf16> {
  // expected-error@+1 {{does not match the config: expected 8 heads of 32 x 16 float32 values and 320 convolution channels of 4 taps}}
  %o = helix.mamba %x state(%s : !helix.recurrent_state<heads = 8, rows = 32, cols = 16, conv_channels = 300, conv_kernel = 4, element = f32>) {config = #helix.mamba<heads = 8, head_dim = 32, state_size = 16, groups = 2>, layer = 0 : i64, prefix = "model.layers.0.mixer"} : tensor<?x128xbf16> -> tensor<?x256xbf16>
  return %o : tensor<?x256xbf16>
}

// -----

func.func @f(%x: tensor<?x128xbf16>, %pos: tensor<?xi64>, %ic: !helix.index_cache<head_dim = 32>) -> tensor<?x16xi64> {
  // expected-error@+1 {{index cache '!helix.index_cache<head_dim = 32>' does not match the indexer's head_dim (16)}}
  %sel = helix.dsa_indexer %x, %pos cache(%ic : !helix.index_cache<head_dim = 32>) {config = #helix.indexer<heads = 4, head_dim = 16, top_k = 16>, q_lora_rank = 64 : i64, layer = 0 : i64, prefix = "model.layers.0.self_attn.indexer"} : (tensor<?x128xbf16>, tensor<?xi64>) -> tensor<?x16xi64>
  return %sel : tensor<?x16xi64>
}

// -----

func.func @f(%x: tensor<?x128xbf16>, %pos: tensor<?xi64>, %ic: !helix.index_cache<head_dim = 16>) -> tensor<?x8xi64> {
  // expected-error@+1 {{selected must have shape [?, 16], got [?, 8]}}
  %sel = helix.dsa_indexer %x, %pos cache(%ic : !helix.index_cache<head_dim = 16>) {config = #helix.indexer<heads = 4, head_dim = 16, top_k = 16>, q_lora_rank = 64 : i64, layer = 0 : i64, prefix = "model.layers.0.self_attn.indexer"} : (tensor<?x128xbf16>, tensor<?xi64>) -> tensor<?x8xi64>
  return %sel : tensor<?x8xi64>
}

// -----

func.func @f(%x: tensor<?x128xbf16>, %pos: tensor<?xi64>, %ic: !helix.index_cache<head_dim = 16>) -> tensor<?x16xi64> {
  // expected-error@+1 {{a layer that reuses the previous layer's selection has no indexer}}
  %sel = helix.dsa_indexer %x, %pos cache(%ic : !helix.index_cache<head_dim = 16>) {config = #helix.indexer<heads = 4, head_dim = 16, top_k = 16, reuses_previous = true>, q_lora_rank = 64 : i64, layer = 0 : i64, prefix = "model.layers.0.self_attn.indexer"} : (tensor<?x128xbf16>, tensor<?xi64>) -> tensor<?x16xi64>
  return %sel : tensor<?x16xi64>
}

// -----

func.func @f(%q: tensor<?x4x32xbf16>, %k: tensor<?x2x32xbf16>, %sel: tensor<?x16xi64>, %c: !helix.kv_cache<heads = 2, key_dim = 32, value_dim = 32, element = bf16>) -> tensor<?x128xbf16> {
  // expected-error@+1 {{sparse attention is MLA's (DeepSeek Sparse Attention), got kind gqa}}
  %o = helix.sparse_attention %q, %k, %sel cache(%c : !helix.kv_cache<heads = 2, key_dim = 32, value_dim = 32, element = bf16>) {config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 32, v_head_dim = 32>, layer = 0 : i64, prefix = "model.layers.0.self_attn"} : (tensor<?x4x32xbf16>, tensor<?x2x32xbf16>, tensor<?x16xi64>) -> tensor<?x128xbf16>
  return %o : tensor<?x128xbf16>
}

// -----

// A recurrent layer's state has a fixed size: a per-layer plan may not ask
// KV parallelism of it.
// expected-error@+1 {{linear_attention layout: a recurrent layer keeps a fixed-size state, not a KV cache, so KV parallelism (kvp = 2) means nothing for it; use kvp = 1 and a TP group (tpa) with replicas}}
func.func private @f() attributes {a = #helix.kind_layout<kind = linear_attention, layers = 2, kvp = 2, tpa = 2>}

// -----

// expected-error@+1 {{mamba layout: a recurrent kind has tpa and replicas only}}
func.func private @f() attributes {a = #helix.kind_layout<kind = mamba, layers = 2, tpf = 2>}

// -----

// expected-error@+1 {{plan 'layouts': the linear_attention layout does not cover the plan's 4 GPUs (tpa x replicas must be 4)}}
func.func private @f() attributes {a = #helix.plan<strategy = helix, hardware = "h100", gpus = 4, batch = 1, context_length = 1024, layouts = [#helix.kind_layout<kind = full_attention, layers = 1, kvp = 4>, #helix.kind_layout<kind = linear_attention, layers = 3, tpa = 2>, #helix.kind_layout<kind = moe_ffn, layers = 4, tpf = 4>]>}
