//===- Roofline.h - Per-GPU time of one kernel ------------------*- C++ -*-===//
//
// time = max(flops / (peak * gemm_eff), bytes / (bw * mem_eff)) + kernels *
// fixed overhead. The KV cache streams at the attention efficiency, weights
// and activations at the memory-bound efficiency. Where the time goes is
// attributed to the bound that wins (KV read, weight read or compute) plus
// the fixed overhead.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_ROOFLINE_H
#define HELIX_COST_ROOFLINE_H

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
  TimeBreakdown where;

  /// Adds another op that runs after this one (times add).
  OpCost &operator+=(const OpCost &o);
  /// Roofline time without the fixed overhead.
  double variableS() const { return timeS - overheadS; }
};

/// Roofline cost of an op with `flops` in the `math` format reading the given
/// bytes, launched as `kernels` kernels.
OpCost roofline(const Hardware &hw, DType math, double flops,
                double weightBytes, double kvBytes, double actBytes,
                int kernels);

} // namespace helix

#endif // HELIX_COST_ROOFLINE_H
