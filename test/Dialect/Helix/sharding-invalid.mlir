// RUN: helix-opt %s -split-input-file -verify-diagnostics

// Verifier diagnostics of the sharding ops, attributes and types.

// expected-error@+1 {{#helix.dist uses grid axis 2 more than once}}
func.func private @f() attributes {a = #helix.dist<@g, [[2]], partial = [2]>}

// -----

// expected-error@+1 {{#helix.dist stage must not be negative}}
func.func private @f() attributes {a = #helix.dist<@g, stage = -1>}

// -----

// expected-error@+1 {{kv_placement capacity (40) must be a whole number of 16-token blocks}}
func.func private @f() attributes {a = #helix.kv_placement<block = 16, kvp = 2, capacity = 40>}

// -----

// expected-error@+1 {{a latent kv_shard has one head whose values are a prefix of its keys}}
func.func private @f(%c: !helix.kv_shard<rows = 1, tokens = 16, heads = 2, key_dim = 40, value_dim = 32, element = bf16, latent = true>)

// -----

// expected-error@+1 {{view [4, 16, 32] does not hold the 4096 values of checkpoint shape [64, 64]}}
%w = helix.weight "w" [64, 64] view [4, 16, 32] : tensor<4x16x32xbf16>

// -----

// expected-error@+1 {{slice [3, 5) of dimension 0 is outside the view [4, 16, 64]}}
%w = helix.weight "w" [64, 64] view [4, 16, 64] offsets [3, 0, 0] : tensor<2x16x64xbf16>

// -----

// expected-error@+1 {{weights have static shapes}}
%w = helix.weight "w" [64, 64] : tensor<?x64xbf16>

// -----

// expected-error@+1 {{view [8, 32, 64] (one expert per leading row) does not hold the 4096 values of checkpoint shape [64, 64]}}
%w = helix.weight "e.{expert}.w" [64, 64] view [8, 32, 64] : tensor<8x32x64xbf16>

// -----

func.func @f(%t: tensor<4xi64>, %w: tensor<16x64xbf16>) {
  // expected-error@+1 {{result must have shape [4, 64], got [4, 32]}}
  %e = helix.embed_rows %t, %w : (tensor<4xi64>, tensor<16x64xbf16>) -> tensor<4x32xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<32xbf16>) {
  // expected-error@+1 {{weight must have shape [64], got [32]}}
  %n = helix.norm_rows %x, %w {eps = 1.0e-05 : f64} : tensor<4x64xbf16>, tensor<32xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<16x32xbf16>) {
  // expected-error@+1 {{weight must have shape [?, 64], got [16, 32]}}
  %y = helix.matmul %x, %w : (tensor<4x64xbf16>, tensor<16x32xbf16>) -> tensor<4x16xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %pos: tensor<4xi64>, %wq: tensor<4x16x64xbf16>, %wk: tensor<2x16x64xbf16>) {
  // expected-error@+1 {{q/k/v biases are required by the attention config}}
  %q, %k, %v = helix.qkv %x, %pos weights(%wq, %wk, %wk) {config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16, qkv_bias = true>, layer = 0 : i64, rope = #helix.rope<>}
    : (tensor<4x64xbf16>, tensor<4xi64>, tensor<4x16x64xbf16>, tensor<2x16x64xbf16>, tensor<2x16x64xbf16>) -> (tensor<4x4x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %pos: tensor<4xi64>, %wq: tensor<3x16x64xbf16>, %wk: tensor<2x16x64xbf16>) {
  // expected-error@+1 {{the 3 query heads must be a multiple of the 2 KV heads}}
  %q, %k, %v = helix.qkv %x, %pos weights(%wq, %wk, %wk) {config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, rope = #helix.rope<>}
    : (tensor<4x64xbf16>, tensor<4xi64>, tensor<3x16x64xbf16>, tensor<2x16x64xbf16>, tensor<2x16x64xbf16>) -> (tensor<4x3x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %pos: tensor<4xi64>, %wqb: tensor<4x24x64xbf16>, %wkva: tensor<40x64xbf16>, %kvn: tensor<32xbf16>, %wkvb: tensor<4x32x32xbf16>) {
  // expected-error@+1 {{q LoRA weights are required exactly when q_lora_rank > 0}}
  %q, %l = helix.mla_qkv %x, %pos weights(%wqb, %wkva, %kvn, %wkvb) {config = #helix.attn<kind = mla, heads = 4, kv_heads = 1, head_dim = 24, v_head_dim = 16, q_lora_rank = 48, kv_lora_rank = 32, rope_dim = 8>, layer = 0 : i64, rope = #helix.rope<>}
    : (tensor<4x64xbf16>, tensor<4xi64>, tensor<4x24x64xbf16>, tensor<40x64xbf16>, tensor<32xbf16>, tensor<4x32x32xbf16>) -> (tensor<4x4x40xbf16>, tensor<4x1x40xbf16>)
  return
}

// -----

func.func @f(%q: tensor<4x4x16xbf16>, %k: tensor<4x2x16xbf16>, %c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>) {
  // expected-error@+1 {{result must have shape [2, 4, 4, 17], got [2, 4, 4, 16]}}
  %p = helix.attention_partial %q, %k, %k cache(%c) {cache_rows = 4 : i64, config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64}
    : (tensor<4x4x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>) -> tensor<2x4x4x16xf32>
  return
}

// -----

// A verify step's rows are whole requests of `queries` rows each.
func.func @f(%q: tensor<4x4x16xbf16>, %k: tensor<4x2x16xbf16>, %c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>) {
  // expected-error@+1 {{the 4 query rows from batch_offset 0 are not whole requests of 3 queries}}
  %p = helix.attention_partial %q, %k, %k cache(%c) {cache_rows = 4 : i64, config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, queries = 3 : i64}
    : (tensor<4x4x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>) -> tensor<1x4x4x17xf32>
  return
}

// -----

func.func @f(%q: tensor<4x4x16xbf16>, %k: tensor<4x2x16xbf16>, %c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>) {
  // expected-error@+1 {{queries (10) must be in [1, 9]}}
  %p = helix.attention_partial %q, %k, %k cache(%c) {cache_rows = 4 : i64, config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, queries = 10 : i64}
    : (tensor<4x4x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>) -> tensor<1x4x4x17xf32>
  return
}

// -----

// Two requests of two queries: cache rows 1 and 2 of a 2-row shard.
func.func @f(%q: tensor<4x4x16xbf16>, %k: tensor<4x2x16xbf16>, %c: !helix.kv_shard<rows = 2, tokens = 32, heads = 2, key_dim = 16, value_dim = 16, element = bf16>, %s: tensor<1x4xi64>, %sp: tensor<1x4x2xi64>) {
  // expected-error@+1 {{requests [1, 3) are outside the KV shard's 2 rows}}
  %p = helix.attention_partial %q, %k, %k cache(%c) kv(%s, %sp) {batch_offset = 2 : i64, cache_rows = 2 : i64, config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 32>, queries = 2 : i64}
    : (tensor<4x4x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, !helix.kv_shard<rows = 2, tokens = 32, heads = 2, key_dim = 16, value_dim = 16, element = bf16>, tensor<1x4xi64>, tensor<1x4x2xi64>) -> tensor<1x4x4x17xf32>
  return
}

// -----

func.func @f(%q: tensor<4x4x16xbf16>, %k: tensor<4x2x16xbf16>, %c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>) {
  // expected-error@+1 {{head_split (3) must divide v_head_dim (16)}}
  %p = helix.attention_partial %q, %k, %k cache(%c) {cache_rows = 4 : i64, config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, head_split = 3 : i64, layer = 0 : i64}
    : (tensor<4x4x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>) -> tensor<2x4x4x17xf32>
  return
}

// -----

func.func @f(%q: tensor<4x4x16xbf16>, %k: tensor<4x2x16xbf16>, %c: !helix.kv_cache<heads = 8, key_dim = 16, value_dim = 16, element = bf16>) {
  // expected-error@+1 {{does not match the attention config}}
  %p = helix.attention_partial %q, %k, %k cache(%c) {cache_rows = 4 : i64, config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64}
    : (tensor<4x4x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, !helix.kv_cache<heads = 8, key_dim = 16, value_dim = 16, element = bf16>) -> tensor<1x4x4x17xf32>
  return
}

// -----

func.func @f(%q: tensor<4x4x16xbf16>, %k: tensor<4x2x16xbf16>, %c: !helix.kv_shard<rows = 4, tokens = 32, heads = 2, key_dim = 16, value_dim = 16, element = bf16>) {
  // expected-error@+1 {{a KV shard needs its placement and kv(slots, spans) (run helix-kv-placement)}}
  %p = helix.attention_partial %q, %k, %k cache(%c) {cache_rows = 4 : i64, config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64}
    : (tensor<4x4x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, !helix.kv_shard<rows = 4, tokens = 32, heads = 2, key_dim = 16, value_dim = 16, element = bf16>) -> tensor<1x4x4x17xf32>
  return
}

// -----

func.func @f(%q: tensor<4x4x16xbf16>, %k: tensor<4x2x16xbf16>, %c: !helix.kv_shard<rows = 4, tokens = 32, heads = 2, key_dim = 16, value_dim = 16, element = bf16>, %s: tensor<1x4xi64>, %sp: tensor<1x4x2xi64>) {
  // expected-error@+1 {{KV shard holds 32 tokens per request but the placement's capacity is 64}}
  %p = helix.attention_partial %q, %k, %k cache(%c) kv(%s, %sp) {cache_rows = 4 : i64, config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 64>}
    : (tensor<4x4x16xbf16>, tensor<4x2x16xbf16>, tensor<4x2x16xbf16>, !helix.kv_shard<rows = 4, tokens = 32, heads = 2, key_dim = 16, value_dim = 16, element = bf16>, tensor<1x4xi64>, tensor<1x4x2xi64>) -> tensor<1x4x4x17xf32>
  return
}

// -----

func.func @f(%p: tensor<2x4x4x17xf32>) {
  // expected-error@+1 {{result must have shape [4, 64], got [4, 68]}}
  %o = helix.lse_combine %p : tensor<2x4x4x17xf32> -> tensor<4x68xbf16>
  return
}

// -----

func.func @f(%pos: tensor<4xi64>) {
  %r = arith.constant 2 : index
  // expected-error@+1 {{ranks [2, 4) are outside the 2 KVP ranks}}
  %s, %sp = helix.kv_slots %pos rank_offset(%r) {placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 64>} : tensor<4xi64> -> tensor<2x4xi64>, tensor<2x4x2xi64>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %g: tensor<32x64xbf16>, %d: tensor<64x16xbf16>) {
  // expected-error@+1 {{w_down must have shape [64, 32], got [64, 16]}}
  %y = helix.gated_mlp %x, %g, %g, %d : (tensor<4x64xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64x16xbf16>) -> tensor<4x64xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<8x64xbf16>) {
  // expected-error@+1 {{ids must have shape [4, 2], got [4, 3]}}
  %wt, %ids = helix.moe_router %x, %w {config = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 32>} : (tensor<4x64xbf16>, tensor<8x64xbf16>) -> (tensor<4x2xf32>, tensor<4x3xi32>)
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<4x2xf32>, %ids: tensor<4x2xi32>, %g: tensor<2x32x64xbf16>) {
  // expected-error@+1 {{expects 3 stacked expert weights (gate, up, down)}}
  %y = helix.moe_experts %x, %w, %ids experts(%g, %g) {config = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 32>} : (tensor<4x64xbf16>, tensor<4x2xf32>, tensor<4x2xi32>, tensor<2x32x64xbf16>, tensor<2x32x64xbf16>) -> tensor<4x64xbf16>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>, %w: tensor<4x2xf32>, %ids: tensor<4x2xi32>, %g: tensor<2x32x64xbf16>, %d: tensor<2x64x32xbf16>) {
  %e = arith.constant 7 : index
  // expected-error@+1 {{experts [7, 9) are outside the 8 experts}}
  %y = helix.moe_experts %x, %w, %ids experts(%g, %g, %d) expert_offset(%e) {config = #helix.moe<experts = 8, top_k = 2, expert_intermediate = 32>} : (tensor<4x64xbf16>, tensor<4x2xf32>, tensor<4x2xi32>, tensor<2x32x64xbf16>, tensor<2x32x64xbf16>, tensor<2x64x32xbf16>, index) -> tensor<1x4x64xbf16>
  return
}

// -----

func.func @f(%x: tensor<2x4x64xbf16>) {
  // expected-error@+1 {{result must have shape [4, 64], got [2, 64]}}
  %y = helix.group_sum %x : tensor<2x4x64xbf16> -> tensor<2x64xbf16>
  return
}

// -----

shard.grid @g(shape = 1x1x2x2)
func.func @f(%x: tensor<4x64xbf16>) {
  // expected-error@+1 {{all_to_all needs 'split_axis'}}
  %y = helix.collective all_to_all %x on @g grid_axes = [2] concat_axis = 0 : tensor<4x64xbf16> -> tensor<4x64xbf16>
  return
}

// -----

shard.grid @g(shape = 1x1x2x2)
func.func @f(%x: tensor<4x64xbf16>) {
  // expected-error@+1 {{all_reduce takes no 'gather_axis'}}
  %y = helix.collective all_reduce %x on @g grid_axes = [2] gather_axis = 0 : tensor<4x64xbf16> -> tensor<4x64xbf16>
  return
}

// -----

shard.grid @g(shape = 1x1x2x2)
func.func @f(%x: tensor<4x64xbf16, #helix.dist<@g, partial = [3]>>) {
  // expected-error@+1 {{all_reduce over grid axes [2]: the input is not partial over axis 2}}
  %y = helix.collective all_reduce %x on @g grid_axes = [2] : tensor<4x64xbf16, #helix.dist<@g, partial = [3]>> -> tensor<4x64xbf16>
  return
}

// -----

shard.grid @g(shape = 1x1x2x2)
func.func @f(%x: tensor<4x64xbf16, #helix.dist<@g, partial = [2, 3]>>) {
  // expected-error@+1 {{all_reduce over grid axes [2]: the result's distribution is not the input's after the collective}}
  %y = helix.collective all_reduce %x on @g grid_axes = [2] : tensor<4x64xbf16, #helix.dist<@g, partial = [2, 3]>> -> tensor<4x64xbf16>
  return
}

// -----

shard.grid @g(shape = 1x1x2x2)
func.func @f(%x: tensor<4x64xbf16, #helix.dist<@g, [[2, 3]]>>) {
  // expected-error@+1 {{all_gather over grid axes [2]: the gathered dimension must be split over the grid axes last}}
  %y = helix.collective all_gather %x on @g grid_axes = [2] gather_axis = 0 : tensor<4x64xbf16, #helix.dist<@g, [[2, 3]]>> -> tensor<4x64xbf16, #helix.dist<@g, [[3]]>>
  return
}

// -----

shard.grid @g(shape = 1x1x2x2)
func.func @f(%x: tensor<2x4x8xf32, #helix.dist<@g, [[], [], [3]]>>) {
  // expected-error@+1 {{all_to_all over grid axes [2]: the concatenated dimension must be split over the grid axes last}}
  %y = helix.collective all_to_all %x on @g grid_axes = [2] split_axis = 2 concat_axis = 0 : tensor<2x4x8xf32, #helix.dist<@g, [[], [], [3]]>> -> tensor<2x4x8xf32, #helix.dist<@g, [[], [], [3, 2]]>>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>) {
  // expected-error@+1 {{grid @nowhere is not a shard.grid}}
  %y = helix.collective all_reduce %x on @nowhere grid_axes = [] : tensor<4x64xbf16> -> tensor<4x64xbf16>
  return
}

// -----

func.func private @not_a_grid()
func.func @f(%x: tensor<4x64xbf16>) {
  // expected-error@+1 {{grid @not_a_grid is not a shard.grid}}
  %y = helix.collective all_reduce %x on @not_a_grid grid_axes = [] : tensor<4x64xbf16> -> tensor<4x64xbf16>
  return
}

// -----

shard.grid @g(shape = 1x1x2x2)
func.func @f(%x: tensor<4x64xbf16>) {
  // expected-error@+1 {{grid_axes [4] must be axes of the 4-d grid @g}}
  %y = helix.collective all_slice %x on @g grid_axes = [4] slice_axis = 0 : tensor<4x64xbf16> -> tensor<4x64xbf16, #helix.dist<@g, [[4]]>>
  return
}

// -----

shard.grid @g(shape = 1x1x2x2)
func.func @f(%x: tensor<4x64xbf16>) {
  // expected-error@+1 {{grid_axes [2, 2] must be distinct non-negative axes}}
  %y = helix.collective all_slice %x on @g grid_axes = [2, 2] slice_axis = 0 : tensor<4x64xbf16> -> tensor<4x64xbf16, #helix.dist<@g, [[2]]>>
  return
}

// -----

shard.grid @h(shape = 1x2)
func.func @f(%x: tensor<4x64xbf16, #helix.dist<@h, [[2]]>>, %w: tensor<64xbf16>) {
  // The grids of operand and result distributions are checked too.
  // expected-error@+1 {{#helix.dist uses axis 2 of the 2-d grid @h}}
  %y = helix.norm_rows %x, %w {eps = 1.0e-06 : f64} : tensor<4x64xbf16, #helix.dist<@h, [[2]]>>, tensor<64xbf16>
  return
}

// -----

func.func @f() {
  // expected-error@+1 {{#helix.dist grid @nowhere is not a shard.grid}}
  %w = helix.weight "w" [4, 64] : tensor<4x64xbf16, #helix.dist<@nowhere, [[2]]>>
  return
}

// -----

shard.grid @g(shape = 1x1x2x2)
func.func @f() {
  // expected-error@+1 {{#helix.dist uses axis 4 of the 4-d grid @g}}
  %w = helix.weight "w" [4, 64] : tensor<4x64xbf16, #helix.dist<@g, [[4]]>>
  return
}

// -----

shard.grid @g(shape = 2x1x2x2)
func.func @f(%x: tensor<4x64xbf16, #helix.dist<@g, stage = 2>>, %w: tensor<64xbf16>) {
  // expected-error@+1 {{#helix.dist stage 2 is not on grid @g}}
  %y = helix.norm_rows %x, %w {eps = 1.0e-06 : f64} : tensor<4x64xbf16, #helix.dist<@g, stage = 2>>, tensor<64xbf16>
  return
}

// -----

shard.grid @g(shape = 1x1x2x2)
func.func @f(%x: tensor<4x64xbf16>) {
  // expected-error@+1 {{is the identity on the logical (global-view) value: shapes and element types must match}}
  %y = helix.collective all_reduce %x on @g grid_axes = [] : tensor<4x64xbf16> -> tensor<2x64xbf16>
  return
}

// -----

shard.grid @g(shape = 2x1x2x2)
func.func @f(%x: tensor<4x64xbf16, #helix.dist<@g>>) {
  // expected-error@+1 {{send_recv over grid axes [0]: the input must be on stage 'source' and the result on stage 'destination'}}
  %y = helix.collective send_recv %x on @g grid_axes = [0] source = [0] destination = [1] : tensor<4x64xbf16, #helix.dist<@g>> -> tensor<4x64xbf16, #helix.dist<@g>>
  return
}

// -----

func.func @f(%x: tensor<4x64xbf16>) {
  // expected-error@+1 {{must yield exactly one value of type 'tensor<4x32xbf16>'}}
  %t = helix.async_start {
    helix.async_yield %x : tensor<4x64xbf16>
  } : !helix.async<tensor<4x32xbf16>>
  return
}

// -----

func.func @f(%t: !helix.async<tensor<4x64xbf16>>) {
  // expected-error@+1 {{result type must be the awaited 'tensor<4x64xbf16>'}}
  %x = helix.async_wait %t : !helix.async<tensor<4x64xbf16>> -> tensor<4x32xbf16>
  return
}

// -----

func.func @f(%o: index) {
  // expected-error@+1 {{needs one offset per view dimension}}
  %w = helix.weight "w" [64, 64] view [4, 16, 64] offsets [%o, %o] : tensor<2x16x64xbf16>
  return
}

// -----

func.func @f(%c: i1, %b: tensor<64xbf16>) {
  // expected-error@+1 {{all of {value, result} have same type}}
  %k = "helix.keep_if"(%c, %b) : (i1, tensor<64xbf16>) -> tensor<32xbf16>
  return
}

// -----

func.func @f() {
  // expected-error@+1 {{a name with {layer} takes a layer(..) operand, and only such a name}}
  %w = helix.weight "model.layers.{layer}.w" [8] : tensor<8xf32>
  return
}

// -----

func.func @f(%l: index) {
  // expected-error@+1 {{a name with {layer} takes a layer(..) operand, and only such a name}}
  %w = helix.weight "model.layers.0.w" layer(%l) [8] : tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<4x128xf32>, %pos: tensor<4xi64>, %s: !helix.state_shard<rows = 4, values = 700>,
    %qkvz: tensor<1x96x128xf32>, %ba: tensor<1x4x128xf32>, %cq: tensor<16x4xf32>,
    %ck: tensor<16x4xf32>, %cv: tensor<32x4xf32>, %a: tensor<2xf32>, %dt: tensor<2xf32>, %n: tensor<16xf32>) {
  // expected-error@+1 {{state rows of 700 values do not hold the states and convolution inputs of 1 key and 2 value heads (704)}}
  %o = helix.gdn_step %x, %pos weights(%qkvz, %ba, %cq, %ck, %cv, %a, %dt, %n)
      state(%s : !helix.state_shard<rows = 4, values = 700>)
      {config = #helix.linear_attn<variant = gated_deltanet, key_heads = 4, value_heads = 8, key_head_dim = 16, value_head_dim = 16>,
       eps = 1.0e-06 : f64, layer = 0 : i64}
      : (tensor<4x128xf32>, tensor<4xi64>, tensor<1x96x128xf32>, tensor<1x4x128xf32>, tensor<16x4xf32>,
         tensor<16x4xf32>, tensor<32x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<16xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @f(%x: tensor<4x128xf32>, %pos: tensor<4xi64>, %s: !helix.state_shard<rows = 4, values = 704>,
    %qkvz: tensor<1x96x128xf32>, %ba: tensor<1x4x128xf32>, %cq: tensor<16x4xf32>,
    %ck: tensor<16x4xf32>, %cv: tensor<16x4xf32>, %a: tensor<2xf32>, %dt: tensor<2xf32>, %n: tensor<16xf32>) {
  // expected-error@+1 {{conv_v must have shape [32, 4], got [16, 4]}}
  %o = helix.gdn_step %x, %pos weights(%qkvz, %ba, %cq, %ck, %cv, %a, %dt, %n)
      state(%s : !helix.state_shard<rows = 4, values = 704>)
      {config = #helix.linear_attn<variant = gated_deltanet, key_heads = 4, value_heads = 8, key_head_dim = 16, value_head_dim = 16>,
       eps = 1.0e-06 : f64, layer = 0 : i64}
      : (tensor<4x128xf32>, tensor<4xi64>, tensor<1x96x128xf32>, tensor<1x4x128xf32>, tensor<16x4xf32>,
         tensor<16x4xf32>, tensor<16x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<16xf32>) -> tensor<4x32xf32>
  return
}

// -----

func.func @f(%x: tensor<4x128xf32>, %pos: tensor<4xi64>, %s: !helix.state_shard<rows = 4, values = 704>,
    %qkvz: tensor<1x96x128xf32>, %ba: tensor<1x4x128xf32>, %cq: tensor<16x4xf32>,
    %ck: tensor<16x4xf32>, %cv: tensor<32x4xf32>, %a: tensor<2xf32>, %dt: tensor<2xf32>, %n: tensor<16xf32>) {
  // expected-error@+1 {{takes a Gated DeltaNet config, got kda}}
  %o = helix.gdn_step %x, %pos weights(%qkvz, %ba, %cq, %ck, %cv, %a, %dt, %n)
      state(%s : !helix.state_shard<rows = 4, values = 704>)
      {config = #helix.linear_attn<variant = kda, key_heads = 8, value_heads = 8, key_head_dim = 16, value_head_dim = 16>,
       eps = 1.0e-06 : f64, layer = 0 : i64}
      : (tensor<4x128xf32>, tensor<4xi64>, tensor<1x96x128xf32>, tensor<1x4x128xf32>, tensor<16x4xf32>,
         tensor<16x4xf32>, tensor<32x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<16xf32>) -> tensor<4x32xf32>
  return
}

// -----

// expected-error@+1 {{state_shard rows and values must be positive}}
func.func @f(%s: !helix.state_shard<rows = 0, values = 704>) {
  return
}

// -----

func.func @f(%c: tensor<2x4x8x2xf32>) {
  // expected-error@+1 {{candidates must be [P, B, top_k, 2] with top_k = 16}}
  %s = helix.topk_merge %c {top_k = 16 : i64} : tensor<2x4x8x2xf32> -> tensor<4x16xi64>
  return
}

// -----

func.func @f(%x: tensor<4x128xf32>, %pos: tensor<4xi64>, %wqa: tensor<64x128xf32>, %qn: tensor<64xf32>,
    %wqb: tensor<4x16x64xf32>, %wk: tensor<16x128xf32>, %kn: tensor<16xf32>, %kb: tensor<16xf32>,
    %wp: tensor<4x128xf32>, %ic: !helix.state_shard<rows = 4, values = 1000>, %slots: tensor<1x4xi64>, %spans: tensor<1x4x2xi64>) {
  // expected-error@+1 {{index-key shard rows of 1000 values do not hold 64 keys of 16 values and their positions}}
  %c = helix.index_candidates %x, %pos weights(%wqa, %qn, %wqb, %wk, %kn, %kb, %wp)
      cache(%ic : !helix.state_shard<rows = 4, values = 1000>) kv(%slots, %spans)
      {cache_rows = 4 : i64, config = #helix.indexer<heads = 4, head_dim = 16, top_k = 16, rope_dim = 8>,
       eps = 1.0e-06 : f64, layer = 0 : i64, placement = #helix.kv_placement<block = 16, kvp = 1, capacity = 64>,
       rope = #helix.rope<>}
      : (tensor<4x128xf32>, tensor<4xi64>, tensor<64x128xf32>, tensor<64xf32>, tensor<4x16x64xf32>,
         tensor<16x128xf32>, tensor<16xf32>, tensor<16xf32>, tensor<4x128xf32>, tensor<1x4xi64>, tensor<1x4x2xi64>)
      -> tensor<1x4x16x2xf32>
  return
}

// -----

func.func @f(%x: tensor<4x128xf32>, %pos: tensor<4xi64>, %wqa: tensor<64x128xf32>, %qn: tensor<64xf32>,
    %wqb: tensor<4x16x64xf32>, %wk: tensor<16x128xf32>, %kn: tensor<16xf32>, %kb: tensor<16xf32>,
    %wqa2: tensor<4x64xf32>, %ic: !helix.index_cache<head_dim = 16>) {
  // expected-error@+1 {{w_proj must have shape [4, 128], got [4, 64]}}
  %c = helix.index_candidates %x, %pos weights(%wqa, %qn, %wqb, %wk, %kn, %kb, %wqa2)
      cache(%ic : !helix.index_cache<head_dim = 16>)
      {cache_rows = 4 : i64, config = #helix.indexer<heads = 4, head_dim = 16, top_k = 16, rope_dim = 8>,
       eps = 1.0e-06 : f64, layer = 0 : i64, rope = #helix.rope<>}
      : (tensor<4x128xf32>, tensor<4xi64>, tensor<64x128xf32>, tensor<64xf32>, tensor<4x16x64xf32>,
         tensor<16x128xf32>, tensor<16xf32>, tensor<16xf32>, tensor<4x64xf32>)
      -> tensor<1x4x16x2xf32>
  return
}

// -----

func.func @f(%o: tensor<4x64xf32>, %x: tensor<4x128xf32>, %w: tensor<2x16x128xf32>) {
  // expected-error@+1 {{attention must have shape [4, 32], got [4, 64]}}
  %g = helix.output_gate %o, %x weights(%w)
      : (tensor<4x64xf32>, tensor<4x128xf32>, tensor<2x16x128xf32>) -> tensor<4x64xf32>
  return
}
