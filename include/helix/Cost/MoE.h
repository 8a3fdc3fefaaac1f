//===- MoE.h - Expected expert activation of a decode batch -----*- C++ -*-===//

#ifndef HELIX_COST_MOE_H
#define HELIX_COST_MOE_H

#include <cstdint>

namespace helix {

/// Expected number of distinct experts, among the `localExperts` one GPU
/// holds, that `tokens` tokens routing top-`topK` of `numExperts` activate:
///   localExperts * (1 - (1 - topK / numExperts)^tokens)
/// (each expert is picked by a token with probability k/E; uniform routing).
double expectedDistinctExperts(double localExperts, double numExperts,
                               double topK, double tokens);

/// Expected number of distinct EP ranks (of `ep`, experts spread evenly) a
/// token's top-`topK` experts live on: ep * (1 - (1 - 1/ep)^topK).
double expectedDistinctRanks(double ep, double topK);

} // namespace helix

#endif // HELIX_COST_MOE_H
