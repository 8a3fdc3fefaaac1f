// helix-partition outlines a layer into a function that returns its hidden
// state, never one that returns a weight: here only the output projection's
// weight is named model.layers.0.* (the other names are not), so layer 0
// would be that load alone. It stays inline, where helix-resident-formats
// retypes it (found by fuzz/, helix-fuzz-mlir: the layer function returned
// the weight and helix-resident-formats left IR that did not verify).

// RUN: helix-opt %s --helix-sharding-pipeline="layout=kvp=1,tpa=2,tpf=2 batch=2 context=1024" --helix-verify-partition | FileCheck %s
// CHECK-NOT: func.func private
// CHECK: func.func @decode_step_stage0(
// CHECK: helix.weight "model.layers.0.self_attn.o_proj.weight" [256, 256] offsets [0, %{{.*}}] : tensor<256x128xf4E2M1FN>
// CHECK-NOT: func.call
func.func @decode_step(%tokens: tensor<?xi64>, %pos: tensor<?xi64>,
    %c0: !helix.kv_cache<heads = 2, key_dim = 32, value_dim = 32, element = bf16>) -> tensor<?x1024xf32>
    attributes {helix.model = #helix.model<name = "odd-names", model_type = "llama", hidden = 256, vocab = 1024, layers = 1>} {
  %h = helix.embed %tokens {vocab = 1024 : i64, weight = "model.embed_tokens.weight"} : tensor<?xi64> -> tensor<?x256xbf16>
  %n = helix.rms_norm %h {eps = 1.0e-05 : f64, weight = "blocks.0.input_layernorm.weight"} : tensor<?x256xbf16>
  %q, %k, %v = helix.qkv_proj %n, %pos {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 32, v_head_dim = 32>, layer = 0 : i64, prefix = "blocks.0.self_attn", rope = #helix.rope<theta = 5.000000e+05>}
      : (tensor<?x256xbf16>, tensor<?xi64>) -> (tensor<?x8x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>)
  %o = helix.attention %q, %k, %v cache(%c0 : !helix.kv_cache<heads = 2, key_dim = 32, value_dim = 32, element = bf16>) {config = #helix.attn<kind = gqa, heads = 8, kv_heads = 2, head_dim = 32, v_head_dim = 32>, layer = 0 : i64, prefix = "blocks.0.self_attn"}
      : (tensor<?x8x32xbf16>, tensor<?x2x32xbf16>, tensor<?x2x32xbf16>) -> tensor<?x256xbf16>
  %p = helix.linear %o {weight = "model.layers.0.self_attn.o_proj.weight"} : tensor<?x256xbf16> -> tensor<?x256xbf16>
  %r = helix.add %h, %p : tensor<?x256xbf16>
  %n2 = helix.rms_norm %r {eps = 1.0e-05 : f64, weight = "blocks.0.post_attention_layernorm.weight"} : tensor<?x256xbf16>
  %f = helix.ffn %n2 {intermediate = 512 : i64, layer = 0 : i64, prefix = "blocks.0.mlp"} : tensor<?x256xbf16>
  %h1 = helix.add %r, %f : tensor<?x256xbf16>
  %nf = helix.rms_norm %h1 {eps = 1.0e-05 : f64, weight = "model.norm.weight"} : tensor<?x256xbf16>
  %l = helix.lm_head %nf {weight = "lm_head.weight"} : tensor<?x256xbf16> -> tensor<?x1024xf32>
  return %l : tensor<?x1024xf32>
}
