//===- PlanSVG.h - SVG chart of the Pareto fronts ---------------*- C++ -*-===//

#ifndef HELIX_PLAN_PLANSVG_H
#define HELIX_PLAN_PLANSVG_H

#include "helix/Cost/Search.h"

#include <ostream>
#include <string>

namespace helix {

struct SVGOptions {
  int width = 960;
  int height = 620;
  /// Title; empty means "<model> on <hardware>: Pareto fronts".
  std::string title;
};

/// Writes a standalone SVG: tokens/s/GPU against tokens/s/user on log axes,
/// one colour per strategy, a legend, axis labels, a title, the latency
/// budget (if any) as a dashed line and the chosen points ringed.
void writePlanSVG(std::ostream &os, const PlanResult &result,
                  const SVGOptions &options = SVGOptions());

} // namespace helix

#endif // HELIX_PLAN_PLANSVG_H
