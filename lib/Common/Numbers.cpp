//===- Numbers.cpp - Checked numbers from users and files -----------------===//

#include "helix/Common/Numbers.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

namespace helix {

static std::string realText(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::string describeRange(int64_t min, int64_t max) {
  if (max == std::numeric_limits<int64_t>::max())
    return "at least " + std::to_string(min);
  return "from " + std::to_string(min) + " to " + std::to_string(max);
}

static std::string describeRealRange(double min, double max) {
  if (max == std::numeric_limits<double>::max())
    return "at least " + realText(min);
  return "from " + realText(min) + " to " + realText(max);
}

/// The text without one leading '+' (from_chars takes '-' only).
static const char *skipPlus(const std::string &text) {
  return text.c_str() + (!text.empty() && text[0] == '+' ? 1 : 0);
}

bool parseInteger(const std::string &name, const std::string &text, int64_t min,
                  int64_t max, int64_t &out, std::string &error) {
  const char *begin = skipPlus(text), *end = text.c_str() + text.size();
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(begin, end, v, 10);
  if (begin == end || ec != std::errc() || ptr != end || v < min || v > max) {
    error = name + ": expected an integer " + describeRange(min, max) +
            ", got '" + text + "'";
    return false;
  }
  out = v;
  return true;
}

bool parseReal(const std::string &name, const std::string &text, double min,
               double max, double &out, std::string &error) {
  const char *begin = skipPlus(text), *end = text.c_str() + text.size();
  double v = 0;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (begin == end || ec != std::errc() || ptr != end || !std::isfinite(v) ||
      v < min || v > max) {
    error = name + ": expected a number " + describeRealRange(min, max) +
            ", got '" + text + "'";
    return false;
  }
  out = v;
  return true;
}

std::string integerRangeError(std::string_view name, int64_t value, int64_t min,
                              int64_t max) {
  return std::string(name) + ": expected an integer " +
         describeRange(min, max) + ", got '" + std::to_string(value) + "'";
}

bool checkReal(std::string_view name, double value, double min, double max,
               std::string &error) {
  if (std::isfinite(value) && value >= min && value <= max)
    return true;
  error = std::string(name) + ": expected a number " +
          describeRealRange(min, max) + ", got '" + realText(value) + "'";
  return false;
}

bool doubleToInteger(double value, int64_t min, int64_t max, int64_t &out) {
  // Compare as doubles first (a NaN fails every comparison), and stay
  // below 2^63 so that the cast is defined.
  if (!(value >= double(min) && value <= double(max)) ||
      !(value < 0x1p63 && value >= -0x1p63) || value != std::floor(value))
    return false;
  out = int64_t(value);
  return out >= min && out <= max;
}

} // namespace helix
