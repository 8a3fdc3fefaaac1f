//===- Passes.cpp - helix passes for the C API ----------------------------===//

#include "helix-c/Passes.h"

#include "helix/InitAllHelix.h"

#include <mutex>

void helixRegisterPasses(void) {
  // Registering a pass name twice is fatal in MLIR: once per process.
  static std::once_flag once;
  std::call_once(once, [] { helix::registerAllHelixPasses(); });
}
