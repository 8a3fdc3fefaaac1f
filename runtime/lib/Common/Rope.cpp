//===- Rope.cpp - RoPE frequencies as Hugging Face computes them ----------===//

#include "helix/Runtime/Rope.h"
#include "helix/Runtime/Error.h"

#include <algorithm>
#include <cmath>

namespace helix {
namespace rt {

static std::vector<double> defaultInvFreq(double base, int64_t dim) {
  std::vector<double> inv(dim / 2);
  for (int64_t i = 0; i < dim / 2; ++i)
    inv[i] = 1.0 / std::pow(base, static_cast<double>(2 * i) / dim);
  return inv;
}

double Rope::yarnMscale(double scale, double mscale) {
  if (scale <= 1.0)
    return 1.0;
  return 0.1 * mscale * std::log(scale) + 1.0;
}

Rope::Rope(const RopeConfig &config) : config_(config) {
  const RopeConfig &c = config_;
  int64_t dim = c.rotaryDim;
  check(dim > 0 && dim % 2 == 0,
        "rope: rotary dimension must be positive and even, got " +
            std::to_string(dim));
  std::string type = c.scaling == "default" ? "" : c.scaling;
  std::vector<double> inv = defaultInvFreq(c.theta, dim);
  if (type.empty() || type == "dynamic") {
    // dynamic: frequencies depend on the sequence length (invFreq()).
  } else if (type == "linear") {
    for (double &f : inv)
      f /= c.factor;
  } else if (type == "llama3") {
    double old = static_cast<double>(c.originalMaxPosition);
    check(old > 0 && c.highFreqFactor > c.lowFreqFactor,
          "rope: llama3 scaling needs original_max_position_embeddings and "
          "high_freq_factor > low_freq_factor");
    double lowWavelen = old / c.lowFreqFactor;
    double highWavelen = old / c.highFreqFactor;
    for (double &f : inv) {
      double wavelen = 2 * M_PI / f;
      double scaled = wavelen > lowWavelen ? f / c.factor : f;
      if (!(wavelen < highWavelen) && !(wavelen > lowWavelen)) {
        double smooth = (old / wavelen - c.lowFreqFactor) /
                        (c.highFreqFactor - c.lowFreqFactor);
        scaled = (1 - smooth) * scaled / c.factor + smooth * scaled;
      }
      f = scaled;
    }
  } else if (type == "yarn") {
    double factor = c.factor;
    double orig = static_cast<double>(
        c.originalMaxPosition > 0 ? c.originalMaxPosition : c.maxPosition);
    check(orig > 0, "rope: yarn scaling needs original_max_position_"
                    "embeddings or max_position_embeddings");
    if (c.mscale != 0.0 && c.mscaleAllDim != 0.0)
      attentionFactor_ = static_cast<float>(yarnMscale(factor, c.mscale) /
                                            yarnMscale(factor, c.mscaleAllDim));
    else
      attentionFactor_ = static_cast<float>(yarnMscale(factor, 1.0));
    auto correctionDim = [&](double rotations) {
      return (dim * std::log(orig / (rotations * 2 * M_PI))) /
             (2 * std::log(c.theta));
    };
    double low = std::floor(correctionDim(c.betaFast));
    double high = std::ceil(correctionDim(c.betaSlow));
    low = std::max(low, 0.0);
    high = std::min(high, static_cast<double>(dim - 1));
    if (low == high)
      high += 0.001;
    for (int64_t i = 0; i < dim / 2; ++i) {
      double ramp = std::clamp((i - low) / (high - low), 0.0, 1.0);
      double extrapolation = 1.0 - ramp;
      double interp = inv[i] / factor;
      inv[i] = interp * (1 - extrapolation) + inv[i] * extrapolation;
    }
  } else {
    throw Error("rope: scaling \"" + c.scaling +
                "\" is not supported by the runtime (supported: default, "
                "linear, dynamic, yarn, llama3)");
  }
  invFreq_.assign(inv.begin(), inv.end());
}

std::vector<float> Rope::invFreq(int64_t seqLen) const {
  const RopeConfig &c = config_;
  if (c.scaling != "dynamic" || c.maxPosition <= 0 || seqLen <= c.maxPosition)
    return invFreq_;
  double dim = static_cast<double>(c.rotaryDim);
  double base =
      c.theta * std::pow((c.factor * seqLen / c.maxPosition) - (c.factor - 1),
                         dim / (dim - 2));
  std::vector<double> inv = defaultInvFreq(base, c.rotaryDim);
  return std::vector<float>(inv.begin(), inv.end());
}

double Rope::softmaxScaleMultiplier() const {
  if (config_.scaling != "yarn" || config_.mscaleAllDim == 0.0)
    return 1.0;
  double m = yarnMscale(config_.factor, config_.mscaleAllDim);
  return m * m;
}

} // namespace rt
} // namespace helix
