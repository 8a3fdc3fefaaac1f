//===- PrecisionTest.cpp - Precision options and their text ---------------===//

#include "helix/Cost/Precision.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

TEST(Precision, DescribeReadsBack) {
  for (DType w : {DType::FP4, DType::FP8, DType::BF16})
    for (DType kv : {DType::FP4, DType::FP8, DType::BF16})
      for (DType math : {DType::FP4, DType::FP8, DType::BF16})
        for (bool scales : {false, true}) {
          Precision p;
          p.weights = w;
          p.kvCache = kv;
          p.compute = math;
          p.nvfp4BlockScales = scales;
          Precision q;
          std::string error;
          ASSERT_TRUE(parsePrecision(p.describe(), q, error)) << error;
          EXPECT_EQ(q.describe(), p.describe());
        }
}

TEST(Precision, OneFormatNameSetsAllThree) {
  Precision p;
  std::string error;
  ASSERT_TRUE(parsePrecision("bf16", p, error)) << error;
  EXPECT_EQ(p.describe(), "bf16 weights, bf16 KV, bf16 math");
}

TEST(Precision, MalformedTextIsAnError) {
  Precision p;
  std::string error;
  for (const char *text :
       {"", "fp6", "fp4 weights, fp4 KV", "fp4 KV, fp4 weights, fp4 math",
        "fp4 weights, fp4 KV, fp4 math, extra"}) {
    EXPECT_FALSE(parsePrecision(text, p, error)) << text;
    EXPECT_NE(error.find("cannot read the precision"), std::string::npos);
  }
}

TEST(Precision, OptionsOverrideInOrder) {
  Precision p;
  p.kvCache = DType::FP8;
  std::string error;
  // Nothing given: unchanged.
  ASSERT_TRUE(applyDTypeOptions({}, "--", p, error)) << error;
  EXPECT_EQ(p.describe(), "fp4 weights, fp8 KV, fp4 math");
  // dtype sets all three, the per-role options win over it.
  ASSERT_TRUE(applyDTypeOptions({"bf16", "", "fp4", ""}, "--", p, error));
  EXPECT_EQ(p.describe(), "bf16 weights, fp4 KV, bf16 math");
  EXPECT_FALSE(applyDTypeOptions({"", "", "", "int8"}, "--", p, error));
  EXPECT_EQ(error, "--compute-dtype: unknown number format 'int8' (expected "
                   "fp4, fp8 or bf16)");
  EXPECT_FALSE(applyDTypeOptions({"fp2"}, "", p, error));
  EXPECT_EQ(error.rfind("dtype: ", 0), 0u) << error;
}

} // namespace
