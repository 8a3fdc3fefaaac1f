//===- Passes.td - helix conversion passes -----------------*- tablegen -*-===//

#ifndef HELIX_CONVERSION_PASSES_TD
#define HELIX_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertHelixToEmitC : Pass<"convert-helix-to-emitc", "mlir::ModuleOp"> {
  let summary = "Lower rank IR to EmitC host code calling the helix runtime";
  let description = [{
    Takes rank IR (the output of `helix-partition`: one
    `func.func @decode_step_rank<R>` per rank, static local shapes) and
    lowers it to upstream EmitC: host code that `emitc::translateToCpp`
    prints as C++ against the helix runtime (`helix/Runtime/Codegen.h`,
    namespace `helix::rt::cg`). No kernel is generated: every rank-IR op
    becomes one `emitc.call_opaque` of the runtime adapter for that op, its
    attributes constant arguments.

    Each rank R gets three functions and a registration:

    - `decode_step_rank<R>_load(Context&, const SafetensorsCheckpoint&,
      RankState&)` loads every `helix.weight` slice once (deduplicated, in
      the layout its consumer takes: MLA's W_UK / W_UV boxes of
      `kv_b_proj`, gpt-oss's interleaved gate/up split and transposed) and
      allocates every `!helix.kv_shard`;
    - `decode_step_rank<R>_prepare(Context&)` creates the communicators of
      the rank's groups, in one order shared by all ranks (no deadlock);
    - `decode_step_rank<R>(Context&, RankState&, const StepInputs&,
      size_t microBatchRow)` is one decode step (one micro-batch of it with
      pipeline stages): the ops in order, collectives over explicit member
      ranks (`helix.group`, or the `shard.grid` shape and the rank's
      coordinates), `helix.async_start` / `helix.async_wait` as a
      collective in flight;
    - `decode_step_rank<R>_program`, a `helix::rt::cg::RankProgram` global
      that registers the three.

    `main` calls `helix::rt::cg::run`, the runtime's `runDecode` driver
    (`--weights --prompts --steps [--dump-logits] [--dump-tokens]`) over the
    registered programs: it picks the rank's functions by MPI rank, runs
    pipeline micro-batches in order and brings the logits to rank 0.

    Types: float and i32 tensors become `helix::rt::Tensor`, i64 tensors
    (tokens, positions, KV slots) `helix::rt::cg::Ints` on the host,
    `!helix.kv_shard` `helix::rt::KVCache`, `!helix.async`
    `helix::rt::cg::Async`.

    Example:

    ```mlir
    // helix-opt --convert-helix-to-emitc
    %n = helix.norm %x, %w {eps = 1.0e-05 : f64} : tensor<4x256xbf16>, tensor<256xbf16>
    %r = shard.all_reduce %y on @helix_attn grid_axes = [2, 3] : tensor<4x256xbf16> -> tensor<4x256xbf16>
    // becomes
    %n = emitc.call_opaque "helix::rt::cg::norm"(%ctx, %x, %w)
        {args = [0 : index, 1 : index, 2 : index, 1.000000e-05 : f64]}
        : (...) -> !emitc.opaque<"helix::rt::Tensor">
    %r = emitc.call_opaque "helix::rt::cg::allReduce"(%ctx, %y)
        {args = [0 : index, 1 : index, dense<[0, 1, 2, 3]> : tensor<4xi64>, true]}
        : (...) -> !emitc.opaque<"helix::rt::Tensor">
    ```
  }];
  let options = [
    Option<"programName", "program-name", "std::string", "\"helix-decode\"",
           "name of the executable in its messages">
  ];
  let dependentDialects = ["mlir::emitc::EmitCDialect"];
}

#endif // HELIX_CONVERSION_PASSES_TD
