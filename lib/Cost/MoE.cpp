//===- MoE.cpp - Expected expert activation of a decode batch -------------===//

#include "helix/Cost/MoE.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <numeric>
#include <tuple>

namespace helix {

double expectedDistinctExperts(double localExperts, double numExperts,
                               double topK, double tokens) {
  if (numExperts <= 0 || tokens <= 0)
    return 0.0;
  double p = std::min(1.0, topK / numExperts);
  return localExperts * (1.0 - std::pow(1.0 - p, tokens));
}

double expectedDistinctRanks(double ep, double topK) {
  if (ep <= 1)
    return 1.0;
  return ep * (1.0 - std::pow(1.0 - 1.0 / ep, topK));
}

double expectedMaxOfNormals(int64_t n) {
  if (n <= 1)
    return 0.0;
  // E[max] = integral of x * n * phi(x) * Phi(x)^(n-1) dx.
  const double step = 0.01;
  double sum = 0;
  for (double x = -8.0; x <= 8.0; x += step) {
    double phi = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
    double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    sum += x * double(n) * phi * std::pow(cdf, double(n - 1)) * step;
  }
  return sum;
}

namespace {
/// Inclusion probabilities pi_i = k p_i for Zipf(skew) popularity, capped
/// at 1 with the excess spread over the uncapped experts.
std::vector<double> inclusionProbabilities(int64_t e, int64_t k, double skew) {
  std::vector<double> pi(e);
  double z = 0;
  for (int64_t i = 0; i < e; ++i)
    z += pi[i] = std::pow(double(i + 1), -skew);
  for (double &v : pi)
    v *= double(k) / z;
  for (int iter = 0; iter < 64; ++iter) {
    double excess = 0, free = 0;
    for (double &v : pi)
      if (v > 1.0) {
        excess += v - 1.0;
        v = 1.0;
      }
    if (excess <= 0)
      break;
    for (double v : pi)
      if (v < 1.0)
        free += v;
    if (free <= 0)
      break;
    for (double &v : pi)
      if (v < 1.0)
        v += excess * v / free;
  }
  return pi;
}

/// Small deterministic generator (splitmix64): the same placements on
/// every platform, unlike std::shuffle.
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};
} // namespace

namespace {
/// What a model computes once for (experts, EP, k, skew).
struct HotRank {
  std::vector<double> inclusion;  // pi of the busiest rank's experts
  std::vector<double> logMiss;    // log(1 - pi) of the same
  double share = 0, variance = 0; // sum of pi, of pi (1 - pi)
  double zMax = 0;
};

HotRank computeHotRank(int64_t numExperts, int64_t ep, int64_t topK,
                       double skew) {
  HotRank h;
  const int64_t local = numExperts / ep;
  h.zMax = expectedMaxOfNormals(ep);
  std::vector<double> pi = inclusionProbabilities(numExperts, topK, skew);
  h.inclusion.assign(local, 0.0);
  if (skew == 0.0 || ep == 1) {
    // Every rank alike: no placement to average over.
    std::copy(pi.begin(), pi.begin() + local, h.inclusion.begin());
    return h;
  }
  const int kPlacements = 64;
  SplitMix rng{0x48454c4958ULL}; // "HELIX"
  std::vector<int64_t> perm(numExperts);
  std::vector<double> rankPi(local), bestPi(local);
  for (int t = 0; t < kPlacements; ++t) {
    std::iota(perm.begin(), perm.end(), 0);
    for (int64_t i = numExperts - 1; i > 0; --i)
      std::swap(perm[i], perm[rng.next() % uint64_t(i + 1)]);
    double best = -1;
    for (int64_t r = 0; r < ep; ++r) {
      double share = 0;
      for (int64_t j = 0; j < local; ++j)
        share += rankPi[j] = pi[perm[r * local + j]];
      if (share > best) {
        best = share;
        bestPi = rankPi;
      }
    }
    std::sort(bestPi.begin(), bestPi.end());
    for (int64_t j = 0; j < local; ++j)
      h.inclusion[j] += bestPi[j] / kPlacements;
  }
  return h;
}

/// The search builds a model per layout, many with the same shape: the
/// placements are averaged once per (experts, EP, k, skew).
const HotRank &cachedHotRank(int64_t numExperts, int64_t ep, int64_t topK,
                             double skew) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, int64_t, int64_t, double>, HotRank> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_tuple(numExperts, ep, topK, skew);
  auto it = cache.find(key);
  if (it == cache.end()) {
    HotRank h = computeHotRank(numExperts, ep, topK, skew);
    for (double v : h.inclusion) {
      h.share += v;
      h.variance += v * (1.0 - v);
      // log(1 - pi), so that (1 - pi)^T is one exp per expert and batch.
      h.logMiss.push_back(std::log1p(-std::min(v, 1.0)));
    }
    it = cache.emplace(key, std::move(h)).first;
  }
  return it->second;
}
} // namespace

ExpertLoadModel::ExpertLoadModel(int64_t numExperts, int64_t ep, int64_t topK,
                                 double skew)
    : numExperts_(double(numExperts)), ep_(double(std::max<int64_t>(ep, 1))),
      topK_(double(topK)) {
  if (numExperts <= 0 || topK <= 0)
    return;
  ep = std::max<int64_t>(1, std::min(ep, numExperts));
  local_ = double(numExperts / ep);
  const HotRank &h = cachedHotRank(numExperts, ep, topK, skew);
  // The cache never drops an entry (std::map nodes stay put).
  logMiss_ = &h.logMiss;
  zMax_ = h.zMax;
  hotShare_ = h.share;
  hotVariance_ = h.variance;
}

RankLoad ExpertLoadModel::balanced(double tokens) const {
  RankLoad l;
  if (tokens <= 0 || numExperts_ <= 0)
    return l;
  l.pairs = tokens * topK_ / ep_;
  l.distinctExperts =
      expectedDistinctExperts(local_, numExperts_, topK_, tokens);
  return l;
}

/// Sum over experts of 1 - (1 - pi)^T, from their log(1 - pi): one exp
/// per expert, remembered per (shape, T) since the search prices the same
/// batches on every layout (a 896-expert rank's sum is 896 exps).
static double expectedHit(const std::vector<double> &logMiss, double tokens) {
  static std::mutex mutex;
  static std::map<std::pair<const void *, double>, double> memo;
  auto key = std::make_pair(static_cast<const void *>(&logMiss), tokens);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = memo.find(key);
    if (it != memo.end())
      return it->second;
  }
  double sum = 0;
  for (double lm : logMiss)
    sum += 1.0 - std::exp(tokens * lm);
  std::lock_guard<std::mutex> lock(mutex);
  memo.emplace(key, sum);
  return sum;
}

RankLoad ExpertLoadModel::busiest(double tokens) const {
  RankLoad l;
  if (tokens <= 0 || numExperts_ <= 0)
    return l;
  double mean = tokens * hotShare_;
  double pairs = mean + zMax_ * std::sqrt(tokens * hotVariance_);
  pairs = std::min(pairs, tokens * std::min(topK_, local_));
  double expectedDistinct = logMiss_ ? expectedHit(*logMiss_, tokens) : 0.0;
  double distinct = mean > 0 ? expectedDistinct * pairs / mean : 0.0;
  l.pairs = pairs;
  l.distinctExperts = std::min({local_, pairs, distinct});
  return l;
}

} // namespace helix
