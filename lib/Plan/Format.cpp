//===- Format.cpp - Number formatting shared by the report writers --------===//

#include "Format.h"

#include <cmath>
#include <cstdio>

namespace helix {
namespace fmt {

std::string count(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string number(double v) {
  char buf[64];
  double a = std::fabs(v);
  if (a != 0 && (a >= 1e6 || a < 1e-3))
    std::snprintf(buf, sizeof(buf), "%.3g", v);
  else if (a >= 100)
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  else if (a >= 10)
    std::snprintf(buf, sizeof(buf), "%.1f", v);
  else
    std::snprintf(buf, sizeof(buf), "%.2f", v);
  std::string s = buf;
  // "20.0" -> "20", "1.50" -> "1.5"
  if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
    while (s.back() == '0')
      s.pop_back();
    if (s.back() == '.')
      s.pop_back();
  }
  return s;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

std::string ratio(double v) { return fixed(v, v >= 10 ? 1 : 2) + "x"; }

std::string duration(double s) {
  if (s >= 1)
    return fixed(s, 2) + " s";
  if (s >= 1e-3)
    return fixed(s * 1e3, s >= 0.1 ? 1 : 2) + " ms";
  return fixed(s * 1e6, 1) + " us";
}

std::string bytes(double b) {
  if (b >= 1e9)
    return fixed(b / 1e9, 1) + " GB";
  if (b >= 1e6)
    return fixed(b / 1e6, 1) + " MB";
  if (b >= 1e3)
    return fixed(b / 1e3, 1) + " kB";
  return fixed(b, 0) + " B";
}

std::string percent(double f) { return fixed(f * 100, 1) + "%"; }

std::string xml(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string pad(const std::string &s, size_t width, bool right) {
  if (s.size() >= width)
    return s;
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

} // namespace fmt
} // namespace helix
