//===- CodegenSpeculative.cpp - Generated programs with an MTP drafter ----===//
//
// The driver side of a program compiled with --mtp K: its stage program's
// step is the verify step (K + 1 rows per request) and its draft pass the
// MTP layer, each with a RankState of its own; both return their hidden
// states as the "hidden" output. Prompt files with fewer rows than the
// plan's requests run the rest as padding (copies of the first request's
// rows, in their own cache rows).
//
//===----------------------------------------------------------------------===//

#include "CodegenDetail.h"

#include "helix/Runtime/Codegen.h"

namespace helix {
namespace rt {
namespace cg {

namespace {

std::vector<int64_t> picked(const std::vector<int64_t> &v,
                            const std::vector<int64_t> &rows) {
  std::vector<int64_t> out;
  for (int64_t r : rows)
    out.push_back(v[r]);
  return out;
}

/// One pass of `fn` over the prompt requests' rows `in`, padded to the
/// plan's; its logits and hidden states cut back to the prompt rows.
PassOutputs runPass(Context &ctx, StepFn fn, RankState &state,
                    const StepInputs &in, int64_t rows, int64_t planRows,
                    int64_t q) {
  check(static_cast<int64_t>(in.tokens.size()) == rows,
        "speculative pass: " + std::to_string(in.tokens.size()) +
            " rows, expected " + std::to_string(rows));
  std::vector<int64_t> pick;
  for (int64_t i = 0; i < planRows; ++i)
    pick.push_back(i < rows ? i : (i - rows) % q);
  StepInputs padded = in;
  padded.tokens = picked(in.tokens, pick);
  padded.positions = picked(in.positions, pick);
  padded.contextLengths = picked(in.contextLengths, pick);
  if (in.hidden.defined() && planRows > rows)
    padded.hidden = embedding(ctx, in.hidden, pick);
  state.outputs.clear();
  PassOutputs out;
  out.logits = fn(ctx, state, padded, 0);
  auto hidden = state.outputs.find("hidden");
  check(hidden != state.outputs.end(),
        "the speculative program's pass returned no hidden states");
  out.hidden = hidden->second;
  for (Tensor *t : {&out.logits, &out.hidden})
    if (t->defined() && t->rank() == 2 && t->dim(0) > rows)
      *t = t->rows(0, rows);
  return out;
}

} // namespace

int runSpeculativePrograms(int argc, char **argv, const std::string &name,
                           int worldSize, int64_t vocab, int64_t maxContext,
                           int64_t requests, int64_t draftTokens,
                           const std::string &defaultBackend) {
  DecodeProgram prog =
      generatedProgram(name, worldSize, vocab, maxContext, defaultBackend);
  prog.draftTokens = draftTokens;
  int64_t q = draftTokens + 1, promptRows = 0;
  RankState state, draftState;
  const StageProgram *mine = nullptr;
  prog.load = [&](Context &ctx, const SafetensorsCheckpoint &ckpt,
                  int64_t rows) {
    checkPromptRows(rows, requests);
    mine = &stageProgramOf(ctx);
    check(mine->draftLoad && mine->draftStep,
          "the program was compiled without the MTP drafter (helix compile "
          "--mtp K)");
    promptRows = rows;
    mine->load(ctx, ckpt, state);
    mine->draftLoad(ctx, ckpt, draftState);
    logWeightFormats(ctx, name, state);
    logWeightFormats(ctx, name + " (MTP drafter)", draftState);
  };
  prog.prepare = [&](Context &ctx) { mine->prepare(ctx); };
  prog.verify = [&](Context &ctx, const StepInputs &in) {
    return runPass(ctx, mine->step, state, in, promptRows * q, requests * q, q);
  };
  prog.draft = [&](Context &ctx, const StepInputs &in) {
    return runPass(ctx, mine->draftStep, draftState, in, promptRows * q,
                   requests * q, q);
  };
  return runDecode(argc, argv, prog);
}

} // namespace cg
} // namespace rt
} // namespace helix
