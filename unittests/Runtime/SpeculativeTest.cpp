//===- SpeculativeTest.cpp - The speculative schedule's bookkeeping -------===//
//
// SpeculativeSchedule (helix/Runtime/Speculative.h) driven by a fake model
// whose greedy next token depends on (token, position) only: speculative
// decoding must yield the greedy tokens whatever the drafts, and accept
// exactly the drafts the greedy chain rule accepts.
//
//===----------------------------------------------------------------------===//

#include "helix/Runtime/Speculative.h"
#include "helix/Runtime/Error.h"

#include <gtest/gtest.h>

#include <functional>

namespace {

using namespace helix::rt;
using Rows = std::vector<std::vector<int64_t>>;

constexpr int64_t kVocab = 97;

/// The fake main model: the greedy token after `token` at `position`.
int64_t next(int64_t token, int64_t position) {
  return (token * 7 + position * 3 + 1) % kVocab;
}

/// The greedy continuation of `prompt` up to position `last`.
std::vector<int64_t> greedy(std::vector<int64_t> x, int64_t last) {
  while (static_cast<int64_t>(x.size()) <= last)
    x.push_back(next(x.back(), static_cast<int64_t>(x.size()) - 1));
  return x;
}

/// Runs the schedule; `drafter(token, position)` is the MTP layer's
/// argmax on a draft row.
SpeculativeSchedule run(Prompts prompts, int64_t steps, int64_t k,
                        Prompts oracle,
                        std::function<int64_t(int64_t, int64_t)> drafter) {
  SpeculativeSchedule s(prompts, steps, k, oracle);
  while (!s.done()) {
    PassRows v = s.verifyRows();
    std::vector<int64_t> g;
    for (size_t i = 0; i < v.tokens.size(); ++i)
      g.push_back(next(v.tokens[i], v.positions[i]));
    s.accept(g);
    for (int64_t pass = 0; pass < k; ++pass) {
      PassRows d = s.draftRows(pass);
      std::vector<int64_t> a;
      for (size_t i = 0; i < d.tokens.size(); ++i)
        a.push_back(drafter(d.tokens[i], d.positions[i]));
      s.recordDraft(pass, a);
    }
  }
  return s;
}

/// A perfect drafter: the pair (hidden of position t, token of t + 1)
/// predicts the token of t + 2.
int64_t perfect(int64_t token, int64_t position) {
  return next(token, position + 1);
}
int64_t wrong(int64_t token, int64_t position) {
  return (perfect(token, position) + 1) % kVocab;
}

TEST(Speculative, PerfectDraftsAcceptEverything) {
  SpeculativeSchedule s = run({{5}}, 10, 2, {}, perfect);
  EXPECT_EQ(s.positions(), 10);
  // The first step has no drafts yet; then K accepted per step.
  EXPECT_EQ(s.acceptedPerStep(), (Rows{{0, 2, 2, 2}}));
  EXPECT_EQ(s.verifySteps(), 4);
  EXPECT_EQ(s.drafted(), 6);
  EXPECT_EQ(s.acceptedDrafts(), 6);
  EXPECT_EQ(s.draftingSteps(), 3);
  std::vector<int64_t> want = greedy({5}, 10);
  EXPECT_EQ(s.sequences(), (Rows{want}));
  EXPECT_EQ(s.generated()[0].size(), 10u);
}

TEST(Speculative, WrongDraftsStillGiveTheGreedyTokens) {
  SpeculativeSchedule s = run({{5}, {8, 9}}, 9, 3, {}, wrong);
  // Only row 1's second prompt token is accepted (forced) at step 0.
  const Rows &a = s.acceptedPerStep();
  for (size_t r = 0; r < a.size(); ++r)
    for (size_t i = 0; i < a[r].size(); ++i)
      EXPECT_EQ(a[r][i], r == 1 && i == 0 ? 1 : 0) << r << ", " << i;
  EXPECT_EQ(s.acceptedDrafts(), 0);
  EXPECT_EQ(s.sequences(), (Rows{greedy({5}, 9), greedy({8, 9}, 10)}));
}

TEST(Speculative, OracleAcceptsUpToTheFirstWrongDraft) {
  // The oracle's draft for position 5 is wrong: the step verifying
  // positions 4 and 5 accepts one draft, and its bonus token fixes 5.
  std::vector<int64_t> truth = greedy({5}, 12);
  std::vector<int64_t> oracle(truth.begin(), truth.begin() + 10);
  oracle[5] = (oracle[5] + 1) % kVocab;
  SpeculativeSchedule s = run({{5}}, 10, 2, {oracle}, wrong);
  EXPECT_EQ(s.acceptedPerStep(), (Rows{{2, 1, 2, 1}}));
  EXPECT_EQ(s.drafted(), 7);
  EXPECT_EQ(s.acceptedDrafts(), 6);
  EXPECT_EQ(s.sequences()[0], greedy({5}, 10));
}

TEST(Speculative, PromptTokensAreForcedNotDrafted) {
  SpeculativeSchedule s({{1, 2, 3, 4, 5}}, 3, 2);
  EXPECT_EQ(s.positions(), 7);
  PassRows v = s.verifyRows();
  EXPECT_EQ(v.tokens, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(v.positions, (std::vector<int64_t>{0, 1, 2}));
  SpeculativeSchedule r = run({{1, 2, 3, 4, 5}}, 3, 2, {}, wrong);
  // Positions 1, 2 forced; then 4 forced and 5 drafted (wrong); then 6.
  EXPECT_EQ(r.acceptedPerStep(), (Rows{{2, 1, 0, 0}}));
  EXPECT_EQ(r.drafted(), 2);
  EXPECT_EQ(r.acceptedDrafts(), 0);
  EXPECT_EQ(r.generated(), (Rows{{next(5, 4), next(next(5, 4), 5),
                                  next(next(next(5, 4), 5), 6)}}));
}

TEST(Speculative, RowsStayWithinTheScheduleAndRepeatTheLastLiveRow) {
  // One request at p = 5 of T = 7 with K = 3: rows 0, 1 live (positions
  // 5, 6), rows 2, 3 repeat row 1; the extend pass pairs the accepted
  // positions with the next tokens and the verify rows' hidden states.
  std::vector<int64_t> truth = greedy({4}, 12);
  SpeculativeSchedule s({{4}}, 7, 3, {truth});
  // Step 0 accepts positions 1..3 (p: 0 -> 4); step 1 accepts 5 and 6.
  for (int step = 0; step < 2; ++step) {
    PassRows v = s.verifyRows();
    std::vector<int64_t> g;
    for (size_t i = 0; i < v.tokens.size(); ++i)
      g.push_back(next(v.tokens[i], v.positions[i]));
    if (step == 1) {
      EXPECT_EQ(v.positions, (std::vector<int64_t>{4, 5, 6, 6}));
      EXPECT_EQ(v.tokens,
                (std::vector<int64_t>{truth[4], truth[5], truth[6], truth[6]}));
    }
    s.accept(g);
  }
  EXPECT_TRUE(s.done());
  EXPECT_EQ(s.acceptedPerStep(), (Rows{{3, 2}}));
  using Pairs = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(s.verifiedRows()[0], (Pairs{{4, 0}, {5, 1}, {6, 2}}));
  PassRows extend = s.draftRows(0);
  EXPECT_EQ(extend.positions, (std::vector<int64_t>{4, 5, 6, 6}));
  EXPECT_EQ(extend.tokens,
            (std::vector<int64_t>{truth[5], truth[6], truth[7], truth[7]}));
  EXPECT_EQ(extend.hiddenRows, (std::vector<int64_t>{0, 1, 2, 2}));
  // A chain pass repeats one pair in every row, clamped to T - 1.
  s.recordDraft(0, {0, 0, 0, 0});
  PassRows chain = s.draftRows(1);
  EXPECT_EQ(chain.positions, (std::vector<int64_t>{6, 6, 6, 6}));
  EXPECT_EQ(chain.hiddenRows, (std::vector<int64_t>{2, 2, 2, 2}));
  // Finished: the verify rows feed the last position again.
  PassRows again = s.verifyRows();
  EXPECT_EQ(again.positions, (std::vector<int64_t>{6, 6, 6, 6}));
}

TEST(Speculative, DraftOracleFileIsChecked) {
  auto err = [](const std::function<void()> &f) {
    try {
      f();
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(readDraftOracle("1,2,3\n4,5,6\n", "o", 2, 3, 10),
            (Prompts{{1, 2, 3}, {4, 5, 6}}));
  EXPECT_NE(err([] {
              readDraftOracle("1,2,3\n", "o", 2, 3, 10);
            }).find("o: 1 draft rows, expected one per prompt row (2)"),
            std::string::npos);
  EXPECT_NE(err([] {
              readDraftOracle("1,2\n", "o", 1, 3, 10);
            }).find("o: row 1: 2 drafts, expected one per position"),
            std::string::npos);
  EXPECT_NE(err([] {
              readDraftOracle("1,2,12\n", "o", 1, 3, 10);
            }).find("draft 3: id 12 is out of range"),
            std::string::npos);
}

} // namespace
