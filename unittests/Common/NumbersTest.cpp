//===- NumbersTest.cpp - Checked numbers from users and files -------------===//

#include "helix/Common/Numbers.h"
#include "helix/Common/JSONParse.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace helix;

TEST(Numbers, ParseIntegerInRange) {
  int64_t v = 0;
  std::string error;
  ASSERT_TRUE(parseInteger("--gpus", "64", 1, 4096, v, error)) << error;
  EXPECT_EQ(v, 64);
  ASSERT_TRUE(parseInteger("--gpus", "+7", 1, 4096, v, error)) << error;
  EXPECT_EQ(v, 7);
  ASSERT_TRUE(parseInteger("n", "-3", -5, 5, v, error)) << error;
  EXPECT_EQ(v, -3);
}

TEST(Numbers, ParseIntegerRefusesWithTheTextAsTyped) {
  int64_t v = 42;
  std::string error;
  for (const char *text :
       {"", "x", "4x", " 4", "4.0", "1e3", "--4", "+-4", "99999999999999999999",
        "9223372036854775808", "-9223372036854775809", "4097", "0"}) {
    EXPECT_FALSE(parseInteger("--gpus", text, 1, 4096, v, error)) << text;
    EXPECT_EQ(error, std::string("--gpus: expected an integer from 1 to "
                                 "4096, got '") +
                         text + "'");
    EXPECT_EQ(v, 42) << "unchanged on failure";
  }
  EXPECT_FALSE(parseInteger("n", "-1", 0, std::numeric_limits<int64_t>::max(),
                            v, error));
  EXPECT_EQ(error, "n: expected an integer at least 0, got '-1'");
}

TEST(Numbers, ParseRealRefusesNaNAndInfinity) {
  double d = 0;
  std::string error;
  const double big = std::numeric_limits<double>::max();
  ASSERT_TRUE(parseReal("--ttl-ms", "12.5", 0, big, d, error)) << error;
  EXPECT_EQ(d, 12.5);
  ASSERT_TRUE(parseReal("--ttl-ms", "1e3", 0, big, d, error)) << error;
  EXPECT_EQ(d, 1000);
  for (const char *text :
       {"nan", "NaN", "inf", "-inf", "infinity", "1e999", "-1", "", "1ms"}) {
    EXPECT_FALSE(parseReal("--ttl-ms", text, 0, big, d, error)) << text;
    EXPECT_EQ(error, std::string("--ttl-ms: expected a number at least 0, "
                                 "got '") +
                         text + "'");
  }
}

TEST(Numbers, CheckedValues) {
  std::string error;
  EXPECT_TRUE(checkInteger("gpus", 4096, 0, kMaxGPUs, error));
  EXPECT_FALSE(checkInteger("gpus", std::numeric_limits<int64_t>::max(), 0,
                            kMaxGPUs, error));
  EXPECT_EQ(error, "gpus: expected an integer from 0 to 4096, got "
                   "'9223372036854775807'");
  EXPECT_FALSE(checkReal("ttl-ms", std::nan(""), 0, 10, error));
  EXPECT_FALSE(checkReal("ttl-ms", INFINITY, 0, INFINITY, error));
  EXPECT_TRUE(checkReal("ttl-ms", 0, 0, 10, error));
}

TEST(Numbers, DoubleToIntegerNeverCastsOutOfRange) {
  int64_t v = 0;
  EXPECT_TRUE(doubleToInteger(72, 1, 4096, v));
  EXPECT_EQ(v, 72);
  EXPECT_FALSE(doubleToInteger(1e30, 1, 4096, v));
  EXPECT_FALSE(
      doubleToInteger(0x1p63, 0, std::numeric_limits<int64_t>::max(), v));
  EXPECT_FALSE(doubleToInteger(72.5, 1, 4096, v));
  EXPECT_FALSE(doubleToInteger(std::nan(""), 1, 4096, v));
  EXPECT_FALSE(
      doubleToInteger(-INFINITY, std::numeric_limits<int64_t>::min(), 0, v));
}

TEST(JSONParse, NumberBeyondADoubleNamesTheField) {
  nlohmann::json root;
  std::string error;
  ASSERT_TRUE(parseJSONChecked(R"({"a": {"b": [1, 2.5e300]}})", root, error));
  EXPECT_EQ(root["a"]["b"][1].get<double>(), 2.5e300);
  EXPECT_FALSE(parseJSONChecked(
      R"({"x": 1, "a": {"b": [1, {"c": 2}, {"value": 1e999}]}})", root, error));
  EXPECT_EQ(error, "field 'a.b[2].value': number 1e999 is outside the range "
                   "of a double (about 1.8e308)");
  EXPECT_FALSE(parseJSONChecked("[-1e400]", root, error));
  EXPECT_EQ(error, "field '[0]': number -1e400 is outside the range of a "
                   "double (about 1.8e308)");
  EXPECT_THROW(parseJSONChecked("{\"a\": }", root, error),
               nlohmann::json::parse_error);
  // A key with a newline is named as written, on one line (found by fuzz/,
  // helix-fuzz-hardware).
  EXPECT_FALSE(
      parseJSONChecked(R"({"mem\nory": {"v\"": 1e999}})", root, error));
  EXPECT_EQ(error, "field 'mem\\nory.v\\\"': number 1e999 is outside the "
                   "range of a double (about 1.8e308)");
  EXPECT_EQ(escapeJSONText("a\tb\x01\xc3\xa9"), "a\\tb\\u0001\xc3\xa9");
}
