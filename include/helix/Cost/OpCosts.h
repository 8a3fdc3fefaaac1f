//===- OpCosts.h - The cost of each op of one decode step -------*- C++ -*-===//
//
// evaluate() prices a step layer class by layer class; helix-estimate-cost
// prices the planned IR op by op. Both use the same per-op functions
// (lib/Cost/LayerCost.cpp), so the ops' costs add up to evaluate()'s
// token-to-token latency. An op is its kernels plus the collectives that
// follow it: the attention exchange goes with helix.attention, the
// output-projection all-reduce with helix.linear, the FFN / MoE collectives
// with helix.ffn / helix.moe, the new-token broadcast with helix.embed and the
// sampling all-gather with helix.lm_head.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_OPCOSTS_H
#define HELIX_COST_OPCOSTS_H

#include "helix/Cost/Hardware.h"
#include "helix/Cost/Layout.h"
#include "helix/Cost/Roofline.h"
#include "helix/Cost/Workload.h"
#include "helix/Model/ModelSpec.h"

#include <memory>
#include <string>
#include <vector>

namespace helix {

struct PerLayerChoice;

/// One op of the decode step on one GPU.
struct PricedOp {
  OpCost kernels;          // roofline + fixed overhead of its kernels
  double commS = 0;        // time in its collectives (all HOP-B slices)
  double exposedCommS = 0; // the part of commS on the critical path
  /// Kernels plus exposed communication: what the op adds to the step.
  double timeS() const { return kernels.timeS + exposedCommS; }
  /// Where timeS() goes (sums to it).
  TimeBreakdown where() const;
  /// HBM bytes the kernels read and write (weights, KV cache, activations).
  double bytes() const;
};

/// The ops of one layer of the planned IR.
struct LayerOps {
  PricedOp qkv;       // helix.qkv_proj (and the norm before it)
  PricedOp attention; // helix.attention: kernel, KVP combine, exchange
  PricedOp outProj;   // helix.linear (output projection) + all-reduce
  PricedOp ffn;       // helix.ffn | helix.moe (and the norm before it)
};

/// Prices the ops of one decode step of `model` under one configuration,
/// at the micro-batch for tp-pp (as evaluate() does).
class OpPricer {
public:
  /// Checks the configuration (validateConfig); error() says why when it is
  /// invalid, and nothing may be priced then.
  OpPricer(const ModelSpec &model, const Hardware &hw, const Workload &workload,
           const Config &config);
  /// A per-layer Helix plan (one stage, `config.gpus` GPUs, its batch and
  /// HOP-B slices): each layer's attention ops priced under its attention
  /// kind's layout, its FFN under its FFN kind's (kindConfig /
  /// kindPlacement, helix/Cost/PerLayer.h).
  OpPricer(const ModelSpec &model, const Hardware &hw, const Workload &workload,
           const Config &config, const PerLayerChoice &choice);
  ~OpPricer();
  OpPricer(const OpPricer &) = delete;
  OpPricer &operator=(const OpPricer &) = delete;

  bool valid() const { return error_.empty(); }
  const std::string &error() const { return error_; }

  int64_t stages() const;
  int64_t microBatch() const;   // requests per micro-batch (the batch)
  int64_t microBatches() const; // micro-batches in flight (tp-pp)
  /// Pipeline stage of model.layers[i].
  int64_t stageOfLayer(size_t i) const;
  /// The ops of model.layers[i].
  LayerOps layer(size_t i) const;
  /// helix.embed: embedding rows and the broadcast of the new tokens' rows
  /// (first stage).
  PricedOp embedding() const;
  /// helix.lm_head: final norm, vocabulary-parallel LM head and the sampling
  /// all-gather (last stage).
  PricedOp lmHead() const;
  /// One stage-to-stage transfer of a micro-batch (tp-pp).
  PricedOp stageTransfer() const;
  /// Speculative decoding: the MTP drafter's eh_proj (2H -> H, sharded
  /// like the output projection) and its all-reduce, at the verify step's
  /// rows (a draft pass is the MTP layer, this, embedding and LM head).
  PricedOp draftProjection() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string error_;
};

/// Token-to-token latency of a step from the time each pipeline stage takes
/// for one micro-batch: max(sum + (stages - 1) * p2p, microBatches *
/// slowest). One stage: its time. (docs/cost-model.md, section 8.)
double pipelineTTL(const std::vector<double> &stageS, double p2pS,
                   int64_t microBatches);

} // namespace helix

#endif // HELIX_COST_OPCOSTS_H
