//===- Precision.cpp - Number formats of a decode workload ----------------===//

#include "helix/Cost/Precision.h"

#include <algorithm>
#include <cctype>

namespace helix {

const char *stringifyDType(DType dtype) {
  switch (dtype) {
  case DType::FP4:
    return "fp4";
  case DType::FP8:
    return "fp8";
  case DType::BF16:
    return "bf16";
  }
  return "unknown";
}

bool parseDType(const std::string &text, DType &dtype, std::string &error) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (t == "fp4" || t == "nvfp4") {
    dtype = DType::FP4;
    return true;
  }
  if (t == "fp8") {
    dtype = DType::FP8;
    return true;
  }
  if (t == "bf16") {
    dtype = DType::BF16;
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
  std::string s = std::string(stringifyDType(weights)) + " weights, " +
                  stringifyDType(kvCache) + " KV, " + stringifyDType(compute) +
                  " math";
  if (nvfp4BlockScales)
    s += ", NVFP4 block scales";
  return s;
}

} // namespace helix
