//===- Format.h - Number formatting shared by the report writers -*- C++ -*-=//
//
// Private to lib/Plan.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_PLAN_FORMAT_H
#define HELIX_LIB_PLAN_FORMAT_H

#include <cstdint>
#include <string>

namespace helix {
namespace fmt {

/// 1000000 -> "1,000,000".
std::string count(int64_t v);
/// Up to 4 significant digits, no exponent for everyday magnitudes.
std::string number(double v);
/// Fixed decimals.
std::string fixed(double v, int decimals);
/// 1.234 -> "1.23x".
std::string ratio(double v);
/// Seconds as "12.3 ms" / "45.6 us".
std::string duration(double s);
/// Bytes as "12.3 GB" / "45.6 MB" (powers of 1000).
std::string bytes(double b);
/// 0.1234 -> "12.3%".
std::string percent(double fraction);
/// Escapes &, <, >, " for XML text and attributes.
std::string xml(const std::string &s);
/// Pads or truncates to `width` columns (left-aligned; right if `right`).
std::string pad(const std::string &s, size_t width, bool right = false);

} // namespace fmt
} // namespace helix

#endif // HELIX_LIB_PLAN_FORMAT_H
