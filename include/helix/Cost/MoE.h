//===- MoE.h - Expected expert activation of a decode batch -----*- C++ -*-===//

#ifndef HELIX_COST_MOE_H
#define HELIX_COST_MOE_H

#include "helix/Common/Routing.h"

#include <cstdint>
#include <vector>

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

// kDefaultRoutingSkew: helix/Common/Routing.h (shared with #helix.plan).

/// Work of one EP rank's experts in a decode step.
struct RankLoad {
  double pairs = 0;           // token-expert pairs it computes
  double distinctExperts = 0; // distinct local experts it reads
};

/// Expert load of the busiest EP rank (docs/cost-model.md, "MoE load").
///
/// Routing: expert popularity follows a Zipf law with exponent `skew` over
/// the experts (0 = uniform routing); a token includes expert i with
/// probability pi_i = min(1, k p_i) (the excess of capped experts is spread
/// over the others so that sum pi = k). Placement: experts sit on ranks in
/// contiguous blocks by id, and id is unrelated to popularity, so the model
/// averages over 64 seeded random placements the (sorted) inclusion
/// probabilities of each placement's most loaded rank (no EPLB). At T
/// tokens the busiest rank computes
///   pairs = T sum_hot pi + z(EP) sqrt(T sum_hot pi (1 - pi)),
/// capped at T min(k, local experts), where z(EP) is the expected maximum
/// of EP standard normals (the sampling spread that makes some rank the
/// busiest even under uniform routing), and reads
///   min(local, pairs, sum_hot (1 - (1 - pi)^T) * pairs / (T sum_hot pi))
/// distinct experts.
class ExpertLoadModel {
public:
  ExpertLoadModel() = default;
  ExpertLoadModel(int64_t numExperts, int64_t ep, int64_t topK, double skew);

  /// The busiest rank at `tokens` tokens.
  RankLoad busiest(double tokens) const;
  /// The mean rank (balanced: T k / EP pairs, expectedDistinctExperts).
  RankLoad balanced(double tokens) const;
  /// Share of one token's k inclusions that land on the busiest rank, in
  /// expectation (k / EP when balanced).
  double hotShare() const { return hotShare_; }

private:
  double numExperts_ = 0, ep_ = 1, topK_ = 0, local_ = 0;
  /// log(1 - pi) of the busiest rank's experts (pi: their inclusion
  /// probabilities), shared by every model of the same shape.
  const std::vector<double> *logMiss_ = nullptr;
  double hotShare_ = 0, hotVariance_ = 0, zMax_ = 0;
};

/// Expected maximum of `n` independent standard normal variables (0 for
/// n <= 1), by numerical integration.
double expectedMaxOfNormals(int64_t n);

} // namespace helix

#endif // HELIX_COST_MOE_H
