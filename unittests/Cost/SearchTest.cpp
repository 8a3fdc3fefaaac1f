//===- SearchTest.cpp - Exhaustive search and Pareto fronts ---------------===//

#include "helix/Cost/Search.h"
#include "helix/Cost/Evaluate.h"

#include "PaperModels.h"

#include "gtest/gtest.h"

#include <random>

using namespace helix;

namespace {

PlanPoint point(double user, double gpu, int64_t gpus = 1) {
  PlanPoint p;
  p.tokensPerSecPerUser = user;
  p.tokensPerSecPerGPU = gpu;
  p.ttlS = 1.0 / user;
  p.gpus = gpus;
  return p;
}

TEST(Pareto, KeepsOnlyUndominatedPoints) {
  std::vector<PlanPoint> front =
      paretoFront({point(10, 1), point(5, 5), point(8, 2), point(4, 4),
                   point(1, 9), point(8, 2, 4), point(2, 9)});
  ASSERT_EQ(front.size(), 4u);
  EXPECT_EQ(front[0].tokensPerSecPerUser, 10);
  EXPECT_EQ(front[1].tokensPerSecPerUser, 8);
  EXPECT_EQ(front[1].gpus, 1); // equal points: fewer GPUs kept
  EXPECT_EQ(front[2].tokensPerSecPerUser, 5);
  EXPECT_EQ(front[3].tokensPerSecPerUser, 2);
}

// Points the last front beats are dropped as they come (FrontBound); the
// front of what is kept, pruned now and then, is the front of all points,
// ties included (equal throughputs, equal points on more GPUs).
TEST(Pareto, FrontBoundDropsOnlyPointsNoFrontKeeps) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    // Coarse values: many equal throughputs and exact duplicates.
    std::uniform_int_distribution<int> value(1, 12), gpus(1, 4);
    std::vector<PlanPoint> all, kept;
    FrontBound bound;
    size_t dropped = 0;
    for (int i = 0; i < 400; ++i) {
      PlanPoint p = point(value(rng), value(rng), gpus(rng));
      p.config.batch = value(rng);
      all.push_back(p);
      if (bound.beats(p)) {
        ++dropped;
        continue;
      }
      kept.push_back(p);
      if (kept.size() >= 16) {
        kept = paretoFront(std::move(kept));
        bound.reset(kept);
      }
    }
    std::vector<PlanPoint> want = paretoFront(all), got = paretoFront(kept);
    ASSERT_EQ(got.size(), want.size()) << "trial " << trial;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].tokensPerSecPerUser, want[i].tokensPerSecPerUser);
      EXPECT_EQ(got[i].tokensPerSecPerGPU, want[i].tokensPerSecPerGPU);
      EXPECT_EQ(got[i].gpus, want[i].gpus);
      EXPECT_EQ(got[i].config.batch, want[i].config.batch);
    }
    EXPECT_GT(dropped, 0u); // the bound did drop points
  }
}

TEST(Search, BatchSweep) {
  std::vector<int64_t> b = defaultBatchSweep(1024);
  EXPECT_EQ(b.front(), 1);
  EXPECT_EQ(b.back(), 1024);
  for (int64_t i = 1; i <= 16; ++i)
    EXPECT_EQ(b[i - 1], i);
  for (int64_t p = 32; p <= 1024; p *= 2)
    EXPECT_NE(std::find(b.begin(), b.end(), p), b.end()) << p;
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
}

TEST(Search, EdgeCases) {
  EXPECT_TRUE(defaultBatchSweep(0).empty());
  EXPECT_EQ(defaultBatchSweep(3), (std::vector<int64_t>{1, 2, 3}));
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error));
  // Helix alone: no baseline front; nothing fits on one GPU.
  SearchOptions o;
  o.maxGPUs = 1;
  o.strategies = {Strategy::Helix};
  PlanResult r = search(paper::llama405B(), hw, Workload(), o);
  EXPECT_EQ(r.frontier("baseline"), nullptr);
  ASSERT_NE(r.frontier("helix"), nullptr);
  EXPECT_TRUE(r.frontier("helix")->empty());
  // A model without KV heads is rejected, not divided by.
  ModelSpec bad = paper::figure1Model(1);
  bad.layers[0].attention.numKVHeads = 0;
  Config c;
  c.strategy = Strategy::TP;
  c.layout.tpa = c.layout.tpf = 2;
  EXPECT_EQ(validateConfig(bad, hw, Workload(), c),
            "attention needs at least one query and one KV head");
}

TEST(Search, EnumeratesHelixLayouts) {
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error));
  std::vector<Layout> ls =
      enumerateLayouts(paper::llama405B(), hw, Workload(), Strategy::Helix, 64);
  // TPA in {1, 2, 4, 8}, KVP = 64 / TPA, dense FFN TPF = 64.
  ASSERT_EQ(ls.size(), 4u);
  for (const Layout &l : ls) {
    EXPECT_EQ(l.kvp * l.tpa, 64);
    EXPECT_EQ(l.tpf, 64);
  }
  // DeepSeek-R1: TPA = 1 (one latent head), TPF x EP over 64 GPUs.
  EXPECT_EQ(
      enumerateLayouts(paper::deepSeekR1(), hw, Workload(), Strategy::Helix, 64)
          .size(),
      7u);
}

TEST(Search, ExplicitBatchesAreKeptUnderABudget) {
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error));
  SearchOptions o;
  o.maxGPUs = 16;
  o.batches = {8};
  o.ttlMs = 50;
  o.strategies = {Strategy::Helix, Strategy::TP};
  PlanResult r = search(paper::deepSeekR1(), hw, Workload(), o);
  for (const auto &entry : r.frontiers) {
    for (const PlanPoint &p : entry.second.points)
      EXPECT_EQ(p.config.batch, 8) << entry.first;
    if (entry.second.budget.found) {
      EXPECT_EQ(entry.second.budget.largestBatch.config.batch, 8);
    }
  }
}

class FullSearch : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::string error;
    ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error)) << error;
    SearchOptions o;
    o.ttlMs = 15;
    result = search(paper::deepSeekR1(), hw, Workload(), o);
  }
  static Hardware hw;
  static PlanResult result;
};
Hardware FullSearch::hw;
PlanResult FullSearch::result;

TEST_F(FullSearch, IsFastAndCoversEveryStrategy) {
  // Target is well under a second (see helix-bench-search); leave slack for
  // slow or instrumented builds.
  EXPECT_LT(result.searchSeconds, 5.0);
  EXPECT_GT(result.configsEvaluated, 10000u);
  for (const char *name :
       {"helix", "helix-no-hopb", "tp", "tp-pp", "ep", "kvp", "baseline"}) {
    const Frontier *f = result.frontier(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_FALSE(f->empty()) << name;
  }
}

TEST_F(FullSearch, FrontsArePareto) {
  for (const auto &entry : result.frontiers) {
    const std::vector<PlanPoint> &pts = entry.second.points;
    for (size_t i = 1; i < pts.size(); ++i) {
      EXPECT_GT(pts[i].ttlS, pts[i - 1].ttlS) << entry.first;
      EXPECT_GT(pts[i].tokensPerSecPerGPU, pts[i - 1].tokensPerSecPerGPU);
    }
  }
  // Baseline is the front of its four strategies together.
  const Frontier &base = *result.frontier("baseline");
  for (const char *name : {"tp", "tp-pp", "ep", "kvp"})
    for (const PlanPoint &p : result.frontier(name)->points)
      for (const PlanPoint &b : base.points)
        EXPECT_FALSE(p.tokensPerSecPerUser > b.tokensPerSecPerUser &&
                     p.tokensPerSecPerGPU > b.tokensPerSecPerGPU);
}

TEST_F(FullSearch, BudgetChoicesAreExact) {
  const double budget = 15e-3;
  for (const char *name : {"helix", "baseline"}) {
    const Frontier &f = *result.frontier(name);
    ASSERT_TRUE(f.budget.found) << name;
    EXPECT_LE(f.budget.best.ttlS, budget);
    const PlanPoint &big = f.budget.largestBatch;
    EXPECT_LE(big.ttlS, budget);
    // One more request misses the budget or memory.
    Config more = big.config;
    more.batch += 1;
    Evaluation ev = evaluate(paper::deepSeekR1(), hw, Workload(), more);
    ASSERT_TRUE(ev.valid()) << ev.error;
    EXPECT_TRUE(ev.ttlS > budget || !ev.fits) << name;
    // No front point under the budget beats the best one.
    for (const PlanPoint &p : f.points) {
      if (p.ttlS <= budget) {
        EXPECT_LE(p.tokensPerSecPerGPU, f.budget.best.tokensPerSecPerGPU);
      }
    }
  }
}

TEST_F(FullSearch, HelixPushesTheFrontOut) {
  const Frontier &helix = *result.frontier("helix");
  const Frontier &base = *result.frontier("baseline");
  EXPECT_GE(helix.fastest().tokensPerSecPerUser,
            base.fastest().tokensPerSecPerUser);
  EXPECT_GT(helix.budget.largestBatch.config.batch,
            base.budget.largestBatch.config.batch);
}

TEST(Search, FrontsAreThoseOfEveryConfigurationEvaluated) {
  // The search reuses layer costs between layouts and prices stages and
  // fronts with shortcuts (Search.cpp); its fronts must be, figure for
  // figure, the Pareto fronts of evaluate() over every layout, overlap and
  // batch of the sweep.
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error));
  SearchOptions o;
  o.maxGPUs = 12;
  o.maxBatch = 64;
  for (const ModelSpec &m : {paper::deepSeekR1(), paper::llama405B()}) {
    PlanResult r = search(m, hw, Workload(), o);
    for (Strategy s : allStrategies()) {
      std::vector<PlanPoint> all;
      for (int64_t g = 1; g <= o.maxGPUs; ++g)
        for (const Layout &l : enumerateLayouts(m, hw, Workload(), s, g))
          for (bool hopb : {true, false}) {
            if (!hopb && (s == Strategy::Helix))
              continue;
            if (hopb && (s == Strategy::HelixNoHopB || s == Strategy::KVP))
              continue;
            for (int64_t b : defaultBatchSweep(o.maxBatch)) {
              Config c;
              c.strategy = s;
              c.layout = l;
              c.hopb = hopb;
              c.batch = b;
              Evaluation ev = evaluate(m, hw, Workload(), c);
              ASSERT_TRUE(ev.valid()) << ev.error;
              if (!ev.fits)
                break;
              PlanPoint p;
              p.strategy = s;
              p.config = c;
              p.gpus = ev.gpus;
              p.ttlS = ev.ttlS;
              p.tokensPerSecPerUser = ev.tokensPerSecPerUser;
              p.tokensPerSecPerGPU = ev.tokensPerSecPerGPU;
              p.memoryPerGPUBytes = ev.memoryPerGPUBytes;
              all.push_back(p);
            }
          }
      std::vector<PlanPoint> front = paretoFront(all);
      const Frontier *f = r.frontier(stringifyStrategy(s).str());
      ASSERT_NE(f, nullptr);
      ASSERT_EQ(f->points.size(), front.size()) << stringifyStrategy(s).str();
      for (size_t i = 0; i < front.size(); ++i) {
        const PlanPoint &a = f->points[i], &b = front[i];
        EXPECT_EQ(a.ttlS, b.ttlS) << m.name << " " << b.config.layout.str();
        EXPECT_EQ(a.memoryPerGPUBytes, b.memoryPerGPUBytes);
        EXPECT_EQ(a.config.layout, b.config.layout);
        EXPECT_EQ(a.config.batch, b.config.batch);
      }
    }
  }
}

} // namespace
