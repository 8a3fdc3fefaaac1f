//===- HopB.h - Batch-wise overlap of attention and its exchange -*- C++
//-*-===//
//
// Helix HOP-B splits the batch into n slices and runs attention compute and
// the following exchange as a two-stage pipeline: slice i's exchange overlaps
// slice i+1's attention. With per-slice compute c and exchange m:
//   no overlap:   n * (c + m)
//   overlap:      c + (n - 1) * max(c, m) + m   (= n*c + m when c >= m)
// Each slice pays its own kernel overhead and collective latency, so more
// slices is not always better; the planner takes the best slice count.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_HOPB_H
#define HELIX_COST_HOPB_H

#include "helix/Cost/Hardware.h"
#include "helix/Cost/Roofline.h"

#include <cstdint>

namespace helix {

/// n slices, strictly one after the other: n * (c + m).
double sequentialTime(int64_t n, double c, double m);

/// n slices as a two-stage pipeline: c + (n - 1) * max(c, m) + m.
double pipelineTime(int64_t n, double c, double m);

struct OverlapResult {
  double timeS = 0;    // span of compute + exchange
  double exposedS = 0; // timeS minus the unsliced compute time
  double commS = 0;    // time spent in the collective over all slices
  int64_t slices = 1;  // 1 means no overlap
};

/// Best batch-wise overlap of `compute` (an op over `batch` requests) with a
/// collective of `kind` over `n` GPUs moving `bytes` for the whole batch.
/// Tries 1, 2, 4, ... and `batch` slices, or only `slices` (at most `batch`)
/// when a program fixed it; slices split the roofline part of the op and
/// the collective's bytes evenly, each pays the op's kernel overhead and the
/// collective's alpha. `overlap == false` gives 1 slice.
OverlapResult overlapWithCollective(const Hardware &hw, int64_t batch,
                                    const OpCost &compute, CollectiveKind kind,
                                    int64_t n, double bytes, bool overlap,
                                    int64_t slices = 0);

} // namespace helix

#endif // HELIX_COST_HOPB_H
