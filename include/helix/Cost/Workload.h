//===- Workload.h - What a decode step serves -------------------*- C++ -*-===//

#ifndef HELIX_COST_WORKLOAD_H
#define HELIX_COST_WORKLOAD_H

#include "helix/Common/Speculative.h"
#include "helix/Cost/MoE.h"
#include "helix/Cost/Precision.h"

#include <cstdint>

namespace helix {

/// Every request in the batch has `context` tokens of KV history (the paper's
/// S) and decodes one token per step (with MTP: verifies 1 + mtpTokens).
struct Workload {
  int64_t context = 1000000;
  Precision precision;
  /// Tokens dealt to one KVP rank at a time (helix-kv-placement's block):
  /// a rank's KV shard holds whole blocks (helix/Common/KVCapacity.h).
  int64_t kvBlock = 16;
  /// Zipf exponent of expert popularity (MoE.h, ExpertLoadModel); 0 is
  /// uniform routing.
  double routingSkew = kDefaultRoutingSkew;
  /// Price every EP rank at the mean expert load (the paper's formula; a
  /// deployment with a load balancer that replicates hot experts, EPLB,
  /// comes close) instead of the busiest rank's.
  bool balancedExperts = false;
  /// Speculative decoding with the model's MTP layer: draft tokens per step
  /// (0: plain decoding) and the probability each is accepted
  /// (helix/Common/Speculative.h).
  int64_t mtpTokens = 0;
  double mtpAcceptance = kDefaultMTPAcceptance;
};

} // namespace helix

#endif // HELIX_COST_WORKLOAD_H
