//===- Passes.cpp - helix pass registration -------------------------------===//

#include "helix/Transforms/Passes.h"
