//===- Pipeline.h - helix-sharding-pipeline ---------------------*- C++ -*-===//
//
// The named pipeline from a model IR (or planned IR) to rank IR: the layout
// search or an explicit layout when asked, then helix-insert-collectives,
// helix-hopb, helix-kv-placement and helix-partition.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_TRANSFORMS_PIPELINE_H
#define HELIX_TRANSFORMS_PIPELINE_H

#include "mlir/Pass/PassOptions.h"

#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace helix {

struct ShardingPipelineOptions
    : public mlir::PassPipelineOptions<ShardingPipelineOptions> {
  Option<std::string> layout{
      *this, "layout",
      llvm::cl::desc("\"\": the IR is planned already; \"search\": search "
                     "the layout; or kvp=..,tpa=..,tpf=..,ep=.. (pp=, dp= "
                     "optional)"),
      llvm::cl::init("")};
  Option<std::string> strategy{
      *this, "strategy",
      llvm::cl::desc("helix, helix-no-hopb, tp, tp-pp, ep or kvp"),
      llvm::cl::init("helix")};
  Option<std::string> hardware{
      *this, "hardware",
      llvm::cl::desc("hardware preset or a hardware JSON file"),
      llvm::cl::init("gb200-nvl72")};
  Option<int64_t> gpus{*this, "gpus",
                       llvm::cl::desc("GPUs (0: search 1..max-gpus, or the "
                                      "layout's)"),
                       llvm::cl::init(0)};
  Option<int64_t> maxGpus{*this, "max-gpus",
                          llvm::cl::desc("largest GPU count searched"),
                          llvm::cl::init(64)};
  Option<int64_t> batch{*this, "batch",
                        llvm::cl::desc("concurrent requests (0: sweep when "
                                       "searching)"),
                        llvm::cl::init(0)};
  Option<int64_t> context{*this, "context",
                          llvm::cl::desc("KV context length in tokens"),
                          llvm::cl::init(1048576)};
  Option<std::string> dtype{
      *this, "dtype", llvm::cl::desc("precision of weights, KV cache and math"),
      llvm::cl::init("fp4")};
  Option<double> ttlMs{*this, "ttl-ms",
                       llvm::cl::desc("search: latency budget in ms (0: the "
                                      "fastest configuration)"),
                       llvm::cl::init(0.0)};
  Option<bool> hopb{*this, "hopb",
                    llvm::cl::desc("HOP-B overlap of the attention exchange"),
                    llvm::cl::init(true)};
  Option<int64_t> slices{*this, "slices",
                         llvm::cl::desc("HOP-B batch slices (0: one per "
                                        "request; default: the plan's)"),
                         llvm::cl::init(0)};
  Option<int64_t> kvBlock{*this, "kv-block",
                          llvm::cl::desc("tokens appended to one KVP rank "
                                         "before the next (default: the "
                                         "plan's)"),
                          llvm::cl::init(16)};
  Option<bool> perLayer{
      *this, "per-layer",
      llvm::cl::desc("layout=search: one Helix layout per kind of layer "
                     "(needs gpus and batch)"),
      llvm::cl::init(false)};
  Option<std::string> layerLayouts{
      *this, "layer-layouts",
      llvm::cl::desc("with an explicit layout: per-layer Helix, "
                     "KIND=LAYOUT;... (helix-apply-layout)"),
      llvm::cl::init("")};
  Option<bool> layerFunctions{
      *this, "layer-functions",
      llvm::cl::desc("one function per distinct kind of decoder layer, "
                     "called per layer (helix-partition)"),
      llvm::cl::init(true)};
};

/// Adds the pipeline's passes to `pm` (a module pass manager).
void buildShardingPipeline(mlir::OpPassManager &pm,
                           const ShardingPipelineOptions &options);

/// Registers helix-sharding-pipeline.
void registerShardingPipeline();

} // namespace helix

#endif // HELIX_TRANSFORMS_PIPELINE_H
