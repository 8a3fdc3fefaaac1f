//===- VerifyPartition.cpp - helix-verify-partition -----------------------===//

#include "RankIR.h"

#include "helix/Transforms/Passes.h"

namespace mlir::helix {
#define GEN_PASS_DEF_HELIXVERIFYPARTITION
#include "helix/Transforms/Passes.h.inc"
} // namespace mlir::helix

namespace {
struct VerifyPartition
    : public mlir::helix::impl::HelixVerifyPartitionBase<VerifyPartition> {
  void runOnOperation() override {
    if (mlir::failed(::helix::sharding::verifyRankIR(getOperation(),
                                                     "helix-verify-partition")))
      signalPassFailure();
  }
};
} // namespace
