//===- ImportTestUtil.h - Helpers of the importer tests ---------*- C++ -*-===//

#ifndef HELIX_UNITTESTS_IMPORT_IMPORTTESTUTIL_H
#define HELIX_UNITTESTS_IMPORT_IMPORTTESTUTIL_H

#include "helix/Import/HFConfig.h"

#include <gtest/gtest.h>

#include <string>

namespace helix {
namespace testing {

inline std::string inputPath(const std::string &relative) {
  return std::string(HELIX_SOURCE_DIR) + "/test/Inputs/" + relative;
}

/// Imports test/Inputs/models/<file>, failing the test on error.
inline ModelSpec loadModel(const std::string &file,
                           const ImportOptions &opts = ImportOptions()) {
  ModelSpec m;
  std::string error;
  EXPECT_TRUE(importHFConfigFile(inputPath("models/" + file), opts, m, error))
      << error;
  EXPECT_EQ(error, "");
  return m;
}

/// |actual / expected - 1| <= relTol.
inline ::testing::AssertionResult near(double actual, double expected,
                                       double relTol) {
  double rel = actual / expected - 1.0;
  if (rel <= relTol && rel >= -relTol)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << actual << " is not within " << relTol * 100 << "% of " << expected
         << " (off by " << rel * 100 << "%)";
}

} // namespace testing
} // namespace helix

#endif // HELIX_UNITTESTS_IMPORT_IMPORTTESTUTIL_H
