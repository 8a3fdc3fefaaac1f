//===- Pipeline.cpp - helix-sharding-pipeline -----------------------------===//

#include "helix/Transforms/Pipeline.h"
#include "helix/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

namespace helix {

void buildShardingPipeline(mlir::OpPassManager &pm,
                           const ShardingPipelineOptions &o) {
  // Without HOP-B, Helix is helix-no-hopb: the plan then says so too.
  std::string strategy = !o.hopb && o.strategy == "helix"
                             ? "helix-no-hopb"
                             : o.strategy.getValue();
  if (o.layout == "search") {
    mlir::helix::HelixSearchLayoutsOptions s;
    s.hardware = o.hardware;
    s.gpus = o.gpus;
    s.maxGpus = o.maxGpus;
    s.batch = o.batch;
    s.context = o.context;
    s.dtype = o.dtype;
    s.ttlMs = o.ttlMs;
    s.strategy = strategy;
    s.perLayer = o.perLayer;
    pm.addPass(mlir::helix::createHelixSearchLayouts(s));
  } else if (!o.layout.empty() || !o.layerLayouts.empty()) {
    mlir::helix::HelixApplyLayoutOptions a;
    a.layout = o.layout;
    a.layerLayouts = o.layerLayouts;
    a.strategy = strategy;
    a.gpus = o.gpus;
    a.batch = o.batch;
    a.context = o.context;
    a.hardware = o.hardware;
    a.dtype = o.dtype;
    a.hopb = o.hopb;
    pm.addPass(mlir::helix::createHelixApplyLayout(a));
  }
  pm.addPass(mlir::helix::createHelixInsertCollectives());
  // HOP-B's slices and the KV block: the plan's, unless the pipeline is
  // told (an option given to a pass overrides the plan).
  auto withOptions = [](std::unique_ptr<mlir::Pass> pass,
                        const std::string &options) {
    (void)pass->initializeOptions(
        options, [](const llvm::Twine &) { return mlir::failure(); });
    return pass;
  };
  std::string hopb = o.hopb ? "enable=true" : "enable=false";
  if (o.slices.hasValue())
    hopb += " slices=" + std::to_string(o.slices);
  pm.addPass(withOptions(mlir::helix::createHelixHopB(), hopb));
  pm.addPass(withOptions(mlir::helix::createHelixKVPlacement(),
                         o.kvBlock.hasValue()
                             ? "block=" + std::to_string(o.kvBlock)
                             : std::string()));
  mlir::helix::HelixPartitionOptions part;
  part.layerFunctions = o.layerFunctions;
  pm.addPass(mlir::helix::createHelixPartition(part));
  pm.addPass(mlir::helix::createHelixResidentFormats());
}

void registerShardingPipeline() {
  mlir::PassPipelineRegistration<ShardingPipelineOptions>(
      "helix-sharding-pipeline",
      "Model IR to rank IR: layout search or an explicit layout (when "
      "asked), helix-insert-collectives, helix-hopb, helix-kv-placement, "
      "helix-partition, helix-resident-formats",
      buildShardingPipeline);
}

} // namespace helix
