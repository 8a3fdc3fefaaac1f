//===- Numbers.h - Checked numbers from users and files ---------*- C++ -*-===//
//
// The limits helix accepts on sizes (docs/robustness.md, "Numbers and
// limits") and the one way flags, pass options and files turn text into
// numbers: overflow-safe, NaN and infinity refused, and every error one line
// naming the flag or field, the value as typed and the allowed range.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_NUMBERS_H
#define HELIX_COMMON_NUMBERS_H

#include <cstdint>
#include <string>
#include <string_view>

namespace helix {

/// GPUs in one plan or search. The exhaustive search is quadratic in the
/// GPU count: 4096 takes about 2 s on 2 cores for the default model and
/// strategies (docs/robustness.md).
constexpr int64_t kMaxGPUs = 4096;
/// KV context length in tokens (2^40, the importer's bound on config sizes):
/// token counts times per-token bytes stay far inside a double's exact
/// integers and int64.
constexpr int64_t kMaxContext = int64_t(1) << 40;
/// Concurrent requests (2^20); the plan's batch sweep stops at 65536.
constexpr int64_t kMaxBatch = int64_t(1) << 20;

/// "from MIN to MAX" (or "at least MIN" when max is INT64_MAX).
std::string describeRange(int64_t min, int64_t max);

/// Parses `text` (decimal, an optional sign, nothing else) into `out` if it
/// lies in [min, max]. Otherwise sets `error` to
/// "NAME: expected an integer from MIN to MAX, got 'TEXT'" and returns false.
bool parseInteger(const std::string &name, const std::string &text, int64_t min,
                  int64_t max, int64_t &out, std::string &error);

/// Parses `text` as a finite decimal number in [min, max] (NaN, infinity and
/// numbers beyond a double refused), with the same error wording.
bool parseReal(const std::string &name, const std::string &text, double min,
               double max, double &out, std::string &error);

/// The message of a failed checkInteger.
std::string integerRangeError(std::string_view name, int64_t value, int64_t min,
                              int64_t max);

/// The range check of an integer already parsed (a pass option), worded like
/// parseInteger. (Inline: the search checks some 10^6 widths.)
inline bool checkInteger(std::string_view name, int64_t value, int64_t min,
                         int64_t max, std::string &error) {
  if (value >= min && value <= max)
    return true;
  error = integerRangeError(name, value, min, max);
  return false;
}

/// The range check of a real already parsed: finite and in [min, max].
bool checkReal(std::string_view name, double value, double min, double max,
               std::string &error);

/// `value` as an integer if it is one (finite, no fraction) in [min, max];
/// false otherwise (never a cast out of range).
bool doubleToInteger(double value, int64_t min, int64_t max, int64_t &out);

} // namespace helix

#endif // HELIX_COMMON_NUMBERS_H
