//===- Gains.h - Helix against the baseline ---------------------*- C++ -*-===//

#ifndef HELIX_PLAN_GAINS_H
#define HELIX_PLAN_GAINS_H

#include "helix/Cost/Search.h"

namespace helix {

/// How one frontier compares with another (ratios a / b; 0 when either side
/// has no point).
struct Gains {
  /// Highest tokens/s/user of a over that of b.
  double interactivity = 0;
  /// Under the budget: best tokens/s/GPU of a over that of b.
  double throughput = 0;
  /// Under the budget: largest batch of a over that of b.
  double batch = 0;
  bool haveBudget = false; // budget ratios are set
};

/// Gains of frontier `a` over frontier `b` (default: helix over baseline).
Gains computeGains(const PlanResult &result, const std::string &a = "helix",
                   const std::string &b = "baseline");

/// The point a report shows for a frontier: the best under the budget, or
/// the fastest (highest tokens/s/user) without one. nullptr if none.
const PlanPoint *chosenPoint(const PlanResult &result, const Frontier &f);

} // namespace helix

#endif // HELIX_PLAN_GAINS_H
