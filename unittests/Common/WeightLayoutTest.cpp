//===- WeightLayoutTest.cpp - One WeightLayout for lowering and runtime ---===//
//
// The EmitC lowering writes a WeightLayout into each generated load call and
// the runtime's loadWeight interprets it: both must use the one enum of
// helix/Common/WeightLayout.h, with the values generated code passes.
//
//===----------------------------------------------------------------------===//

#include "helix/Common/WeightLayout.h"
#include "helix/Runtime/Codegen.h"

#include <gtest/gtest.h>

#include <type_traits>

namespace helix {
namespace {

TEST(WeightLayout, RuntimeUsesTheSharedEnum) {
  EXPECT_TRUE((std::is_same_v<rt::cg::WeightLayout, WeightLayout>));
}

TEST(WeightLayout, ValuesOfGeneratedCode) {
  // Generated load calls pass these integers; changing them breaks
  // generated projects compiled against another runtime.
  EXPECT_EQ(static_cast<int>(WeightLayout::Plain), 0);
  EXPECT_EQ(static_cast<int>(WeightLayout::TransposeLast2), 1);
  EXPECT_EQ(static_cast<int>(WeightLayout::SplitGateUpTransposed), 2);
  EXPECT_EQ(static_cast<int>(WeightLayout::SplitGateUp), 3);
  EXPECT_EQ(static_cast<int>(WeightLayout::PlusOne), 4);
}

} // namespace
} // namespace helix
