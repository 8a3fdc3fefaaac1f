//===- WeightFormat.h - Resident and checkpoint weight formats --*- C++ -*-===//
//
// The number formats a program keeps a weight in and the formats
// checkpoints store quantized weights in (docs/quantization.md), shared by
// the EmitC lowering (which writes them into the generated load calls) and
// the runtime (which loads and converts accordingly). Header-only and
// dependency-free.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_WEIGHTFORMAT_H
#define HELIX_COMMON_WEIGHTFORMAT_H

#include <map>
#include <regex>
#include <string>
#include <vector>

namespace helix {

/// What a weight is kept as in the program: the element type of its
/// helix.weight in rank IR. FP4 is NVFP4, or MXFP4 as an MXFP4 checkpoint
/// stores it. The values are what generated code passes.
enum class ResidentFormat : int { F32 = 0, BF16 = 1, FP8 = 2, FP4 = 3 };

inline const char *residentFormatName(ResidentFormat f) {
  switch (f) {
  case ResidentFormat::F32:
    return "f32";
  case ResidentFormat::BF16:
    return "bf16";
  case ResidentFormat::FP8:
    return "fp8";
  case ResidentFormat::FP4:
    return "fp4";
  }
  return "?";
}

/// How a checkpoint stores its quantized linear weights; the names are
/// those of helix-make-checkpoint --format. The values are what generated
/// code passes.
enum class CheckpointFormat : int {
  BF16 = 0,      // unquantized (BF16, F16 or F32 tensors)
  FP8Block = 1,  // E4M3 + weight_scale_inv per 128x128 (DeepSeek-V3/R1)
  FP8Tensor = 2, // E4M3 + weight_scale per tensor (ModelOpt FP8)
  NVFP4 = 3,     // packed E2M1 + E4M3 per 16 + weight_scale_2 (ModelOpt)
  MXFP4 = 4,     // *_blocks E2M1 + *_scales E8M0 per 32 (gpt-oss)
};

inline const char *checkpointFormatName(CheckpointFormat f) {
  switch (f) {
  case CheckpointFormat::BF16:
    return "bf16";
  case CheckpointFormat::FP8Block:
    return "fp8-block";
  case CheckpointFormat::FP8Tensor:
    return "fp8-tensor";
  case CheckpointFormat::NVFP4:
    return "nvfp4";
  case CheckpointFormat::MXFP4:
    return "mxfp4";
  }
  return "?";
}

/// "bf16", "fp8-block", "fp8-tensor", "nvfp4", "mxfp4"; false otherwise.
inline bool parseCheckpointFormat(const char *name, CheckpointFormat &f) {
  for (int i = 0; i <= static_cast<int>(CheckpointFormat::MXFP4); ++i) {
    const char *n = checkpointFormatName(static_cast<CheckpointFormat>(i));
    const char *a = name, *b = n;
    while (*a && *a == *b)
      ++a, ++b;
    if (*a == 0 && *b == 0) {
      f = static_cast<CheckpointFormat>(i);
      return true;
    }
  }
  return false;
}

namespace detail {
/// Glob match where `*` matches any text.
inline bool globMatch(const char *p, const char *t) {
  if (*p == 0)
    return *t == 0;
  if (*p == '*') {
    for (const char *u = t;; ++u) {
      if (globMatch(p + 1, u))
        return true;
      if (*u == 0)
        return false;
    }
  }
  return *t != 0 && *p == *t && globMatch(p + 1, t + 1);
}
/// Whether the regular expression `re` matches all of `name`, remembered
/// per thread (the planner asks the same few questions for every layout it
/// prices, and compiling a std::regex costs more than pricing one). A
/// pattern std::regex cannot read matches nothing; the importer refuses
/// such configs (lib/Import/CommonFields.cpp).
inline bool regexMatches(const std::string &re, const std::string &name) {
  thread_local std::map<std::pair<std::string, std::string>, bool> known;
  auto key = std::make_pair(re, name);
  auto it = known.find(key);
  if (it != known.end())
    return it->second;
  bool match = false;
  try {
    match = std::regex_match(name, std::regex(re));
  } catch (const std::regex_error &) {
  }
  return known[key] = match;
}
} // namespace detail

/// Whether `name` (a tensor or module) lies in a module a checkpoint keeps
/// unquantized: a pattern (`*` matches any text) names a module, so it
/// matches the module and everything in it ("<module>.*").
/// compressed-tensors writes regular expressions as "re:<regex>", matched
/// against the whole module name.
inline bool isExcludedModule(const std::string &name,
                             const std::vector<std::string> &patterns) {
  for (const std::string &p : patterns) {
    if (p.rfind("re:", 0) == 0) {
      if (detail::regexMatches(p.substr(3), name))
        return true;
      continue;
    }
    if (detail::globMatch(p.c_str(), name.c_str()) ||
        detail::globMatch((p + ".*").c_str(), name.c_str()))
      return true;
  }
  return false;
}

} // namespace helix

#endif // HELIX_COMMON_WEIGHTFORMAT_H
