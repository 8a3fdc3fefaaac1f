//===- Gains.cpp - Helix against the baseline -----------------------------===//

#include "helix/Plan/Gains.h"

namespace helix {

static double ratio(double a, double b) { return a > 0 && b > 0 ? a / b : 0; }

Gains computeGains(const PlanResult &result, const std::string &a,
                   const std::string &b) {
  Gains g;
  const Frontier *fa = result.frontier(a), *fb = result.frontier(b);
  if (!fa || !fb || fa->empty() || fb->empty())
    return g;
  g.interactivity = ratio(fa->fastest().tokensPerSecPerUser,
                          fb->fastest().tokensPerSecPerUser);
  if (result.options.ttlMs > 0 && fa->budget.found && fb->budget.found) {
    g.haveBudget = true;
    g.throughput = ratio(fa->budget.best.tokensPerSecPerGPU,
                         fb->budget.best.tokensPerSecPerGPU);
    g.batch = ratio(double(fa->budget.largestBatch.config.batch),
                    double(fb->budget.largestBatch.config.batch));
  }
  return g;
}

const PlanPoint *chosenPoint(const PlanResult &result, const Frontier &f) {
  return chosenPoint(f, result.options.ttlMs);
}

} // namespace helix
