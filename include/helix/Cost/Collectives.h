//===- Collectives.h - Alpha-beta cost of collectives -----------*- C++ -*-===//
//
// t = alpha(op, n) + factor(op, n) * S / (link_bw(n) * bus_efficiency(op)),
// with S and the bus-bandwidth factors as nccl-tests defines them
// (doc/PERFORMANCE.md): all-reduce 2(n-1)/n; all-gather, reduce-scatter,
// all-to-all (and MoE dispatch/combine) (n-1)/n; broadcast and p2p 1. S is
// the all-reduce/broadcast buffer, the all-gather output (n x per-rank part),
// the reduce-scatter input, the per-rank all-to-all send buffer. Groups that
// fit in one NVLink domain run at NVLink speed, larger ones at scale-out speed.
//
// Where the hardware file gives measured times ("latency_us": by group size
// and message bytes), they replace the alpha-beta line: the measured group
// size nearest to n (same side of the NVLink domain boundary) is read at S,
// log-log between measured sizes, held at the smallest size's time below
// them and extended at the bus bandwidth beyond the largest; a different n
// scales that time by the alpha-beta model's ratio between the two sizes.
// Small decode messages are latency-bound and measured 3-4x slower than the
// alpha-beta line built on large-message bus bandwidth (docs/cost-model.md).
//
// Beyond one NVLink domain (n GPUs over D = ceil(n / domain) domains, L =
// ceil(n / D) per domain), where the file measures no curve on that side
// and gives interconnect.scale_out_latency_us (r(D), one exchange round
// among D domains) and scale_out_efficiency (e, of the NIC bandwidth B):
// NCCL's hierarchical form, each GPU's NIC carrying its S / L share:
//   all-reduce     RS_L(S) + 2 r(D) + 2(D-1)/D (S/L) / (e B) + AG_L(S)
//   all-gather     r(D) + (D-1)/D (S/L) / (e B) + AG_L(S)
//   reduce-scatter RS_L(S) + r(D) + (D-1)/D (S/L) / (e B)
//   broadcast      r(D) + S / (e B) + BC_L(S)
//   all-to-all     max(A2A_L(S L/n), r(D) + (n-L)/n S / (e B))
//                  (the share for the own domain over NVLink, what leaves
//                  it through the NIC, at the same time)
// with X_L the collective inside one domain as above. Without those two
// fields, the alpha-beta line on the NIC.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_COLLECTIVES_H
#define HELIX_COST_COLLECTIVES_H

#include "helix/Cost/Hardware.h"

namespace helix {

/// nccl-tests bus-bandwidth factor of `kind` over `n` GPUs.
double busBandwidthFactor(CollectiveKind kind, int64_t n);

/// Time of one collective over `n` GPUs moving `bytes` (nccl-tests size S).
/// Zero when n <= 1 (nothing to exchange) or bytes <= 0. P2P ignores n.
double collectiveTime(const Hardware &hw, CollectiveKind kind, int64_t n,
                      double bytes);

} // namespace helix

#endif // HELIX_COST_COLLECTIVES_H
