// helix-apply-layout: an explicit layout, checked against the model, the
// GPUs and the memory, recorded as the search would record it.

// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192" | FileCheck %s --check-prefix=HELIX
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=2 strategy=kvp batch=4 context=8192" | FileCheck %s --check-prefix=KVP
// RUN: helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=4 hopb=false" | FileCheck %s --check-prefix=OFF

// HELIX: helix.plan = #helix.plan<strategy = helix, hardware = "gb200-nvl72", gpus = 4, batch = 4, context_length = 8192, hopb = true, ttl_s = {{.*}}>
// HELIX: helix.attention {{.*}}layout = #helix.layout<gpus = 4, kvp = 2, tpa = 2, tpf = 4>
// HELIX: helix.linear {{.*}}layout = #helix.layout<gpus = 4, kvp = 2, tpa = 2, tpf = 4>
// HELIX: helix.ffn {{.*}}layout = #helix.layout<gpus = 4, kvp = 2, tpa = 2, tpf = 4>

// Medha-style kvp: the FFN on the attention TP group; the output
// projection (also on the TPA group) carries no layout.
// KVP: helix.plan = #helix.plan<strategy = kvp
// KVP-NOT: hopb = true
// KVP: helix.attention {{.*}}layout = #helix.layout<gpus = 4, kvp = 2, tpa = 2, tpf = 2>
// KVP: helix.linear %{{.*}} {weight = "model.layers.0.self_attn.o_proj.weight"}
// KVP: helix.ffn {{.*}}layout = #helix.layout<gpus = 4, kvp = 2, tpa = 2, tpf = 2>

// OFF: helix.plan = #helix.plan<strategy = helix, {{.*}}context_length = 1048576, ttl_s

// Invalid requests get one line saying why.
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-apply-layout 2>&1 | FileCheck %s --check-prefix=NOLAYOUT
// NOLAYOUT: error: helix-apply-layout: needs a layout (layout=kvp=..,tpa=..,tpf=..,ep=..)
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=two" 2>&1 | FileCheck %s --check-prefix=PARSE
// PARSE: error: helix-apply-layout: kvp: expected an integer from 1 to 4096, got 'two'
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=1,tpa=4,tpf=4" 2>&1 | FileCheck %s --check-prefix=TPA
// TPA: error: helix-apply-layout: layout kvp=1,tpa=4,tpf=4,ep=1 does not fit tiny-gqa: helix needs tpa to divide the 2 KV heads but tpa=4; put the other GPUs in kvp
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 gpus=8" 2>&1 | FileCheck %s --check-prefix=GPUS
// GPUS: error: helix-apply-layout: layout kvp=2,tpa=2,tpf=4,ep=1 does not fit tiny-gqa: layout kvp=2,tpa=2,tpf=4,ep=1 uses 4 GPUs (pp x kvp x tpa x dp), but 8 were requested
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 batch=1000000 context=100000000 hardware=h100 dtype=bf16" 2>&1 | FileCheck %s --check-prefix=MEMORY
// MEMORY: error: helix-apply-layout: batch 1000000 at context 100000000 does not fit in memory with helix kvp=2,tpa=2,tpf=4,ep=1: {{.*}} GB per GPU (weights {{.*}}, KV cache {{.*}}, activations {{.*}}) but h100 has {{.*}} GB
// RUN: not helix-opt %S/Inputs/gqa.mlir --helix-apply-layout="layout=kvp=2,tpa=2,tpf=4 strategy=ring" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: error: helix-apply-layout: unknown strategy 'ring'
