// helix-hopb on global-view IR (a hand-written GQA model after
// helix-insert-collectives, Helix kvp=2 x tpa=2, batch 3).

// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=3 context=8192" --helix-insert-collectives -o %t.global.mlir
// RUN: helix-opt %t.global.mlir --helix-hopb=slices=0 | FileCheck %s --check-prefix=PERREQ
// RUN: helix-opt %t.global.mlir --helix-hopb=slices=2 | FileCheck %s --check-prefix=TWO
// RUN: helix-opt %t.global.mlir --helix-hopb=slices=2 | helix-opt --helix-kv-placement --helix-partition | FileCheck %s --check-prefix=RANK

// Turned off, or where the plan has no HOP-B (helix-no-hopb), or where there
// is no all-to-all (tp): the IR is unchanged.
// Without a slices option the pass takes the plan's: the count the cost
// model found best (1 here: one exchange's latency is worth more than the
// overlap), and the plan keeps recording what the program runs.
// RUN: helix-opt %t.global.mlir --helix-hopb | FileCheck %s --check-prefix=PLANNED
// PLANNED: helix.plan = #helix.plan<{{.*}}slices = 1>
// PLANNED-NOT: helix.async_start
// RUN: helix-opt %t.global.mlir --helix-hopb=slices=2 | FileCheck %s --check-prefix=RECORDED
// RECORDED: helix.plan = #helix.plan<{{.*}}slices = 2>
// RUN: helix-opt %t.global.mlir -o %t.same.mlir
// RUN: helix-opt %t.global.mlir --helix-hopb=enable=false -o %t.off.mlir
// RUN: diff %t.same.mlir %t.off.mlir
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=3 context=8192 hopb=false" --helix-insert-collectives \
// RUN:   | helix-opt --helix-hopb | FileCheck %s --check-prefix=NOHOPB
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=tpa=4,tpf=4 strategy=tp batch=3 context=8192" --helix-insert-collectives \
// RUN:   | helix-opt --helix-hopb | FileCheck %s --check-prefix=NOHOPB
// NOHOPB-NOT: async
// NOHOPB-NOT: batch_offset

// Without an exchange (tp) the plan's overlap is the output projection's
// all-reduce: each slice attends, combines and projects, and its all-reduce
// is in flight while the next slice does; the rows are concatenated after.
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=tpa=4,tpf=4 strategy=tp batch=3 context=8192" --helix-insert-collectives \
// RUN:   | helix-opt --helix-hopb=slices=2 | FileCheck %s --check-prefix=TPOVER
// TPOVER: helix.plan = #helix.plan<strategy = tp, {{.*}}overlap = true, slices = 2>
// TPOVER: helix.attention_partial {{.*}}-> tensor<1x2x8x33xf32
// TPOVER-NEXT: helix.lse_combine {{.*}} -> tensor<2x256xbf16
// TPOVER-NEXT: %[[Y0:.*]] = helix.matmul {{.*}} -> tensor<2x256xbf16, #helix.dist<@helix_attn, partial = [3]>>
// TPOVER-NEXT: %[[T0:.*]] = helix.async_start {
// TPOVER-NEXT: helix.collective all_reduce %[[Y0]] on @helix_attn grid_axes = [3]
// TPOVER: helix.attention_partial {{.*}}batch_offset = 2 : i64{{.*}}-> tensor<1x1x8x33xf32
// TPOVER: helix.async_start {
// TPOVER: %[[W0:.*]] = helix.async_wait %[[T0]]
// TPOVER: %[[W1:.*]] = helix.async_wait
// TPOVER-NEXT: tensor.concat dim(0) %[[W0]], %[[W1]] : {{.*}} -> tensor<3x256xbf16>

// One slice per request: request i attends while the exchange of request
// i - 1 is in flight (a two-stage software pipeline), then its partials are
// combined; the combined slices are concatenated back.
// PERREQ-LABEL: func.func @decode_step
// PERREQ: %[[Q:.*]], %[[K:.*]], %[[V:.*]] = helix.qkv
// PERREQ: %[[Q0:.*]] = tensor.extract_slice %[[Q]][0, 0, 0] [1, 8, 32] [1, 1, 1]
// PERREQ: %[[P0:.*]] = helix.attention_partial %[[Q0]], {{.*}}cache_rows = 3 : i64
// PERREQ-SAME: -> tensor<2x1x8x33xf32, #helix.dist<@helix_attn, {{\[\[}}2], [], [3]]>>
// PERREQ: %[[T0:.*]] = helix.async_start {
// PERREQ-NEXT: %[[X0:.*]] = helix.collective all_to_all %[[P0]] on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0
// PERREQ-NEXT: helix.async_yield %[[X0]]
// PERREQ-NEXT: } : !helix.async<tensor<2x1x8x33xf32, #helix.dist<@helix_attn, {{\[\[}}], [], [3, 2]]>>>
// PERREQ: %[[Q1:.*]] = tensor.extract_slice %[[Q]][1, 0, 0] [1, 8, 32] [1, 1, 1]
// PERREQ: %[[P1:.*]] = helix.attention_partial %[[Q1]], {{.*}}batch_offset = 1 : i64
// PERREQ: %[[T1:.*]] = helix.async_start {
// PERREQ: %[[W0:.*]] = helix.async_wait %[[T0]]
// PERREQ-NEXT: %[[O0:.*]] = helix.lse_combine %[[W0]] : {{.*}} -> tensor<1x256xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3, 2]]>>
// PERREQ: helix.attention_partial {{.*}}batch_offset = 2 : i64
// PERREQ: %[[T2:.*]] = helix.async_start {
// PERREQ: %[[W1:.*]] = helix.async_wait %[[T1]]
// PERREQ-NEXT: %[[O1:.*]] = helix.lse_combine %[[W1]]
// PERREQ-NEXT: %[[W2:.*]] = helix.async_wait %[[T2]]
// PERREQ-NEXT: %[[O2:.*]] = helix.lse_combine %[[W2]]
// PERREQ-NEXT: %[[O:.*]] = tensor.concat dim(0) %[[O0]], %[[O1]], %[[O2]] : {{.*}} -> tensor<3x256xbf16, #helix.dist<@helix_attn, {{\[\[}}], [3, 2]]>>
// PERREQ-NEXT: helix.weight "model.layers.0.self_attn.o_proj.weight"
// PERREQ: helix.matmul %[[O]],

// Every all-to-all (2 layers x 3 requests) is started asynchronously.
// RUN: helix-opt %t.global.mlir --helix-hopb=slices=0 | grep -c "helix.collective all_to_all" | FileCheck %s --check-prefix=COUNT
// RUN: helix-opt %t.global.mlir --helix-hopb=slices=0 | grep -c "helix.async_start" | FileCheck %s --check-prefix=COUNT
// COUNT: 6

// Two slices of a batch of 3: rows [0, 2) and [2, 3).
// TWO: tensor.extract_slice %{{.*}}[0, 0, 0] [2, 8, 32] [1, 1, 1]
// TWO: helix.attention_partial {{.*}}-> tensor<2x2x8x33xf32
// TWO: tensor.extract_slice %{{.*}}[2, 0, 0] [1, 8, 32] [1, 1, 1]
// TWO: helix.attention_partial {{.*}}batch_offset = 2 : i64{{.*}}-> tensor<2x1x8x33xf32
// TWO: tensor.concat dim(0) {{.*}} -> tensor<3x256xbf16

// In rank IR (in the layers' function) each slice's all-to-all is an
// upstream shard.all_to_all on local shapes over the KVP axis (the rank's
// KVP group), inside the async start.
// RANK-LABEL: func.func private @decode_step_stage0_layer_kind0
// RANK: helix.async_start {
// RANK-NEXT: shard.all_to_all %{{.*}} on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0 : tensor<1x2x4x33xf32> -> tensor<2x2x2x33xf32>
// RANK: helix.async_start {
// RANK-NEXT: shard.all_to_all %{{.*}} on @helix_attn grid_axes = [2] split_axis = 2 concat_axis = 0 : tensor<1x1x4x33xf32> -> tensor<2x1x2x33xf32>
// RANK: helix.async_wait
// RANK: tensor.concat dim(0) {{.*}} : (tensor<2x64xbf16>, tensor<1x64xbf16>) -> tensor<3x64xbf16>
