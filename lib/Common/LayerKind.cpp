//===- LayerKind.cpp - Layer-kind names, generated from TableGen ----------===//

#include "helix/Common/LayerKind.h"

#include "llvm/ADT/StringSwitch.h"

#include "helix/Dialect/Helix/HelixLayerKind.cpp.inc"
