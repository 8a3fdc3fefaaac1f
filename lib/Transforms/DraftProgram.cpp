//===- DraftProgram.cpp - The MTP drafter of a speculative program --------===//

#include "helix/Transforms/DraftProgram.h"

#include "RankIR.h"

#include "helix/ModelIR/ModelIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace helix {

OwningOpRef<ModuleOp>
buildDraftProgram(MLIRContext &context, const ModelSpec &model,
                  const PlanRecord &plan,
                  const ShardingPipelineOptions &options) {
  if (model.mtpLayers <= 0) {
    mlir::emitError(UnknownLoc::get(&context))
        << "the model has no multi-token-prediction layer to draft with "
           "(num_nextn_predict_layers)";
    return nullptr;
  }
  OwningOpRef<ModuleOp> draft = buildDraftModelIR(context, model);
  applyPlan(findDecodeStep(*draft), plan);
  PassManager pm(&context);
  buildShardingPipeline(pm, options);
  if (failed(pm.run(*draft)))
    return nullptr;
  return draft;
}

LogicalResult mergeDraftProgram(ModuleOp program, ModuleOp draft) {
  MLIRContext *ctx = program.getContext();
  // The same grids as the verify step's.
  for (auto grid : draft.getOps<shard::GridOp>()) {
    auto mine = program.lookupSymbol<shard::GridOp>(grid.getSymName());
    if (!mine || mine.getShape() != grid.getShape())
      return program.emitError() << "the drafter's grid @" << grid.getSymName()
                                 << " differs from the verify step's";
  }
  // decode_step_stage* -> draft_step_stage*, then into the program.
  SmallVector<func::FuncOp> funcs(draft.getOps<func::FuncOp>());
  for (func::FuncOp f : funcs) {
    StringRef name = f.getSymName();
    if (!name.starts_with(sharding::kStageFuncPrefix))
      return f.emitError() << "unexpected function in the drafter's rank IR";
    std::string renamed =
        sharding::kDraftFuncPrefix +
        name.drop_front(StringRef(sharding::kStageFuncPrefix).size()).str();
    if (failed(SymbolTable::replaceAllSymbolUses(
            f, StringAttr::get(ctx, renamed), draft)))
      return failure();
    f.setSymName(renamed);
    if (auto stage =
            f->getAttrOfType<IntegerAttr>(::mlir::helix::attrs::stage)) {
      f->removeAttr(::mlir::helix::attrs::stage);
      f->setAttr(::mlir::helix::attrs::draftStage, stage);
    }
  }
  for (func::FuncOp f : funcs)
    f->moveBefore(program.getBody(), program.getBody()->end());
  return success();
}

} // namespace helix
