//===- Placement.cpp - How a strategy maps the GPUs of a stage ------------===//

#include "helix/Cost/Placement.h"

namespace helix {

Placement placementFor(const Config &config) {
  const Layout &l = config.layout;
  Placement p;
  p.kvp = l.kvp;
  p.tpa = l.tpa;
  p.dp = l.dp;
  p.stageGPUs = l.gpusPerStage();
  p.tpf = l.tpf;
  p.ep = l.ep;
  p.overlap = config.overlapsCommunication();
  p.slices = config.hopbSlices;
  switch (config.strategy) {
  case Strategy::Helix:
  case Strategy::HelixNoHopB:
    p.oprojWidth = p.stageGPUs;
    p.ffnWidth = p.stageGPUs;
    p.exchange =
        l.kvp > 1 ? Placement::Exchange::AllToAll : Placement::Exchange::None;
    break;
  case Strategy::TP:
  case Strategy::TPPP:
    p.oprojWidth = p.stageGPUs;
    p.ffnWidth = p.stageGPUs;
    break;
  case Strategy::EP:
    p.oprojWidth = l.tpa;
    p.oprojOnTPA = true;
    p.ffnWidth = p.stageGPUs;
    p.tokensSplit = true;
    // The replicas' rows cannot be sliced in one program: no batch-wise
    // overlap (helix-hopb does not pipeline DP attention).
    p.overlap = false;
    break;
  case Strategy::KVP:
    p.oprojWidth = l.tpa;
    p.oprojOnTPA = true;
    p.ffnWidth = l.tpa;
    p.exchange =
        l.kvp > 1 ? Placement::Exchange::AllGather : Placement::Exchange::None;
    break;
  }
  // Shared experts are sharded over the FFN's GPUs, which all hold every
  // token (with DP attention, after the all-gather).
  p.sharedWidth = p.ffnWidth;
  return p;
}

} // namespace helix
