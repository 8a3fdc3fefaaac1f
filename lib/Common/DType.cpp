//===- DType.cpp - Number-format names, generated from TableGen -----------===//

#include "helix/Common/DType.h"

#include "llvm/ADT/StringSwitch.h"

#include "helix/Dialect/Helix/HelixDType.cpp.inc"

std::string helix::describePrecision(DType weights, DType kvCache,
                                     DType compute, bool nvfp4BlockScales) {
  std::string s = stringifyDType(weights).str() + " weights, " +
                  stringifyDType(kvCache).str() + " KV, " +
                  stringifyDType(compute).str() + " math";
  if (nvfp4BlockScales)
    s += ", NVFP4 block scales";
  return s;
}
