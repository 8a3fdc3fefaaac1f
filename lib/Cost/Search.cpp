//===- Search.cpp - Exhaustive search of sharding configurations ----------===//

#include "helix/Cost/Search.h"

#include "helix/Cost/Evaluate.h"

#include "Engine.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <unordered_map>

namespace helix {

std::vector<int64_t> defaultBatchSweep(int64_t maxBatch) {
  std::vector<int64_t> batches;
  if (maxBatch < 1)
    return batches;
  for (int64_t b = 1; b <= std::min<int64_t>(16, maxBatch); ++b)
    batches.push_back(b);
  for (int k = 17;; ++k) {
    int64_t b = int64_t(std::llround(std::pow(2.0, k / 4.0)));
    if (b > maxBatch)
      break;
    if (b > batches.back())
      batches.push_back(b);
  }
  return batches;
}

const PlanPoint *chosenPoint(const Frontier &f, double ttlMs) {
  if (f.empty())
    return nullptr;
  if (ttlMs > 0)
    return f.budget.found ? &f.budget.best : nullptr;
  return &f.fastest();
}

const Frontier *PlanResult::frontier(const std::string &name) const {
  if (!perLayer.name.empty() && name == perLayer.name)
    return &perLayer;
  auto it = frontiers.find(name);
  return it == frontiers.end() ? nullptr : &it->second;
}

const PerLayerChoice *PlanResult::choiceOf(const PlanPoint &point) const {
  if (point.perLayerIndex < 0 ||
      point.perLayerIndex >= int64_t(perLayerChoices.size()))
    return nullptr;
  return &perLayerChoices[point.perLayerIndex];
}

/// Divisors of n, increasing.
static std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> low, high;
  for (int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      low.push_back(i);
      if (i != n / i)
        high.push_back(n / i);
    }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

/// enumerateLayouts with the model's validator (one for a whole search).
static void layoutsOf(const ConfigValidator &validator, bool moe,
                      Strategy strategy, int64_t gpus,
                      std::vector<Layout> &valid) {
  valid.clear();
  const std::vector<int64_t> divs = divisors(gpus);
  auto add = [&](const Layout &l) {
    Config c;
    c.strategy = strategy;
    c.layout = l;
    if (validator.valid(c))
      valid.push_back(l);
  };
  // FFN grids TPF x EP over `width` GPUs (width divides gpus, so its
  // divisors are those of gpus that divide it).
  auto addGrids = [&](Layout l, int64_t width) {
    for (int64_t ep : divs) {
      if (ep > width || width % ep != 0 || (!moe && ep != 1))
        continue;
      l.ep = ep;
      l.tpf = width / ep;
      add(l);
    }
  };
  for (int64_t tpa : divs) {
    Layout l;
    switch (strategy) {
    case Strategy::Helix:
    case Strategy::HelixNoHopB:
    case Strategy::KVP:
      l.tpa = tpa;
      l.kvp = gpus / tpa;
      addGrids(l, strategy == Strategy::KVP ? tpa : gpus);
      break;
    case Strategy::TP:
      if (tpa == gpus) {
        l.tpa = tpa;
        addGrids(l, gpus);
      }
      break;
    case Strategy::TPPP:
      // Here tpa is the stage width; pp = gpus / tpa stages.
      if (tpa < gpus) {
        l.tpa = tpa;
        l.pp = gpus / tpa;
        addGrids(l, tpa);
      }
      break;
    case Strategy::EP:
      l.tpa = tpa;
      l.dp = gpus / tpa;
      l.ep = moe ? gpus : 1;
      l.tpf = moe ? 1 : gpus;
      add(l);
      break;
    }
  }
}

std::vector<Layout> enumerateLayouts(const ModelSpec &model, const Hardware &hw,
                                     const Workload &workload,
                                     Strategy strategy, int64_t gpus) {
  std::vector<Layout> valid;
  layoutsOf(ConfigValidator(model, hw, workload), model.numMoELayers() > 0,
            strategy, gpus, valid);
  return valid;
}

namespace {

using detail::LayerCost;
using detail::Prepared;
using detail::StepCost;

/// Layer costs of the layouts a search prices, reused where two layouts
/// share them: the attention half of a layer reads only the placement's
/// attention widths, the FFN half only its FFN group, the step only the
/// stage width (Engine.h: costAttentionHalf, costFFNHalf, costStep), and the
/// model, hardware and workload are the search's. The keys hold every
/// placement field each half reads, so a reused cost is the number pricing
/// it again would give (SearchTest checks the search against evaluate()).
class LayerCostReuse {
public:
  /// Each class's costs at `micro` requests: the fields totalsFrom reads.
  const std::vector<LayerCost> &costs(const Prepared &p, int64_t micro) {
    const Placement &pl = p.place;
    auto &attn =
        attention[{pl.kvp, pl.tpa, pl.dp, pl.oprojWidth, pl.tokensSplit,
                   pl.overlap, pl.slices, int64_t(pl.exchange), micro}];
    auto &ffnParts = ffn[{pl.ffnWidth, pl.tpf, pl.ep, pl.sharedWidth,
                          pl.tokensSplit, micro}];
    const size_t n = p.classes.size();
    if (scratch.size() != n)
      scratch.assign(n, LayerCost()); // the fields set below change only
    const bool newAttention = attn.empty(), newFFN = ffnParts.empty();
    for (size_t i = 0; i < n && (newAttention || newFFN); ++i) {
      LayerCost c;
      if (newAttention) {
        detail::costAttentionHalf(p, p.classes[i], micro, c);
        attn.push_back({c.qkv.timeS, c.core.timeS, c.combine.timeS,
                        c.oproj.timeS, c.exchange.exposedS,
                        c.oprojComm.exposedS, c.slices});
      }
      if (newFFN) {
        detail::costFFNHalf(p, p.classes[i], micro, c);
        ffnParts.push_back({c.ffn.timeS, c.ffnComm.exposedS});
      }
    }
    for (size_t i = 0; i < n; ++i) {
      LayerCost &c = scratch[i];
      c.qkv.timeS = attn[i].qkv;
      c.core.timeS = attn[i].core;
      c.combine.timeS = attn[i].combine;
      c.oproj.timeS = attn[i].oproj;
      c.exchange.exposedS = attn[i].exchange;
      c.oprojComm.exposedS = attn[i].oprojComm;
      c.slices = attn[i].slices;
      c.ffn.timeS = ffnParts[i].ffn;
      c.ffnComm.exposedS = ffnParts[i].ffnComm;
    }
    return scratch;
  }

  const StepCost &step(const Prepared &p, int64_t micro) {
    auto it = steps.find({p.place.stageGPUs, micro});
    if (it == steps.end())
      it = steps
               .emplace(std::array<int64_t, 2>{p.place.stageGPUs, micro},
                        detail::costStep(p, micro))
               .first;
    return it->second;
  }

  /// Attention costs are kept for one GPU count (another count has other
  /// widths) unless pipeline stages reuse a stage width across counts.
  void nextGPUCount(bool keepAttention) {
    if (!keepAttention)
      attention.clear();
  }

private:
  struct AttentionPart {
    double qkv, core, combine, oproj, exchange, oprojComm;
    int64_t slices;
  };
  struct FFNPart {
    double ffn, ffnComm;
  };
  template <size_t N> struct KeyHash {
    size_t operator()(const std::array<int64_t, N> &k) const {
      uint64_t h = 1469598103934665603ull;
      for (int64_t v : k)
        h = (h ^ uint64_t(v)) * 1099511628211ull;
      return size_t(h);
    }
  };
  template <size_t N, typename V>
  using Map = std::unordered_map<std::array<int64_t, N>, V, KeyHash<N>>;
  Map<9, std::vector<AttentionPart>> attention;
  Map<6, std::vector<FFNPart>> ffn;
  Map<2, StepCost> steps;
  std::vector<LayerCost> scratch;
};

/// Points gathered before they are reduced to their Pareto front (the
/// points the last front beats are not gathered: FrontBound).
constexpr size_t kPruneAt = 1024;

/// Searches one strategy; collects its fitting points and, under a budget,
/// the largest batch per layout.
class StrategySearch {
public:
  StrategySearch(const ModelSpec &model, const Hardware &hw,
                 const Workload &workload, const SearchOptions &options,
                 const std::vector<int64_t> &batches)
      : model(model), hw(hw), workload(workload), options(options),
        batches(batches), classes(detail::classifyLayers(model)),
        validator(model, hw, workload), moe(model.numMoELayers() > 0) {}

  void run(Strategy strategy, std::vector<PlanPoint> &points,
           Frontier &frontier) {
    std::vector<bool> overlaps;
    if (strategy == Strategy::Helix)
      overlaps = {true};
    else if (strategy == Strategy::HelixNoHopB || strategy == Strategy::KVP)
      overlaps = {false};
    else
      overlaps = {true, false};
    reuse = LayerCostReuse();
    bound.clear();
    Prepared p; // its buffers serve every layout
    std::vector<Layout> layouts;
    for (int64_t g = options.minGPUs; g <= options.maxGPUs; ++g) {
      reuse.nextGPUCount(strategy == Strategy::TPPP);
      layoutsOf(validator, moe, strategy, g, layouts);
      for (const Layout &l : layouts) {
        for (bool hopb : overlaps) {
          Config c;
          c.strategy = strategy;
          c.layout = l;
          c.hopb = hopb;
          if (hopb == overlaps.front()) {
            detail::prepare(model, hw, workload, c, p, &classes);
          } else {
            // The shapes do not depend on the overlap: only the config and
            // the placement change.
            p.config = c;
            p.place = placementFor(c);
          }
          searchLayout(p, points, frontier);
        }
      }
    }
  }

private:
  /// Prices `batch`; false when it does not fit.
  bool price(detail::Prepared &p, int64_t batch, PlanPoint &out,
             Frontier &frontier) {
    const int64_t micro = (batch + detail::microBatchesOf(p, batch) - 1) /
                          detail::microBatchesOf(p, batch);
    detail::Totals t = detail::totalsFrom(p, batch, reuse.costs(p, micro),
                                          reuse.step(p, micro), false);
    ++frontier.evaluated;
    if (!t.fits)
      return false;
    ++frontier.feasible;
    out.strategy = p.config.strategy;
    out.config = p.config;
    out.config.batch = batch;
    out.gpus = p.config.layout.gpus();
    out.ttlS = t.ttlS;
    out.tokensPerSecPerUser = 1.0 / t.ttlS;
    out.tokensPerSecPerGPU = double(batch) / (t.ttlS * out.gpus);
    out.memoryPerGPUBytes = t.memory.total();
    out.hopbSlices = t.slices;
    return true;
  }

  void searchLayout(Prepared &p, std::vector<PlanPoint> &points,
                    Frontier &frontier) {
    sweep([&](int64_t batch,
              PlanPoint &out) { return price(p, batch, out, frontier); },
          points, frontier);
  }

public:
  /// Per-layer Helix plans on every GPU count (PerLayer.h); `choices`
  /// receives the layouts of each point (PlanPoint::perLayerIndex).
  void runPerLayer(std::vector<PlanPoint> &points, Frontier &frontier,
                   std::vector<PerLayerChoice> &choices) {
    PerLayerReuse reuseFFN;
    bound.clear();
    for (int64_t g = options.minGPUs; g <= options.maxGPUs; ++g) {
      PerLayerSearch per(model, hw, workload, g, &reuseFFN);
      if (!per.valid())
        continue;
      PerLayerChoice choice;
      sweep(
          [&](int64_t batch, PlanPoint &out) {
            ++frontier.evaluated;
            if (!per.price(batch, out, choice))
              return false;
            ++frontier.feasible;
            out.perLayerIndex = int64_t(choices.size());
            choices.push_back(choice);
            return true;
          },
          points, frontier);
    }
  }

private:
  /// Prices the batch sweep with `price(batch, point)` (false: does not
  /// fit) and, under a budget, bisects for the largest batch meeting it.
  template <typename PriceFn>
  void sweep(PriceFn &&price, std::vector<PlanPoint> &points,
             Frontier &frontier) {
    const double budget = options.ttlMs * 1e-3;
    int64_t metBudget = 0, missedBudget = 0;
    PlanPoint point;
    for (int64_t b : batches) {
      if (!price(b, point)) {
        missedBudget = b;
        break; // memory only grows with the batch
      }
      keep(point, points);
      if (budget > 0 && point.ttlS <= budget)
        metBudget = b;
      else if (budget > 0 && !missedBudget)
        missedBudget = b;
    }
    // Only the front is kept: the front of the points so far and the rest
    // is the front of all of them (as for the baseline below).
    if (points.size() >= kPruneAt) {
      points = paretoFront(std::move(points));
      bound.reset(points);
    }
    if (budget <= 0 || metBudget == 0)
      return;
    // TTL and memory grow with the batch: bisect between the last sweep
    // batch that met the budget and the first that did not. Explicit batch
    // lists are taken as they are.
    int64_t lo = metBudget;
    int64_t hi = missedBudget ? missedBudget : options.maxBatch + 1;
    if (!options.batches.empty())
      hi = lo + 1;
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      if (price(mid, point) && point.ttlS <= budget)
        lo = mid;
      else
        hi = mid;
    }
    price(lo, point);
    if (lo != metBudget)
      keep(point, points);
    BudgetChoice &bc = frontier.budget;
    if (!bc.found || lo > bc.largestBatch.config.batch ||
        (lo == bc.largestBatch.config.batch &&
         point.tokensPerSecPerGPU > bc.largestBatch.tokensPerSecPerGPU)) {
      bc.largestBatch = point;
      bc.found = true;
    }
  }

  /// Gathers `point` unless the last front beats it (no front keeps it).
  void keep(const PlanPoint &point, std::vector<PlanPoint> &points) {
    if (!bound.beats(point))
      points.push_back(point);
  }

  const ModelSpec &model;
  const Hardware &hw;
  const Workload &workload;
  const SearchOptions &options;
  const std::vector<int64_t> &batches;
  const detail::LayerClasses classes;
  const ConfigValidator validator;
  const bool moe;
  LayerCostReuse reuse;
  FrontBound bound;
};

/// Fills the best configuration under the budget from the front.
void chooseBest(Frontier &f, double budgetS) {
  if (budgetS <= 0 || !f.budget.found)
    return;
  bool have = false;
  for (const PlanPoint &p : f.points)
    if (p.ttlS <= budgetS &&
        (!have || p.tokensPerSecPerGPU > f.budget.best.tokensPerSecPerGPU)) {
      f.budget.best = p;
      have = true;
    }
}

} // namespace

PlanResult search(const ModelSpec &model, const Hardware &hw,
                  const Workload &workload, const SearchOptions &options) {
  auto start = std::chrono::steady_clock::now();
  PlanResult r;
  r.model = model.name;
  r.hardware = hw.name;
  r.workload = workload;
  r.options = options;
  std::vector<Strategy> strategies =
      options.strategies.empty() ? allStrategies() : options.strategies;
  std::vector<int64_t> batches = options.batches.empty()
                                     ? defaultBatchSweep(options.maxBatch)
                                     : options.batches;
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());

  StrategySearch searcher(model, hw, workload, options, batches);
  std::vector<PlanPoint> baselinePoints;
  Frontier baseline;
  baseline.name = "baseline";
  bool anyBaseline = false;
  for (Strategy s : strategies) {
    Frontier f;
    f.name = stringifyStrategy(s).str();
    std::vector<PlanPoint> points;
    searcher.run(s, points, f);
    f.points = paretoFront(std::move(points));
    if (isBaselineStrategy(s)) {
      // The front of the union is the front of the strategies' fronts: a
      // point off its own front is beaten there by one that sorts first.
      anyBaseline = true;
      baselinePoints.insert(baselinePoints.end(), f.points.begin(),
                            f.points.end());
      baseline.evaluated += f.evaluated;
      baseline.feasible += f.feasible;
      const BudgetChoice &bc = f.budget;
      if (bc.found && (!baseline.budget.found ||
                       bc.largestBatch.config.batch >
                           baseline.budget.largestBatch.config.batch)) {
        baseline.budget.largestBatch = bc.largestBatch;
        baseline.budget.found = true;
      }
    }
    r.configsEvaluated += f.evaluated;
    chooseBest(f, options.ttlMs * 1e-3);
    r.order.push_back(f.name);
    r.frontiers[f.name] = std::move(f);
  }
  if (anyBaseline) {
    baseline.points = paretoFront(std::move(baselinePoints));
    chooseBest(baseline, options.ttlMs * 1e-3);
    r.order.push_back(baseline.name);
    r.frontiers[baseline.name] = std::move(baseline);
  }
  if (options.perLayer) {
    auto perStart = std::chrono::steady_clock::now();
    r.perLayer.name = "helix-per-layer";
    std::vector<PlanPoint> points;
    std::vector<PerLayerChoice> all;
    searcher.runPerLayer(points, r.perLayer, all);
    r.perLayer.points = paretoFront(std::move(points));
    chooseBest(r.perLayer, options.ttlMs * 1e-3);
    // Keep the layouts of the points reported only.
    auto keep = [&](PlanPoint &p) {
      r.perLayerChoices.push_back(all[p.perLayerIndex]);
      p.perLayerIndex = int64_t(r.perLayerChoices.size()) - 1;
    };
    for (PlanPoint &p : r.perLayer.points)
      keep(p);
    if (r.perLayer.budget.found) {
      keep(r.perLayer.budget.best);
      keep(r.perLayer.budget.largestBatch);
    }
    r.configsEvaluated += r.perLayer.evaluated;
    const Frontier *helix = r.frontier("helix");
    const PlanPoint *chosen =
        helix ? chosenPoint(*helix, options.ttlMs) : nullptr;
    if (chosen) {
      PerLayerComparison &cmp = r.perLayerAtHelix;
      PerLayerSearch per(model, hw, workload, chosen->gpus);
      cmp.uniform = *chosen;
      cmp.found = per.valid() &&
                  per.price(chosen->config.batch, cmp.perLayer, cmp.choice);
    }
    r.perLayerSeconds = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - perStart)
                            .count();
  }
  r.searchSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return r;
}

} // namespace helix
