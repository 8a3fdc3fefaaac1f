//===- HelixToEmitC.cpp - convert-helix-to-emitc --------------------------===//
//
// The pass: reads the module's grids and model, builds the stage programs'
// skeletons (RankPrograms.cpp), converts every rank-IR op to a call of its
// runtime adapter, then drops what C++ does not need (the grid symbols).
//
//===----------------------------------------------------------------------===//

#include "Patterns.h"

#include "helix/Conversion/Passes.h"
#include "helix/Dialect/Helix/HelixOps.h"

#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::helix {
#define GEN_PASS_DEF_CONVERTHELIXTOEMITC
#include "helix/Conversion/Passes.h.inc"
} // namespace mlir::helix

using namespace mlir;
using namespace mlir::helix;

namespace helix::emitc_codegen {

FailureOr<ModuleFacts> ModuleFacts::read(ModuleOp module) {
  ModuleFacts f;
  for (auto grid : module.getOps<shard::GridOp>()) {
    llvm::SmallVector<int64_t> shape(grid.getShape());
    int64_t n = 1;
    for (int64_t s : shape)
      n *= s;
    if (f.devices && n != f.devices)
      return grid.emitError("convert-helix-to-emitc: grids cover different "
                            "numbers of devices"),
             failure();
    f.devices = n;
    f.grids[grid.getSymName()] = shape;
  }
  if (f.grids.empty()) {
    module.emitError("convert-helix-to-emitc: expects rank IR (the output of "
                     "helix-partition): the module has no shard.grid");
    return failure();
  }
  auto model = module->getAttrOfType<ModelAttr>(::mlir::helix::attrs::model);
  if (!model) {
    module.emitError("convert-helix-to-emitc: the module has no helix.model");
    return failure();
  }
  f.modelType = model.getModelType().str();
  f.vocab = model.getVocab();
  f.maxPosition = model.getMaxPosition();
  if (auto plan = module->getAttrOfType<PlanAttr>(::mlir::helix::attrs::plan))
    f.context = plan.getContextLength();
  bool haveEps = false;
  module.walk([&](Operation *op) {
    if (auto norm = dyn_cast<NormRowsOp>(op); norm && !haveEps) {
      f.normEps = norm.getEps().convertToDouble();
      haveEps = true;
    } else if (auto qkv = dyn_cast<QKVOp>(op)) {
      f.layerRope[qkv.getLayer()] = qkv.getRope();
    } else if (auto mla = dyn_cast<MLAQKVOp>(op)) {
      f.layerRope[mla.getLayer()] = mla.getRope();
    }
  });
  return f;
}

HelixTypeConverter::HelixTypeConverter(MLIRContext *ctx) {
  addConversion([](Type t) -> std::optional<Type> {
    if (isa<emitc::OpaqueType, emitc::PointerType, IndexType, IntegerType,
            FloatType>(t))
      return t;
    return std::nullopt;
  });
  addConversion([ctx](RankedTensorType t) -> Type {
    return t.getElementType().isInteger(64) ? intsType(ctx) : tensorType(ctx);
  });
  addConversion([ctx](KVShardType) -> Type { return cacheType(ctx); });
  addConversion([ctx](StateShardType) -> Type { return tensorType(ctx); });
  addConversion([ctx](AsyncType) -> Type { return asyncType(ctx); });
}

Value contextOf(Operation *op) {
  return op->getParentOfType<emitc::FuncOp>().getArgument(0);
}

Value stateOf(Operation *op) {
  return op->getParentOfType<emitc::FuncOp>().getArgument(1);
}

} // namespace helix::emitc_codegen

namespace {

using namespace ::helix::emitc_codegen;

struct ConvertHelixToEmitCPass
    : public mlir::helix::impl::ConvertHelixToEmitCBase<
          ConvertHelixToEmitCPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    FailureOr<ModuleFacts> facts = ModuleFacts::read(module);
    if (failed(facts) || failed(buildRankPrograms(module, *facts, programName)))
      return signalPassFailure();

    HelixTypeConverter converter(ctx);
    ConversionTarget target(*ctx);
    target.addLegalDialect<emitc::EmitCDialect>();
    target.addLegalOp<ModuleOp, shard::GridOp>();
    target.addIllegalDialect<HelixDialect, tensor::TensorDialect,
                             func::FuncDialect, arith::ArithDialect>();
    target.addIllegalOp<shard::ProcessMultiIndexOp, shard::AllReduceOp,
                        shard::AllGatherOp, shard::AllToAllOp,
                        shard::ReduceScatterOp, shard::AllSliceOp,
                        shard::SendOp, shard::RecvOp>();
    RewritePatternSet patterns(ctx);
    populateComputePatterns(patterns, converter, *facts);
    populateAttentionPatterns(patterns, converter, *facts);
    populateRecurrentPatterns(patterns, converter, *facts);
    populateCollectivePatterns(patterns, converter, *facts);
    populateIndexPatterns(patterns, converter, *facts);
    populateTensorPatterns(patterns, converter);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    SmallVector<UnrealizedConversionCastOp> casts;
    module.walk([&](UnrealizedConversionCastOp c) { casts.push_back(c); });
    reconcileUnrealizedCasts(casts);
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      grid.erase();
    WalkResult left = module.walk([&](Operation *op) {
      if (isa<ModuleOp>(op) || isa<emitc::EmitCDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitOpError("convert-helix-to-emitc: not lowered to EmitC");
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
