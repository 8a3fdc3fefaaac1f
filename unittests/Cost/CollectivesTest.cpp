//===- CollectivesTest.cpp - Alpha-beta collectives, by hand --------------===//

#include "helix/Cost/Collectives.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

Hardware gb200() {
  Hardware hw;
  std::string error;
  EXPECT_TRUE(loadHardware("gb200-nvl72", hw, error)) << error;
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

} // namespace
