//===- Prefill.cpp - The prefill a served decode step absorbs -------------===//

#include "helix/Cost/Prefill.h"

#include "helix/Cost/Evaluate.h"

#include <algorithm>
#include <cmath>

namespace helix {

double prefillAttentionFlops(const ModelSpec &model, int64_t tokens) {
  if (tokens <= 0)
    return 0.0;
  const double t = double(tokens);
  double flops = 0;
  for (const LayerSpec &layer : model.layers) {
    if (layer.mixer == MixerKind::LinearAttention) {
      // One state update and read per token.
      flops += 7.0 * t * double(layer.linear.stateValues());
      continue;
    }
    if (layer.mixer == MixerKind::Mamba) {
      flops += 5.0 * t * double(layer.mamba.stateValues());
      continue;
    }
    if (!layer.hasAttention())
      continue;
    const AttentionSpec &a = layer.attention;
    double span =
        a.slidingWindow > 0 ? std::min<double>(t, a.slidingWindow) : t;
    if (a.indexer.sparse()) {
      // DSA: the indexer scores every earlier token, attention reads the
      // top-k of them.
      if (!a.indexer.reusesPrevious)
        flops += 2.0 * (t * span / 2.0) * double(a.indexer.numHeads) *
                 double(a.indexer.headDim);
      span = std::min<double>(span, 2.0 * double(a.indexer.topK));
    }
    // Causal: query i sees min(i, window) keys, about T * span / 2 pairs.
    double pairs = t * span / 2.0;
    double qk = double(a.headDim), v = double(a.vHeadDim);
    flops += 2.0 * pairs * double(a.numHeads) * (qk + v);
  }
  return flops;
}

/// Achieved math rate of one GPU on GEMMs of `m` tokens in `format`.
static double mathRate(const Hardware &hw, DType format, double m) {
  const KernelCurve &math = hw.kernels.gemmMath[static_cast<int>(format)];
  double eff = math.empty() ? hw.gemmEfficiency : math.at(m).mathEfficiency;
  if (eff <= 0)
    eff = hw.gemmEfficiency;
  return hw.peak(format) * eff;
}

bool parsePrefillScheduling(const std::string &text, PrefillScheduling &out) {
  for (PrefillScheduling s :
       {PrefillScheduling::Mixed, PrefillScheduling::Separate})
    if (text == stringifyPrefillScheduling(s)) {
      out = s;
      return true;
    }
  return false;
}

const char *stringifyPrefillScheduling(PrefillScheduling s) {
  return s == PrefillScheduling::Mixed ? "mixed" : "separate";
}

namespace {
/// One forward over new tokens (KV context of one token, so that decode
/// attention adds nothing): every layer's attention half at `perRank`
/// tokens on each DP rank, its FFN half and collectives and the per-step
/// work at `tokens` in all. False (with `error`) when evaluate() rejects
/// the configuration.
bool forwardSeconds(const ModelSpec &model, const Hardware &hw,
                    const Workload &one, const Config &config, double perRank,
                    double tokens, double &seconds, std::string &error) {
  seconds = 0;
  if (tokens <= 0)
    return true;
  const int64_t dp = std::max<int64_t>(1, config.layout.dp);
  Config ffn = config;
  ffn.batch = std::max<int64_t>(1, int64_t(std::ceil(tokens)));
  Evaluation f = evaluate(model, hw, one, ffn);
  if (!f.valid()) {
    error = f.error;
    return false;
  }
  Evaluation a;
  if (dp > 1) {
    Config attn = config;
    attn.batch = std::max<int64_t>(1, int64_t(std::ceil(perRank))) * dp;
    a = evaluate(model, hw, one, attn);
    if (!a.valid()) {
      error = a.error;
      return false;
    }
  }
  const Evaluation &att = dp > 1 ? a : f;
  seconds = f.step.computeS + f.step.exposedS;
  for (size_t i = 0; i < f.layers.size(); ++i)
    seconds += att.layers[i].attention.timeS + f.layers[i].ffn.timeS +
               f.layers[i].comm.exposedS;
  return true;
}
} // namespace

ServedPrefill servedPrefill(const ModelSpec &model, const Hardware &hw,
                            const Workload &workload, const Config &config,
                            int64_t inputTokens, int64_t outputTokens,
                            PrefillScheduling scheduling) {
  ServedPrefill r;
  const int64_t batch = config.batch;
  if (batch <= 1 || outputTokens <= 0 || inputTokens <= 0)
    return r;
  r.arrivalsPerStep = double(batch - 1) / double(outputTokens);
  r.stepsWithPrompts = 1.0 - std::exp(-r.arrivalsPerStep);
  r.promptsPerStep = r.arrivalsPerStep / r.stepsWithPrompts;
  const double dp = double(std::max<int64_t>(1, config.layout.dp));
  // The busiest DP rank's prompts (each prompt's attention runs on one).
  const double onRank = std::max(1.0, r.promptsPerStep / dp);
  const double input = double(inputTokens);
  Workload one = workload;
  one.context = 1;
  one.mtpTokens = 0;
  const bool mixed = scheduling == PrefillScheduling::Mixed;
  const double base = mixed ? double(batch) : 0.0;
  const double baseRank = mixed ? std::ceil(double(batch) / dp) : 0.0;
  double with = 0, without = 0;
  if (!forwardSeconds(model, hw, one, config, baseRank + onRank * input,
                      base + r.promptsPerStep * input, with, r.error) ||
      !forwardSeconds(model, hw, one, config, baseRank, base, without, r.error))
    return r;
  // The prompts' causal attention math on their rank's attention GPUs.
  const double attnGPUs =
      double(std::max<int64_t>(1, config.layout.tpa * config.layout.kvp));
  const double rate = mathRate(hw, workload.precision.compute, input);
  const double causal =
      rate > 0 ? onRank * prefillAttentionFlops(model, inputTokens) /
                     (attnGPUs * rate)
               : 0.0;
  r.promptStepS = with - without + causal;
  r.perStepS = r.stepsWithPrompts * r.promptStepS;
  return r;
}

} // namespace helix
