// helix-verify-partition on hand-written SPMD rank IR: a consistent
// program, then one broken thing per case. The checker evaluates every
// rank's offsets from its grid coordinates.

// RUN: not helix-opt %s -split-input-file --helix-verify-partition -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=error:

// A valid one (no error): every rank loads the rows of "w" at 4 x its
// coordinate on axis 1, and the ranks gather the column halves of the
// result; the bias is added by the rank holding the first rows only.
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {helix.stage = 0 : i64} {
  %i:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %o = arith.muli %i#1, %c4 : index
  %first = arith.cmpi eq, %o, %c0 : index
  %w = helix.weight "w" [8, 8] offsets [%o, 0] : tensor<4x8xf32>
  %b = helix.weight "b" [4] : tensor<4xf32>
  %k = helix.keep_if %first, %b : tensor<4xf32>
  %y = helix.matmul %x, %w bias(%k) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %z = shard.all_gather %y on @g grid_axes = [1] gather_axis = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

// A valid layer function (no error): called for layers 0 and 1, it loads
// each layer's half of "model.layers.{layer}.w" on each rank, which covers
// both tensors.
shard.grid @g(shape = 1x2)
func.func private @decode_step_stage0_layer_kind0(%l: index, %x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {helix.layers = array<i64: 0, 1>} {
  %i:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
  %c4 = arith.constant 4 : index
  %o = arith.muli %i#1, %c4 : index
  %w = helix.weight "model.layers.{layer}.w" layer(%l) [8, 8] offsets [%o, 0] : tensor<4x8xf32>
  %y = helix.matmul %x, %w : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %z = shard.all_gather %y on @g grid_axes = [1] gather_axis = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
func.func @decode_step_stage0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {helix.stage = 0 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = call @decode_step_stage0_layer_kind0(%c0, %x) : (index, tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = call @decode_step_stage0_layer_kind0(%c1, %a) : (index, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

// A layer function must be private.
// CHECK: error: helix-verify-partition: layer function @layer must be private (its stage programs call it)
shard.grid @g(shape = 1x2)
func.func @layer(%l: index) attributes {helix.layers = array<i64: 0>} {
  return
}
func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
  %c0 = arith.constant 0 : index
  call @layer(%c0) : (index) -> ()
  return
}

// -----

// The layer index must be computable on every rank: at a call ...
// CHECK: error: helix-verify-partition: operand {{.*}} on rank 0: 'arith.maxui' does not compute a value from the rank's coordinates
shard.grid @g(shape = 1x2)
func.func private @decode_step_stage0_layer_kind0(%l: index) attributes {helix.layers = array<i64: 0>} {
  %w = helix.weight "model.layers.{layer}.w" layer(%l) [8] : tensor<8xf32>
  return
}
func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
  %i:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
  %l = arith.maxui %i#0, %i#1 : index
  call @decode_step_stage0_layer_kind0(%l) : (index) -> ()
  return
}

// -----

// ... and at a weight.
// CHECK: error: helix-verify-partition: the layer of model.layers.{layer}.w on rank 0: 'arith.maxui' does not compute a value from the rank's coordinates
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
  %i:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
  %l = arith.maxui %i#0, %i#1 : index
  %w = helix.weight "model.layers.{layer}.w" layer(%l) [8] : tensor<8xf32>
  return
}

// -----

// CHECK: error: helix-verify-partition: no program for stage 1 (the grids have 2 pipeline stages)
shard.grid @g(shape = 2x1)
func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: @decode_step is not a stage program (every function of rank IR has helix.stage, or helix.layers on a layer function, or helix.draft_stage on the MTP drafter)
shard.grid @g(shape = 1x2)
func.func @decode_step() {
  return
}

// -----

// CHECK: error: helix-verify-partition: stage 1 is outside the grids' 1 pipeline stages
shard.grid @g(shape = 1x2)
func.func @decode_step_stage1() attributes {helix.stage = 1 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: stage 0 has two programs
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
  return
}
func.func @other() attributes {helix.stage = 0 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: the program of stage 0 must be @decode_step_stage0
shard.grid @g(shape = 1x2)
func.func @step() attributes {helix.stage = 0 : i64} {
  return
}

// -----

// A collective over the stage axis: the stages' programs must agree.
// CHECK: error: helix-verify-partition: collective #0 on @g grid_axes = [0] in the group of ranks 0 and 1: rank 0 issues `shard.all_reduce {grid = @g, grid_axes = array<i16: 0>, reduction = #shard<partial sum>} : tensor<4x8xf32> -> tensor<4x8xf32>` but rank 1 issues `shard.all_reduce {grid = @g, grid_axes = array<i16: 0>, reduction = #shard<partial sum>} : tensor<4x4xf32> -> tensor<4x4xf32>`
shard.grid @g(shape = 2x1)
func.func @decode_step_stage0(%x: tensor<4x8xf32>) attributes {helix.stage = 0 : i64} {
  %z = shard.all_reduce %x on @g grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
func.func @decode_step_stage1(%x: tensor<4x4xf32>) attributes {helix.stage = 1 : i64} {
  %z = shard.all_reduce %x on @g grid_axes = [0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// CHECK: error: helix-verify-partition: collective #0 on @g grid_axes = [0] in the group of ranks 0 and 1: rank 0 issues `shard.all_reduce {{.*}}` but rank 1 issues nothing
shard.grid @g(shape = 2x1)
func.func @decode_step_stage0(%x: tensor<4x8xf32>) attributes {helix.stage = 0 : i64} {
  %z = shard.all_reduce %x on @g grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
func.func @decode_step_stage1(%x: tensor<4x8xf32>) attributes {helix.stage = 1 : i64} {
  return
}

// -----

// Both ranks load the same rows.
// CHECK: error: helix-verify-partition: checkpoint tensor w: the ranks load 32 of its 64 values
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0() -> tensor<4x8xf32> attributes {helix.stage = 0 : i64} {
  %w = helix.weight "w" [8, 8] offsets [0, 0] : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----

// Rank r loads rows [2r, 2r + 6).
// CHECK: error: helix-verify-partition: checkpoint tensor w: the ranks load overlapping but different slices
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0() -> tensor<6x8xf32> attributes {helix.stage = 0 : i64} {
  %i:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
  %c2 = arith.constant 2 : index
  %o = arith.muli %i#1, %c2 : index
  %w = helix.weight "w" [8, 8] offsets [%o, 0] : tensor<6x8xf32>
  return %w : tensor<6x8xf32>
}

// -----

// Rank 1 loads rows [6, 10) of 8.
// CHECK: error: helix-verify-partition: rank 1 loads [6, 10) of dimension 0 of w, outside its view of 8
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0() -> tensor<4x8xf32> attributes {helix.stage = 0 : i64} {
  %i:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
  %c6 = arith.constant 6 : index
  %o = arith.muli %i#1, %c6 : index
  %w = helix.weight "w" [8, 8] offsets [%o, 0] : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----

// CHECK: error: helix-verify-partition: offset 0 of w on rank 0: an index value is a block argument; rank-dependent values must be computed from the rank's grid coordinates
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0(%o: index) -> tensor<4x8xf32> attributes {helix.stage = 0 : i64} {
  %w = helix.weight "w" [8, 8] offsets [%o, 0] : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----

// CHECK: error: helix-verify-partition: offset 0 of w on rank 0: 'arith.maxui' does not compute a value from the rank's coordinates
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0() -> tensor<4x8xf32> attributes {helix.stage = 0 : i64} {
  %i:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
  %o = arith.maxui %i#0, %i#1 : index
  %w = helix.weight "w" [8, 8] offsets [%o, 0] : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----

// CHECK: error: helix-verify-partition: operand {{.*}} on rank 0: a division by zero
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0(%pos: tensor<4xi64>) attributes {helix.stage = 0 : i64} {
  %i:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
  %c0 = arith.constant 0 : index
  %r = arith.divui %i#1, %c0 : index
  %s, %sp = helix.kv_slots %pos rank_offset(%r) {placement = #helix.kv_placement<block = 16, kvp = 2, capacity = 64>} : tensor<4xi64> -> tensor<1x4xi64>, tensor<1x4x2xi64>
  return
}

// -----

// CHECK: error: helix-verify-partition: operand {{.*}} on rank 0: a comparison other than eq / ne
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0(%b: tensor<4xf32>) attributes {helix.stage = 0 : i64} {
  %i:2 = shard.process_multi_index on @g axes = [0, 1] : index, index
  %lt = arith.cmpi ult, %i#0, %i#1 : index
  %k = helix.keep_if %lt, %b : tensor<4xf32>
  return
}

// -----

// CHECK: error: helix-verify-partition: checkpoint tensor w is seen with two different views
shard.grid @g(shape = 1x1)
func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
  %a = helix.weight "w" [8, 8] : tensor<8x8xf32>
  %b = helix.weight "w" [8, 8] view [2, 4, 8] : tensor<2x4x8xf32>
  return
}

// -----

// CHECK: error: helix-verify-partition: global or dynamic shape 'tensor<4x8xf32, #helix.dist<@g, {{\[\[}}1]]>>' left in rank IR
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0(%x: tensor<4x8xf32, #helix.dist<@g, [[1]]>>) attributes {helix.stage = 0 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: global-view helix.collective left in rank IR
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0(%x: tensor<4x8xf32>) attributes {helix.stage = 0 : i64} {
  %y = helix.collective all_reduce %x on @g grid_axes = [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// CHECK: error: helix-verify-partition: global KV cache '!helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>' left in rank IR (each rank holds a !helix.kv_shard)
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0(%c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>) attributes {helix.stage = 0 : i64} {
  return
}

// -----

// Two pipeline stages: stage 0 sends, stage 1 never receives.
// CHECK: error: helix-verify-partition: rank 0 sends 1 tensors to rank 1 (tensor<4x8xf32>) but rank 1 receives 0 ()
shard.grid @g(shape = 2x1)
func.func @decode_step_stage0(%x: tensor<4x8xf32>) attributes {helix.stage = 0 : i64} {
  %s = shard.send %x on @g grid_axes = [0] destination = [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}
func.func @decode_step_stage1() attributes {helix.stage = 1 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: the module has no shard.grid (run helix-insert-collectives first)
func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: shard.recv needs its source
shard.grid @g(shape = 2x1)
func.func @decode_step_stage0(%x: tensor<4x8xf32>) attributes {helix.stage = 0 : i64} {
  return
}
func.func @decode_step_stage1(%x: tensor<4x8xf32>) attributes {helix.stage = 1 : i64} {
  %r = shard.recv %x on @g grid_axes = [0] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// A speculative program's MTP drafter (helix compile --mtp) is its own SPMD
// program, checked like a stage program: here both ranks load the same
// rows of its weight.
// CHECK: error: helix-verify-partition: checkpoint tensor model.layers.3.eh_proj.weight: the ranks load 32 of its 64 values
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
  return
}
func.func @draft_step_stage0() -> tensor<4x8xf32> attributes {helix.draft_stage = 0 : i64} {
  %w = helix.weight "model.layers.3.eh_proj.weight" [8, 8] offsets [0, 0] : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----

// CHECK: error: helix-verify-partition: the drafter of stage 0 must be @draft_step_stage0, one per stage
shard.grid @g(shape = 1x2)
func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
  return
}
func.func @draft() attributes {helix.draft_stage = 0 : i64} {
  return
}
