//===- Roofline.h - Per-GPU time of one kernel ------------------*- C++ -*-===//
//
// time = max(flops / (peak * math_eff), bytes / (bw * mem_eff)) + the
// kernels' fixed costs. The KV cache streams at the attention efficiency,
// weights and activations at the GEMM's (or the memory-bound) efficiency;
// with kernel curves in the hardware file these depend on the kernel kind
// and its M or rows (kernelCost). Where the time goes is attributed to the
// bound that wins (KV read, weight read or compute) plus the fixed costs.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_ROOFLINE_H
#define HELIX_COST_ROOFLINE_H

#include "helix/Common/KernelTable.h"
#include "helix/Cost/Hardware.h"

namespace helix {

/// Where a span of time goes. Sums to the span.
struct TimeBreakdown {
  double kvRead = 0;        // memory-bound time spent streaming the KV cache
  double weightRead = 0;    // memory-bound time on weights and activations
  double compute = 0;       // compute-bound time
  double overhead = 0;      // fixed per-kernel overhead
  double exposedComm = 0;   // communication not hidden behind compute
  double pipelineStall = 0; // pipeline-parallel imbalance (tp-pp)

  double total() const {
    return kvRead + weightRead + compute + overhead + exposedComm +
           pipelineStall;
  }
  TimeBreakdown &operator+=(const TimeBreakdown &o);
  TimeBreakdown scaled(double f) const;
};

/// Cost of one op (one or a few fused kernels) on one GPU.
struct OpCost {
  double flops = 0;
  double weightBytes = 0;
  double kvBytes = 0;
  double actBytes = 0;
  double computeS = 0;  // roofline compute term
  double memoryS = 0;   // roofline memory term
  double overheadS = 0; // kernels x fixed overhead
  double timeS = 0;     // max(computeS, memoryS) + overheadS
  KernelCounts kernels; // kernels launched, by kind (KernelMix::counts)
  TimeBreakdown where;

  /// Adds another op that runs after this one (times add).
  OpCost &operator+=(const OpCost &o);
  /// Roofline time without the fixed overhead.
  double variableS() const { return timeS - overheadS; }
};

/// The kernels one op launches, by kind, with the dimensions the hardware
/// file's kernel curves are keyed by (Hardware.h, KernelCurves).
struct KernelMix {
  /// The kernels by kind (helix/Common/KernelTable.h). Each pays its
  /// kind's fixed cost: Gemm the `format` GEMM curve at M = `m`, Experts the
  /// grouped-GEMM curve, Attention and IndexScores the decode attention
  /// curve at `rows`, every other kind an elementwise kernel's.
  KernelCounts counts;
  DType format = DType::BF16;
  /// The grouped GEMMs' weights are an MXFP4 checkpoint's (format FP4): they
  /// read KernelCurves::groupedGemmMXFP4 where the hardware file has it.
  bool mxfp4 = false;
  /// Which curve prices NVFP4 grouped GEMMs (not MXFP4) where the hardware
  /// has both: the faster at this op (Best), or one of them.
  enum class FP4MoEKernel {
    Best,
    GroupedGemm,
    TrtllmGen
  } fp4MoE = FP4MoEKernel::Best;
  double m = 1;
  bool mla = false;
  double rows = 1;
  double localHeads = 1; // query heads on the GPU (picks the MLA curve)
  DType kvFormat = DType::BF16;

  int gemms() const { return counts.of(KernelKind::Gemm); }
  int groupedGemms() const { return counts.of(KernelKind::Experts); }
  int attention() const {
    return counts.of(KernelKind::Attention) +
           counts.of(KernelKind::IndexScores);
  }
  int elementwise() const {
    return counts.total() - gemms() - groupedGemms() - attention();
  }
};

/// Cost of an op with `flops` in the `math` format reading the given bytes,
/// launched as the kernels of `mix`:
///   time = max(flops / (peak * math_eff), kv / (bw * attention_eff) +
///              (weights + activations) / (bw * gemm_eff)) + sum of the
///          kernels' fixed costs,
/// each efficiency and fixed cost read from the kind's curve at its M (or
/// rows); a kind without a curve takes the flat figures (memory-bound
/// efficiency, attention efficiency, gemm_efficiency, kernel_overhead_us).
OpCost kernelCost(const Hardware &hw, DType math, double flops,
                  double weightBytes, double kvBytes, double actBytes,
                  const KernelMix &mix);

/// kernelCost of `kernels`, all of kinds priced as elementwise
/// (flat-efficiency) kernels.
OpCost roofline(const Hardware &hw, DType math, double flops,
                double weightBytes, double kvBytes, double actBytes,
                const KernelCounts &kernels);

} // namespace helix

#endif // HELIX_COST_ROOFLINE_H
