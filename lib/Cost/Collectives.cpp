//===- Collectives.cpp - Alpha-beta cost of collectives -------------------===//

#include "helix/Cost/Collectives.h"

#include <algorithm>
#include <cmath>

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

/// alpha(n) + factor * S / busbw(n).
static double alphaBeta(const Hardware &hw, CollectiveKind kind, int64_t n,
                        double bytes) {
  const CollectiveParams &p = hw.collective(kind);
  double busbw = hw.linkBandwidth(n) * p.busEfficiency;
  return p.alpha(n) + busBandwidthFactor(kind, n) * bytes / busbw;
}

/// The measured group size to read for `n` GPUs: the nearest in log2(n)
/// (the smaller on a tie) on the same side of the NVLink domain boundary;
/// 0 when there is none.
static int64_t nearestMeasuredGroup(const Hardware &hw,
                                    const std::vector<CollectivePoint> &pts,
                                    int64_t n) {
  bool inside = n <= hw.nvlinkDomain;
  int64_t best = 0;
  double bestD = 0;
  // Points come in runs of one group size (sorted by size, then bytes):
  // weigh each size once, jumping from run to run.
  for (auto it = pts.begin(); it != pts.end();
       it = std::upper_bound(
           it, pts.end(), it->gpus,
           [](int64_t g, const CollectivePoint &c) { return g < c.gpus; })) {
    const CollectivePoint &c = *it;
    if ((c.gpus <= hw.nvlinkDomain) != inside)
      continue;
    // |log2(gpus) - log2(n)| is log2 of this ratio (>= 1): compare ratios,
    // no logarithm per point.
    double d =
        c.gpus > n ? double(c.gpus) / double(n) : double(n) / double(c.gpus);
    if (best == 0 || d < bestD) {
      best = c.gpus;
      bestD = d;
    }
  }
  return best;
}

/// Measured time at `bytes` over exactly `n` GPUs: log-log interpolation
/// between the measured sizes; the smallest size's time below them (a
/// smaller message is not faster than the latency floor); beyond the
/// largest, its time plus the extra bytes at the bus bandwidth.
static double measuredTime(const Hardware &hw, CollectiveKind kind,
                           const std::vector<CollectivePoint> &pts, int64_t n,
                           double bytes) {
  const CollectivePoint *lo = nullptr, *hi = nullptr;
  // The run of group size n (points sorted by size, then bytes).
  for (auto it = std::lower_bound(
           pts.begin(), pts.end(), n,
           [](const CollectivePoint &c, int64_t g) { return c.gpus < g; });
       it != pts.end() && it->gpus == n; ++it) {
    if (it->bytes <= bytes)
      lo = &*it;
    else if (!hi)
      hi = &*it;
  }
  if (!lo)
    return hi->seconds;
  if (!hi) {
    const CollectiveParams &p = hw.collective(kind);
    double busbw = hw.linkBandwidth(n) * p.busEfficiency;
    return lo->seconds +
           busBandwidthFactor(kind, n) * (bytes - lo->bytes) / busbw;
  }
  double t = (std::log(bytes) - lo->logBytes) / (hi->logBytes - lo->logBytes);
  return std::exp(lo->logSeconds + t * (hi->logSeconds - lo->logSeconds));
}

/// A collective over `n` GPUs spanning several NVLink domains, with no
/// measured curve on that side: NCCL's hierarchical form. Within each
/// domain the measured curves; across domains every GPU's own NIC carries
/// its 1/local share in parallel, at the measured round latency and the
/// NIC's achieved bandwidth (Collectives.h).
static double acrossDomains(const Hardware &hw, CollectiveKind kind, int64_t n,
                            double bytes) {
  const int64_t domains = (n + hw.nvlinkDomain - 1) / hw.nvlinkDomain;
  const int64_t local = (n + domains - 1) / domains;
  const double d = double(domains), share = bytes / double(local);
  const double bw = hw.scaleOutBandwidth * hw.scaleOutEfficiency;
  const double round = hw.scaleOutLatency(domains);
  auto inside = [&](CollectiveKind k) {
    return collectiveTime(hw, k, local, bytes);
  };
  switch (kind) {
  case CollectiveKind::AllReduce:
    // Reduce-scatter in the domain, all-reduce of the shares across
    // domains (a reduce round and a broadcast round), all-gather back.
    return inside(CollectiveKind::ReduceScatter) + 2.0 * round +
           2.0 * (d - 1) / d * share / bw + inside(CollectiveKind::AllGather);
  case CollectiveKind::AllGather:
    return round + (d - 1) / d * share / bw + inside(CollectiveKind::AllGather);
  case CollectiveKind::ReduceScatter:
    return inside(CollectiveKind::ReduceScatter) + round +
           (d - 1) / d * share / bw;
  case CollectiveKind::Broadcast:
    return round + bytes / bw + inside(CollectiveKind::Broadcast);
  case CollectiveKind::AllToAll:
  case CollectiveKind::MoEDispatch:
  case CollectiveKind::MoECombine:
    // What a GPU sends to other domains leaves through its own NIC, while
    // its share for its own domain moves over NVLink at the same time.
    return std::max(
        collectiveTime(hw, kind, local, bytes * double(local) / double(n)),
        round + double(n - local) / double(n) * bytes / bw);
  case CollectiveKind::P2P:
    break;
  }
  return alphaBeta(hw, kind, n, bytes);
}

double collectiveTime(const Hardware &hw, CollectiveKind kind, int64_t n,
                      double bytes) {
  if (kind == CollectiveKind::P2P)
    n = 2;
  if (n <= 1 || bytes <= 0)
    return 0.0;
  const std::vector<CollectivePoint> &pts = hw.collective(kind).measured;
  int64_t m = pts.empty() ? 0 : nearestMeasuredGroup(hw, pts, n);
  if (m == 0 && n > hw.nvlinkDomain && !hw.scaleOutLatencyS.empty())
    return acrossDomains(hw, kind, n, bytes);
  if (m == 0)
    return alphaBeta(hw, kind, n, bytes);
  // The measured curve of the nearest group size, scaled to n GPUs as the
  // alpha-beta model scales between the two sizes.
  double t = measuredTime(hw, kind, pts, m, bytes);
  return m == n ? t
                : t * alphaBeta(hw, kind, n, bytes) /
                      alphaBeta(hw, kind, m, bytes);
}

} // namespace helix
