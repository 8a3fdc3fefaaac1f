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
  where += o.where;
  return *this;
}

OpCost roofline(const Hardware &hw, DType math, double flops,
                double weightBytes, double kvBytes, double actBytes,
                int kernels) {
  OpCost c;
  c.flops = flops;
  c.weightBytes = weightBytes;
  c.kvBytes = kvBytes;
  c.actBytes = actBytes;
  double peak = hw.peak(math) * hw.gemmEfficiency;
  c.computeS = peak > 0 ? flops / peak : 0.0;
  double kvS = kvBytes / (hw.hbmBandwidth * hw.attentionMemoryEfficiency);
  double otherS =
      (weightBytes + actBytes) / (hw.hbmBandwidth * hw.memoryEfficiency);
  c.memoryS = kvS + otherS;
  c.overheadS = kernels * hw.kernelOverheadS;
  c.timeS = std::max(c.computeS, c.memoryS) + c.overheadS;
  if (c.memoryS >= c.computeS) {
    c.where.kvRead = kvS;
    c.where.weightRead = otherS;
  } else {
    c.where.compute = c.computeS;
  }
  c.where.overhead = c.overheadS;
  return c;
}

} // namespace helix
