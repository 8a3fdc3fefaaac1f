//===- Speculative.h - Greedy speculative decoding with MTP -----*- C++ -*-===//
//
// The bookkeeping of speculative decoding (docs/speculative-decoding.md),
// shared by nothing else: host integers only, so it is unit-tested alone.
// helix-decode (SpeculativeDecode.cpp) runs it with the generated verify
// and draft programs.
//
// Every request r keeps its known tokens x (the prompt, then what it
// committed) and p, the positions the main model has processed (x[p] is
// the next token to feed). A round is:
//
//   verify   q = K + 1 rows per request, request-major (row r * q + j):
//            row j feeds position p + j, x[p] for j = 0, then the
//            candidates c_1 .. c_K for positions p + 1 .. p + K (a known
//            token where x has one, a draft otherwise). Row j's logits
//            give g_j, the greedy token of position p + j + 1.
//   accept   greedy chain acceptance: c_{j+1} is accepted while it is
//            known or equals g_j; with a accepted, x gains c_1 .. c_a and
//            the bonus g_a, and p advances by a + 1.
//   extend   draft pass 0 (the MTP layer, q rows per request): row j is
//            the pair (verify hidden state of row j, x[p + j + 1]) at
//            position p + j for j <= a (the accepted positions, which fill
//            the MTP layer's KV cache), row a repeated after; row a's
//            logits draft c_1 of the next round.
//   chain    draft passes 1 .. K - 1: the pair (the previous pass's hidden
//            state, c_d) at position p' + d - 1 (p' the new p) drafts
//            c_{d+1}; all q rows of a request are that one pair.
//
// The schedule runs until every request has processed the positions a
// greedy run of the same prompts and --steps processes (DecodeIO.h:
// T = max prompt length + steps - 1), so its tokens and its logits per
// position compare with helix-reference's. Rows past position T - 1 (and
// the rows of finished requests) repeat the request's last live row: the
// same token at the same position writes the same KV entry again, so the
// cache never holds more than T positions.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_SPECULATIVE_H
#define HELIX_RUNTIME_SPECULATIVE_H

#include "helix/Runtime/DecodeIO.h"

#include <cstdint>
#include <vector>

namespace helix {
namespace rt {

/// The inputs of one pass over q rows per request: token, position and
/// the row of the previous pass's hidden states each row reads (verify:
/// unused).
struct PassRows {
  std::vector<int64_t> tokens, positions, hiddenRows;
};

class SpeculativeSchedule {
public:
  /// `oracle`: drafts read from a file (row r, position t: the draft for
  /// position t) instead of the MTP layer's argmax; empty for none.
  SpeculativeSchedule(Prompts prompts, int64_t generate, int64_t draftTokens,
                      Prompts oracle = {});

  int64_t requests() const { return static_cast<int64_t>(x_.size()); }
  int64_t queries() const { return k_ + 1; }
  int64_t draftTokens() const { return k_; }
  /// Positions every request processes (the greedy schedule's steps).
  int64_t positions() const { return t_; }
  bool done() const;

  /// The verify step's rows.
  PassRows verifyRows() const;
  /// Greedy acceptance from the argmax of every verify row.
  void accept(const std::vector<int64_t> &argmax);
  /// Draft pass `pass` (0: the extend pass) after accept().
  PassRows draftRows(int64_t pass) const;
  /// The argmax of every row of draft pass `pass`: the next candidate.
  void recordDraft(int64_t pass, const std::vector<int64_t> &argmax);

  /// After accept(), per request: (position, row) for each position the
  /// verify step processed with its true token, whose logits are that
  /// position's; the extend pass that follows holds the true (hidden
  /// state, next token) pair of the same position in the same row, so its
  /// logits are the MTP layer's at that position.
  const std::vector<std::vector<std::pair<int64_t, int64_t>>> &
  verifiedRows() const {
    return verified_;
  }

  /// The generated tokens (the first `generate` after each prompt) and the
  /// prompt followed by them.
  std::vector<std::vector<int64_t>> generated() const;
  std::vector<std::vector<int64_t>> sequences() const;

  /// Statistics: verify steps, drafted candidates the verify step
  /// compared (positions the schedule processes), and those accepted.
  int64_t verifySteps() const { return steps_; }
  int64_t drafted() const { return drafted_; }
  int64_t acceptedDrafts() const { return acceptedDrafts_; }
  /// Verify steps, per request, in which it compared at least one draft.
  int64_t draftingSteps() const { return draftingSteps_; }
  /// Per request, the candidates accepted (known or drafted) at each
  /// verify step in which it was live.
  const std::vector<std::vector<int64_t>> &acceptedPerStep() const {
    return acceptedPerStep_;
  }

private:
  Prompts prompts_, oracle_;
  int64_t generate_, k_, t_;
  std::vector<std::vector<int64_t>> x_;    // known tokens per request
  std::vector<int64_t> p_;                 // positions processed
  std::vector<int64_t> pBefore_;           // p at the last verify step
  std::vector<int64_t> accepted_;          // a at the last verify step
  std::vector<std::vector<int64_t>> cand_; // c_1 .. c_K per request
  std::vector<std::vector<std::pair<int64_t, int64_t>>> verified_;
  std::vector<std::vector<int64_t>> acceptedPerStep_;
  int64_t steps_ = 0, drafted_ = 0, acceptedDrafts_ = 0, draftingSteps_ = 0;

  /// Candidate `j` (1-based) of request r, for position p + j: the known
  /// token, the oracle's, or the recorded draft; -1 when there is none.
  int64_t candidate(int64_t r, int64_t j) const;
  /// The last verify row of request r at p that feeds a new position with
  /// a candidate (0 .. K).
  int64_t liveRows(int64_t r) const;
  bool isKnown(int64_t r, int64_t position) const {
    return position < static_cast<int64_t>(x_[r].size());
  }
};

/// Reads a draft oracle (the prompt-file format: one line per request,
/// the draft for each position from 0); throws Error naming the file when
/// it has another number of rows than `requests` or a row shorter than
/// `positions`, or a token outside [0, vocab).
Prompts readDraftOracle(const std::string &text, const std::string &source,
                        int64_t requests, int64_t positions, int64_t vocab);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_SPECULATIVE_H
