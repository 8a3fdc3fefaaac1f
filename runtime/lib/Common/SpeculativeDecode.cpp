//===- SpeculativeDecode.cpp - helix-decode's speculative loop ------------===//

#include "SpeculativeDecode.h"

#include "helix/Runtime/Backend.h"
#include "helix/Runtime/Error.h"
#include "helix/Runtime/Ops.h"
#include "helix/Runtime/Speculative.h"

#include "MpiGroup.h"
#include "MpiWait.h"

#include <cstdio>

namespace helix {
namespace rt {

namespace {

/// The argmax of each row of `logits` [rows, V] (rank 0), broadcast to
/// every rank under the step watchdog.
std::vector<int64_t> argmaxOnRoot(Context &ctx, const Tensor &logits,
                                  int64_t rows, int64_t V, double timeoutS,
                                  const std::string &what,
                                  std::vector<float> *host) {
  std::vector<int64_t> best(rows, 0);
  if (ctx.rank() == 0) {
    check(logits.defined() && logits.rank() == 2 && logits.dim(0) == rows &&
              logits.dim(1) == V,
          what + " returned logits " + logits.str() + ", expected [" +
              std::to_string(rows) + ", " + std::to_string(V) + "]");
    *host = ctx.download(logits);
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = host->data() + r * V;
      for (int64_t v = 1; v < V; ++v)
        if (row[v] > row[best[r]])
          best[r] = v;
    }
  }
  std::vector<int> everyone(ctx.worldSize());
  for (int r = 0; r < ctx.worldSize(); ++r)
    everyone[r] = r;
  MPI_Request req;
  MPI_Ibcast(best.data(), static_cast<int>(rows), MPI_INT64_T, 0,
             MPI_COMM_WORLD, &req);
  waitWithDeadline(req, timeoutS,
                   what + ": broadcast of the argmax from rank 0", everyone);
  return best;
}

/// Copies the rows of `host` [rows, V] the schedule committed into
/// `dump` [positions, batch, V] at their positions.
void keepRows(const SpeculativeSchedule &s, const std::vector<float> &host,
              int64_t V, std::vector<float> &dump) {
  int64_t B = s.requests();
  for (int64_t r = 0; r < B; ++r)
    for (auto [position, row] : s.verifiedRows()[r])
      std::copy(host.begin() + row * V, host.begin() + (row + 1) * V,
                dump.begin() + (position * B + r) * V);
}

StepInputs inputsOf(const PassRows &rows, int64_t step) {
  StepInputs in;
  in.step = step;
  in.tokens = rows.tokens;
  in.positions = rows.positions;
  for (int64_t p : rows.positions)
    in.contextLengths.push_back(p + 1);
  return in;
}

} // namespace

int64_t runSpeculative(Context &ctx, DecodeProgram &prog, SpeculativeRun &run) {
  check(prog.verify && prog.draft,
        "a speculative program needs its verify and draft functions");
  SpeculativeSchedule s(run.prompts, run.steps, prog.draftTokens, run.oracle);
  int64_t B = s.requests(), q = s.queries(), R = B * q, V = prog.vocabSize;
  int64_t T = s.positions();
  bool root = ctx.rank() == 0;
  bool dumpMain = root && run.logits && run.logits->isOpen();
  bool dumpDraft = root && run.draftLogits.isOpen();
  std::vector<float> mainDump(dumpMain ? T * B * V : 0),
      draftDump(dumpDraft ? T * B * V : 0), host;
  if (dumpMain)
    std::printf("%s\n", logitsShapeLine(T, B, V, run.dumpLogits).c_str());
  if (dumpDraft)
    std::printf("draft %s\n",
                logitsShapeLine(T, B, V, run.dumpDraftLogits).c_str());
  std::fflush(stdout);

  int64_t step = 0;
  for (; !s.done(); ++step) {
    std::string at = "verify step " + std::to_string(step);
    if (run.countTraffic)
      ctx.backend().resetTraffic(); // the last round is reported
    PassOutputs out = prog.verify(ctx, inputsOf(s.verifyRows(), step));
    s.accept(argmaxOnRoot(ctx, out.logits, R, V, run.stepTimeoutS, at, &host));
    if (dumpMain)
      keepRows(s, host, V, mainDump);
    Tensor hidden = out.hidden;
    for (int64_t pass = 0; pass < s.draftTokens(); ++pass) {
      PassRows rows = s.draftRows(pass);
      StepInputs in = inputsOf(rows, step);
      check(hidden.defined() && hidden.rank() == 2 && hidden.dim(0) == R,
            at + ": the hidden states are " + hidden.str() + ", expected " +
                std::to_string(R) + " rows");
      in.hidden = embedding(ctx, hidden, rows.hiddenRows);
      PassOutputs d = prog.draft(ctx, in);
      std::string what = at + ", draft pass " + std::to_string(pass);
      s.recordDraft(pass, argmaxOnRoot(ctx, d.logits, R, V, run.stepTimeoutS,
                                       what, &host));
      if (pass == 0 && dumpDraft)
        keepRows(s, host, V, draftDump);
      hidden = d.hidden;
    }
  }
  if (!root)
    return step;
  if (dumpMain) {
    run.logits->write(mainDump.data(), mainDump.size());
    run.logits->commit();
  }
  if (dumpDraft) {
    run.draftLogits.write(draftDump.data(), draftDump.size());
    run.draftLogits.commit();
  }
  std::vector<std::vector<int64_t>> gen = s.generated();
  for (int64_t r = 0; r < B; ++r)
    std::printf("row %lld: %s\n", static_cast<long long>(r),
                joinIds(gen[r]).c_str());
  double rate = s.drafted() ? double(s.acceptedDrafts()) / s.drafted() : 0;
  double perStep = s.draftingSteps()
                       ? 1.0 + double(s.acceptedDrafts()) / s.draftingSteps()
                       : 0;
  std::printf("speculative: %lld verify steps, %lld drafts per step; "
              "acceptance %lld/%lld = %.4f; %.4f tokens per step while "
              "drafting\n",
              static_cast<long long>(s.verifySteps()),
              static_cast<long long>(s.draftTokens()),
              static_cast<long long>(s.acceptedDrafts()),
              static_cast<long long>(s.drafted()), rate, perStep);
  std::fflush(stdout);
  if (!run.dumpTokens.empty())
    writeTokens(run.dumpTokens, s.sequences());
  if (!run.dumpAcceptance.empty())
    writeTokens(run.dumpAcceptance, s.acceptedPerStep());
  return step;
}

} // namespace rt
} // namespace helix
