//===- Pareto.cpp - Throughput vs interactivity fronts --------------------===//

#include "helix/Cost/Pareto.h"

#include <algorithm>

namespace helix {

std::vector<PlanPoint> paretoFront(std::vector<PlanPoint> points) {
  // Sorts pointers (the points are large); the order is the comparator's.
  std::vector<const PlanPoint *> order;
  order.reserve(points.size());
  for (const PlanPoint &p : points)
    order.push_back(&p);
  std::sort(order.begin(), order.end(),
            [](const PlanPoint *pa, const PlanPoint *pb) {
              const PlanPoint &a = *pa, &b = *pb;
              if (a.tokensPerSecPerUser != b.tokensPerSecPerUser)
                return a.tokensPerSecPerUser > b.tokensPerSecPerUser;
              if (a.tokensPerSecPerGPU != b.tokensPerSecPerGPU)
                return a.tokensPerSecPerGPU > b.tokensPerSecPerGPU;
              if (a.gpus != b.gpus)
                return a.gpus < b.gpus;
              if (a.config.batch != b.config.batch)
                return a.config.batch < b.config.batch;
              return a.config.effectiveHopB() && !b.config.effectiveHopB();
            });
  std::vector<PlanPoint> front;
  for (const PlanPoint *p : order)
    if (front.empty() ||
        p->tokensPerSecPerGPU > front.back().tokensPerSecPerGPU)
      front.push_back(*p);
  return front;
}

} // namespace helix
