//===- SpeculativeDecode.h - helix-decode's speculative loop ----*- C++ -*-===//
//
// Private to the runtime: the loop runDecode runs for programs compiled
// with --mtp (Speculative.h is its bookkeeping).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_LIB_COMMON_SPECULATIVEDECODE_H
#define HELIX_RUNTIME_LIB_COMMON_SPECULATIVEDECODE_H

#include "helix/Runtime/Decode.h"
#include "helix/Runtime/DecodeIO.h"

#include <string>

namespace helix {
namespace rt {

struct SpeculativeRun {
  Prompts prompts, oracle; // oracle: drafts from a file (empty: the MTP's)
  int64_t steps = 0;       // tokens to generate per row
  double stepTimeoutS = 0;
  bool countTraffic = false;      // count each round (verify + drafts) afresh
  LogitsWriter *logits = nullptr; // rank 0, open when dumping
  LogitsWriter draftLogits;       // rank 0, open when dumping
  std::string dumpLogits, dumpDraftLogits, dumpTokens, dumpAcceptance;
};

/// Runs the speculative schedule with `prog.verify` and `prog.draft` on
/// every rank; rank 0 picks the tokens and broadcasts them, prints the
/// generated ids and the acceptance, and writes the dumps: the main
/// model's and the MTP layer's logits per position ([positions, batch,
/// vocab], as the greedy schedule's), the tokens, and the candidates
/// accepted per verify step (one line per row). Returns the verify steps
/// run (with countTraffic, the backend's traffic counts the last one and
/// its draft passes).
int64_t runSpeculative(Context &ctx, DecodeProgram &prog, SpeculativeRun &run);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_COMMON_SPECULATIVEDECODE_H
