// helix-translate --emit-cpp: rank IR lowered by convert-helix-to-emitc and
// printed by emitc::translateToCpp as one translation unit.

// RUN: helix-opt %S/../Transforms/Inputs/mla-moe.mlir --helix-sharding-pipeline="layout=kvp=2,tpa=1,tpf=1,ep=2 batch=2 context=4096 slices=0 layer-functions=false" \
// RUN:   | helix-translate --emit-cpp | FileCheck %s
// Already-lowered EmitC prints as it is.
// RUN: helix-opt %S/../Transforms/Inputs/gqa.mlir --helix-sharding-pipeline="layout=tpa=2,tpf=2 strategy=tp batch=1 context=64 layer-functions=false" \
// RUN:   | helix-opt --convert-helix-to-emitc | helix-translate --emit-cpp | FileCheck %s --check-prefix=TP
// RUN: helix-opt %S/../Transforms/Inputs/mla-moe.mlir --helix-sharding-pipeline="layout=kvp=2,tpa=1,tpf=1,ep=2 batch=2 context=4096 slices=0" \
// RUN:   | helix-translate --emit-cpp | FileCheck %s --check-prefix=LAYERS
// RUN: not helix-translate --emit-cpp %S/../Transforms/Inputs/gqa.mlir 2>&1 | FileCheck %s --check-prefix=GLOBAL

// CHECK: #include "helix/Runtime/Codegen.h"
// CHECK: helix::rt::cg::GridDecl helix_attn_grid = {"helix_attn", {1, 1, 2, 1}};
// CHECK: void decode_step_stage0_load(helix::rt::Context& [[CTX:v[0-9]+]], const helix::rt::SafetensorsCheckpoint& [[CK:v[0-9]+]], helix::rt::cg::RankState& [[ST:v[0-9]+]]) {
// CHECK: helix::rt::cg::allocKV([[CTX]], [[ST]], 2, 2048, 1, 40, 32, true, helix::ElementType::F4E2M1);
// CHECK: size_t [[KVP:v[0-9]+]] = helix::rt::cg::coord([[CTX]], "helix_attn", 2);
// CHECK: size_t [[VOCAB:v[0-9]+]] = [[KVP]] * {{v[0-9]+}};
// CHECK: helix::rt::cg::Offsets [[VO:v[0-9]+]] = helix::rt::cg::offsets([[VOCAB]], 0);
// CHECK: helix::rt::cg::loadWeight([[CTX]], [[CK]], [[ST]], "model.embed_tokens.weight", {512, 128}, {512, 128}, [[VO]], {256, 128}, helix::WeightLayout::Plain, helix::ElementType::BF16, helix::CheckpointFormat::BF16);
// CHECK: helix::rt::cg::loadWeight([[CTX]], [[CK]], [[ST]], "model.layers.1.mlp.experts.{expert}.gate_proj.weight", {64, 128}, {8, 64, 128}, {{v[0-9]+}}, {4, 64, 128}, helix::WeightLayout::Plain, helix::ElementType::F4E2M1, helix::CheckpointFormat::BF16);
// CHECK: return;
// CHECK: void decode_step_stage0_prepare(helix::rt::Context& [[CTX:v[0-9]+]]) {
// CHECK-NEXT: helix::rt::cg::gridGroup([[CTX]], "helix_attn", {2});
// CHECK: return;
// CHECK: helix::rt::Tensor decode_step_stage0(helix::rt::Context& [[CTX:v[0-9]+]], helix::rt::cg::RankState& [[ST:v[0-9]+]], const helix::rt::StepInputs& [[IN:v[0-9]+]], size_t {{v[0-9]+}}) {
// CHECK-NEXT: helix::rt::cg::Ints [[TOK:v[0-9]+]] = helix::rt::cg::tokens([[IN]], 2);
// CHECK-NEXT: helix::rt::cg::Ints [[POS:v[0-9]+]] = helix::rt::cg::positions([[IN]], 2);
// CHECK-NEXT: helix::rt::KVCache [[KV:v[0-9]+]] = helix::rt::cg::kvShard([[ST]], 0);
// CHECK: std::tie([[SLOTS:v[0-9]+]], [[SPANS:v[0-9]+]]) = helix::rt::cg::kvSlots([[POS]], 16, 2, 2048, 0, {{v[0-9]+}}, 1);
// CHECK: helix::rt::Tensor [[E:v[0-9]+]] = helix::rt::cg::embedRows([[CTX]], [[TOK]], {{v[0-9]+}}, {{v[0-9]+}});
// CHECK: helix::rt::cg::Members [[G:v[0-9]+]] = helix::rt::cg::members([[CTX]], "helix_attn", {2});
// CHECK: helix::rt::cg::allReduce([[CTX]], [[E]], [[G]], true);
// CHECK: helix::rt::RopeConfig [[ROPE:v[0-9]+]] = helix::rt::cg::rope(helix::rt::cg::RopeSpec().rotaryDim(8).interleaved(true));
// CHECK: std::tie([[Q:v[0-9]+]], [[LAT:v[0-9]+]]) = helix::rt::cg::mlaQkv([[CTX]], {{.*}}, [[POS]], {{.*}}, 8, [[ROPE]]);
// CHECK: float [[SCALE:v[0-9]+]] = helix::rt::cg::softmaxScale({{v[0-9]+}}, 24, true);
// CHECK: helix::rt::Tensor [[P:v[0-9]+]] = helix::rt::cg::attentionPartial([[CTX]], {{v[0-9]+}}, {{v[0-9]+}}, helix::rt::Tensor(), [[KV]], {{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, 0, 0, 1, [[SCALE]]);
// CHECK: helix::rt::cg::Async [[T:v[0-9]+]] = helix::rt::cg::allToAllStart([[CTX]], [[P]], {{v[0-9]+}}, 2, 0);
// CHECK: helix::rt::Tensor [[X:v[0-9]+]] = helix::rt::cg::wait([[CTX]], [[T]]);
// CHECK: helix::rt::cg::lseCombine([[CTX]], [[X]], helix::rt::Tensor());
// CHECK: helix::rt::cg::moeRouter([[CTX]], {{.*}}, false, true, 2, 2, 1, "top2sum", true, 2.50000000000000000e+00);
// CHECK: helix::rt::cg::moeExperts([[CTX]], {{.*}}, {{v[0-9]+}}, "silu", false, true);
// CHECK: helix::rt::Tensor [[L:v[0-9]+]] = helix::rt::cg::allGather([[CTX]], {{v[0-9]+}}, {{v[0-9]+}}, 1);
// CHECK-NEXT: return [[L]];
// CHECK: helix::rt::cg::StageProgram decode_step_stage0_program = {0, decode_step_stage0_load, decode_step_stage0_prepare, decode_step_stage0};
// CHECK: int32_t main(int32_t [[ARGC:v[0-9]+]], char** [[ARGV:v[0-9]+]]) {
// CHECK-NEXT: int32_t [[RC:v[0-9]+]] = helix::rt::cg::run([[ARGC]], [[ARGV]], "helix-decode", 2, 512, 4096, 2, 2, 0);
// CHECK-NEXT: return [[RC]];

// TP: helix::rt::cg::StageProgram decode_step_stage0_program
// TP-NOT: StageProgram
// TP: helix::rt::cg::run({{.*}}, "helix-decode", 2, 1024, 64, 1, 1, 0);

// GLOBAL: error: convert-helix-to-emitc: expects rank IR

// Layer functions (the default): each kind of layer (MLA + dense FFN,
// MLA + MoE) is a C++ function taking its first weight slot, and a load
// function loading the weights of the layer it is called for
// (`layerName` fills `{layer}`); the stage's load calls it per layer, the
// step calls the layer function per layer.
// LAYERS: void decode_step_stage0_layer_kind0_load(helix::rt::Context& [[CTX:v[0-9]+]], const helix::rt::SafetensorsCheckpoint& [[CK:v[0-9]+]], helix::rt::cg::RankState& [[ST:v[0-9]+]], size_t [[L:v[0-9]+]]) {
// LAYERS-NEXT: std::string [[N:v[0-9]+]] = helix::rt::cg::layerName("model.layers.{layer}.input_layernorm.weight", [[L]]);
// LAYERS-NEXT: helix::rt::cg::loadWeight([[CTX]], [[CK]], [[ST]], [[N]], {128}, {128}, {0}, {128}, helix::WeightLayout::Plain, helix::ElementType::BF16, helix::CheckpointFormat::BF16);
// LAYERS: helix::rt::Tensor decode_step_stage0_layer_kind0(helix::rt::Context& [[CTX:v[0-9]+]], helix::rt::cg::RankState& [[ST:v[0-9]+]], size_t [[BASE:v[0-9]+]], size_t {{v[0-9]+}}, helix::rt::Tensor
// LAYERS-NEXT: helix::rt::Tensor {{v[0-9]+}} = helix::rt::cg::layerWeight([[ST]], [[BASE]], 0);
// LAYERS: void decode_step_stage0_layer_kind1_load(
// LAYERS: helix::rt::Tensor decode_step_stage0_layer_kind1(
// LAYERS: void decode_step_stage0_load(helix::rt::Context& [[CTX:v[0-9]+]], const helix::rt::SafetensorsCheckpoint& [[CK:v[0-9]+]], helix::rt::cg::RankState& [[ST:v[0-9]+]]) {
// LAYERS: ::decode_step_stage0_layer_kind0_load([[CTX]], [[CK]], [[ST]], 0);
// LAYERS-NEXT: ::decode_step_stage0_layer_kind1_load([[CTX]], [[CK]], [[ST]], 1);
// LAYERS: helix::rt::Tensor decode_step_stage0(helix::rt::Context& [[CTX:v[0-9]+]], helix::rt::cg::RankState& [[ST:v[0-9]+]],
// LAYERS: helix::rt::Tensor [[H0:v[0-9]+]] = ::decode_step_stage0_layer_kind0([[CTX]], [[ST]], 3,
// LAYERS: ::decode_step_stage0_layer_kind1([[CTX]], [[ST]], 16, {{v[0-9]+}}, [[H0]],
