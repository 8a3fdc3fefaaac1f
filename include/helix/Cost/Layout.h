//===- Layout.h - Sharding strategies and layouts ---------------*- C++ -*-===//
//
// A strategy says how attention and FFN are mapped onto the GPUs; a layout
// gives the widths. With N GPUs per pipeline stage:
//   helix          attention KVP x TPA = N (TPA | KV heads), output projection
//                  TP = N, FFN TPF = N (dense) or TPF x EP = N (MoE); HOP-B on
//   helix-no-hopb  the same with the attention all-to-all not overlapped
//   tp             attention TP = N (KV duplicated when N > KV heads), FFN
//                  TPF x EP = N
//   tp-pp          tp inside each of `pp` pipeline stages
//   ep             data-parallel attention (DP x TPA = N) + expert-parallel
//                  MoE (EP = N); dense FFN layers run TP = N between an
//                  all-gather and a reduce-scatter of the tokens
//   kvp            Medha-style KVP x TPA = N attention with output projection
//                  and FFN tied to the TPA group (TPF x EP = TPA), replicated
//                  over KVP, communication not overlapped
//   baseline       (search only) the best of tp, tp-pp, ep and kvp
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_LAYOUT_H
#define HELIX_COST_LAYOUT_H

#include "helix/Common/Strategy.h"

#include <cstdint>
#include <string>
#include <vector>

namespace helix {

// Strategy, stringifyStrategy and symbolizeStrategy: helix/Common/Strategy.h
// (one definition with #helix.plan's strategy).

/// Every strategy, in report order.
const std::vector<Strategy> &allStrategies();

/// True for tp, tp-pp, ep and kvp (the strategies "baseline" takes the best
/// of).
bool isBaselineStrategy(Strategy strategy);

/// Parses one strategy name (symbolizeStrategy with a message listing the
/// names).
bool parseStrategy(const std::string &text, Strategy &strategy,
                   std::string &error);

/// Parses a comma-separated list such as "helix,tp,tp-pp,ep,kvp".
/// "baseline" expands to tp,tp-pp,ep,kvp and "all" to every strategy;
/// duplicates are dropped, report order is kept.
bool parseStrategyList(const std::string &text,
                       std::vector<Strategy> &strategies, std::string &error);

/// Widths of one layout. GPUs = pp x kvp x tpa x dp.
struct Layout {
  int64_t kvp = 1; // KV (sequence) parallel width of attention
  int64_t tpa = 1; // tensor-parallel width of attention (over heads)
  int64_t tpf = 1; // tensor-parallel width of the FFN / of each expert
  int64_t ep = 1;  // expert-parallel width
  int64_t pp = 1;  // pipeline stages
  int64_t dp = 1;  // data-parallel attention replicas (ep strategy)

  int64_t gpusPerStage() const { return kvp * tpa * dp; }
  int64_t gpus() const { return pp * gpusPerStage(); }
  /// "kvp=4,tpa=8,tpf=32,ep=1" (",pp=" and ",dp=" only when not 1).
  std::string str() const;
  bool operator==(const Layout &o) const {
    return kvp == o.kvp && tpa == o.tpa && tpf == o.tpf && ep == o.ep &&
           pp == o.pp && dp == o.dp;
  }
};

/// Parses "kvp=4,tpa=8,tpf=32,ep=1" (keys in any order; kvp, tpa, tpf, ep,
/// pp, dp; omitted keys are 1). Errors name the offending item.
bool parseLayout(const std::string &text, Layout &layout, std::string &error);

/// How Helix's all-to-all spreads the `localHeads` query heads of a TPA
/// slice over its `kvp` ranks: whole heads (1 when kvp divides them), or
/// every head cut into kvp / localHeads pieces of its `vHeadDim` outputs
/// (when localHeads divides kvp and the pieces are even); 0 when neither.
/// helix-insert-collectives lowers the exchange so, and the search checks
/// its layouts with it.
int64_t helixHeadSplit(int64_t localHeads, int64_t kvp, int64_t vHeadDim);

/// One point of the search space.
struct Config {
  Strategy strategy = Strategy::Helix;
  Layout layout;
  int64_t batch = 1; // concurrent requests (one new token each per step)
  /// Batch-wise overlap of the attention exchange with attention compute.
  /// Ignored (off) for helix-no-hopb and kvp.
  bool hopb = true;
  /// GPUs the user asked for; 0 takes layout.gpus(). Validation reports a
  /// mismatch.
  int64_t gpus = 0;
  /// HOP-B batch slices the compiled program runs (helix-hopb); 0 prices
  /// the best count (the planner's choice before a program fixes it).
  int64_t hopbSlices = 0;

  /// Whether HOP-B is in effect: only Helix with KVP > 1 has an attention
  /// exchange (the KVP all-to-all) for HOP-B to overlap; helix-no-hopb turns
  /// it off. This is what reports and the IR record as "hopb".
  bool effectiveHopB() const {
    return hopb && strategy == Strategy::Helix && layout.kvp > 1;
  }
  /// Whether the cost model overlaps the layer's attention-side collective
  /// with attention compute, batch-wise: HOP-B for Helix, and the TP
  /// baselines' overlap of the output-projection all-reduce (the paper's TP
  /// baseline overlaps too). Medha-style kvp and helix-no-hopb expose all
  /// communication.
  bool overlapsCommunication() const {
    return hopb && strategy != Strategy::HelixNoHopB &&
           strategy != Strategy::KVP;
  }
};

} // namespace helix

#endif // HELIX_COST_LAYOUT_H
