//===- Precision.cpp - Number formats of a decode workload ----------------===//

#include "helix/Cost/Precision.h"

#include <algorithm>
#include <cctype>

namespace helix {

bool parseDType(const std::string &text, DType &dtype, std::string &error) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (t == "nvfp4")
    t = "fp4";
  if (std::optional<DType> d = symbolizeDType(t)) {
    dtype = *d;
    return true;
  }
  error = "unknown number format '" + text + "' (expected fp4, fp8 or bf16)";
  return false;
}

double Precision::bytesPerValue(DType dtype) const {
  switch (dtype) {
  case DType::FP4:
    return nvfp4BlockScales ? 0.5625 : 0.5;
  case DType::FP8:
    return 1.0;
  case DType::BF16:
    return 2.0;
  }
  return 2.0;
}

std::string Precision::describe() const {
  return describePrecision(weights, kvCache, compute, nvfp4BlockScales);
}

} // namespace helix
