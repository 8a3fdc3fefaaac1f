//===- HelixTypes.cpp - helix types ---------------------------------------===//

#include "helix/Dialect/Helix/HelixAttributes.h"
#include "helix/Dialect/Helix/HelixDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::helix;

#define GET_TYPEDEF_CLASSES
#include "helix/Dialect/Helix/HelixTypes.cpp.inc"

void HelixDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "helix/Dialect/Helix/HelixTypes.cpp.inc"
      >();
}

LogicalResult KVCacheType::verify(function_ref<InFlightDiagnostic()> emitError,
                                  int64_t heads, int64_t keyDim,
                                  int64_t valueDim, Type element, bool latent,
                                  int64_t window) {
  if (heads <= 0 || keyDim <= 0 || valueDim <= 0)
    return emitError() << "kv_cache 'heads', 'key_dim' and 'value_dim' must "
                          "be positive, got "
                       << heads << ", " << keyDim << ", " << valueDim;
  if (!isa<FloatType>(element))
    return emitError() << "kv_cache 'element' must be a float type, got "
                       << element;
  if (latent && heads != 1)
    return emitError() << "a latent (MLA) kv_cache has one head, got " << heads;
  if (latent && valueDim > keyDim)
    return emitError() << "a latent kv_cache's values are a prefix of its "
                          "keys: value_dim ("
                       << valueDim << ") must not exceed key_dim (" << keyDim
                       << ")";
  if (window < 0)
    return emitError() << "kv_cache 'window' must not be negative";
  return success();
}
