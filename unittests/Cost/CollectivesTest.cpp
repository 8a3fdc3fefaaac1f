//===- CollectivesTest.cpp - Alpha-beta collectives, by hand --------------===//

#include "helix/Cost/Collectives.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>

using namespace helix;

namespace {

Hardware gb200WithCurves() {
  Hardware hw;
  std::string error;
  EXPECT_TRUE(loadHardware("gb200-nvl72", hw, error)) << error;
  return hw;
}

/// The preset's alpha-beta figures alone (its measured points dropped).
Hardware gb200() {
  Hardware hw = gb200WithCurves();
  for (CollectiveParams &c : hw.collectives)
    c.measured.clear();
  return hw;
}

/// A hardware with two measured all-reduce curves inside an 8-GPU domain.
Hardware measured() {
  Hardware hw = gb200();
  hw.nvlinkDomain = 8;
  hw.nvlinkBandwidth = 450e9;
  hw.scaleOutBandwidth = 50e9;
  CollectiveParams &ar = hw.collectives[int(CollectiveKind::AllReduce)];
  ar.alphaS = {{2, 3e-6}, {8, 4e-6}};
  ar.busEfficiency = 0.5;
  ar.measured = {{2, 1024, 3e-6},
                 {2, 1048576, 6e-6},
                 {8, 1024, 4e-6},
                 {8, 16384, 4e-6},
                 {8, 1048576, 26e-6}};
  return hw;
}

TEST(Collectives, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::AllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::AllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::ReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::AllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::Broadcast, 16), 1.0);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollectiveKind::AllReduce, 1), 0.0);
}

TEST(Collectives, AllReduceByHand) {
  Hardware hw = gb200();
  // 4.7 us + 2*3/4 * 1 MB / (900 GB/s * 0.70).
  double want = 4.7e-6 + 1.5 * 1e6 / (900e9 * 0.70);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllReduce, 4, 1e6), want,
              1e-12);
}

TEST(Collectives, AllToAllByHand) {
  Hardware hw = gb200();
  // 10.7 us + 7/8 * 64 KiB / (900 GB/s * 0.54).
  double want = 10.7e-6 + 0.875 * 65536 / (900e9 * 0.54);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllToAll, 8, 65536), want,
              1e-12);
}

TEST(Collectives, AllGatherBroadcastAndMoE) {
  Hardware hw = gb200();
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllGather, 16, 2e6),
              10.7e-6 + (15.0 / 16) * 2e6 / (900e9 * 0.63), 1e-12);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::Broadcast, 64, 1e5),
              10.7e-6 + 1e5 / (900e9 * 0.63), 1e-12);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::MoEDispatch, 32, 1e6),
              18e-6 + (31.0 / 32) * 1e6 / (900e9 * 0.54), 1e-12);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::MoECombine, 32, 1e6),
              25e-6 + (31.0 / 32) * 1e6 / (900e9 * 0.54), 1e-12);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::P2P, 2, 1e6),
              10.7e-6 + 1e6 / (900e9 * 0.63), 1e-12);
}

TEST(Collectives, NothingToExchange) {
  Hardware hw = gb200();
  EXPECT_EQ(collectiveTime(hw, CollectiveKind::AllReduce, 1, 1e6), 0.0);
  EXPECT_EQ(collectiveTime(hw, CollectiveKind::AllToAll, 8, 0.0), 0.0);
}

TEST(Collectives, ScaleOutBeyondTheNVLinkDomain) {
  Hardware hw = gb200();
  // 144 GPUs span two NVL72 domains of 72: reduce-scatter in each domain,
  // the shares all-reduced across the two over the NICs (a reduce and a
  // broadcast round of the measured crossing latency, 1/72 of the buffer
  // per NIC at 0.86 of 50 GB/s), all-gather back in each domain.
  const double s = 1e6;
  double inside = collectiveTime(hw, CollectiveKind::ReduceScatter, 72, s) +
                  collectiveTime(hw, CollectiveKind::AllGather, 72, s);
  double across =
      2 * hw.scaleOutLatency(2) + 2.0 * 1 / 2 * (s / 72) / (50e9 * 0.86);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllReduce, 144, s),
              inside + across, 1e-12);
  EXPECT_NEAR(hw.scaleOutLatency(2), 21.9e-6, 1e-12);
  // All-to-all: what leaves a domain (72 of 144 GPUs' shares) crosses the
  // sender's NIC after one round, while the rest moves over NVLink.
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllToAll, 144, s),
              std::max(collectiveTime(hw, CollectiveKind::AllToAll, 72, s / 2),
                       hw.scaleOutLatency(2) + 72.0 / 144 * s / (50e9 * 0.86)),
              1e-12);
  EXPECT_DOUBLE_EQ(hw.linkBandwidth(72), 900e9);
  EXPECT_DOUBLE_EQ(hw.linkBandwidth(73), 50e9);
}

TEST(Collectives, HierarchicalFormsByHand) {
  // Four domains of 8 (32 GPUs): each form of Collectives.h.
  Hardware hw = gb200();
  hw.nvlinkDomain = 8;
  hw.scaleOutLatencyS = {{2, 20e-6}, {8, 30e-6}};
  hw.scaleOutEfficiency = 0.5;
  const double s = 4e6, bw = 50e9 * 0.5, r = 25e-6; // r(4): half way in log2
  EXPECT_NEAR(hw.scaleOutLatency(4), r, 1e-15);
  auto in = [&](CollectiveKind k) { return collectiveTime(hw, k, 8, s); };
  const double share = s / 8;
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllGather, 32, s),
              r + 0.75 * share / bw + in(CollectiveKind::AllGather), 1e-12);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::ReduceScatter, 32, s),
              in(CollectiveKind::ReduceScatter) + r + 0.75 * share / bw, 1e-12);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::Broadcast, 32, s),
              r + s / bw + in(CollectiveKind::Broadcast), 1e-12);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::MoEDispatch, 32, s),
              r + 24.0 / 32 * s / bw, 1e-12);
  EXPECT_GT(r + 24.0 / 32 * s / bw,
            collectiveTime(hw, CollectiveKind::MoEDispatch, 8, s / 4));
  // 12 GPUs: two domains of 6.
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllToAll, 12, s),
              20e-6 + 6.0 / 12 * s / bw, 1e-12);
  // Without the crossing's figures: the alpha-beta line on the NIC.
  hw.scaleOutLatencyS.clear();
  const CollectiveParams &p = hw.collective(CollectiveKind::AllGather);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllGather, 32, s),
              p.alpha(32) + 31.0 / 32 * s / (50e9 * p.busEfficiency), 1e-12);
}

TEST(Collectives, LatencyTablesNeverExtrapolateBelowTheirLastValue) {
  // A user table whose latency falls with the size is held at its last
  // value beyond it, not extended to zero and below.
  std::vector<std::pair<int64_t, double>> falling = {{2, 30e-6}, {4, 20e-6}};
  EXPECT_NEAR(interpolateLog2(falling, 3), 30e-6 - 10e-6 * (std::log2(3.0) - 1),
              1e-15);
  EXPECT_DOUBLE_EQ(interpolateLog2(falling, 4096), 20e-6);
  std::vector<std::pair<int64_t, double>> rising = {{2, 20e-6}, {4, 30e-6}};
  EXPECT_NEAR(interpolateLog2(rising, 16), 50e-6, 1e-15);
  Hardware hw = gb200();
  hw.nvlinkDomain = 8;
  hw.scaleOutLatencyS = falling;
  hw.scaleOutEfficiency = 0.5;
  EXPECT_GT(collectiveTime(hw, CollectiveKind::AllReduce, 4096, 1024), 0);
}

TEST(Collectives, CrossingHGXNodesPaysTheMeasuredRound) {
  // HGX H100's preset measures one exchange round across 2, 4 and 8 nodes
  // (DeepEP's low-latency dispatch): two nodes' all-reduce pays a reduce and
  // a broadcast round of it on top of the NVLink reduce-scatter and
  // all-gather, where the alpha-beta line on the NIC saw a few us.
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware("h100", hw, error)) << error;
  EXPECT_NEAR(hw.scaleOutLatency(2), 21.9e-6, 1e-12);
  EXPECT_NEAR(hw.scaleOutLatency(8), 28.7e-6, 1e-12);
  const double s = 65536;
  EXPECT_GT(collectiveTime(hw, CollectiveKind::AllReduce, 16, s),
            2 * hw.scaleOutLatency(2) +
                collectiveTime(hw, CollectiveKind::ReduceScatter, 8, s));
  Hardware flat = hw;
  flat.scaleOutLatencyS.clear();
  EXPECT_LT(collectiveTime(flat, CollectiveKind::AllReduce, 16, s), 10e-6);
  // At large sizes the hierarchy beats one ring over the NICs: each NIC
  // carries 1/8 of the buffer.
  const double gib = 1 << 30;
  EXPECT_LT(collectiveTime(hw, CollectiveKind::AllReduce, 16, gib),
            0.5 * collectiveTime(flat, CollectiveKind::AllReduce, 16, gib));
}

TEST(Collectives, MeasuredPointsAreReadExactly) {
  Hardware hw = measured();
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllReduce, 8, 1048576), 26e-6,
              1e-15);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllReduce, 2, 1024), 3e-6,
              1e-15);
}

TEST(Collectives, MeasuredCurveIsLogLogBetweenSizes) {
  Hardware hw = measured();
  // Half way in log(bytes) between 16 KiB (4 us) and 1 MiB (26 us): the
  // geometric mean of the times.
  double mid = std::sqrt(16384.0 * 1048576.0);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllReduce, 8, mid),
              std::sqrt(4e-6 * 26e-6), 1e-12);
  // Below the smallest size: its time (the latency floor).
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllReduce, 8, 100), 4e-6,
              1e-15);
  // Beyond the largest: its time plus the extra bytes at the bus bandwidth.
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllReduce, 8, 2097152),
              26e-6 + 1.75 * 1048576 / (450e9 * 0.5), 1e-12);
}

TEST(Collectives, UnmeasuredGroupScalesByTheAlphaBetaRatio) {
  Hardware hw = measured();
  // 4 GPUs: nearest measured sizes 2 and 8 are equally far in log2; the
  // smaller is read, scaled as the alpha-beta line scales from 2 to 4.
  auto ab = [&](int64_t n, double s) {
    const CollectiveParams &p = hw.collective(CollectiveKind::AllReduce);
    return p.alpha(n) + busBandwidthFactor(CollectiveKind::AllReduce, n) * s /
                            (hw.linkBandwidth(n) * 0.5);
  };
  double s = 1048576;
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllReduce, 4, s),
              6e-6 * ab(4, s) / ab(2, s), 1e-12);
  // Beyond the domain the measured NVLink curves are not read for the whole
  // group: without the crossing's figures, alpha-beta on the scale-out
  // network.
  hw.scaleOutLatencyS.clear();
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllReduce, 16, s), ab(16, s),
              1e-12);
  EXPECT_GT(collectiveTime(hw, CollectiveKind::AllReduce, 16, s),
            collectiveTime(hw, CollectiveKind::AllReduce, 8, s));
}

TEST(Collectives, PresetCurvesAreSlowerThanAlphaBetaAtDecodeSizes) {
  // The reason for measured curves (docs/cost-model.md): at decode message
  // sizes the measured all-reduce is several times the alpha-beta line.
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware("h100", hw, error)) << error;
  Hardware ab = hw;
  for (CollectiveParams &c : ab.collectives)
    c.measured.clear();
  double mib = 1048576;
  EXPECT_GT(collectiveTime(hw, CollectiveKind::AllReduce, 8, mib),
            2.0 * collectiveTime(ab, CollectiveKind::AllReduce, 8, mib));
}

} // namespace
