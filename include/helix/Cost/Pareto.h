//===- Pareto.h - Throughput vs interactivity fronts ------------*- C++ -*-===//

#ifndef HELIX_COST_PARETO_H
#define HELIX_COST_PARETO_H

#include "helix/Cost/Layout.h"

#include <vector>

namespace helix {

/// One evaluated configuration that fits in memory.
struct PlanPoint {
  Strategy strategy = Strategy::Helix;
  Config config;
  int64_t gpus = 0;
  double ttlS = 0;
  double tokensPerSecPerUser = 0; // interactivity, 1 / TTL
  double tokensPerSecPerGPU = 0;  // throughput, batch / (TTL * GPUs)
  double memoryPerGPUBytes = 0;
  /// Batch slices the attention-side overlap runs (HOP-B for helix, the
  /// output-projection all-reduce for the TP baselines); HOP-B is reported
  /// on exactly when more than one slice is used.
  int64_t hopbSlices = 1;
  bool hopbUsed() const { return hopbSlices > 1; }
  /// Per-layer points only: index of the point's layouts in
  /// PlanResult::perLayerChoices; -1 for a uniform layout.
  int64_t perLayerIndex = -1;
};

/// The points no other point beats on both interactivity and throughput,
/// sorted by decreasing tokens/s/user (increasing tokens/s/GPU). Of equal
/// points the one with fewer GPUs, then smaller batch, then HOP-B on, is
/// kept.
std::vector<PlanPoint> paretoFront(std::vector<PlanPoint> points);

/// A front's staircase, to drop points early that no front would keep: a
/// search gathers points, reduces them to their front now and then, and
/// asks the last front before it keeps a new point.
class FrontBound {
public:
  /// `front` is a paretoFront result.
  void reset(const std::vector<PlanPoint> &front);
  void clear() { steps.clear(); }
  /// Whether a point of the front has more tokens/s/user than `p` and at
  /// least its tokens/s/GPU. paretoFront then drops `p` from any set that
  /// holds that point, which sorts before `p` and before every point `p`
  /// would hide: not keeping `p` changes no front.
  bool beats(const PlanPoint &p) const;

private:
  struct Step {
    double user, gpu;
  };
  std::vector<Step> steps; // user decreasing, gpu increasing
};

} // namespace helix

#endif // HELIX_COST_PARETO_H
