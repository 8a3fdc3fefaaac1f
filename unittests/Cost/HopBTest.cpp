//===- HopBTest.cpp - HOP-B batch-wise overlap ----------------------------===//

#include "helix/Cost/HopB.h"

#include "TestHardware.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

TEST(HopB, PaperFigure3) {
  // 8 requests, 2 units of attention and 1.2 units of all-to-all each.
  EXPECT_DOUBLE_EQ(sequentialTime(8, 2.0, 1.2), 25.6);
  EXPECT_DOUBLE_EQ(pipelineTime(8, 2.0, 1.2), 17.2); // n*c + m
}

TEST(HopB, CommunicationBound) {
  // c < m: c + (n-1)*m + m.
  EXPECT_DOUBLE_EQ(pipelineTime(4, 1.0, 3.0), 13.0);
  EXPECT_DOUBLE_EQ(pipelineTime(1, 1.0, 3.0), 4.0);
}

TEST(HopB, OverlapPicksSlicesWhenBandwidthBound) {
  // No latency, no kernel overhead: a 16-request batch whose exchange takes
  // 0.6 of its compute overlaps into 16 slices: 16*c + m.
  Hardware hw = test::appendixAHardware();
  OpCost compute;
  compute.timeS = 16e-6;
  double bytes = 0.6 * 16e-6 * 900e9 / (15.0 / 16.0); // all-to-all, n=16
  OverlapResult on = overlapWithCollective(hw, 16, compute,
                                           CollectiveKind::AllToAll, 16, bytes,
                                           /*overlap=*/true);
  EXPECT_EQ(on.slices, 16);
  EXPECT_NEAR(on.timeS, 16e-6 + 0.6e-6, 1e-15);
  EXPECT_NEAR(on.exposedS, 0.6e-6, 1e-15);
  OverlapResult off = overlapWithCollective(
      hw, 16, compute, CollectiveKind::AllToAll, 16, bytes, /*overlap=*/false);
  EXPECT_EQ(off.slices, 1);
  EXPECT_NEAR(off.timeS, 16e-6 + 9.6e-6, 1e-15);
}

TEST(HopB, LatencyBoundExchangeIsNotSliced) {
  // When each slice would pay the full collective latency again, one slice
  // (no overlap) is best.
  Hardware hw = test::appendixAHardware();
  for (CollectiveParams &c : hw.collectives)
    c.alphaS = {{2, 10e-6}};
  OpCost compute;
  compute.timeS = 20e-6;
  OverlapResult o =
      overlapWithCollective(hw, 8, compute, CollectiveKind::AllToAll, 8, 1000,
                            /*overlap=*/true);
  EXPECT_EQ(o.slices, 1);
}

} // namespace
