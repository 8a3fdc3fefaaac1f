//===- PlacementRopeTest.cpp - KV placement, RoPE scalings, prompts -------===//

#include "helix/Runtime/Codegen.h"
#include "helix/Runtime/DecodeIO.h"
#include "helix/Runtime/Error.h"
#include "helix/Runtime/KVCache.h"
#include "helix/Runtime/Rope.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace helix::rt;

namespace {

TEST(KVPlacement, RoundRobinBlocks) {
  // 16-token blocks over 3 KVP ranks, as in the paper.
  std::vector<KVPlacement> ranks;
  for (int r = 0; r < 3; ++r)
    ranks.emplace_back(3, r, 16);
  EXPECT_EQ(ranks[0].owner(0), 0);
  EXPECT_EQ(ranks[0].owner(15), 0);
  EXPECT_EQ(ranks[0].owner(16), 1);
  EXPECT_EQ(ranks[0].owner(47), 2);
  EXPECT_EQ(ranks[0].owner(48), 0);
  EXPECT_EQ(ranks[0].localSlot(48), 16);
  EXPECT_EQ(ranks[1].localSlot(48), -1);
  for (int64_t len = 0; len < 200; ++len) {
    int64_t total = 0;
    for (const KVPlacement &p : ranks) {
      total += p.localCount(len);
      // Slots are dense, in position order, and invert positionOfSlot.
      int64_t slot = 0;
      for (int64_t pos = 0; pos < len; ++pos)
        if (p.owner(pos) == p.kvpRank) {
          ASSERT_EQ(p.localSlot(pos), slot);
          ASSERT_EQ(p.positionOfSlot(slot), pos);
          ++slot;
        }
      ASSERT_EQ(slot, p.localCount(len));
    }
    ASSERT_EQ(total, len);
  }
  EXPECT_THROW(KVPlacement(2, 2, 16), Error);
}

TEST(KVPlacement, WindowsAreContiguousSlotRanges) {
  KVPlacement p(2, 1, 4);
  std::vector<int64_t> begin, end;
  p.attendRange({10, 30, 3}, /*window=*/7, begin, end);
  for (size_t r = 0; r < 3; ++r) {
    int64_t len = std::vector<int64_t>{10, 30, 3}[r];
    for (int64_t s = begin[r]; s < end[r]; ++s) {
      int64_t pos = p.positionOfSlot(s);
      EXPECT_TRUE(pos >= len - 7 && pos < len) << pos;
    }
    // Every owned position of the window is covered.
    for (int64_t pos = std::max<int64_t>(0, len - 7); pos < len; ++pos)
      if (p.owner(pos) == 1) {
        EXPECT_TRUE(p.localSlot(pos) >= begin[r] && p.localSlot(pos) < end[r]);
      }
  }
  EXPECT_EQ(begin[2], end[2]); // positions 0..2 all on rank 0
  EXPECT_EQ(p.appendSlots({4, 3, 12}), (std::vector<int64_t>{0, -1, 4}));
}

RopeConfig rope(const std::string &scaling, int64_t dim = 8) {
  RopeConfig c;
  c.theta = 10000;
  c.scaling = scaling;
  c.rotaryDim = dim;
  c.maxPosition = 100;
  return c;
}

TEST(Rope, DefaultLinearDynamic) {
  std::vector<float> d = Rope(rope("")).invFreq(1);
  ASSERT_EQ(d.size(), 4u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_FLOAT_EQ(d[i], std::pow(10000.0, -2.0 * i / 8));
  RopeConfig lin = rope("linear");
  lin.factor = 4;
  std::vector<float> l = Rope(lin).invFreq(1);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_FLOAT_EQ(l[i], d[i] / 4);
  RopeConfig dyn = rope("dynamic");
  dyn.factor = 2;
  Rope r(dyn);
  EXPECT_EQ(r.invFreq(100), d); // within max_position_embeddings
  double base = 10000 * std::pow(2.0 * 200 / 100 - 1, 8.0 / 6);
  std::vector<float> g = r.invFreq(200);
  EXPECT_FLOAT_EQ(g[1], std::pow(base, -2.0 / 8));
}

TEST(Rope, Llama3) {
  RopeConfig c = rope("llama3", 128);
  c.theta = 500000;
  c.factor = 8;
  c.lowFreqFactor = 1;
  c.highFreqFactor = 4;
  c.originalMaxPosition = 8192;
  std::vector<float> s = Rope(c).invFreq(1), d = Rope(rope("", 128)).invFreq(1);
  c.scaling = "";
  d = Rope(c).invFreq(1);
  EXPECT_FLOAT_EQ(s[0], d[0]);       // high frequency: unchanged
  EXPECT_FLOAT_EQ(s[63], d[63] / 8); // low frequency: divided by factor
  bool smoothed = false;             // some in between
  for (size_t i = 0; i < 64; ++i)
    smoothed |= s[i] < d[i] && s[i] > d[i] / 8;
  EXPECT_TRUE(smoothed);
}

TEST(Rope, YarnWithDeepSeekMscale) {
  RopeConfig c = rope("yarn", 64);
  c.factor = 40;
  c.originalMaxPosition = 4096;
  c.betaFast = 32;
  c.betaSlow = 1;
  c.mscale = 1.0;
  c.mscaleAllDim = 1.0;
  Rope r(c);
  // mscale == mscale_all_dim: the cos/sin factor is 1, and the softmax
  // scale grows by (0.1 ln 40 + 1)^2.
  EXPECT_FLOAT_EQ(r.attentionFactor(), 1.0f);
  double m = 0.1 * std::log(40.0) + 1;
  EXPECT_NEAR(r.softmaxScaleMultiplier(), m * m, 1e-12);
  c.mscale = c.mscaleAllDim = 0;
  Rope plain(c);
  EXPECT_FLOAT_EQ(plain.attentionFactor(), static_cast<float>(m));
  EXPECT_EQ(plain.softmaxScaleMultiplier(), 1.0);
  // Fastest dims extrapolate (unchanged), slowest interpolate (/ factor).
  std::vector<float> y = r.invFreq(1), d = Rope(rope("", 64)).invFreq(1);
  EXPECT_FLOAT_EQ(y[0], d[0]);
  EXPECT_FLOAT_EQ(y[31], d[31] / 40);
}

TEST(Rope, GeneratedCodeNamesTheFieldsItSets) {
  // Generated code builds a layer's RoPE as cg::rope(cg::RopeSpec()...):
  // each setter sets its field, the rest keep the shared defaults.
  RopeConfig c = cg::rope(cg::RopeSpec()
                              .theta(5e4)
                              .scaling("yarn")
                              .factor(40)
                              .originalMaxPosition(4096)
                              .lowFreqFactor(1)
                              .highFreqFactor(4)
                              .betaFast(16)
                              .betaSlow(2)
                              .mscale(0.5)
                              .mscaleAllDim(0.75)
                              .maxPosition(163840)
                              .rotaryDim(64)
                              .interleaved(true));
  EXPECT_EQ(c.theta, 5e4);
  EXPECT_EQ(c.scaling, "yarn");
  EXPECT_EQ(c.factor, 40);
  EXPECT_EQ(c.originalMaxPosition, 4096);
  EXPECT_EQ(c.lowFreqFactor, 1);
  EXPECT_EQ(c.highFreqFactor, 4);
  EXPECT_EQ(c.betaFast, 16);
  EXPECT_EQ(c.betaSlow, 2);
  EXPECT_EQ(c.mscale, 0.5);
  EXPECT_EQ(c.mscaleAllDim, 0.75);
  EXPECT_EQ(c.maxPosition, 163840);
  EXPECT_EQ(c.rotaryDim, 64);
  EXPECT_TRUE(c.interleaved);
  RopeConfig d = cg::rope(cg::RopeSpec());
  const ::helix::RopeParams defaults;
  EXPECT_EQ(d.theta, defaults.theta);
  EXPECT_EQ(d.scaling, "");
  EXPECT_EQ(d.betaFast, defaults.betaFast);
  EXPECT_EQ(d.maxPosition, 0);
  EXPECT_FALSE(d.interleaved);
}

TEST(Rope, Refused) {
  EXPECT_THROW(Rope(rope("longrope")), Error);
  EXPECT_THROW(Rope(rope("", 7)), Error);
}

TEST(DecodeIO, PromptsParseAndValidate) {
  Prompts p = parsePrompts("# comment\n1, 2,3\n\n 7\n4,5\r\n", "p.txt");
  EXPECT_EQ(p, (Prompts{{1, 2, 3}, {7}, {4, 5}}));
  auto err = [](const std::function<void()> &f) -> std::string {
    try {
      f();
    } catch (const Error &e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(err([] { parsePrompts("1,x\n", "p"); }),
            "p:1: token 2: \"x\" is not an integer token id");
  EXPECT_EQ(err([] { parsePrompts("1,,2\n", "p"); }),
            "p:1: token 2: empty field (expected a token id)");
  EXPECT_NE(err([] { parsePrompts("1,2,\n", "p"); }).find("trailing comma"),
            std::string::npos);
  EXPECT_NE(err([] { parsePrompts("# only\n", "p"); }).find("no prompts"),
            std::string::npos);
  EXPECT_EQ(err([&] { validatePrompts(p, 8, 2, 0, "p"); }), "");
  EXPECT_EQ(err([&] { validatePrompts(p, 7, 2, 0, "p"); }),
            "p: row 2, token 1: id 7 is out of range (vocabulary size 7)");
  EXPECT_NE(err([&] {
              validatePrompts({{-1}}, 7, 2, 0, "p");
            }).find("id -1 is out of range"),
            std::string::npos);
  // Row 1 needs 3 + 4 - 1 = 6 positions.
  EXPECT_EQ(err([&] { validatePrompts(p, 8, 4, 6, "p"); }), "");
  EXPECT_EQ(err([&] { validatePrompts(p, 8, 4, 5, "p"); }),
            "p: row 1: prompt of 3 tokens plus 4 generated needs a context "
            "of 6 positions, longer than the planned context of 5");
  // A planned context near INT64_MAX: the check itself must not overflow
  // (found by fuzz/, helix-fuzz-prompts).
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(err([&] { validatePrompts(p, 8, kMax, kMax, "p"); }),
            "p: row 1: prompt of 3 tokens plus 9223372036854775807 generated "
            "needs a context of 9223372036854775809 positions, longer than "
            "the planned context of 9223372036854775807");
  EXPECT_NE(err([&] { validatePrompts(p, 8, 0, 0, "p"); }).find("--steps"),
            std::string::npos);
}

TEST(DecodeIO, GreedySchedule) {
  GreedySchedule s({{1, 2, 3}, {7}}, 2);
  EXPECT_EQ(s.steps(), 4); // 3 + 2 - 1
  EXPECT_EQ(s.tokensAt(0), (std::vector<int64_t>{1, 7}));
  s.record(0, {10, 20}); // row 1 generates 20 at once
  EXPECT_EQ(s.tokensAt(1), (std::vector<int64_t>{2, 20}));
  s.record(1, {11, 21});
  EXPECT_EQ(s.tokensAt(2), (std::vector<int64_t>{3, 21}));
  s.record(2, {12, 22}); // row 0's first; row 1 is done, keeps decoding
  EXPECT_EQ(s.tokensAt(3), (std::vector<int64_t>{12, 22}));
  s.record(3, {13, 23});
  EXPECT_EQ(s.generated(),
            (std::vector<std::vector<int64_t>>{{12, 13}, {20, 21}}));
  EXPECT_EQ(s.sequences(), (std::vector<std::vector<int64_t>>{{1, 2, 3, 12, 13},
                                                              {7, 20, 21}}));
  EXPECT_EQ(joinIds({4, 5}), "4,5");
  EXPECT_EQ(logitsShapeLine(4, 2, 9, "f"),
            "logits: [4, 2, 9] float32 little-endian [steps, batch, vocab] "
            "-> f");
}

} // namespace
