//===- ModulePatternsTest.cpp - Glob and "re:" module patterns ------------===//

#include "helix/Common/ModulePatterns.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

TEST(ModulePatterns, GlobsNameAModuleAndWhatIsInIt) {
  std::vector<std::string> p = {"model.layers.*.self_attn", "lm_head"};
  EXPECT_TRUE(isExcludedModule("model.layers.3.self_attn", p));
  EXPECT_TRUE(isExcludedModule("model.layers.3.self_attn.q_proj", p));
  EXPECT_TRUE(isExcludedModule("lm_head", p));
  EXPECT_FALSE(isExcludedModule("model.layers.3.mlp", p));
  EXPECT_FALSE(isExcludedModule("lm_head_extra", p));
}

TEST(ModulePatterns, CompressedTensorsRegexesMatchTheWholeName) {
  // Kimi-K3's quantization_config.ignore.
  std::vector<std::string> p = {"re:.*self_attn.*",
                                "re:.*mlp\\.(gate|up|gate_up|down)_proj.*",
                                "re:.*lm_head.*"};
  EXPECT_TRUE(isExcludedModule("model.layers.0.self_attn", p));
  EXPECT_TRUE(isExcludedModule("model.layers.0.mlp.gate_up_proj", p));
  EXPECT_TRUE(isExcludedModule("model.layers.0.mlp.down_proj.weight", p));
  EXPECT_FALSE(isExcludedModule("model.layers.0.mlp.experts.3.down_proj", p));
  EXPECT_FALSE(isExcludedModule("model.layers.0.mlp", p));
  // Whole-name: a regex matching a prefix only does not match.
  EXPECT_FALSE(isExcludedModule("model.layers.0.mlp", {"re:model"}));
  // Classes, repetition, escapes.
  EXPECT_TRUE(
      regexFullMatch("model\\.layers\\.[0-9]+\\.mlp", "model.layers.12.mlp"));
  EXPECT_FALSE(
      regexFullMatch("model\\.layers\\.[0-9]+\\.mlp", "model.layers.x.mlp"));
  EXPECT_TRUE(regexFullMatch("a(b|cd)?e", "ae"));
  EXPECT_TRUE(regexFullMatch("a(b|cd)?e", "acde"));
  EXPECT_FALSE(regexFullMatch("a(b|cd)?e", "abcde"));
  EXPECT_TRUE(regexFullMatch("[^.]*\\d\\w", "abc7_"));
  EXPECT_TRUE(regexFullMatch("(a*)*b", "aaab")); // no endless empty loop
  EXPECT_FALSE(regexFullMatch("(a*)*b", "aaac"));
}

TEST(ModulePatterns, UnreadableRegexesAreRefusedAndMatchNothing) {
  std::string why;
  EXPECT_FALSE(checkModuleRegex("(unclosed", why));
  EXPECT_NE(why.find("missing ')'"), std::string::npos);
  EXPECT_FALSE(checkModuleRegex("*x", why));
  EXPECT_FALSE(checkModuleRegex("a{2}", why));
  EXPECT_FALSE(isExcludedModule("anything", {"re:(unclosed"}));
  EXPECT_TRUE(checkModuleRegex(".*mlp\\.(gate|up)_proj.*", why)) << why;
}

} // namespace
