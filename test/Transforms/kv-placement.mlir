// helix-kv-placement on global-view IR: round-robin placement of the KV
// entries over the KVP ranks, 16-token blocks by default.

// RUN: helix-opt %S/Inputs/swa.mlir --helix-apply-layout="layout=kvp=4,tpa=2,tpf=2,ep=4 batch=2 context=8192" --helix-insert-collectives \
// RUN:   | helix-opt --helix-kv-placement | FileCheck %s --check-prefix=SWA
// RUN: helix-opt %S/Inputs/mla-moe.mlir --helix-apply-layout="layout=tpa=1,dp=4,tpf=1,ep=4 strategy=ep batch=4 context=8192" --helix-insert-collectives \
// RUN:   | helix-opt --helix-kv-placement=block=32 | FileCheck %s --check-prefix=DP
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=3 context=1000" --helix-insert-collectives --helix-hopb=slices=0 \
// RUN:   | helix-opt --helix-kv-placement=context=4000 | FileCheck %s --check-prefix=HOPB
// RUN: not helix-opt %s --helix-kv-placement 2>&1 | FileCheck %s --check-prefix=NOCONTEXT

// Context 8192 over KVP = 4 in 16-token blocks: 512 blocks, 128 per rank,
// 2048 slots. The window layer (64 tokens) keeps a ring of the window's
// blocks on the rank plus the one being filled: 32 slots. One kv_slots per
// placement; the slots and spans are split over the KVP axis like the
// partials.
// SWA-DAG: %[[FS:.*]], %[[FP:.*]] = helix.kv_slots %{{.*}} {placement = #helix.kv_placement<block = 16, kvp = 4, capacity = 2048>} : tensor<2xi64> -> tensor<4x2xi64, #helix.dist<@helix_attn, {{\[\[}}2]]>>, tensor<4x2x2xi64, #helix.dist<@helix_attn, {{\[\[}}2]]>>
// SWA-DAG: %[[WS:.*]], %[[WP:.*]] = helix.kv_slots %{{.*}} {placement = #helix.kv_placement<block = 16, kvp = 4, capacity = 32, window = 64>}
// SWA: helix.attention_partial {{.*}} kv(%[[WS]], %[[WP]]) {{{.*}}layer = 0 : i64, placement = #helix.kv_placement<block = 16, kvp = 4, capacity = 32, window = 64>}
// SWA: helix.attention_partial {{.*}} kv(%[[FS]], %[[FP]]) {{{.*}}layer = 1 : i64, placement = #helix.kv_placement<block = 16, kvp = 4, capacity = 2048>}

// DP attention: one KV shard per replica (kvp = 1 owns every position),
// the requests split over the replicas like the positions.
// DP: %[[POS:.*]] = helix.collective all_slice %{{.*}} on @helix_attn grid_axes = [1] slice_axis = 0 : tensor<4xi64>
// DP: %[[S:.*]], %[[P:.*]] = helix.kv_slots %[[POS]] {placement = #helix.kv_placement<block = 32, kvp = 1, capacity = 8192>} : tensor<4xi64, #helix.dist<@helix_attn, {{\[\[}}1]]>> -> tensor<1x4xi64, #helix.dist<@helix_attn, {{\[\[}}], [1]]>>
// DP: helix.attention_partial {{.*}} kv(%[[S]], %[[P]])
// DP: helix.attention_partial {{.*}} kv(%[[S]], %[[P]])

// After HOP-B each slice's attention reads the rows of its requests; the
// context option overrides the plan's (4000 tokens: 250 blocks, 125 per
// rank).
// HOPB: %[[S:.*]], %[[P:.*]] = helix.kv_slots %{{.*}} {placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 2000>}
// HOPB: %[[S1:.*]] = tensor.extract_slice %[[S]][0, 1] [2, 1] [1, 1]
// HOPB: %[[P1:.*]] = tensor.extract_slice %[[P]][0, 1, 0] [2, 1, 2] [1, 1, 1]
// HOPB: helix.attention_partial {{.*}} kv(%[[S1]], %[[P1]]) {batch_offset = 1 : i64

// Without a plan there is no context to size the shards for.
// NOCONTEXT: error: 'helix.attention_partial' op helix-kv-placement: no context length (no helix.plan on the function and no context option)
func.func @f(%x: tensor<2x64xbf16>, %pos: tensor<2xi64>, %c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>,
    %wq: tensor<4x16x64xbf16>, %wk: tensor<2x16x64xbf16>) -> tensor<1x2x4x17xf32> {
  %q, %k, %v = helix.qkv %x, %pos weights(%wq, %wk, %wk) {config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64, rope = #helix.rope<>}
    : (tensor<2x64xbf16>, tensor<2xi64>, tensor<4x16x64xbf16>, tensor<2x16x64xbf16>, tensor<2x16x64xbf16>) -> (tensor<2x4x16xbf16>, tensor<2x2x16xbf16>, tensor<2x2x16xbf16>)
  %p = helix.attention_partial %q, %k, %v cache(%c) {cache_rows = 2 : i64, config = #helix.attn<kind = gqa, heads = 4, kv_heads = 2, head_dim = 16, v_head_dim = 16>, layer = 0 : i64}
    : (tensor<2x4x16xbf16>, tensor<2x2x16xbf16>, tensor<2x2x16xbf16>, !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>) -> tensor<1x2x4x17xf32>
  return %p : tensor<1x2x4x17xf32>
}
