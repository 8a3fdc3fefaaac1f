//===- Precision.cpp - Number formats of a decode workload ----------------===//

#include "helix/Cost/Precision.h"

#include <algorithm>
#include <cctype>
#include <vector>

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

bool applyDTypeOptions(const DTypeOptions &options, const std::string &prefix,
                       Precision &precision, std::string &error) {
  auto apply = [&](const std::string &text, const char *name, DType &out) {
    if (text.empty() || parseDType(text, out, error))
      return true;
    error = prefix + name + ": " + error;
    return false;
  };
  DType all;
  if (!options.all.empty()) {
    if (!apply(options.all, "dtype", all))
      return false;
    precision.weights = precision.kvCache = precision.compute = all;
  }
  return apply(options.weights, "weights-dtype", precision.weights) &&
         apply(options.kvCache, "kv-dtype", precision.kvCache) &&
         apply(options.compute, "compute-dtype", precision.compute);
}

bool parsePrecision(const std::string &text, Precision &precision,
                    std::string &error) {
  Precision p;
  DType all;
  std::string ignored;
  if (parseDType(text, all, ignored)) {
    p.weights = p.kvCache = p.compute = all;
    precision = p;
    return true;
  }
  // "<w> weights, <kv> KV, <math> math[, NVFP4 block scales]".
  std::vector<std::string> parts;
  for (size_t pos = 0;;) {
    size_t comma = text.find(", ", pos);
    parts.push_back(text.substr(pos, comma - pos));
    if (comma == std::string::npos)
      break;
    pos = comma + 2;
  }
  if (parts.size() == 4 && parts[3] == "NVFP4 block scales") {
    p.nvfp4BlockScales = true;
    parts.pop_back();
  }
  const char *roles[3] = {" weights", " KV", " math"};
  DType *fields[3] = {&p.weights, &p.kvCache, &p.compute};
  bool ok = parts.size() == 3;
  for (size_t i = 0; ok && i < 3; ++i) {
    const std::string &part = parts[i];
    size_t n = std::string(roles[i]).size();
    ok = part.size() > n && part.compare(part.size() - n, n, roles[i]) == 0 &&
         parseDType(part.substr(0, part.size() - n), *fields[i], ignored);
  }
  if (!ok) {
    error = "cannot read the precision '" + text +
            "' (expected e.g. 'fp4 weights, fp8 KV, bf16 math' or 'fp8')";
    return false;
  }
  precision = p;
  return true;
}

} // namespace helix
