//===- ResidentFormats.cpp - helix-resident-formats -----------------------===//
//
// Sets the element types of weights and KV shards in rank IR to the
// formats the plan keeps them in (helix/Dialect/Helix/WeightFormats.h).
//
//===----------------------------------------------------------------------===//

#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/Dialect/Helix/WeightFormats.h"
#include "helix/ModelIR/ModelIR.h"
#include "helix/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::helix {
#define GEN_PASS_DEF_HELIXRESIDENTFORMATS
#include "helix/Transforms/Passes.h.inc"
} // namespace mlir::helix

using namespace mlir;
using namespace mlir::helix;

namespace {

Type withElement(Type t, Type element) {
  if (auto shard = dyn_cast<KVShardType>(t))
    return KVShardType::get(t.getContext(), shard.getRows(), shard.getTokens(),
                            shard.getHeads(), shard.getKeyDim(),
                            shard.getValueDim(), element, shard.getLatent(),
                            shard.getWindow());
  return t;
}

struct ResidentFormats
    : public mlir::helix::impl::HelixResidentFormatsBase<ResidentFormats> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto plan = module->getAttrOfType<PlanAttr>(::mlir::helix::attrs::plan);
    if (!plan) {
      module.emitError("helix-resident-formats: the module has no helix.plan "
                       "(run it on rank IR from helix-partition)");
      return signalPassFailure();
    }
    auto model = module->getAttrOfType<ModelAttr>(::helix::kModelAttrName);
    Type planned = elementTypeOf(ctx, plan.getWeights());
    Type kv = elementTypeOf(ctx, plan.getKvCache());
    Type bf16 = BFloat16Type::get(ctx);
    // Weights change type below: each must be consumed by helix ops (through
    // helix.keep_if at most), not returned from or passed to a function
    // whose signature would keep the old type.
    WalkResult escapes = module.walk([&](Operation *op) {
      if (!isa<WeightOp, KeepIfOp>(op))
        return WalkResult::advance();
      for (Operation *user : op->getUsers())
        if (!isa_and_nonnull<HelixDialect>(user->getDialect())) {
          op->emitOpError()
              << "helix-resident-formats: the weight is used by '"
              << user->getName()
              << "'; a weight must be consumed by helix ops in the function "
                 "that loads it";
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (escapes.wasInterrupted())
      return signalPassFailure();
    module.walk([&](WeightOp w) {
      auto type = cast<RankedTensorType>(w.getType());
      Type element = takesPlannedFormat(w, model) ? planned
                     : isZeroCenteredNormWeight(w, model)
                         ? Type(Float32Type::get(ctx))
                         : bf16;
      w.getResult().setType(
          RankedTensorType::get(type.getShape(), element, type.getEncoding()));
    });
    // helix.keep_if passes a weight (a bias) through as it is.
    module.walk(
        [&](KeepIfOp k) { k.getResult().setType(k.getValue().getType()); });
    module.walk([&](Operation *op) {
      for (Value v : op->getResults())
        if (isa<KVShardType>(v.getType()))
          v.setType(withElement(v.getType(), kv));
      for (Region &r : op->getRegions())
        for (Block &b : r)
          for (BlockArgument a : b.getArguments())
            if (isa<KVShardType>(a.getType()))
              a.setType(withElement(a.getType(), kv));
    });
    module.walk([&](func::FuncOp f) {
      if (f.isExternal())
        return;
      SmallVector<Type> results(f.getResultTypes());
      for (Type &t : results)
        t = withElement(t, kv);
      f.setFunctionType(FunctionType::get(
          ctx, f.getBody().front().getArgumentTypes(), results));
    });
  }
};

} // namespace
