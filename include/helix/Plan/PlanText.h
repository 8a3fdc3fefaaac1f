//===- PlanText.h - Readable reports for helix plan / helix cost -*- C++
//-*-===//

#ifndef HELIX_PLAN_PLANTEXT_H
#define HELIX_PLAN_PLANTEXT_H

#include "helix/Cost/Evaluate.h"
#include "helix/Cost/Search.h"

#include <ostream>

namespace helix {

struct PerLayerChoice;

struct TextOptions {
  /// Rows shown per Pareto front (evenly thinned, ends kept); 0 shows all.
  size_t maxRowsPerFront = 12;
};

/// The `helix plan` summary: the best Helix configuration and the best
/// baseline at the budget (or at maximum interactivity without one), the
/// gains (interactivity, throughput and batch at the budget), where time
/// goes for both chosen points, and the Pareto fronts as tables. Re-evaluates
/// the chosen points, hence the model, hardware and workload.
void writePlanSummary(std::ostream &os, const PlanResult &result,
                      const ModelSpec &model, const Hardware &hw,
                      const TextOptions &options = TextOptions());

/// The `helix cost` explanation of one evaluation: totals, memory against
/// HBM, where time goes, and per-layer costs with runs of identical layers
/// grouped.
/// A per-layer plan (`perLayer`) lists its kinds' layouts under the header.
void writeCostText(std::ostream &os, const Evaluation &ev,
                   const ModelSpec &model, const Hardware &hw,
                   const Workload &workload,
                   const PerLayerChoice *perLayer = nullptr);

} // namespace helix

#endif // HELIX_PLAN_PLANTEXT_H
