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

LogicalResult RecurrentStateType::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t heads, int64_t rows,
    int64_t cols, int64_t convChannels, int64_t convKernel, Type element) {
  if (heads <= 0 || rows <= 0 || cols <= 0 || convChannels <= 0 ||
      convKernel <= 0)
    return emitError() << "recurrent_state 'heads', 'rows', 'cols', "
                          "'conv_channels' and 'conv_kernel' must be positive";
  if (!isa<FloatType>(element))
    return emitError() << "recurrent_state 'element' must be a float type, "
                          "got "
                       << element;
  return success();
}

LogicalResult
IndexCacheType::verify(function_ref<InFlightDiagnostic()> emitError,
                       int64_t headDim) {
  if (headDim <= 0)
    return emitError() << "index_cache 'head_dim' must be positive, got "
                       << headDim;
  return success();
}
