// RUN: helix-opt %s | FileCheck %s
// RUN: helix-opt %s --mlir-print-op-generic | helix-opt | FileCheck %s

// helix.gdn_step in global view (its state the layer's
// !helix.recurrent_state, its weights split over the TPA axis) and in rank
// IR (the rank's !helix.state_shard: 2 value heads' 16 x 16 states, then
// 3 inputs of its 16 + 16 + 32 convolution channels).

shard.grid @helix_attn(shape = 1x1x1x4)

// CHECK-LABEL: func.func @global
// CHECK: helix.gdn_step %{{.*}}, %{{.*}} weights(%{{.*}}) state(%{{.*}} : !helix.recurrent_state<heads = 8, rows = 16, cols = 16, conv_channels = 256, conv_kernel = 4, element = f32>) {config = #helix.linear_attn<variant = gated_deltanet, key_heads = 4, value_heads = 8, key_head_dim = 16, value_head_dim = 16>, eps = 9.9999999999999995E-7 : f64, layer = 0 : i64}
// CHECK-SAME: -> tensor<4x128xf32, #helix.dist<@helix_attn, {{\[\[}}], [3]]>>
func.func @global(%x: tensor<4x128xf32>, %pos: tensor<4xi64>,
    %s: !helix.recurrent_state<heads = 8, rows = 16, cols = 16, conv_channels = 256, conv_kernel = 4, element = f32>) -> tensor<4x128xf32, #helix.dist<@helix_attn, [[], [3]]>> {
  %qkvz = helix.weight "model.layers.0.linear_attn.in_proj_qkvz.weight" [384, 128] view [4, 96, 128] : tensor<4x96x128xf32, #helix.dist<@helix_attn, [[3]]>>
  %ba = helix.weight "model.layers.0.linear_attn.in_proj_ba.weight" [16, 128] view [4, 4, 128] : tensor<4x4x128xf32, #helix.dist<@helix_attn, [[3]]>>
  %cq = helix.weight "model.layers.0.linear_attn.conv1d.weight" [256, 1, 4] view [256, 4] offsets [0, 0] : tensor<64x4xf32, #helix.dist<@helix_attn, [[3]]>>
  %ck = helix.weight "model.layers.0.linear_attn.conv1d.weight" [256, 1, 4] view [256, 4] offsets [64, 0] : tensor<64x4xf32, #helix.dist<@helix_attn, [[3]]>>
  %cv = helix.weight "model.layers.0.linear_attn.conv1d.weight" [256, 1, 4] view [256, 4] offsets [128, 0] : tensor<128x4xf32, #helix.dist<@helix_attn, [[3]]>>
  %a = helix.weight "model.layers.0.linear_attn.A_log" [8] : tensor<8xf32, #helix.dist<@helix_attn, [[3]]>>
  %dt = helix.weight "model.layers.0.linear_attn.dt_bias" [8] : tensor<8xf32, #helix.dist<@helix_attn, [[3]]>>
  %n = helix.weight "model.layers.0.linear_attn.norm.weight" [16] : tensor<16xf32>
  %o = helix.gdn_step %x, %pos weights(%qkvz, %ba, %cq, %ck, %cv, %a, %dt, %n)
      state(%s : !helix.recurrent_state<heads = 8, rows = 16, cols = 16, conv_channels = 256, conv_kernel = 4, element = f32>)
      {config = #helix.linear_attn<variant = gated_deltanet, key_heads = 4, value_heads = 8, key_head_dim = 16, value_head_dim = 16>,
       eps = 1.0e-06 : f64, layer = 0 : i64}
      : (tensor<4x128xf32>, tensor<4xi64>, tensor<4x96x128xf32, #helix.dist<@helix_attn, [[3]]>>,
         tensor<4x4x128xf32, #helix.dist<@helix_attn, [[3]]>>, tensor<64x4xf32, #helix.dist<@helix_attn, [[3]]>>,
         tensor<64x4xf32, #helix.dist<@helix_attn, [[3]]>>, tensor<128x4xf32, #helix.dist<@helix_attn, [[3]]>>,
         tensor<8xf32, #helix.dist<@helix_attn, [[3]]>>, tensor<8xf32, #helix.dist<@helix_attn, [[3]]>>, tensor<16xf32>)
      -> tensor<4x128xf32, #helix.dist<@helix_attn, [[], [3]]>>
  return %o : tensor<4x128xf32, #helix.dist<@helix_attn, [[], [3]]>>
}

// CHECK-LABEL: func.func @rank
// CHECK: helix.gdn_step %{{.*}} state(%{{.*}} : !helix.state_shard<rows = 4, values = 704>) row_base(%{{.*}})
func.func @rank(%x: tensor<4x128xf32>, %pos: tensor<4xi64>, %s: !helix.state_shard<rows = 4, values = 704>,
    %row: index, %qkvz: tensor<1x96x128xbf16>, %ba: tensor<1x4x128xbf16>, %cq: tensor<16x4xbf16>,
    %ck: tensor<16x4xbf16>, %cv: tensor<32x4xbf16>, %a: tensor<2xbf16>, %dt: tensor<2xbf16>,
    %n: tensor<16xbf16>) -> tensor<4x32xf32> {
  %o = helix.gdn_step %x, %pos weights(%qkvz, %ba, %cq, %ck, %cv, %a, %dt, %n)
      state(%s : !helix.state_shard<rows = 4, values = 704>) row_base(%row)
      {config = #helix.linear_attn<variant = gated_deltanet, key_heads = 4, value_heads = 8, key_head_dim = 16, value_head_dim = 16>,
       eps = 1.0e-06 : f64, layer = 0 : i64}
      : (tensor<4x128xf32>, tensor<4xi64>, tensor<1x96x128xbf16>, tensor<1x4x128xbf16>, tensor<16x4xbf16>,
         tensor<16x4xbf16>, tensor<32x4xbf16>, tensor<2xbf16>, tensor<2xbf16>, tensor<16xbf16>) -> tensor<4x32xf32>
  return %o : tensor<4x32xf32>
}
