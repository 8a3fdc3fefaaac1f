// helix-verify-partition on hand-written rank IR: a consistent two-rank
// program, then one broken thing per case.

// RUN: not helix-opt %s -split-input-file --helix-verify-partition -o /dev/null 2>&1 | FileCheck %s --implicit-check-not=error:

// A valid one (no error): each rank loads half the rows of "w" and the
// ranks gather the column halves of the result.
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  %w = helix.weight "w" [8, 8] offsets [0, 0] : tensor<4x8xf32>
  %y = helix.matmul %x, %w : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %z = shard.all_gather %y on @g grid_axes = [1] gather_axis = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}
func.func @decode_step_rank1(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {helix.coords = {g = array<i64: 0, 1>}, helix.rank = 1 : i64} {
  %w = helix.weight "w" [8, 8] offsets [4, 0] : tensor<4x8xf32>
  %y = helix.matmul %x, %w : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %z = shard.all_gather %y on @g grid_axes = [1] gather_axis = 1 : tensor<4x4xf32> -> tensor<4x8xf32>
  return %z : tensor<4x8xf32>
}

// -----

// CHECK: error: helix-verify-partition: no program for rank 1 (the grids have 2 devices)
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0() attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: collective #0 on @g grid_axes = [1] in the group of ranks 0 and 1: rank 0 issues `shard.all_reduce {grid = @g, grid_axes = array<i16: 1>, reduction = #shard<partial sum>} : tensor<4x8xf32> -> tensor<4x8xf32>` but rank 1 issues `shard.all_reduce {grid = @g, grid_axes = array<i16: 1>, reduction = #shard<partial sum>} : tensor<4x4xf32> -> tensor<4x4xf32>`
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0(%x: tensor<4x8xf32>) attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  %z = shard.all_reduce %x on @g grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
func.func @decode_step_rank1(%x: tensor<4x4xf32>) attributes {helix.coords = {g = array<i64: 0, 1>}, helix.rank = 1 : i64} {
  %z = shard.all_reduce %x on @g grid_axes = [1] : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

// CHECK: error: helix-verify-partition: collective #0 on @g grid_axes = [1] in the group of ranks 0 and 1: rank 0 issues `shard.all_reduce {{.*}}` but rank 1 issues nothing
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0(%x: tensor<4x8xf32>) attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  %z = shard.all_reduce %x on @g grid_axes = [1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
func.func @decode_step_rank1(%x: tensor<4x8xf32>) attributes {helix.coords = {g = array<i64: 0, 1>}, helix.rank = 1 : i64} {
  %z = shard.all_reduce %x on @g grid_axes = [0] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}

// -----

// CHECK: error: helix-verify-partition: checkpoint tensor w: the ranks load 32 of its 64 values
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0() -> tensor<4x8xf32> attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  %w = helix.weight "w" [8, 8] offsets [0, 0] : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}
func.func @decode_step_rank1() -> tensor<4x8xf32> attributes {helix.coords = {g = array<i64: 0, 1>}, helix.rank = 1 : i64} {
  %w = helix.weight "w" [8, 8] offsets [0, 0] : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}

// -----

// CHECK: error: helix-verify-partition: checkpoint tensor w: the ranks load overlapping but different slices
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0() -> tensor<6x8xf32> attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  %w = helix.weight "w" [8, 8] offsets [0, 0] : tensor<6x8xf32>
  return %w : tensor<6x8xf32>
}
func.func @decode_step_rank1() -> tensor<6x8xf32> attributes {helix.coords = {g = array<i64: 0, 1>}, helix.rank = 1 : i64} {
  %w = helix.weight "w" [8, 8] offsets [2, 0] : tensor<6x8xf32>
  return %w : tensor<6x8xf32>
}

// -----

// CHECK: error: helix-verify-partition: global or dynamic shape 'tensor<4x8xf32, #helix.dist<@g, {{\[\[}}1]]>>' left in rank IR
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0(%x: tensor<4x8xf32, #helix.dist<@g, [[1]]>>) attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  return
}
func.func @decode_step_rank1() attributes {helix.coords = {g = array<i64: 0, 1>}, helix.rank = 1 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: global-view helix.collective left in rank IR
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0(%x: tensor<4x8xf32>) attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  %y = helix.collective all_reduce %x on @g grid_axes = [] : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
func.func @decode_step_rank1() attributes {helix.coords = {g = array<i64: 0, 1>}, helix.rank = 1 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: global KV cache '!helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>' left in rank IR (each rank holds a !helix.kv_shard)
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0(%c: !helix.kv_cache<heads = 2, key_dim = 16, value_dim = 16, element = bf16>) attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  return
}
func.func @decode_step_rank1() attributes {helix.coords = {g = array<i64: 0, 1>}, helix.rank = 1 : i64} {
  return
}

// -----

// Two pipeline stages: rank 0 sends, rank 1 never receives.
// CHECK: error: helix-verify-partition: rank 0 sends 1 tensors to rank 1 (tensor<4x8xf32>) but rank 1 receives 0 ()
shard.grid @g(shape = 2x1)
func.func @decode_step_rank0(%x: tensor<4x8xf32>) attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  %s = shard.send %x on @g grid_axes = [0] destination = [1] : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}
func.func @decode_step_rank1() attributes {helix.coords = {g = array<i64: 1, 0>}, helix.rank = 1 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: rank 1 and rank 0 are on pipeline stage 0 but their programs differ at op #0
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0(%x: tensor<4x8xf32>) attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  return
}
func.func @decode_step_rank1(%x: tensor<4x8xf32>) attributes {helix.coords = {g = array<i64: 0, 1>}, helix.rank = 1 : i64} {
  %y = helix.add %x, %x : tensor<4x8xf32>
  return
}

// -----

// CHECK: error: helix-verify-partition: @decode_step is not a rank program (every function of rank IR has helix.rank)
shard.grid @g(shape = 1x1)
func.func @decode_step() {
  return
}

// -----

// CHECK: error: helix-verify-partition: helix.coords of rank 1 must give its row-major coordinates on @g
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0() attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  return
}
func.func @decode_step_rank1() attributes {helix.coords = {g = array<i64: 1, 0>}, helix.rank = 1 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: the module has no shard.grid (run helix-insert-collectives first)
func.func @decode_step_rank0() attributes {helix.rank = 0 : i64} {
  return
}

// -----

// CHECK: error: helix-verify-partition: helix.group of rank 1 is not its group on @g over its grid_axes
shard.grid @g(shape = 1x2)
func.func @decode_step_rank0(%x: tensor<4x8xf32>) attributes {helix.coords = {g = array<i64: 0, 0>}, helix.rank = 0 : i64} {
  %z = shard.all_reduce %x on @g grid_axes = [1] {helix.group = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
func.func @decode_step_rank1(%x: tensor<4x8xf32>) attributes {helix.coords = {g = array<i64: 0, 1>}, helix.rank = 1 : i64} {
  %z = shard.all_reduce %x on @g grid_axes = [1] {helix.group = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
