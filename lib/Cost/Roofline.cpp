//===- Roofline.cpp - Per-GPU time of one kernel --------------------------===//

#include "helix/Cost/Roofline.h"

#include <algorithm>

namespace helix {

TimeBreakdown &TimeBreakdown::operator+=(const TimeBreakdown &o) {
  kvRead += o.kvRead;
  weightRead += o.weightRead;
  compute += o.compute;
  overhead += o.overhead;
  exposedComm += o.exposedComm;
  pipelineStall += o.pipelineStall;
  return *this;
}

TimeBreakdown TimeBreakdown::scaled(double f) const {
  TimeBreakdown t = *this;
  t.kvRead *= f;
  t.weightRead *= f;
  t.compute *= f;
  t.overhead *= f;
  t.exposedComm *= f;
  t.pipelineStall *= f;
  return t;
}

OpCost &OpCost::operator+=(const OpCost &o) {
  flops += o.flops;
  weightBytes += o.weightBytes;
  kvBytes += o.kvBytes;
  actBytes += o.actBytes;
  computeS += o.computeS;
  memoryS += o.memoryS;
  overheadS += o.overheadS;
  timeS += o.timeS;
  kernels += o.kernels;
  where += o.where;
  return *this;
}

namespace {
/// What one kernel kind costs at its dimension: fixed seconds, bandwidth
/// and math efficiency; the flat figures where the file has no curve.
struct KindCost {
  double fixedS, bandwidthEff, mathEff;
};

/// `math`, when given and not empty, supplies the math efficiency.
KindCost kindCost(const Hardware &hw, const KernelCurve &curve, double x,
                  double flatBandwidthEff, const KernelCurve *math = nullptr) {
  double mathEff = hw.gemmEfficiency;
  if (math && !math->empty())
    mathEff = math->at(x).mathEfficiency;
  if (curve.empty())
    return {hw.kernelOverheadS, flatBandwidthEff, mathEff};
  KernelPoint p = curve.at(x);
  return {p.fixedS, p.bandwidthEfficiency,
          p.mathEfficiency > 0 ? p.mathEfficiency : mathEff};
}
} // namespace

OpCost kernelCost(const Hardware &hw, DType math, double flops,
                  double weightBytes, double kvBytes, double actBytes,
                  const KernelMix &mix) {
  const KernelCurves &k = hw.kernels;
  // NVFP4 experts with two measured kernels: the faster one for this op,
  // as a deployment tuned for the batch picks its MoE backend.
  if (mix.groupedGemms() > 0 && !mix.mxfp4 && mix.format == DType::FP4 &&
      mix.fp4MoE == KernelMix::FP4MoEKernel::Best &&
      !k.groupedGemmFP4TrtllmGen.empty()) {
    KernelMix a = mix, b = mix;
    a.fp4MoE = KernelMix::FP4MoEKernel::GroupedGemm;
    b.fp4MoE = KernelMix::FP4MoEKernel::TrtllmGen;
    OpCost ca = kernelCost(hw, math, flops, weightBytes, kvBytes, actBytes, a);
    OpCost cb = kernelCost(hw, math, flops, weightBytes, kvBytes, actBytes, b);
    return cb.timeS < ca.timeS ? cb : ca;
  }
  // Only the kinds the op launches are looked up (the search prices
  // hundreds of thousands of ops).
  const KindCost none{0, 1, hw.gemmEfficiency};
  // Math runs at the arithmetic format's rate: its gemm_math curve.
  const KernelCurve *mathCurve = &k.gemmMath[static_cast<int>(math)];
  KindCost gemm = mix.gemms() > 0
                      ? kindCost(hw, k.gemmFor(mix.format, false), mix.m,
                                 hw.memoryEfficiency, mathCurve)
                      : none;
  const KernelCurve &groupedCurve =
      mix.mxfp4 && !k.groupedGemmMXFP4.empty() ? k.groupedGemmMXFP4
      : mix.fp4MoE == KernelMix::FP4MoEKernel::TrtllmGen &&
              mix.format == DType::FP4 && !k.groupedGemmFP4TrtllmGen.empty()
          ? k.groupedGemmFP4TrtllmGen
          : k.gemmFor(mix.format, true);
  KindCost grouped =
      mix.groupedGemms() > 0
          ? kindCost(hw, groupedCurve, mix.m, hw.memoryEfficiency, mathCurve)
          : none;
  KindCost attn =
      mix.attention() > 0 || kvBytes > 0
          ? kindCost(hw, k.attention(mix.mla, mix.localHeads, mix.kvFormat),
                     mix.rows, hw.attentionMemoryEfficiency)
          : KindCost{0, hw.attentionMemoryEfficiency, hw.gemmEfficiency};
  double elementwiseS =
      k.elementwiseS >= 0 ? k.elementwiseS : hw.kernelOverheadS;
  // Weights and activations stream at the efficiency of the op's GEMMs
  // (grouped expert GEMMs, else plain ones), else of elementwise kernels.
  const KindCost *streaming =
      mix.groupedGemms() > 0 ? &grouped : (mix.gemms() > 0 ? &gemm : nullptr);
  double streamEff = streaming ? streaming->bandwidthEff : hw.memoryEfficiency;
  // An attention op's FLOPs are the attention kernel's (its curve is fitted
  // on memory-bound decode, so it carries no math figure): gemm_efficiency.
  double mathEff = streaming && mix.attention() == 0 ? streaming->mathEff
                                                     : hw.gemmEfficiency;

  OpCost c;
  c.flops = flops;
  c.weightBytes = weightBytes;
  c.kvBytes = kvBytes;
  c.actBytes = actBytes;
  double peak = hw.peak(math) * mathEff;
  c.computeS = peak > 0 ? flops / peak : 0.0;
  double kvS = kvBytes / (hw.hbmBandwidth * attn.bandwidthEff);
  double otherS = (weightBytes + actBytes) / (hw.hbmBandwidth * streamEff);
  c.memoryS = kvS + otherS;
  c.overheadS =
      mix.gemms() * gemm.fixedS + mix.groupedGemms() * grouped.fixedS +
      mix.attention() * attn.fixedS + mix.elementwise() * elementwiseS;
  c.timeS = std::max(c.computeS, c.memoryS) + c.overheadS;
  c.kernels = mix.counts;
  if (c.memoryS >= c.computeS) {
    c.where.kvRead = kvS;
    c.where.weightRead = otherS;
  } else {
    c.where.compute = c.computeS;
  }
  c.where.overhead = c.overheadS;
  return c;
}

OpCost roofline(const Hardware &hw, DType math, double flops,
                double weightBytes, double kvBytes, double actBytes,
                const KernelCounts &kernels) {
  KernelMix mix;
  mix.counts = kernels;
  return kernelCost(hw, math, flops, weightBytes, kvBytes, actBytes, mix);
}

} // namespace helix
