//===- Speculative.cpp - Greedy speculative decoding with MTP -------------===//

#include "helix/Runtime/Speculative.h"
#include "helix/Runtime/Error.h"

#include <algorithm>

namespace helix {
namespace rt {

SpeculativeSchedule::SpeculativeSchedule(Prompts prompts, int64_t generate,
                                         int64_t draftTokens, Prompts oracle)
    : prompts_(std::move(prompts)), oracle_(std::move(oracle)),
      generate_(generate), k_(draftTokens) {
  check(k_ >= 1, "SpeculativeSchedule: at least one draft token");
  t_ = scheduleSteps(prompts_, generate_);
  size_t n = prompts_.size();
  x_ = prompts_;
  p_.assign(n, 0);
  pBefore_.assign(n, 0);
  accepted_.assign(n, 0);
  cand_.assign(n, std::vector<int64_t>(k_, -1));
  verified_.resize(n);
  acceptedPerStep_.resize(n);
}

bool SpeculativeSchedule::done() const {
  return std::all_of(p_.begin(), p_.end(), [&](int64_t p) { return p >= t_; });
}

int64_t SpeculativeSchedule::candidate(int64_t r, int64_t j) const {
  int64_t position = p_[r] + j;
  if (isKnown(r, position))
    return x_[r][position];
  if (!oracle_.empty())
    return position < static_cast<int64_t>(oracle_[r].size())
               ? oracle_[r][position]
               : -1;
  return cand_[r][j - 1];
}

int64_t SpeculativeSchedule::liveRows(int64_t r) const {
  int64_t live = std::min<int64_t>(k_, t_ - 1 - p_[r]);
  for (int64_t j = 1; j <= live; ++j)
    if (candidate(r, j) < 0)
      return j - 1;
  return std::max<int64_t>(live, 0);
}

PassRows SpeculativeSchedule::verifyRows() const {
  PassRows rows;
  int64_t q = queries();
  for (int64_t r = 0; r < requests(); ++r) {
    int64_t p = p_[r];
    for (int64_t j = 0; j < q; ++j) {
      if (p >= t_) { // finished: its last position again
        rows.tokens.push_back(x_[r][t_ - 1]);
        rows.positions.push_back(t_ - 1);
        continue;
      }
      int64_t live = std::min(j, liveRows(r));
      rows.tokens.push_back(live == 0 ? x_[r][p] : candidate(r, live));
      rows.positions.push_back(p + live);
    }
  }
  return rows;
}

void SpeculativeSchedule::accept(const std::vector<int64_t> &argmax) {
  int64_t q = queries();
  check(static_cast<int64_t>(argmax.size()) == requests() * q,
        "SpeculativeSchedule: " + std::to_string(argmax.size()) +
            " verify rows, expected " + std::to_string(requests() * q));
  ++steps_;
  for (int64_t r = 0; r < requests(); ++r) {
    int64_t p = p_[r];
    pBefore_[r] = p;
    verified_[r].clear();
    if (p >= t_) {
      accepted_[r] = -1;
      continue;
    }
    const int64_t *g = argmax.data() + r * q;
    int64_t live = liveRows(r), a = 0;
    bool accepting = true, drafting = false;
    for (int64_t j = 1; j <= live; ++j) {
      bool forced = isKnown(r, p + j);
      if (!forced) {
        ++drafted_;
        drafting = true;
      }
      accepting = accepting && (forced || candidate(r, j) == g[j - 1]);
      if (accepting) {
        a = j;
        acceptedDrafts_ += forced ? 0 : 1;
      }
    }
    // Commit the accepted candidates, then the bonus token g_a.
    for (int64_t j = 1; j <= a + 1; ++j)
      if (!isKnown(r, p + j))
        x_[r].push_back(j <= a ? g[j - 1] : g[a]);
    for (int64_t j = 0; j <= a; ++j)
      verified_[r].push_back({p + j, r * q + j});
    p_[r] = p + a + 1;
    accepted_[r] = a;
    acceptedPerStep_[r].push_back(a);
    draftingSteps_ += drafting ? 1 : 0;
  }
}

PassRows SpeculativeSchedule::draftRows(int64_t pass) const {
  check(pass >= 0 && pass < k_, "SpeculativeSchedule: draft pass " +
                                    std::to_string(pass) + " of " +
                                    std::to_string(k_));
  PassRows rows;
  int64_t q = queries();
  for (int64_t r = 0; r < requests(); ++r) {
    // The row of the previous pass whose hidden state carries on.
    int64_t a = std::max<int64_t>(accepted_[r], 0);
    for (int64_t j = 0; j < q; ++j) {
      if (pass == 0) {
        // The extend pass: the accepted positions' true pairs (a finished
        // request: its last position's, again).
        bool finished = accepted_[r] < 0;
        int64_t jj = finished ? 0 : std::min(j, a);
        int64_t position = finished ? t_ - 1 : pBefore_[r] + jj;
        rows.positions.push_back(position);
        rows.tokens.push_back(x_[r][position + 1]);
        rows.hiddenRows.push_back(r * q + jj);
        continue;
      }
      int64_t c = candidate(r, pass);
      rows.positions.push_back(std::min(p_[r] + pass - 1, t_ - 1));
      rows.tokens.push_back(c < 0 ? 0 : c);
      rows.hiddenRows.push_back(r * q + (pass == 1 ? a : 0));
    }
  }
  return rows;
}

void SpeculativeSchedule::recordDraft(int64_t pass,
                                      const std::vector<int64_t> &argmax) {
  int64_t q = queries();
  check(pass >= 0 && pass < k_ &&
            static_cast<int64_t>(argmax.size()) == requests() * q,
        "SpeculativeSchedule: draft pass " + std::to_string(pass) + " with " +
            std::to_string(argmax.size()) + " rows");
  for (int64_t r = 0; r < requests(); ++r) {
    int64_t a = std::max<int64_t>(accepted_[r], 0);
    cand_[r][pass] = argmax[r * q + (pass == 0 ? a : 0)];
  }
}

std::vector<std::vector<int64_t>> SpeculativeSchedule::generated() const {
  std::vector<std::vector<int64_t>> out(x_.size());
  for (size_t r = 0; r < x_.size(); ++r) {
    auto from = x_[r].begin() + prompts_[r].size();
    out[r].assign(from,
                  from + std::min<int64_t>(generate_, x_[r].end() - from));
  }
  return out;
}

std::vector<std::vector<int64_t>> SpeculativeSchedule::sequences() const {
  std::vector<std::vector<int64_t>> out = prompts_, gen = generated();
  for (size_t r = 0; r < out.size(); ++r)
    out[r].insert(out[r].end(), gen[r].begin(), gen[r].end());
  return out;
}

Prompts readDraftOracle(const std::string &text, const std::string &source,
                        int64_t requests, int64_t positions, int64_t vocab) {
  Prompts rows = parsePrompts(text, source);
  if (static_cast<int64_t>(rows.size()) != requests)
    throw Error(source + ": " + std::to_string(rows.size()) +
                " draft rows, expected one per prompt row (" +
                std::to_string(requests) + ")");
  for (size_t r = 0; r < rows.size(); ++r) {
    if (static_cast<int64_t>(rows[r].size()) < positions)
      throw Error(source + ": row " + std::to_string(r + 1) + ": " +
                  std::to_string(rows[r].size()) +
                  " drafts, expected one per position up to " +
                  std::to_string(positions - 1) + " (" +
                  std::to_string(positions) + ")");
    for (size_t i = 0; i < rows[r].size(); ++i)
      if (rows[r][i] < 0 || rows[r][i] >= vocab)
        throw Error(
            source + ": row " + std::to_string(r + 1) + ", draft " +
            std::to_string(i + 1) + ": id " + std::to_string(rows[r][i]) +
            " is out of range (vocabulary size " + std::to_string(vocab) + ")");
  }
  return rows;
}

} // namespace rt
} // namespace helix
