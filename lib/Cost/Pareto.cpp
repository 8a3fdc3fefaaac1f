//===- Pareto.cpp - Throughput vs interactivity fronts --------------------===//

#include "helix/Cost/Pareto.h"

#include <algorithm>
#include <iterator>

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

void FrontBound::reset(const std::vector<PlanPoint> &front) {
  steps.clear();
  steps.reserve(front.size());
  for (const PlanPoint &p : front)
    steps.push_back({p.tokensPerSecPerUser, p.tokensPerSecPerGPU});
}

bool FrontBound::beats(const PlanPoint &p) const {
  // The points with more tokens/s/user are a prefix; its last has the most
  // tokens/s/GPU of them.
  auto end =
      std::partition_point(steps.begin(), steps.end(), [&](const Step &s) {
        return s.user > p.tokensPerSecPerUser;
      });
  return end != steps.begin() && std::prev(end)->gpu >= p.tokensPerSecPerGPU;
}

} // namespace helix
