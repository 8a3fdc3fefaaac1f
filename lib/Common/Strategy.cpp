//===- Strategy.cpp - Strategy names, generated from TableGen -------------===//

#include "helix/Common/Strategy.h"

#include "llvm/ADT/StringSwitch.h"

#include "helix/Dialect/Helix/HelixStrategy.cpp.inc"
