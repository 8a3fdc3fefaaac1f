//===- MoE.cpp - Expected expert activation of a decode batch -------------===//

#include "helix/Cost/MoE.h"

#include <algorithm>
#include <cmath>

namespace helix {

double expectedDistinctExperts(double localExperts, double numExperts,
                               double topK, double tokens) {
  if (numExperts <= 0 || tokens <= 0)
    return 0.0;
  double p = std::min(1.0, topK / numExperts);
  return localExperts * (1.0 - std::pow(1.0 - p, tokens));
}

double expectedDistinctRanks(double ep, double topK) {
  if (ep <= 1)
    return 1.0;
  return ep * (1.0 - std::pow(1.0 - 1.0 / ep, topK));
}

} // namespace helix
