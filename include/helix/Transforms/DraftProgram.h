//===- DraftProgram.h - The MTP drafter of a speculative program -*- C++
//-*-===//
//
// helix compile --mtp K: the verify step is the decode step with K + 1
// query rows per request (helix.mtp on the plan); the drafter is the
// model's MTP layer (buildDraftModelIR), planned with the same layout,
// sharded by the same pipeline and added to the verify step's rank IR as
// @draft_step_stage0 (`helix.draft_stage` = 0), which
// convert-helix-to-emitc registers as the stage program's draft pass
// (docs/speculative-decoding.md).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_TRANSFORMS_DRAFTPROGRAM_H
#define HELIX_TRANSFORMS_DRAFTPROGRAM_H

#include "helix/Model/ModelSpec.h"
#include "helix/Transforms/ApplyPlan.h"
#include "helix/Transforms/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"

namespace helix {

/// The drafter of `model` (spec.mtpLayers > 0) planned as `plan`,
/// sharded with `options`: rank IR whose stage program is the MTP layer's
/// draft pass (on the grids of the verify step's). Null after a
/// diagnostic.
mlir::OwningOpRef<mlir::ModuleOp>
buildDraftProgram(mlir::MLIRContext &context, const ModelSpec &model,
                  const PlanRecord &plan,
                  const ShardingPipelineOptions &options);

/// Moves the rank functions of `draft` (buildDraftProgram) into `program`
/// (the verify step's rank IR, on the same grids), renamed from
/// decode_step_stage* to draft_step_stage*. Fails with a diagnostic on
/// `program`.
mlir::LogicalResult mergeDraftProgram(mlir::ModuleOp program,
                                      mlir::ModuleOp draft);

} // namespace helix

#endif // HELIX_TRANSFORMS_DRAFTPROGRAM_H
