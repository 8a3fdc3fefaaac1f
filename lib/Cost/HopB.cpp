//===- HopB.cpp - Batch-wise overlap of attention and its exchange --------===//

#include "helix/Cost/HopB.h"

#include "helix/Cost/Collectives.h"

#include <algorithm>

namespace helix {

double sequentialTime(int64_t n, double c, double m) { return n * (c + m); }

double pipelineTime(int64_t n, double c, double m) {
  if (n <= 0)
    return 0.0;
  return c + (n - 1) * std::max(c, m) + m;
}

OverlapResult overlapWithCollective(const Hardware &hw, int64_t batch,
                                    const OpCost &compute, CollectiveKind kind,
                                    int64_t n, double bytes, bool overlap,
                                    int64_t slices) {
  OverlapResult best;
  double whole = collectiveTime(hw, kind, n, bytes);
  best.timeS = compute.timeS + whole;
  best.exposedS = whole;
  best.commS = whole;
  if (!overlap || whole <= 0 || batch < 2)
    return best;
  double variable = compute.variableS();
  auto trySlices = [&](int64_t s) {
    double c = variable / s + compute.overheadS;
    double m = collectiveTime(hw, kind, n, bytes / s);
    double t = pipelineTime(s, c, m);
    if (t < best.timeS || slices > 0) {
      best.timeS = t;
      best.exposedS = t - compute.timeS;
      best.commS = s * m;
      best.slices = s;
    }
  };
  if (slices > 0) {
    // The program's count: what it takes, even when another is faster.
    if (std::min(slices, batch) > 1)
      trySlices(std::min(slices, batch));
    return best;
  }
  // Powers of two below the batch; doubling stops before it could overflow.
  for (int64_t s = 2; s < batch; s = (batch / 2 < s) ? batch : 2 * s)
    trySlices(s);
  trySlices(batch);
  return best;
}

} // namespace helix
