//===- SizeCheck.cpp - Reject implausibly large models --------------------===//
//
// Each size is at most 2^40, but their products are not bounded. Estimate
// the parameter count in long double (an upper bound of what ModelSpec
// counts, biases included) so that ModelSpec's int64 arithmetic is safe.
//
//===----------------------------------------------------------------------===//

#include "Families.h"

#include <cstdio>

namespace helix {
namespace import {

using Real = long double;

/// Largest parameter count accepted: 2^50, about 1.1e15 (today's largest
/// models have about 2e12).
static constexpr Real kMaxParameters = static_cast<Real>(int64_t(1) << 50);

static Real attentionBound(const AttentionSpec &a, Real h) {
  Real heads = a.numHeads, hd = a.headDim, vd = a.vHeadDim;
  Real q = heads * hd, kv = Real(a.numKVHeads) * (hd + vd);
  Real n = (h + 1) * (q + kv) + heads * vd * h + h + 2 * hd + heads;
  // MLA projections (zero for other kinds).
  Real qr = a.qLoraRank, kr = a.kvLoraRank, rope = a.qkRopeHeadDim;
  n += h * qr + qr + qr * q;
  n += h * (kr + rope) + kr + kr * heads * (Real(a.qkNopeHeadDim) + vd);
  return n;
}

static Real layerBound(const LayerSpec &l, Real h) {
  Real n = 2 * h + attentionBound(l.attention, h);
  if (!l.isMoE)
    return n + (3 * h + 2) * Real(l.ffn.intermediate) + h;
  const MoESpec &m = l.moe;
  Real expert = (3 * h + 2) * Real(m.expertIntermediate) + h;
  return n + Real(m.numExperts) * (expert + h + 1) +
         Real(m.numSharedExperts) * 3 * h * Real(m.sharedIntermediate);
}

bool checkModelSize(const ModelSpec &m, const std::string &source,
                    std::string &error) {
  Real h = m.hiddenSize;
  Real total = 2 * Real(m.vocabSize) * h + h;
  for (const LayerSpec &l : m.layers)
    total += layerBound(l, h);
  if (total <= kMaxParameters)
    return true;
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.3Lg", total);
  error = source + ": <model>: implausibly large model, about " + buffer +
          " parameters (the limit is 2^50)";
  return false;
}

} // namespace import
} // namespace helix
