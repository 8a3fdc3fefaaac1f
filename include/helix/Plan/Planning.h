//===- Planning.h - Choose the configuration a plan records -----*- C++ -*-===//
//
// One place that turns a request (an explicit layout, or a search over
// layouts, GPU counts and batches) into the configuration recorded on the
// IR, with a one-line reason when nothing fits. Used by
// helix-search-layouts, helix-apply-layout, the sharding pipeline and
// `helix compile`.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_PLAN_PLANNING_H
#define HELIX_PLAN_PLANNING_H

#include "helix/Cost/Hardware.h"
#include "helix/Cost/Layout.h"
#include "helix/Cost/Workload.h"
#include "helix/Model/ModelSpec.h"
#include "helix/Plan/PlanRecord.h"

#include <optional>
#include <string>
#include <vector>

namespace helix {

struct PlanRequest {
  std::string hardware = "gb200-nvl72"; // recorded in the plan
  Strategy strategy = Strategy::Helix;
  /// Explicit layout: validated and priced at `batch`, no search.
  std::optional<Layout> layout;
  int64_t gpus = 0; // 0: the layout's, or search 1..maxGpus
  int64_t maxGpus = 64;
  int64_t batch = 0; // 0: sweep (search only)
  double ttlMs = 0;  // search: the best throughput within this budget
  bool hopb = true;  // explicit layouts: HOP-B requested
  /// Per-layer Helix (docs/per-layer-layouts.md), on `gpus` GPUs at
  /// `batch`: with `layerLayouts`, those kinds' layouts (the other kinds
  /// take `layout`'s widths, as a uniform plan gives them); without, the
  /// per-layer search's fastest choice that fits.
  bool perLayer = false;
  std::vector<KindLayout> layerLayouts;
};

/// The hardware (a preset name or a JSON file) and the workload of a pass's
/// options: one precision for weights, KV cache and math; the MoE routing
/// skew (`routing-skew`, in [0, 4]).
bool loadPassWorkload(const std::string &hardware, const std::string &dtype,
                      int64_t context, double routingSkew, Hardware &hw,
                      Workload &workload, std::string &error);

/// Chooses the configuration: with a layout, checks it against the model
/// and hardware (validateConfig) and that the batch fits in memory; without,
/// searches (the fastest configuration, or the most tokens/s/GPU within
/// `ttlMs`). Returns false with a one-line `error` when nothing is valid or
/// fits.
/// Fixes the batch slices the program will run (`slices`, at most the batch;
/// 0: the cost model's best count) when the plan overlaps a collective with
/// attention batch-wise (HOP-B's all-to-all, or the TP baselines'
/// output-projection all-reduce), and prices the plan with them: the
/// latency it records is the program's.
void fixHopBSlices(const ModelSpec &model, const Hardware &hw, PlanRecord &plan,
                   int64_t slices);

bool choosePlan(const ModelSpec &model, const Hardware &hw,
                const Workload &workload, const PlanRequest &request,
                PlanRecord &out, std::string &error);

} // namespace helix

#endif // HELIX_PLAN_PLANNING_H
