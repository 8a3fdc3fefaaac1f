//===- LayoutTest.cpp - Layout strings, strategies, number formats --------===//

#include "helix/Cost/Layout.h"
#include "helix/Cost/Precision.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

TEST(Layout, ParsesPaperStyleLayouts) {
  Layout l;
  std::string error;
  ASSERT_TRUE(parseLayout("kvp=4,tpa=8,tpf=32,ep=1", l, error)) << error;
  EXPECT_EQ(l.kvp, 4);
  EXPECT_EQ(l.tpa, 8);
  EXPECT_EQ(l.tpf, 32);
  EXPECT_EQ(l.ep, 1);
  EXPECT_EQ(l.pp, 1);
  EXPECT_EQ(l.gpus(), 32);
  EXPECT_EQ(l.str(), "kvp=4,tpa=8,tpf=32,ep=1");
  ASSERT_TRUE(parseLayout(" tpa=8, tpf=8, pp=4 ", l, error)) << error;
  EXPECT_EQ(l.pp, 4);
  EXPECT_EQ(l.gpus(), 32);
  EXPECT_EQ(l.str(), "kvp=1,tpa=8,tpf=8,ep=1,pp=4");
  ASSERT_TRUE(parseLayout("tpa=2,dp=4,ep=8", l, error)) << error;
  EXPECT_EQ(l.gpus(), 8);
}

TEST(Layout, RejectsBadLayouts) {
  Layout l;
  std::string error;
  EXPECT_FALSE(parseLayout("kvp=0,tpa=8", l, error));
  EXPECT_EQ(error, "kvp: expected an integer from 1 to 4096, got '0'");
  // Past 2^63: quoted as typed, not clamped.
  EXPECT_FALSE(parseLayout("kvp=99999999999999999999", l, error));
  EXPECT_EQ(error, "kvp: expected an integer from 1 to 4096, got "
                   "'99999999999999999999'");
  EXPECT_FALSE(parseLayout("tpa=4097", l, error));
  EXPECT_EQ(error, "tpa: expected an integer from 1 to 4096, got '4097'");
  EXPECT_FALSE(parseLayout("kvp=4,tp=8", l, error));
  EXPECT_EQ(error, "unknown layout key 'tp' (expected kvp, tpa, tpf, ep, pp "
                   "or dp)");
  EXPECT_FALSE(parseLayout("kvp", l, error));
  EXPECT_EQ(error, "layout item 'kvp' is not key=value (in 'kvp')");
  EXPECT_FALSE(parseLayout("kvp=4,kvp=2", l, error));
  EXPECT_EQ(error, "layout key 'kvp' given twice");
  EXPECT_FALSE(parseLayout("kvp=4x", l, error));
  EXPECT_FALSE(parseLayout("", l, error));
}

TEST(Strategy, ParsesLists) {
  std::vector<Strategy> s;
  std::string error;
  ASSERT_TRUE(parseStrategyList("helix,tp,tp-pp,ep,kvp", s, error)) << error;
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0], Strategy::Helix);
  EXPECT_EQ(s[2], Strategy::TPPP);
  ASSERT_TRUE(parseStrategyList("baseline", s, error));
  EXPECT_EQ(s.size(), 4u);
  for (Strategy x : s)
    EXPECT_TRUE(isBaselineStrategy(x));
  ASSERT_TRUE(parseStrategyList("all", s, error));
  EXPECT_EQ(s.size(), 6u);
  ASSERT_TRUE(parseStrategyList("tp,helix,tp", s, error));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], Strategy::Helix); // report order
  EXPECT_FALSE(parseStrategyList("helix,medha", s, error));
  EXPECT_NE(error.find("unknown strategy 'medha'"), std::string::npos);
  EXPECT_FALSE(parseStrategyList("helix,,tp", s, error));
  for (Strategy x : allStrategies()) {
    Strategy y;
    ASSERT_TRUE(parseStrategy(stringifyStrategy(x).str(), y, error));
    EXPECT_EQ(x, y);
  }
}

TEST(Precision, BytesPerValue) {
  Precision p;
  EXPECT_DOUBLE_EQ(p.bytesPerValue(DType::FP4), 0.5);
  EXPECT_DOUBLE_EQ(p.bytesPerValue(DType::FP8), 1.0);
  EXPECT_DOUBLE_EQ(p.bytesPerValue(DType::BF16), 2.0);
  p.nvfp4BlockScales = true;
  EXPECT_DOUBLE_EQ(p.bytesPerValue(DType::FP4), 0.5625);
  p.weights = DType::FP8;
  EXPECT_DOUBLE_EQ(p.weightBytes(), 1.0);
  EXPECT_DOUBLE_EQ(p.kvBytes(), 0.5625);
  DType d;
  std::string error;
  EXPECT_TRUE(parseDType("BF16", d, error));
  EXPECT_EQ(d, DType::BF16);
  EXPECT_TRUE(parseDType("nvfp4", d, error));
  EXPECT_EQ(d, DType::FP4);
  EXPECT_FALSE(parseDType("int8", d, error));
  EXPECT_EQ(error, "unknown number format 'int8' (expected fp4, fp8 or bf16)");
}

} // namespace
