//===- HelixAttrVerifier.cpp - The dialect's discardable attributes -------===//
//
// The `helix.*` attributes the passes attach to ops they do not own, checked
// wherever they appear (HelixDialect::verifyOperationAttribute and the
// argument / result hooks):
//
//   on a function or module   helix.plan (#helix.plan), helix.model
//                             (#helix.model), helix.micro_batches (> 0),
//                             helix.mtp (#helix.mtp)
//   on SPMD rank IR           helix.stage (>= 0: a stage program, and what
//                             code generation makes of it), helix.layers
//                             (array<i64> of distinct layers >= 0, on a
//                             layer function), helix.draft_stage (>= 0:
//                             the MTP drafter of that stage)
//   on a priced op            helix.cost (#helix.cost)
//   during code generation    helix.weight_base (>= 0, on a layer call)
//   on a function argument    helix.name (non-empty string), helix.kv_layer
//                             (>= 0)
//   on a function result      helix.name (non-empty string)
//
// Any other `helix.*` name is an error, so that a misspelt attribute is not
// silently ignored.
//
//===----------------------------------------------------------------------===//

#include "helix/Dialect/Helix/HelixDialect.h"
#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::helix;

namespace {

using Check = LogicalResult (*)(Operation *op, NamedAttribute attr);

InFlightDiagnostic error(Operation *op, NamedAttribute attr) {
  return op->emitOpError() << "'" << attr.getName().getValue() << "' ";
}

template <typename AttrT>
LogicalResult requireKind(Operation *op, NamedAttribute attr,
                          StringRef expected) {
  if (isa<AttrT>(attr.getValue()))
    return success();
  return error(op, attr) << "must be " << expected << ", got "
                         << attr.getValue();
}

/// helix.plan / helix.model / helix.micro_batches describe a whole decode
/// step: a function, or the module of rank functions.
LogicalResult requireStepHolder(Operation *op, NamedAttribute attr) {
  if (isa<FunctionOpInterface, ModuleOp>(op))
    return success();
  return error(op, attr) << "belongs on a function or a module";
}

LogicalResult requireInteger(Operation *op, NamedAttribute attr, int64_t min,
                             StringRef what) {
  auto i = dyn_cast<IntegerAttr>(attr.getValue());
  if (i && i.getType().isSignlessInteger(64) && i.getInt() >= min)
    return success();
  return error(op, attr) << "must be " << what << " i64 integer, got "
                         << attr.getValue();
}

/// Non-negative entries, distinct when `distinct`.
LogicalResult requireIndices(Operation *op, NamedAttribute attr,
                             Attribute value, bool distinct) {
  auto array = dyn_cast<DenseI64ArrayAttr>(value);
  if (!array || array.empty())
    return error(op, attr) << "must be a non-empty array<i64>, got " << value;
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t v : array.asArrayRef()) {
    if (v < 0)
      return error(op, attr) << "entries must not be negative, got " << v;
    if (distinct && !seen.insert(v).second)
      return error(op, attr) << "lists " << v << " twice";
  }
  return success();
}

LogicalResult verifyPlan(Operation *op, NamedAttribute attr) {
  return failure(failed(requireKind<PlanAttr>(op, attr, "a #helix.plan")) ||
                 failed(requireStepHolder(op, attr)));
}

LogicalResult verifyMTP(Operation *op, NamedAttribute attr) {
  return failure(failed(requireKind<MTPAttr>(op, attr, "a #helix.mtp")) ||
                 failed(requireStepHolder(op, attr)));
}

LogicalResult verifyModel(Operation *op, NamedAttribute attr) {
  return failure(failed(requireKind<ModelAttr>(op, attr, "a #helix.model")) ||
                 failed(requireStepHolder(op, attr)));
}

LogicalResult verifyMicroBatches(Operation *op, NamedAttribute attr) {
  return failure(failed(requireInteger(op, attr, 1, "a positive")) ||
                 failed(requireStepHolder(op, attr)));
}

LogicalResult verifyNonNegative(Operation *op, NamedAttribute attr) {
  return requireInteger(op, attr, 0, "a non-negative");
}

LogicalResult verifyLayers(Operation *op, NamedAttribute attr) {
  if (failed(requireIndices(op, attr, attr.getValue(), /*distinct=*/true)))
    return failure();
  if (isa<FunctionOpInterface>(op))
    return success();
  return error(op, attr) << "belongs on a layer function";
}

LogicalResult verifyCost(Operation *op, NamedAttribute attr) {
  return requireKind<CostAttr>(op, attr, "a #helix.cost");
}

LogicalResult verifyName(Operation *op, NamedAttribute attr) {
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (name && !name.getValue().empty())
    return success();
  return error(op, attr) << "must be a non-empty string, got "
                         << attr.getValue();
}

LogicalResult verifyKVLayer(Operation *op, NamedAttribute attr) {
  return requireInteger(op, attr, 0, "a non-negative");
}

LogicalResult unknown(Operation *op, NamedAttribute attr, StringRef where) {
  return op->emitOpError() << "unknown helix attribute '"
                           << attr.getName().getValue() << "' " << where;
}

} // namespace

LogicalResult HelixDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  Check check =
      llvm::StringSwitch<Check>(attr.getName().getValue())
          .Case(::mlir::helix::attrs::plan, verifyPlan)
          .Case(::mlir::helix::attrs::model, verifyModel)
          .Case(::mlir::helix::attrs::mtp, verifyMTP)
          .Case(::mlir::helix::attrs::microBatches, verifyMicroBatches)
          .Case(::mlir::helix::attrs::stage, verifyNonNegative)
          .Case(::mlir::helix::attrs::draftStage, verifyNonNegative)
          .Case(::mlir::helix::attrs::layers, verifyLayers)
          .Case(::mlir::helix::attrs::weightBase, verifyNonNegative)
          .Case(::mlir::helix::attrs::cost, verifyCost)
          .Default(nullptr);
  if (!check)
    return unknown(op, attr, "on an operation");
  return check(op, attr);
}

LogicalResult HelixDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                     unsigned,
                                                     NamedAttribute attr) {
  Check check = llvm::StringSwitch<Check>(attr.getName().getValue())
                    .Case(::mlir::helix::attrs::name, verifyName)
                    .Case(::mlir::helix::attrs::kvLayer, verifyKVLayer)
                    .Default(nullptr);
  if (!check)
    return unknown(op, attr, "on an argument");
  return check(op, attr);
}

LogicalResult HelixDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                        unsigned,
                                                        NamedAttribute attr) {
  // A step's results beyond its logits are named (the verify step's
  // "hidden" state, which the MTP drafter reads).
  if (attr.getName().getValue() == ::mlir::helix::attrs::name)
    return verifyName(op, attr);
  return unknown(op, attr, "on a result");
}
