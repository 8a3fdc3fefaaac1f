//===- PlanJSON.h - JSON reports of plans and costs -------------*- C++ -*-===//

#ifndef HELIX_PLAN_PLANJSON_H
#define HELIX_PLAN_PLANJSON_H

#include "helix/Cost/Evaluate.h"
#include "helix/Cost/Search.h"

#include <ostream>

namespace helix {

struct PerLayerChoice;

/// Writes a search result:
///   {"model", "hardware", "context", "frontiers": {"helix": [POINT...], ...},
///    ...}
/// with each POINT {"gpus", "batch", "layout": {"kvp", "tpa", "tpf", "ep",
/// "pp", "dp"}, "hopb", "ttl_s", "tokens_per_sec_per_user",
/// "tokens_per_sec_per_gpu", "memory_per_gpu_bytes", "strategy"} and only
/// Pareto-optimal points per list. Extra top-level keys: "precision",
/// "ttl_budget_ms", "budget" (best and largest-batch point per frontier),
/// "gains", "configs_evaluated", "search_seconds".
void writePlanJSON(std::ostream &os, const PlanResult &result);

/// Writes one evaluation:
///   {"gpus", "batch", "ttl_s", "tokens_per_sec_per_user",
///    "tokens_per_sec_per_gpu", "memory_per_gpu_bytes", "fits",
///    "layers": [{"index", "attention": {"kv_bytes_per_gpu",
///    "weight_bytes_per_gpu", "flops_per_gpu", "time_s"}, "ffn":
///    {"weight_bytes_per_gpu", "flops_per_gpu", "time_s"}, "comm":
///    {"time_s", "exposed_s"}}]}
/// plus "strategy", "layout", "hopb", "memory", "breakdown" and "step".
/// An invalid evaluation is written as {"error": "..."}.
/// A per-layer plan (`perLayer`) adds "per_layer": {"layouts": [...], ...}
/// as helix plan writes it.
void writeCostJSON(std::ostream &os, const Evaluation &ev,
                   const PerLayerChoice *perLayer = nullptr);

} // namespace helix

#endif // HELIX_PLAN_PLANJSON_H
