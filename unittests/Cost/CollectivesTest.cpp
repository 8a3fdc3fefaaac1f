//===- CollectivesTest.cpp - Alpha-beta collectives, by hand --------------===//

#include "helix/Cost/Collectives.h"

#include "gtest/gtest.h"

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
  // 144 GPUs span two NVL72 domains: 50 GB/s NICs.
  double alpha = hw.collective(CollectiveKind::AllReduce).alpha(144);
  EXPECT_NEAR(collectiveTime(hw, CollectiveKind::AllReduce, 144, 1e6),
              alpha + 2.0 * 143 / 144 * 1e6 / (50e9 * 0.70), 1e-12);
  EXPECT_DOUBLE_EQ(hw.linkBandwidth(72), 900e9);
  EXPECT_DOUBLE_EQ(hw.linkBandwidth(73), 50e9);
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
  // Beyond the domain the measured NVLink curves do not apply: alpha-beta
  // on the scale-out network.
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
