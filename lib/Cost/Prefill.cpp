//===- Prefill.cpp - First-order time of a prompt's prefill ---------------===//

#include "helix/Cost/Prefill.h"

#include <algorithm>

namespace helix {

double prefillFlops(const ModelSpec &model, int64_t tokens) {
  if (tokens <= 0)
    return 0.0;
  const double t = double(tokens);
  // Embedding rows are looked up, not multiplied.
  double params = double(model.activeParameterCount()) -
                  double(model.vocabSize) * double(model.hiddenSize);
  double flops = 2.0 * t * std::max(0.0, params);
  for (const LayerSpec &layer : model.layers) {
    const AttentionSpec &a = layer.attention;
    double span =
        a.slidingWindow > 0 ? std::min<double>(t, a.slidingWindow) : t;
    // Causal: query i sees min(i, window) keys, about T * span / 2 pairs.
    double pairs = t * span / 2.0;
    double qk = double(a.headDim), v = double(a.vHeadDim);
    flops += 2.0 * pairs * double(a.numHeads) * (qk + v);
  }
  return flops;
}

double prefillSeconds(const ModelSpec &model, const Hardware &hw,
                      const Precision &precision, int64_t gpus,
                      int64_t tokens) {
  double peak = hw.peak(precision.compute);
  if (gpus <= 0 || tokens <= 0 || peak <= 0)
    return 0.0;
  const KernelCurve &math =
      hw.kernels.gemmMath[static_cast<int>(precision.compute)];
  double eff =
      math.empty() ? hw.gemmEfficiency : math.at(double(tokens)).mathEfficiency;
  if (eff <= 0)
    eff = hw.gemmEfficiency;
  return prefillFlops(model, tokens) / (double(gpus) * peak * eff);
}

double prefillPerStepSeconds(const ModelSpec &model, const Hardware &hw,
                             const Precision &precision, int64_t gpus,
                             int64_t batch, int64_t inputTokens,
                             int64_t outputTokens) {
  if (batch <= 1 || outputTokens <= 0)
    return 0.0;
  return double(batch - 1) / double(outputTokens) *
         prefillSeconds(model, hw, precision, gpus, inputTokens);
}

} // namespace helix
