//===- Search.h - Exhaustive search of sharding configurations --*- C++ -*-===//
//
// For every strategy, GPU count, valid layout, overlap setting and batch size
// the search prices one decode step and keeps the configurations that fit in
// HBM; per strategy it returns the Pareto front of tokens/s/user against
// tokens/s/GPU and, under a latency budget, the best configuration and the
// largest batch. "baseline" is the front of tp, tp-pp, ep and kvp together.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_SEARCH_H
#define HELIX_COST_SEARCH_H

#include "helix/Cost/Hardware.h"
#include "helix/Cost/Pareto.h"
#include "helix/Cost/PerLayer.h"
#include "helix/Cost/Workload.h"
#include "helix/Model/ModelSpec.h"

#include <map>
#include <string>
#include <vector>

namespace helix {

struct SearchOptions {
  int64_t minGPUs = 1;
  int64_t maxGPUs = 64;
  /// Strategies to search; empty means all.
  std::vector<Strategy> strategies;
  /// Token-to-token latency budget in milliseconds; 0 means none.
  double ttlMs = 0;
  /// Batch sizes to sweep; empty means defaultBatchSweep(maxBatch). Under a
  /// budget the default sweep is refined by bisection (the largest batch is
  /// exact); an explicit list is used as given.
  std::vector<int64_t> batches;
  int64_t maxBatch = 65536;
  /// Also search per-layer Helix plans (PerLayer.h): one layout per kind of
  /// layer on each GPU count, into PlanResult::perLayer.
  bool perLayer = false;
};

/// 1..16, then four points per doubling (2^(k/4) rounded, so every power of
/// two is included) up to maxBatch.
std::vector<int64_t> defaultBatchSweep(int64_t maxBatch);

/// Valid layouts of `strategy` on exactly `gpus` GPUs for `model`.
std::vector<Layout> enumerateLayouts(const ModelSpec &model, const Hardware &hw,
                                     const Workload &workload,
                                     Strategy strategy, int64_t gpus);

/// Under a latency budget: the configuration with the most tokens/s/GPU and
/// the one with the largest batch (exact: found by bisection per layout).
struct BudgetChoice {
  bool found = false;
  PlanPoint best;
  PlanPoint largestBatch;
};

struct Frontier {
  std::string name;              // strategy name or "baseline"
  std::vector<PlanPoint> points; // Pareto-optimal only
  BudgetChoice budget;           // when a budget was given
  uint64_t evaluated = 0;        // configurations priced
  uint64_t feasible = 0;         // of which fit in memory
  bool empty() const { return points.empty(); }
  /// The point with the highest tokens/s/user.
  const PlanPoint &fastest() const { return points.front(); }
};

/// A uniform point and the best per-layer plan on its GPUs at its batch.
struct PerLayerComparison {
  bool found = false;
  PlanPoint uniform, perLayer;
  PerLayerChoice choice;
};

/// The point a report shows for a front: the best under the budget, or the
/// fastest (highest tokens/s/user) without one. nullptr if none.
const PlanPoint *chosenPoint(const Frontier &f, double ttlMs);

struct PlanResult {
  std::string model;
  std::string hardware;
  Workload workload;
  SearchOptions options;
  std::map<std::string, Frontier> frontiers;
  std::vector<std::string> order; // frontier names in report order
  uint64_t configsEvaluated = 0;
  double searchSeconds = 0;
  /// With SearchOptions::perLayer: the front of per-layer Helix plans
  /// ("helix-per-layer", not in `order`; its evaluated count is the batches
  /// priced, each the best of its kinds' combinations) and the layouts of
  /// its points (PlanPoint::perLayerIndex).
  Frontier perLayer;
  std::vector<PerLayerChoice> perLayerChoices;
  double perLayerSeconds = 0; // part of searchSeconds
  /// With SearchOptions::perLayer: Helix's chosen point against the
  /// per-layer plan on the same GPUs at the same batch.
  PerLayerComparison perLayerAtHelix;

  /// The frontier named `name` ("helix-per-layer": perLayer), or nullptr.
  const Frontier *frontier(const std::string &name) const;
  /// The layouts of a per-layer point, or nullptr.
  const PerLayerChoice *choiceOf(const PlanPoint &point) const;
};

/// Runs the exhaustive search.
PlanResult search(const ModelSpec &model, const Hardware &hw,
                  const Workload &workload, const SearchOptions &options);

} // namespace helix

#endif // HELIX_COST_SEARCH_H
