//===- Speculative.h - Speculative decode steps with MTP -------*- C++ -*-===//
//
// Multi-token prediction (DeepSeek-V3/R1's num_nextn_predict_layers): each
// step drafts K tokens with the MTP layer and verifies them in one pass of
// the model over K + 1 query tokens per request (docs/cost-model.md,
// "Speculative decoding").
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_SPECULATIVE_H
#define HELIX_COMMON_SPECULATIVE_H

#include <cstdint>

namespace helix {

/// Default probability that a drafted token is accepted, from the
/// DeepSeek-V3 Technical Report (arXiv 2412.19437), section 5.4.3: with one
/// MTP module, "the acceptance rate of the second token prediction ranges
/// between 85% and 90% across various generation topics". The low end:
/// the report measures the first drafted token only, and later drafts of
/// a chain are accepted less often.
constexpr double kDefaultMTPAcceptance = 0.85;
/// The most draft tokens per step --mtp takes.
constexpr int64_t kMaxMTPTokens = 8;

/// Tokens a step yields per request with `drafts` draft tokens, each
/// accepted with probability `acceptance` given the ones before it (greedy
/// chain verification stops at the first rejection): the verified token
/// plus the accepted prefix, 1 + a + a^2 + ... + a^K.
inline double expectedAcceptedTokens(int64_t drafts, double acceptance) {
  double sum = 1, term = 1;
  for (int64_t i = 0; i < drafts; ++i) {
    term *= acceptance;
    sum += term;
  }
  return sum;
}

} // namespace helix

#endif // HELIX_COMMON_SPECULATIVE_H
