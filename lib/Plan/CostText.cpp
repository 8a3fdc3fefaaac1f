//===- CostText.cpp - Readable explanation for `helix cost` ---------------===//

#include "helix/Plan/PlanText.h"

#include "Format.h"
#include "KindLines.h"
#include "TimeTable.h"

namespace helix {

namespace {

bool sameNumbers(const LayerEvaluation &a, const LayerEvaluation &b) {
  return a.stage == b.stage &&
         a.attention.kvBytesPerGPU == b.attention.kvBytesPerGPU &&
         a.attention.weightBytesPerGPU == b.attention.weightBytesPerGPU &&
         a.attention.timeS == b.attention.timeS &&
         a.ffn.weightBytesPerGPU == b.ffn.weightBytesPerGPU &&
         a.ffn.timeS == b.ffn.timeS && a.comm.timeS == b.comm.timeS &&
         a.comm.exposedS == b.comm.exposedS;
}

std::string flops(double f) {
  if (f >= 1e12)
    return fmt::fixed(f / 1e12, 2) + " TFLOP";
  if (f >= 1e9)
    return fmt::fixed(f / 1e9, 2) + " GFLOP";
  return fmt::fixed(f / 1e6, 2) + " MFLOP";
}

const char *bound(double computeS, double memoryS) {
  if (computeS > 1.25 * memoryS)
    return "compute-bound";
  if (memoryS > 1.25 * computeS)
    return "memory-bound";
  return "balanced";
}

} // namespace

void writeCostText(std::ostream &os, const Evaluation &ev,
                   const ModelSpec &model, const Hardware &hw,
                   const Workload &w, const PerLayerChoice *perLayer) {
  if (!ev.valid()) {
    os << "invalid configuration: " << ev.error << "\n";
    return;
  }
  const Config &c = ev.config;
  os << model.name << " on " << hw.name << ": "
     << stringifyStrategy(c.strategy).str() << " " << c.layout.str() << " ("
     << ev.gpus << " GPUs), batch " << ev.batch << ", HOP-B "
     << (ev.hopbUsed() ? "on (" + std::to_string(ev.hopbSlices) + " slices)"
         : c.overlapsCommunication() && c.hopb
             ? std::string("off (one batch slice: splitting does not pay here)")
             : std::string("off"))
     << "\n";
  if (perLayer) {
    os << "Per-layer layouts (one per kind of layer, in place of the layout "
          "above; "
       << perLayer->layoutChanges << " layer boundaries change layout, 0 B "
       << "resharded):\n";
    kindLines(os, *perLayer, "  ");
  }
  os << "Context " << fmt::count(w.context) << " tokens, "
     << w.precision.describe() << "\n\n";
  os << "TTL " << fmt::duration(ev.ttlS) << ": "
     << fmt::number(ev.tokensPerSecPerUser) << " tokens/s/user, "
     << fmt::number(ev.tokensPerSecPerGPU) << " tokens/s/GPU\n";
  if (ev.mtp.draftTokens > 0)
    os << "MTP: " << ev.mtp.draftTokens
       << (ev.mtp.draftTokens == 1 ? " draft token" : " draft tokens")
       << " per step, each "
       << "accepted with probability " << fmt::number(ev.mtp.acceptance) << ": "
       << fmt::number(ev.mtp.expectedTokens)
       << " tokens per request per step; verify step ("
       << ev.mtp.draftTokens + 1 << " query tokens per request) "
       << fmt::duration(ev.mtp.verifyStepS) << " + drafts "
       << fmt::duration(ev.mtp.draftS) << "; TTL above is per accepted "
       << "token\n";
  if (ev.balancedTtlS != ev.ttlS)
    os << "MoE: the step waits for the busiest EP rank (routing skew "
       << fmt::number(w.routingSkew) << "); every rank at the mean expert "
       << "load: TTL " << fmt::duration(ev.balancedTtlS) << " ("
       << fmt::number(ev.ttlS / ev.balancedTtlS) << "x faster)\n";
  else if (w.balancedExperts)
    os << "MoE: every EP rank priced at the mean expert load "
          "(--balanced-experts)\n";
  if (ev.microBatches > 1)
    os << "Pipeline: " << c.layout.pp << " stages, " << ev.microBatches
       << " micro-batches of " << ev.microBatch << "\n";
  if (ev.hopbUsed())
    os << "HOP-B overlaps the "
       << (c.effectiveHopB() ? "attention exchange"
                             : "output-projection all-reduce")
       << " in " << ev.hopbSlices
       << " batch slices, each paying its own kernel launches and "
          "collective latency\n";
  os << "Memory per GPU: " << fmt::bytes(ev.memoryPerGPUBytes) << " of "
     << fmt::bytes(ev.hbmCapacityBytes) << " (weights "
     << fmt::bytes(ev.memory.weights) << ", KV cache "
     << fmt::bytes(ev.memory.kvCache) << ", activations "
     << fmt::bytes(ev.memory.activations)
     << "): " << (ev.fits ? "fits" : "DOES NOT FIT") << "\n\n";

  os << "Where time goes:\n";
  writeTimeTable(os, ev.breakdown, "  ");

  os << "\nPer layer and GPU (runs of identical layers grouped):\n";
  for (size_t i = 0; i < ev.layers.size();) {
    size_t j = i + 1;
    while (j < ev.layers.size() && sameNumbers(ev.layers[i], ev.layers[j]))
      ++j;
    const LayerEvaluation &l = ev.layers[i];
    const LayerSpec &spec = model.layers[i];
    os << "  layers " << ev.layers[i].index;
    if (j - i > 1)
      os << "-" << ev.layers[j - 1].index;
    os << " (" << (j - i) << " x "
       << stringifyAttentionKind(spec.attention.kind)
       << (spec.isMoE ? " + MoE" : " + dense FFN");
    if (c.layout.pp > 1)
      os << ", stage " << l.stage;
    os << "): " << fmt::duration(l.timeS) << " each\n";
    os << "    attention  "
       << fmt::pad(fmt::duration(l.attention.timeS), 9, true) << "  KV "
       << fmt::bytes(l.attention.kvBytesPerGPU) << ", weights "
       << fmt::bytes(l.attention.weightBytesPerGPU) << ", "
       << flops(l.attention.flopsPerGPU) << "; attention kernel "
       << bound(l.attention.coreComputeS, l.attention.coreMemoryS) << " (math "
       << fmt::duration(l.attention.coreComputeS) << ", KV "
       << fmt::duration(l.attention.coreMemoryS) << ")\n";
    os << "    FFN        " << fmt::pad(fmt::duration(l.ffn.timeS), 9, true)
       << "  weights " << fmt::bytes(l.ffn.weightBytesPerGPU) << ", "
       << flops(l.ffn.flopsPerGPU);
    if (spec.isMoE)
      os << "; " << fmt::fixed(l.ffn.activeExperts, 2)
         << " distinct experts read per GPU";
    os << "\n    comm       " << fmt::pad(fmt::duration(l.comm.timeS), 9, true)
       << "  exposed " << fmt::duration(l.comm.exposedS) << "\n";
    i = j;
  }
  os << "  per step: embedding, LM head and sampling "
     << fmt::duration(ev.step.computeS) << ", communication "
     << fmt::duration(ev.step.commS) << "\n";
}

} // namespace helix
