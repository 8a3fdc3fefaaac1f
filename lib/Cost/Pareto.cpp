//===- Pareto.cpp - Throughput vs interactivity fronts --------------------===//

#include "helix/Cost/Pareto.h"

#include <algorithm>

namespace helix {

std::vector<PlanPoint> paretoFront(std::vector<PlanPoint> points) {
  // Sorts compact keys (the points are large and scattered); the order is
  // the comparator's on the points.
  struct Key {
    double user, gpu;
    int64_t gpus, batch;
    bool hopb;
    uint32_t index;
  };
  std::vector<Key> keys;
  keys.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    const PlanPoint &p = points[i];
    keys.push_back({p.tokensPerSecPerUser, p.tokensPerSecPerGPU, p.gpus,
                    p.config.batch, p.config.effectiveHopB(), uint32_t(i)});
  }
  std::sort(keys.begin(), keys.end(), [](const Key &a, const Key &b) {
    if (a.user != b.user)
      return a.user > b.user;
    if (a.gpu != b.gpu)
      return a.gpu > b.gpu;
    if (a.gpus != b.gpus)
      return a.gpus < b.gpus;
    if (a.batch != b.batch)
      return a.batch < b.batch;
    return a.hopb && !b.hopb;
  });
  std::vector<PlanPoint> front;
  for (const Key &k : keys)
    if (front.empty() || k.gpu > front.back().tokensPerSecPerGPU)
      front.push_back(points[k.index]);
  return front;
}

} // namespace helix
