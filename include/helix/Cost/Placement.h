//===- Placement.h - How a strategy maps the GPUs of a stage ----*- C++ -*-===//
//
// The strategy rules, defined once: for a configuration (strategy and
// layout), which GPUs share the output projection, the FFN and the shared
// experts, whether attention splits the requests (DP attention) and how the
// KVP partial outputs are combined. The cost model prices it, and
// helix-apply-layout / helix-search-layouts, helix-insert-collectives and
// helix-partition lower it (lib/Transforms reads it through ShardPlan).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_PLACEMENT_H
#define HELIX_COST_PLACEMENT_H

#include "helix/Cost/Layout.h"

#include <cstdint>

namespace helix {

struct Placement {
  enum class Exchange { None, AllToAll, AllGather };
  int64_t stageGPUs = 1;
  int64_t kvp = 1, tpa = 1, dp = 1;
  int64_t oprojWidth = 1; // GPUs sharing the output projection
  bool oprojOnTPA =
      false;            // ... the attention TP group (ep, kvp), not the stage
  int64_t ffnWidth = 1; // GPUs sharing one copy of the FFN (TPF x EP)
  int64_t tpf = 1, ep = 1;  // MoE grid inside the FFN group
  int64_t sharedWidth = 1;  // GPUs sharing the shared experts
  bool tokensSplit = false; // data-parallel attention (ep strategy)
  bool overlap = false;     // batch-wise overlap of the attention exchange
  int64_t slices = 0;       // HOP-B slices (0: the best count)
  Exchange exchange = Exchange::None; // how KVP partial outputs are combined

  /// FFN copies per stage (Medha-style kvp: one per KVP rank).
  int64_t ffnReplicas() const { return stageGPUs / ffnWidth; }
  /// The output projection runs TP over the whole stage (Helix's TP = N).
  bool oprojOnStage() const { return !oprojOnTPA; }
};

/// The placement of `config`'s strategy on its layout.
Placement placementFor(const Config &config);

} // namespace helix

#endif // HELIX_COST_PLACEMENT_H
