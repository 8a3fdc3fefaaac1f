//===- Passes.td - helix conversion passes -----------------*- tablegen -*-===//

#ifndef HELIX_CONVERSION_PASSES_TD
#define HELIX_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertHelixToEmitC : Pass<"convert-helix-to-emitc", "mlir::ModuleOp"> {
  let summary = "Lower rank IR to EmitC host code calling the helix runtime";
  let description = [{
    Takes SPMD rank IR (the output of `helix-partition`: one
    `func.func @decode_step_stage<S>` per pipeline stage, static local
    shapes, rank-dependent values computed from the rank's grid
    coordinates) and lowers it to upstream EmitC: host code that
    `emitc::translateToCpp` prints as C++ against the helix runtime
    (`helix/Runtime/Codegen.h`, namespace `helix::rt::cg`). No kernel is
    generated: every rank-IR op becomes one `emitc.call_opaque` of the
    runtime adapter for that op, its attributes constant arguments (one
    fusion: a `helix.add` whose sum a `helix.norm_rows` reads becomes one
    `addNorm` call, the residual add + RMSNorm kernel, and the norm goes);
    `shard.process_multi_index` becomes `coord` calls and the index
    arithmetic on them `emitc` arithmetic.

    Each grid becomes a `helix::rt::cg::GridDecl` global (name and
    shape), and each stage S three functions and a registration:

    - `decode_step_stage<S>_load(Context&, const SafetensorsCheckpoint&,
      RankState&)` computes the rank's coordinates and from them the
      offsets of its slices, loads every `helix.weight` slice once
      (deduplicated, in the layout its consumer takes: MLA's W_UK / W_UV
      boxes of `kv_b_proj`, gpt-oss's interleaved gate/up split and
      transposed) and allocates every `!helix.kv_shard`;
    - `decode_step_stage<S>_prepare(Context&)` creates the communicators
      of the rank's groups (one per grid and axes any collective of any
      stage uses), in one order shared by all ranks (no deadlock);
    - `decode_step_stage<S>(Context&, RankState&, const StepInputs&,
      size_t microBatchRow)` is one decode step (one micro-batch of it with
      pipeline stages): the ops in order, each collective over the rank's
      group on its grid axes (`members`), `helix.async_start` /
      `helix.async_wait` as a collective in flight, `helix.keep_if` as a
      bias passed or not;
    - `decode_step_stage<S>_program`, a `helix::rt::cg::StageProgram`
      global that registers the three.

    `main` calls `helix::rt::cg::run`, the runtime's `runDecode` driver
    (`--weights --prompts --steps [--dump-logits] [--dump-tokens]`) over the
    registered programs: each rank runs the program of its stage (its
    coordinate on axis 0 of the first grid), pipeline micro-batches in
    order, and the logits come to rank 0.

    Types: float and i32 tensors become `helix::rt::Tensor`, i64 tensors
    (tokens, positions, KV slots) `helix::rt::cg::Ints` on the host,
    `!helix.kv_shard` `helix::rt::KVCache`, `!helix.async`
    `helix::rt::cg::Async`.

    Example:

    ```mlir
    // helix-opt --convert-helix-to-emitc
    %n = helix.norm_rows %x, %w {eps = 1.0e-05 : f64} : tensor<4x256xbf16>, tensor<256xbf16>
    %r = shard.all_reduce %y on @helix_attn grid_axes = [2, 3] : tensor<4x256xbf16> -> tensor<4x256xbf16>
    // becomes
    %n = emitc.call_opaque "helix::rt::cg::norm"(%ctx, %x, %w)
        {args = [0 : index, 1 : index, 2 : index, 1.000000e-05 : f64]}
        : (...) -> !emitc.opaque<"helix::rt::Tensor">
    %g = emitc.call_opaque "helix::rt::cg::members"(%ctx)
        {args = [0 : index, #emitc.opaque<"\22helix_attn\22">, dense<[2, 3]> : tensor<2xi64>]}
        : (...) -> !emitc.opaque<"helix::rt::cg::Members">
    %r = emitc.call_opaque "helix::rt::cg::allReduce"(%ctx, %y, %g)
        {args = [0 : index, 1 : index, 2 : index, true]}
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
