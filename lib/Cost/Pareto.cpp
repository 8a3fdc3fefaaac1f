//===- Pareto.cpp - Throughput vs interactivity fronts --------------------===//

#include "helix/Cost/Pareto.h"

#include <algorithm>

namespace helix {

std::vector<PlanPoint> paretoFront(std::vector<PlanPoint> points) {
  std::sort(points.begin(), points.end(),
            [](const PlanPoint &a, const PlanPoint &b) {
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
  for (const PlanPoint &p : points)
    if (front.empty() || p.tokensPerSecPerGPU > front.back().tokensPerSecPerGPU)
      front.push_back(p);
  return front;
}

} // namespace helix
