//===- PlanRecord.h - The configuration a plan records ----------*- C++ -*-===//
//
// What is recorded about a chosen configuration: the layout and batch, the
// hardware and workload it was priced on, its latency. Chosen by
// choosePlan (helix/Plan/Planning.h), written on the IR by applyPlan and
// read back by readPlan (helix/Transforms/ApplyPlan.h). MLIR-free.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_PLAN_PLANRECORD_H
#define HELIX_PLAN_PLANRECORD_H

#include "helix/Cost/Layout.h"
#include "helix/Cost/PerLayer.h"
#include "helix/Cost/Workload.h"

#include <cstdint>
#include <optional>
#include <string>

namespace helix {

/// What is recorded on the IR about a chosen configuration.
struct PlanRecord {
  Config config;
  std::string hardware;
  Workload workload;
  double ttlS = 0;
  int64_t kvBlock = 16; // KV tokens per round-robin block
  /// A per-layer Helix plan: one layout per kind of layer (kinds the model
  /// lacks have layers == 0); `config.layout` is then the full (else
  /// window) attention's kvp, tpa and the MoE (else dense) FFN group's
  /// tpf, ep, as PerLayerSearch reports it.
  std::optional<PerLayerChoice> perLayer;
  /// Configurations the search priced to choose it (0: none searched).
  uint64_t evaluated = 0;
};

} // namespace helix

#endif // HELIX_PLAN_PLANRECORD_H
