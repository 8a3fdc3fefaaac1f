// RUN: helix-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect

// The dialect's discardable attributes (helix.plan, helix.model, ...) are
// checked wherever they appear (lib/Dialect/Helix/HelixAttrVerifier.cpp):
// every diagnostic has a case here.

// Well-formed uses: no diagnostics.
module attributes {helix.micro_batches = 2 : i64,
    helix.plan = #helix.plan<strategy = helix, hardware = "h100", gpus = 2, batch = 1, context_length = 1024>} {
  func.func private @decode_step_stage0_layer_kind0(%l: index) attributes {helix.layers = array<i64: 0, 1>} {
    return
  }
  func.func @decode_step_stage0(%t: tensor<4xi64> {helix.name = "tokens"}, %c: tensor<4xf32> {helix.kv_layer = 0 : i64})
      attributes {helix.stage = 0 : i64} {
    %l = arith.constant 0 : index
    call @decode_step_stage0_layer_kind0(%l) {helix.weight_base = 3 : i64} : (index) -> ()
    "test.priced"() {helix.cost = #helix.cost<time_us = 1.0, compute_us = 1.0>} : () -> ()
    return
  }
}

// -----

// expected-error@+1 {{'helix.plan' must be a #helix.plan, got "helix"}}
func.func private @f() attributes {helix.plan = "helix"}

// -----

func.func @f() {
  // expected-error@+1 {{'helix.plan' belongs on a function or a module}}
  "test.op"() {helix.plan = #helix.plan<strategy = tp, hardware = "h100", gpus = 2, batch = 1, context_length = 1024>} : () -> ()
  return
}

// -----

// expected-error@+1 {{'helix.model' must be a #helix.model, got 3 : i64}}
func.func private @f() attributes {helix.model = 3 : i64}

// -----

func.func @f() {
  // expected-error@+1 {{'helix.model' belongs on a function or a module}}
  "test.op"() {helix.model = #helix.model<name = "m", model_type = "llama", hidden = 8, vocab = 16, layers = 1>} : () -> ()
  return
}

// -----

// expected-error@+1 {{'helix.micro_batches' must be a positive i64 integer, got 0 : i64}}
module attributes {helix.micro_batches = 0 : i64} {}

// -----

// expected-error@+1 {{'helix.micro_batches' must be a positive i64 integer, got 2 : i32}}
module attributes {helix.micro_batches = 2 : i32} {}

// -----

func.func @f() {
  // expected-error@+1 {{'helix.micro_batches' belongs on a function or a module}}
  "test.op"() {helix.micro_batches = 2 : i64} : () -> ()
  return
}

// -----

// expected-error@+1 {{'helix.stage' must be a non-negative i64 integer, got -1 : i64}}
func.func private @f() attributes {helix.stage = -1 : i64}

// -----

// expected-error@+1 {{'helix.layers' must be a non-empty array<i64>, got array<i64>}}
func.func private @f() attributes {helix.layers = array<i64>}

// -----

// expected-error@+1 {{'helix.layers' entries must not be negative, got -1}}
func.func private @f() attributes {helix.layers = array<i64: 0, -1>}

// -----

// expected-error@+1 {{'helix.layers' lists 1 twice}}
func.func private @f() attributes {helix.layers = array<i64: 0, 1, 1>}

// -----

func.func @f() {
  // expected-error@+1 {{'helix.layers' belongs on a layer function}}
  "test.op"() {helix.layers = array<i64: 0>} : () -> ()
  return
}

// -----

func.func @f() {
  // expected-error@+1 {{'helix.weight_base' must be a non-negative i64 integer, got "3"}}
  "test.call"() {helix.weight_base = "3"} : () -> ()
  return
}

// -----

func.func @f() {
  // expected-error@+1 {{'helix.cost' must be a #helix.cost, got 1.000000e+00 : f64}}
  "test.priced"() {helix.cost = 1.0 : f64} : () -> ()
  return
}

// -----

// expected-error@+1 {{'helix.name' must be a non-empty string, got ""}}
func.func private @f(tensor<4xi64> {helix.name = ""})

// -----

// expected-error@+1 {{'helix.kv_layer' must be a non-negative i64 integer, got "0"}}
func.func private @f(tensor<4xf32> {helix.kv_layer = "0"})

// -----

// A misspelt attribute is not silently ignored.
// expected-error@+1 {{unknown helix attribute 'helix.plans' on an operation}}
func.func private @f() attributes {helix.plans = 1 : i64}

// -----

// helix.layout is not a discardable attribute: layouts are the inherent
// `layout` of the ops that take one.
// expected-error@+1 {{unknown helix attribute 'helix.layout' on an operation}}
func.func private @f() attributes {helix.layout = #helix.layout<gpus = 8, kvp = 8, tpf = 8>}

// -----

// expected-error@+1 {{unknown helix attribute 'helix.rank' on an argument}}
func.func private @f(tensor<4xf32> {helix.rank = 0 : i64})

// -----

// expected-error@+1 {{unknown helix attribute 'helix.kv_layer' on a result}}
func.func private @f() -> (tensor<4xf32> {helix.kv_layer = 0 : i64})

// -----

// A step's results past its logits are named (the verify step's hidden
// state, which the MTP drafter reads).
// expected-error@+1 {{'helix.name' must be a non-empty string, got ""}}
func.func private @f() -> (tensor<4xf32>, tensor<4xf32> {helix.name = ""})

// -----

// expected-error@+1 {{'helix.mtp' must be a #helix.mtp, got 2 : i64}}
func.func private @f() attributes {helix.mtp = 2 : i64}

// -----

// expected-error@+1 {{'helix.draft_stage' must be a non-negative i64 integer, got -1 : i64}}
func.func private @f() attributes {helix.draft_stage = -1 : i64}
