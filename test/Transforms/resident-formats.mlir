// helix-resident-formats: the element type of every weight and KV shard of
// rank IR is the format the program keeps it in (docs/quantization.md).

// RUN: helix-opt %s --split-input-file --verify-diagnostics --helix-resident-formats | FileCheck %s

// gpt-oss planned as FP4 weights and an FP8 KV cache, its checkpoint MXFP4
// with attention and router unquantized: only the experts take FP4; the
// embedding, norms, biases, router and the excluded attention stay BF16.
// CHECK-LABEL: func.func @decode_step_stage0(
// CHECK-SAME: !helix.kv_shard<rows = 1, tokens = 64, heads = 1, key_dim = 16, value_dim = 16, element = f8E4M3FN>
// CHECK: helix.weight "model.embed_tokens.weight" [128, 64] : tensor<128x64xbf16>
// CHECK: helix.weight "model.layers.0.self_attn.q_proj.weight" [64, 64] : tensor<64x64xbf16>
// CHECK: helix.weight "model.layers.0.mlp.router.weight" [4, 64] : tensor<4x64xbf16>
// CHECK: helix.weight "model.layers.0.mlp.experts.gate_up_proj" [4, 64, 64] : tensor<4x64x64xf4E2M1FN>
// CHECK: helix.weight "model.layers.0.mlp.experts.gate_up_proj_bias" [4, 64] : tensor<4x64xbf16>
// CHECK: helix.weight "model.layers.0.input_layernorm.weight" [64] : tensor<64xbf16>
// CHECK: %[[B:.*]] = helix.weight "model.layers.0.self_attn.o_proj.bias"
// CHECK: helix.keep_if %{{.*}}, %[[B]] : tensor<64xbf16>
// The layer function's shard argument follows.
// CHECK: func.func private @layer(%{{.*}}: !helix.kv_shard<{{.*}}element = f8E4M3FN>)
module attributes {
    helix.model = #helix.model<name = "m", model_type = "gpt_oss", hidden = 64, vocab = 128, layers = 1,
                               quant_method = "mxfp4", quant_format = "mxfp4",
                               quant_exclude = "model.layers.*.self_attn,model.layers.*.mlp.router">,
    helix.plan = #helix.plan<strategy = helix, hardware = "b200", gpus = 1, batch = 1, context_length = 64,
                             weights = fp4, kv_cache = fp8, compute = bf16>} {
  func.func @decode_step_stage0(%c: !helix.kv_shard<rows = 1, tokens = 64, heads = 1, key_dim = 16, value_dim = 16, element = bf16>) attributes {helix.stage = 0 : i64} {
    %e = helix.weight "model.embed_tokens.weight" [128, 64] : tensor<128x64xbf16>
    %q = helix.weight "model.layers.0.self_attn.q_proj.weight" [64, 64] : tensor<64x64xbf16>
    %r = helix.weight "model.layers.0.mlp.router.weight" [4, 64] : tensor<4x64xbf16>
    %g = helix.weight "model.layers.0.mlp.experts.gate_up_proj" [4, 64, 64] : tensor<4x64x64xbf16>
    %gb = helix.weight "model.layers.0.mlp.experts.gate_up_proj_bias" [4, 64] : tensor<4x64xbf16>
    %n = helix.weight "model.layers.0.input_layernorm.weight" [64] : tensor<64xbf16>
    %ob = helix.weight "model.layers.0.self_attn.o_proj.bias" [64] : tensor<64xbf16>
    %t = arith.constant true
    %k = helix.keep_if %t, %ob : tensor<64xbf16>
    func.call @layer(%c) : (!helix.kv_shard<rows = 1, tokens = 64, heads = 1, key_dim = 16, value_dim = 16, element = bf16>) -> ()
    return
  }
  func.func private @layer(%c: !helix.kv_shard<rows = 1, tokens = 64, heads = 1, key_dim = 16, value_dim = 16, element = bf16>) {
    return
  }
}

// -----

// The same layer weight under an FP8 plan of a checkpoint that quantizes
// everything: FP8.
// CHECK-LABEL: func.func @decode_step_stage0(
// CHECK: helix.weight "model.layers.0.self_attn.q_proj.weight" [64, 64] : tensor<64x64xf8E4M3FN>
module attributes {
    helix.model = #helix.model<name = "m", model_type = "llama", hidden = 64, vocab = 128, layers = 1,
                               quant_method = "fp8", quant_format = "fp8-block">,
    helix.plan = #helix.plan<strategy = helix, hardware = "b200", gpus = 1, batch = 1, context_length = 64,
                             weights = fp8, kv_cache = bf16, compute = bf16>} {
  func.func @decode_step_stage0() attributes {helix.stage = 0 : i64} {
    %q = helix.weight "model.layers.0.self_attn.q_proj.weight" [64, 64] : tensor<64x64xbf16>
    return
  }
}

// -----

// expected-error@+1 {{helix-resident-formats: the module has no helix.plan}}
module {
  func.func @decode_step_stage0() {
    return
  }
}

// -----

// A weight that leaves its function (returned here; found by fuzz/,
// helix-fuzz-mlir) would keep its old type in the signature: refused, not
// retyped into IR that does not verify.
module attributes {
    helix.model = #helix.model<name = "m", model_type = "llama", hidden = 64, vocab = 128, layers = 1,
                               quant_method = "fp8", quant_format = "fp8-block">,
    helix.plan = #helix.plan<strategy = helix, hardware = "b200", gpus = 1, batch = 1, context_length = 64,
                             weights = fp8, kv_cache = bf16, compute = bf16>} {
  func.func private @layer() -> tensor<64x64xbf16> {
    // expected-error@+1 {{helix-resident-formats: the weight is used by 'func.return'; a weight must be consumed by helix ops in the function that loads it}}
    %q = helix.weight "model.layers.0.self_attn.o_proj.weight" [64, 64] : tensor<64x64xbf16>
    return %q : tensor<64x64xbf16>
  }
}
