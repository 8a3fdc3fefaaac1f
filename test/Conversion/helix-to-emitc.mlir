// convert-helix-to-emitc: SPMD rank IR to EmitC host code calling the runtime
// adapters (helix::rt::cg). The inputs are the sharding tests' hand-written
// models taken through helix-sharding-pipeline.

// RUN: helix-opt %S/../Transforms/Inputs/gqa.mlir --helix-sharding-pipeline="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192 slices=2 layer-functions=false" \
// RUN:   | helix-opt --convert-helix-to-emitc | FileCheck %s --check-prefix=GQA
// RUN: helix-opt %S/../Transforms/Inputs/mla-moe.mlir --helix-sharding-pipeline="layout=kvp=4,tpa=1,tpf=2,ep=2 batch=2 context=4096 hopb=false layer-functions=false" \
// RUN:   | helix-opt --convert-helix-to-emitc | FileCheck %s --check-prefix=MLA
// RUN: helix-opt %S/../Transforms/Inputs/swa.mlir --helix-sharding-pipeline="layout=kvp=4,tpa=2,tpf=2,ep=4 batch=2 context=8192 hopb=false layer-functions=false" \
// RUN:   | helix-opt --convert-helix-to-emitc | FileCheck %s --check-prefix=SWA
// RUN: helix-opt %S/../Transforms/Inputs/mla-moe.mlir --helix-sharding-pipeline="layout=tpa=1,dp=4,tpf=1,ep=4 strategy=ep batch=3 context=4096 layer-functions=false" \
// RUN:   | helix-opt --convert-helix-to-emitc | FileCheck %s --check-prefix=EP
// RUN: helix-opt %S/../Transforms/Inputs/gqa.mlir --helix-sharding-pipeline="layout=tpa=2,tpf=2,pp=2 strategy=tp-pp batch=2 context=8192 layer-functions=false" \
// RUN:   | helix-opt --convert-helix-to-emitc | FileCheck %s --check-prefix=PP
// RUN: not helix-opt %S/../Transforms/Inputs/gqa.mlir --convert-helix-to-emitc 2>&1 | FileCheck %s --check-prefix=GLOBAL

// Helix kvp=2 x tpa=2 with HOP-B in two slices: one program for the 4
// ranks. The grids are registered; load computes the rank's coordinates
// and from them the offsets of its slices, allocates its KV shards;
// prepare creates the rank's groups over every collective's grid axes in
// one order; the step runs as calls, its groups computed from the grid.
// GQA: emitc.include "helix/Runtime/Codegen.h"
// GQA: emitc.global @helix_attn_grid : !emitc.opaque<"helix::rt::cg::GridDecl"> = #emitc.opaque<"{\22helix_attn\22, {1, 1, 2, 2}}">
// GQA: emitc.global @helix_ffn_grid : !emitc.opaque<"helix::rt::cg::GridDecl"> = #emitc.opaque<"{\22helix_ffn\22, {1, 1, 1, 4}}">
// GQA-LABEL: emitc.func @decode_step_stage0_load(
// GQA-SAME: !emitc.opaque<"helix::rt::Context&">, %{{.*}}: !emitc.opaque<"const helix::rt::SafetensorsCheckpoint&">, %{{.*}}: !emitc.opaque<"helix::rt::cg::RankState&">) attributes {helix.stage = 0 : i64}
// GQA: call_opaque "helix::rt::cg::allocKV"(%arg0, %arg2) {args = [0 : index, 1 : index, 4, 4096, 1, 32, 32, false, #emitc.opaque<"helix::ElementType::F4E2M1">]}
// GQA: %[[KVP:.*]] = call_opaque "helix::rt::cg::coord"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_attn\22">, 2]} : (!emitc.opaque<"helix::rt::Context&">) -> index
// GQA: %[[TPA:.*]] = call_opaque "helix::rt::cg::coord"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_attn\22">, 3]}
// GQA: %[[C2:.*]] = "emitc.constant"() <{value = 2 : index}> : () -> index
// GQA: %[[M:.*]] = mul %[[KVP]], %[[C2]] : (index, index) -> index
// GQA: %[[I:.*]] = add %[[M]], %[[TPA]] : (index, index) -> index
// GQA: %[[C256:.*]] = "emitc.constant"() <{value = 256 : index}> : () -> index
// GQA: %[[V:.*]] = mul %[[I]], %[[C256]] : (index, index) -> index
// GQA: %[[VO:.*]] = call_opaque "helix::rt::cg::offsets"(%[[V]]) {args = [0 : index, 0]} : (index) -> !emitc.opaque<"helix::rt::cg::Offsets">
// GQA: call_opaque "helix::rt::cg::loadWeight"(%arg0, %arg1, %arg2, %[[VO]]) {args = [0 : index, 1 : index, 2 : index, #emitc.opaque<"\22model.embed_tokens.weight\22">, dense<[1024, 256]> : tensor<2xi64>, dense<[1024, 256]> : tensor<2xi64>, 3 : index, dense<256> : tensor<2xi64>, #emitc.opaque<"helix::WeightLayout::Plain">, #emitc.opaque<"helix::ElementType::BF16">, #emitc.opaque<"helix::CheckpointFormat::BF16">]}
// GQA: call_opaque "helix::rt::cg::loadWeight"(%arg0, %arg1, %arg2) {args = [0 : index, 1 : index, 2 : index, #emitc.opaque<"\22model.layers.0.input_layernorm.weight\22">, dense<256> : tensor<1xi64>, dense<256> : tensor<1xi64>, dense<0> : tensor<1xi64>, dense<256> : tensor<1xi64>, #emitc.opaque<"helix::WeightLayout::Plain">, #emitc.opaque<"helix::ElementType::BF16">, #emitc.opaque<"helix::CheckpointFormat::BF16">]}
// GQA: call_opaque "helix::rt::cg::loadWeight"({{.*}}\22model.layers.0.self_attn.q_proj.weight\22">, dense<256> : tensor<2xi64>, dense<[8, 32, 256]> : tensor<3xi64>, 3 : index, dense<[4, 32, 256]> : tensor<3xi64>, #emitc.opaque<"helix::WeightLayout::Plain">, #emitc.opaque<"helix::ElementType::F4E2M1">, #emitc.opaque<"helix::CheckpointFormat::BF16">]}
// GQA-LABEL: emitc.func @decode_step_stage0_prepare(
// GQA-NEXT: call_opaque "helix::rt::cg::gridGroup"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_attn\22">, dense<2> : tensor<1xi64>]}
// GQA-NEXT: call_opaque "helix::rt::cg::gridGroup"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_attn\22">, dense<[2, 3]> : tensor<2xi64>]}
// GQA-NEXT: call_opaque "helix::rt::cg::gridGroup"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_ffn\22">, dense<3> : tensor<1xi64>]}
// GQA-NEXT: return
// GQA-LABEL: emitc.func @decode_step_stage0(
// GQA-SAME: -> !emitc.opaque<"helix::rt::Tensor"> attributes {helix.stage = 0 : i64}
// GQA: %[[TOK:.*]] = call_opaque "helix::rt::cg::tokens"(%arg2) {args = [0 : index, 4]}
// GQA: %[[POS:.*]] = call_opaque "helix::rt::cg::positions"(%arg2) {args = [0 : index, 4]}
// GQA: %[[KV0:.*]] = call_opaque "helix::rt::cg::kvShard"(%arg1) {args = [0 : index, 0]} : {{.*}} -> !emitc.opaque<"helix::rt::KVCache">
// GQA: %[[SKVP:.*]] = call_opaque "helix::rt::cg::coord"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_attn\22">, 2]}
// GQA: %[[SLOTS:.*]]:2 = call_opaque "helix::rt::cg::kvSlots"(%[[POS]], %[[SKVP]]) {args = [0 : index, 16, 2, 4096, 0, 1 : index, 1]}
// GQA: %[[TABLE:.*]] = call_opaque "helix::rt::cg::weight"(%arg1) {args = [0 : index, 0]}
// GQA: %[[E:.*]] = call_opaque "helix::rt::cg::embedRows"(%arg0, %[[TOK]], %[[TABLE]], %{{.*}}) {args = [0 : index, 1 : index, 2 : index, 3 : index]}
// GQA: %[[G:.*]] = call_opaque "helix::rt::cg::members"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_attn\22">, dense<[2, 3]> : tensor<2xi64>]} : (!emitc.opaque<"helix::rt::Context&">) -> !emitc.opaque<"helix::rt::cg::Members">
// GQA: call_opaque "helix::rt::cg::allReduce"(%arg0, %[[E]], %[[G]]) {args = [0 : index, 1 : index, 2 : index, true]}
// GQA: call_opaque "helix::rt::cg::norm"({{.*}}1.000000e-05]}
// GQA: %[[ROPE:.*]] = call_opaque "helix::rt::cg::rope"() {args = [#emitc.opaque<"helix::rt::cg::RopeSpec().theta(500000).rotaryDim(32)">]}
// GQA: %[[QKV:.*]]:3 = call_opaque "helix::rt::cg::qkv"({{.*}}, %[[POS]], {{.*}}, %[[ROPE]])
// GQA: %[[Q0:.*]] = call_opaque "helix::rt::cg::slice"(%arg0, %[[QKV]]#0) {args = [0 : index, 1 : index, dense<0> : tensor<3xi64>, dense<[2, 4, 32]> : tensor<3xi64>]}
// GQA: %[[S0:.*]] = call_opaque "helix::rt::cg::slice"(%arg0, %[[SLOTS]]#0) {{.*}} -> !emitc.opaque<"helix::rt::cg::Ints">
// GQA: %[[SCALE:.*]] = call_opaque "helix::rt::cg::softmaxScale"(%{{.*}}) {args = [0 : index, 32, false]} : {{.*}} -> f32
// GQA: %[[P0:.*]] = call_opaque "helix::rt::cg::attentionPartial"(%arg0, %[[Q0]], %{{.*}}, %{{.*}}, %[[KV0]], %[[S0]], %{{.*}}, %[[SCALE]]) {args = [0 : index, 1 : index, 2 : index, 3 : index, 4 : index, #emitc.opaque<"helix::rt::Tensor()">, 5 : index, 6 : index, 0, 0, 1, 7 : index]}
// GQA: %[[KG:.*]] = call_opaque "helix::rt::cg::members"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_attn\22">, dense<2> : tensor<1xi64>]}
// GQA: %[[T0:.*]] = call_opaque "helix::rt::cg::allToAllStart"(%arg0, %[[P0]], %[[KG]]) {args = [0 : index, 1 : index, 2 : index, 2, 0]} : {{.*}} -> !emitc.opaque<"helix::rt::cg::Async">
// GQA: call_opaque "helix::rt::cg::attentionPartial"({{.*}}, 0, 2, 1, 7 : index]}
// GQA: %[[T1:.*]] = call_opaque "helix::rt::cg::allToAllStart"
// GQA: %[[X0:.*]] = call_opaque "helix::rt::cg::wait"(%arg0, %[[T0]])
// GQA: %[[O0:.*]] = call_opaque "helix::rt::cg::lseCombine"(%arg0, %[[X0]]) {args = [0 : index, 1 : index, #emitc.opaque<"helix::rt::Tensor()">]}
// GQA: %[[X1:.*]] = call_opaque "helix::rt::cg::wait"(%arg0, %[[T1]])
// GQA: %[[O1:.*]] = call_opaque "helix::rt::cg::lseCombine"(%arg0, %[[X1]])
// GQA: %[[O:.*]] = call_opaque "helix::rt::cg::concat"(%arg0, %[[O0]], %[[O1]]) {args = [0 : index, 0, 1 : index, 2 : index]}
// GQA: %[[Y:.*]] = call_opaque "helix::rt::cg::matmul"(%arg0, %[[O]], %{{.*}}) {args = [0 : index, 1 : index, 2 : index, #emitc.opaque<"helix::rt::Tensor()">]}
// GQA: call_opaque "helix::rt::cg::allReduce"(%arg0, %[[Y]], %{{.*}}) {args = [0 : index, 1 : index, 2 : index, true]}
// The residual add and the norm that reads its sum are one call (one
// kernel: addRmsNorm); the norm's weight is looked up before it.
// GQA: %[[NW:.*]] = call_opaque "helix::rt::cg::weight"
// GQA-NEXT: %[[AN:.*]]:2 = call_opaque "helix::rt::cg::addNorm"(%arg0, %{{.*}}, %{{.*}}, %[[NW]]) {args = [0 : index, 1 : index, 2 : index, 3 : index, 1.000000e-05]}
// GQA-NOT: "helix::rt::cg::norm"(%arg0, %[[AN]]#0
// GQA: call_opaque "helix::rt::cg::gatedMlp"(%arg0, %[[AN]]#1{{.*}}, #emitc.opaque<"\22silu\22">]}
// GQA: %[[L:.*]] = call_opaque "helix::rt::cg::allGather"(%arg0, %{{.*}}, %{{.*}}) {args = [0 : index, 1 : index, 2 : index, 1]}
// GQA: return %[[L]] : !emitc.opaque<"helix::rt::Tensor">
// GQA: emitc.global @decode_step_stage0_program : !emitc.opaque<"helix::rt::cg::StageProgram"> = #emitc.opaque<"{0, decode_step_stage0_load, decode_step_stage0_prepare, decode_step_stage0}"> {helix.stage = 0 : i64}
// GQA-LABEL: emitc.func @main(
// GQA-SAME: %[[ARGC:.*]]: i32, %[[ARGV:.*]]: !emitc.ptr<!emitc.ptr<!emitc.opaque<"char">>>) -> i32
// GQA: %[[RC:.*]] = call_opaque "helix::rt::cg::run"(%[[ARGC]], %[[ARGV]]) {args = [0 : index, 1 : index, #emitc.opaque<"\22helix-decode\22">, 4, 1024, 8192, 4, 4, 0]}
// GQA: return %[[RC]] : i32
// GQA-NOT: helix.
// GQA-NOT: shard.
// GQA-NOT: arith.

// MLA + MoE, kvp=4 x (tpf=2 x ep=2): W_UK and W_UV are two boxes of
// kv_b_proj [heads, qk_nope + v_head_dim, kv_lora]; DeepSeek-V3 routing
// (sigmoid, grouped by the sum of each group's top two); the rank's
// experts (EP coordinate) with its TPF half of their intermediate, the
// shared expert a quarter, then TPF all-reduce, EP all-gather and group sum.
// MLA-LABEL: emitc.func @decode_step_stage0_load(
// MLA-DAG: \22model.layers.0.self_attn.kv_b_proj.weight\22">, dense<[128, 32]> : tensor<2xi64>, dense<[4, 32, 32]> : tensor<3xi64>, dense<0> : tensor<3xi64>, dense<[4, 16, 32]> : tensor<3xi64>, #emitc.opaque<"helix::WeightLayout::Plain">, #emitc.opaque<"helix::ElementType::F4E2M1">, #emitc.opaque<"helix::CheckpointFormat::BF16">]}
// MLA-DAG: \22model.layers.0.self_attn.kv_b_proj.weight\22">, dense<[128, 32]> : tensor<2xi64>, dense<[4, 32, 32]> : tensor<3xi64>, dense<[0, 16, 0]> : tensor<3xi64>, dense<[4, 16, 32]> : tensor<3xi64>, #emitc.opaque<"helix::WeightLayout::Plain">, #emitc.opaque<"helix::ElementType::F4E2M1">, #emitc.opaque<"helix::CheckpointFormat::BF16">]}
// MLA-DAG: \22model.layers.1.mlp.experts.{expert}.gate_proj.weight\22">, dense<[64, 128]> : tensor<2xi64>, dense<[8, 64, 128]> : tensor<3xi64>, {{[0-9]+}} : index, dense<[4, 32, 128]> : tensor<3xi64>, #emitc.opaque<"helix::WeightLayout::Plain">, #emitc.opaque<"helix::ElementType::F4E2M1">, #emitc.opaque<"helix::CheckpointFormat::BF16">]}
// MLA-DAG: \22model.layers.1.mlp.shared_experts.gate_proj.weight\22">, dense<[64, 128]> : tensor<2xi64>, dense<[64, 128]> : tensor<2xi64>, {{[0-9]+}} : index, dense<[16, 128]> : tensor<2xi64>, #emitc.opaque<"helix::WeightLayout::Plain">, #emitc.opaque<"helix::ElementType::F4E2M1">, #emitc.opaque<"helix::CheckpointFormat::BF16">]}
// MLA-LABEL: emitc.func @decode_step_stage0(
// MLA: %[[ROPE:.*]] = call_opaque "helix::rt::cg::rope"() {{.*}}.rotaryDim(8).interleaved(true)">]}
// MLA: %[[QL:.*]]:2 = call_opaque "helix::rt::cg::mlaQkv"({{.*}}, 8, 9 : index]}
// MLA: %[[SCALE:.*]] = call_opaque "helix::rt::cg::softmaxScale"(%{{.*}}) {args = [0 : index, 24, true]}
// MLA: call_opaque "helix::rt::cg::attentionPartial"(%arg0, %[[QL]]#0, %[[QL]]#1, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[SCALE]]) {args = [0 : index, 1 : index, 2 : index, #emitc.opaque<"helix::rt::Tensor()">, 3 : index, 4 : index, 5 : index, 6 : index, 0, 0, 1, 7 : index]}
// MLA: call_opaque "helix::rt::cg::allToAll"({{.*}}, 2, 0]}
// MLA: %[[R:.*]]:2 = call_opaque "helix::rt::cg::moeRouter"({{.*}}false, true, 2, 2, 1, #emitc.opaque<"\22top2sum\22">, true, 2.500000e+00]}
// MLA: %[[G:.*]] = call_opaque "helix::rt::cg::moeExperts"(%arg0, %{{.*}}, %[[R]]#0, %[[R]]#1, {{.*}}, #emitc.opaque<"\22silu\22">, false, true]}
// MLA: %[[TG:.*]] = call_opaque "helix::rt::cg::members"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_ffn\22">, dense<3> : tensor<1xi64>]}
// MLA: %[[A:.*]] = call_opaque "helix::rt::cg::allReduce"(%arg0, %[[G]], %[[TG]]) {args = [0 : index, 1 : index, 2 : index, true]}
// MLA: %[[EG:.*]] = call_opaque "helix::rt::cg::members"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_ffn\22">, dense<2> : tensor<1xi64>]}
// MLA: %[[AG:.*]] = call_opaque "helix::rt::cg::allGather"(%arg0, %[[A]], %[[EG]]) {args = [0 : index, 1 : index, 2 : index, 0]}
// MLA: call_opaque "helix::rt::cg::groupSum"(%arg0, %[[AG]])

// gpt-oss-like, kvp=4 x tpa=2, tpf=2 x ep=4: half a head and its sink per
// rank; fused gate/up loaded split and transposed, the down projection
// transposed, the fused bias split; the down bias
// passed by the first TPF rank only (keepIf); the router bias is a logit
// bias; a ring of 32 slots for the window layer.
// SWA-LABEL: emitc.func @decode_step_stage0_load(
// SWA: \22model.layers.0.self_attn.sinks\22">, dense<4> : tensor<1xi64>, dense<4> : tensor<1xi64>, 3 : index, dense<1> : tensor<1xi64>, #emitc.opaque<"helix::WeightLayout::Plain">, #emitc.opaque<"helix::ElementType::BF16">, #emitc.opaque<"helix::CheckpointFormat::BF16">]}
// SWA: \22model.layers.0.mlp.experts.gate_up_proj\22">, dense<[4, 128, 128]> : tensor<3xi64>, dense<[4, 128, 128]> : tensor<3xi64>, 3 : index, dense<[1, 128, 64]> : tensor<3xi64>, #emitc.opaque<"helix::WeightLayout::SplitGateUpTransposed">, #emitc.opaque<"helix::ElementType::F4E2M1">, #emitc.opaque<"helix::CheckpointFormat::BF16">]}
// SWA: \22model.layers.0.mlp.experts.down_proj\22">, dense<[4, 64, 128]> : tensor<3xi64>, dense<[4, 64, 128]> : tensor<3xi64>, 3 : index, dense<[1, 32, 128]> : tensor<3xi64>, #emitc.opaque<"helix::WeightLayout::TransposeLast2">, #emitc.opaque<"helix::ElementType::F4E2M1">, #emitc.opaque<"helix::CheckpointFormat::BF16">]}
// SWA: \22model.layers.0.mlp.experts.gate_up_proj_bias\22">, dense<[4, 128]> : tensor<2xi64>, dense<[4, 128]> : tensor<2xi64>, 3 : index, dense<[1, 64]> : tensor<2xi64>, #emitc.opaque<"helix::WeightLayout::SplitGateUp">, #emitc.opaque<"helix::ElementType::BF16">, #emitc.opaque<"helix::CheckpointFormat::BF16">]}
// SWA: \22model.layers.0.mlp.experts.down_proj_bias\22">
// SWA-LABEL: emitc.func @decode_step_stage0(
// SWA: call_opaque "helix::rt::cg::kvSlots"(%{{.*}}, %{{.*}}) {args = [0 : index, 16, 4, 32, 64, 1 : index, 1]}
// SWA: call_opaque "helix::rt::cg::lseCombine"(%arg0, %{{.*}}, %{{.*}}) {args = [0 : index, 1 : index, 2 : index]}
// SWA: call_opaque "helix::rt::cg::moeRouter"({{.*}}, true, false, 2, 1, 1, #emitc.opaque<"\22\22">, true, 1.000000e+00]}
// SWA: %[[KDB:.*]] = call_opaque "helix::rt::cg::keepIf"(%{{.*}}, %{{.*}}) {args = [0 : index, 1 : index]} : (i1, !emitc.opaque<"helix::rt::Tensor">) -> !emitc.opaque<"helix::rt::Tensor">
// SWA: call_opaque "helix::rt::cg::moeExperts"({{.*}}, %[[KDB]], {{.*}} #emitc.opaque<"\22swiglu\22">, true, true]}

// DP attention + EP (batch 3 padded to 4): the rank's replica takes its
// request's row and position (no data moves), tokens are all-gathered for
// the FFN and the partial sums reduce-scattered back, each over the DP
// axis.
// EP-LABEL: emitc.func @decode_step_stage0(
// EP: call_opaque "helix::rt::cg::tokens"(%arg2) {args = [0 : index, 4]}
// EP: call_opaque "helix::rt::cg::members"
// EP: %[[DP:.*]] = call_opaque "helix::rt::cg::members"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_attn\22">, dense<1> : tensor<1xi64>]}
// EP-NEXT: call_opaque "helix::rt::cg::allSlice"(%arg0, %{{.*}}, %[[DP]]) {args = [0 : index, 1 : index, 2 : index, 0]} : {{.*}} -> !emitc.opaque<"helix::rt::Tensor">
// EP: call_opaque "helix::rt::cg::allSlice"(%arg0, %{{.*}}, %{{.*}}) {args = [0 : index, 1 : index, 2 : index, 0]} : {{.*}} -> !emitc.opaque<"helix::rt::cg::Ints">
// EP: call_opaque "helix::rt::cg::allGather"({{.*}}) {args = [0 : index, 1 : index, 2 : index, 0]}
// EP: call_opaque "helix::rt::cg::reduceScatter"({{.*}}) {args = [0 : index, 1 : index, 2 : index, 0]}

// Tensor and pipeline parallelism, micro-batches of one row: stage 0
// sends the residual stream to its peer on stage 1 (member 1 of its group
// over the stage axis) and returns no logits; stage 1 receives it; each
// attends at its micro-batch's cache rows (the step's fourth argument).
// The logits come from rank 2 (stage 1's first), so ranks 0 and 2 share a
// group to bring them to rank 0.
// PP-LABEL: emitc.func @decode_step_stage0_prepare(
// PP-NEXT: call_opaque "helix::rt::cg::gridGroup"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_attn\22">, dense<0> : tensor<1xi64>]}
// PP-NEXT: call_opaque "helix::rt::cg::gridGroup"(%arg0) {args = [0 : index, #emitc.opaque<"\22helix_attn\22">, dense<3> : tensor<1xi64>]}
// PP: call_opaque "helix::rt::cg::group"(%arg0) {args = [0 : index, dense<[0, 2]> : tensor<2xi64>]}
// PP-LABEL: emitc.func @decode_step_stage0(
// PP-SAME: %[[ROW:[a-z0-9]+]]: index) -> !emitc.opaque<"helix::rt::Tensor">
// PP: call_opaque "helix::rt::cg::attentionPartial"({{.*}}, %[[ROW]], {{.*}}) {args = [{{.*}}, 7 : index, 0, 1, 8 : index]}
// PP: call_opaque "helix::rt::cg::send"(%arg0, %{{.*}}, %{{.*}}) {args = [0 : index, 1 : index, 2 : index, 1]}
// PP-NEXT: %[[NONE:.*]] = call_opaque "helix::rt::cg::none"()
// PP-NEXT: return %[[NONE]]
// PP-LABEL: emitc.func @decode_step_stage1(
// PP: %[[BUF:.*]] = call_opaque "helix::rt::cg::empty"(%arg0) {args = [0 : index, dense<[1, 256]> : tensor<2xi64>]}
// PP: call_opaque "helix::rt::cg::recv"(%arg0, %[[BUF]], %{{.*}}) {args = [0 : index, 1 : index, 2 : index, 0]}
// PP: call_opaque "helix::rt::cg::run"({{.*}}, 4, 1024, 8192, 2, 1, 2]}
// GLOBAL: error: convert-helix-to-emitc: expects rank IR (the output of helix-partition): the module has no shard.grid
