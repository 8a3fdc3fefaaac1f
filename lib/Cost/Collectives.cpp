//===- Collectives.cpp - Alpha-beta cost of collectives -------------------===//

#include "helix/Cost/Collectives.h"

namespace helix {

double busBandwidthFactor(CollectiveKind kind, int64_t n) {
  if (n <= 1)
    return 0.0;
  double nd = double(n);
  switch (kind) {
  case CollectiveKind::AllReduce:
    return 2.0 * (nd - 1) / nd;
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
  case CollectiveKind::MoEDispatch:
  case CollectiveKind::MoECombine:
    return (nd - 1) / nd;
  case CollectiveKind::Broadcast:
  case CollectiveKind::P2P:
    return 1.0;
  }
  return 1.0;
}

double collectiveTime(const Hardware &hw, CollectiveKind kind, int64_t n,
                      double bytes) {
  if (kind == CollectiveKind::P2P)
    n = 2;
  if (n <= 1 || bytes <= 0)
    return 0.0;
  const CollectiveParams &p = hw.collective(kind);
  double busbw = hw.linkBandwidth(n) * p.busEfficiency;
  return p.alpha(n) + busBandwidthFactor(kind, n) * bytes / busbw;
}

} // namespace helix
