//===- Evaluate.h - Cost of one decode step under one config ----*- C++ -*-===//
//
// evaluate() prices one decode step of `batch` requests (one new token each)
// for a model, hardware, workload and configuration: per-layer per-GPU bytes,
// FLOPs and times, communication (and how much of it is exposed), memory per
// GPU against HBM capacity, and where the token-to-token latency goes.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_EVALUATE_H
#define HELIX_COST_EVALUATE_H

#include "helix/Cost/Hardware.h"
#include "helix/Cost/Layout.h"
#include "helix/Cost/Roofline.h"
#include "helix/Cost/Workload.h"
#include "helix/Model/ModelSpec.h"

#include <string>
#include <vector>

namespace helix {

struct PerLayerChoice;

/// Attention block of one layer on one GPU: QKV (or MLA) projections, the
/// attention kernel, the partial-output combine and the output projection.
struct AttentionEvaluation {
  double kvBytesPerGPU = 0;
  double weightBytesPerGPU = 0; // QKV and output projections
  double flopsPerGPU = 0;
  double timeS = 0;
  int kernels = 0; // kernels launched per step (the §3 table of cost-model.md)
  /// The same kernels by op: the QKV (or MLA) projections, the attention
  /// core (KV append, attention, split-K merge, MLA's W_UV; per HOP-B
  /// slice), the KVP combine and the output projection.
  int qkvKernels = 0, coreKernels = 0, combineKernels = 0, oprojKernels = 0;
  /// The same kernels by kind (helix/Common/KernelTable.h).
  KernelCounts kernelsByKind;
  /// Roofline terms of the attention kernel alone (KV streaming vs math).
  double coreComputeS = 0;
  double coreMemoryS = 0;
};

/// Dense FFN or MoE block (router, routed and shared experts) on one GPU.
struct FFNEvaluation {
  double weightBytesPerGPU = 0;
  double flopsPerGPU = 0;
  double timeS = 0;
  int kernels = 0;
  KernelCounts kernelsByKind;
  double activeExperts = 0; // MoE: expected distinct experts read per GPU
};

struct CommEvaluation {
  double timeS = 0;    // all collectives of the layer
  double exposedS = 0; // the part not hidden behind compute
};

struct LayerEvaluation {
  int64_t index = 0;
  int64_t stage = 0; // pipeline stage
  AttentionEvaluation attention;
  FFNEvaluation ffn;
  CommEvaluation comm;
  double timeS = 0; // attention + ffn + exposed communication
};

/// Work done once per step: embedding lookup and new-token broadcast, final
/// norm, LM head and sampling, pipeline transfers.
struct StepEvaluation {
  double computeS = 0;
  /// Weight bytes the step's own ops read per GPU (the embedding rows
  /// looked up, the LM head shard), as the layers' weight_bytes_per_gpu.
  double weightBytesPerGPU = 0;
  int kernels = 0; // embedding, final norm, LM head, sampling
  KernelCounts kernelsByKind;
  double commS = 0;
  double exposedS = 0;
};

/// Resident memory of the fullest GPU.
struct MemoryUse {
  double weights = 0;
  double kvCache = 0;
  double activations = 0;
  double total() const { return weights + kvCache + activations; }
};

struct Evaluation {
  /// Non-empty when the configuration is invalid; nothing else is set then.
  std::string error;
  bool valid() const { return error.empty(); }

  Config config;
  int64_t gpus = 0;
  int64_t batch = 0;
  int64_t microBatch = 0;   // requests per pipeline micro-batch
  int64_t microBatches = 1; // micro-batches in flight (tp-pp)
  int64_t hopbSlices = 1;   // batch slices of the attention overlap
  /// HOP-B (or the TP baselines' batch-wise all-reduce overlap) is reported
  /// on exactly when more than one slice is used.
  bool hopbUsed() const { return hopbSlices > 1; }
  double ttlS = 0; // token-to-token latency (with MTP: per accepted token)
  /// Speculative decoding (Workload::mtpTokens > 0): a step verifies
  /// 1 + draftTokens tokens per request after draftTokens passes of the MTP
  /// layer and yields expectedTokens per request on average.
  struct MTP {
    int64_t draftTokens = 0;
    double acceptance = 1;
    double expectedTokens = 1;
    double verifyStepS = 0;
    double draftS = 0; // all draft passes of one step
  } mtp;
  /// TTL with every EP rank at the mean expert load (= ttlS without MoE
  /// layers); ttlS waits for the busiest rank (Workload::routingSkew).
  double balancedTtlS = 0;
  double tokensPerSecPerUser = 0; // 1 / TTL
  double tokensPerSecPerGPU = 0;  // batch / (TTL * GPUs)
  double memoryPerGPUBytes = 0;
  MemoryUse memory;
  double hbmCapacityBytes = 0;
  bool fits = false;
  std::vector<LayerEvaluation> layers;
  StepEvaluation step;
  TimeBreakdown breakdown; // sums to ttlS
};

/// Checks a configuration against the model and hardware. Returns "" when it
/// is valid, else one line saying what is wrong (GPU count, TPA not dividing
/// KV heads, EP not dividing experts, unsupported math format, ...).
std::string validateConfig(const ModelSpec &model, const Hardware &hw,
                           const Workload &workload, const Config &config);

/// Whether validateConfig() would return "", without building the message
/// of a failed check (the search validates every candidate layout).
bool isValidConfig(const ModelSpec &model, const Hardware &hw,
                   const Workload &workload, const Config &config);

/// Why Helix's all-to-all cannot exchange an attention layer's partial
/// outputs with `localHeads` query heads per TPA slice over `kvp` ranks as
/// helix-insert-collectives lowers it (helixHeadSplit; a gated output needs
/// whole heads on each rank); "" when it can. validateConfig and
/// validateKindLayout both check it.
std::string helixHeadSpreadError(int64_t localHeads, int64_t kvp,
                                 const AttentionSpec &a);

/// validateConfig and isValidConfig for many configurations of one model,
/// hardware and workload (the search: some 100,000 candidate layouts). The
/// checks read each kind of layer once; the model's kinds are found here,
/// once. The three must outlive the validator.
class ConfigValidator {
public:
  ConfigValidator(const ModelSpec &model, const Hardware &hw,
                  const Workload &workload);
  std::string why(const Config &config) const;
  bool valid(const Config &config) const;

private:
  std::string check(const Config &config, bool explain) const;
  const ModelSpec &model;
  const Hardware &hw;
  const Workload &workload;
  /// The first layer of each set with the same figures the checks read, in
  /// model order (so the first failing layer is the one a walk over every
  /// layer finds).
  std::vector<const LayerSpec *> distinct;
  bool moe;
};

/// Prices one decode step. Invalid configurations come back with `error` set;
/// configurations that do not fit in HBM come back with fits == false.
Evaluation evaluate(const ModelSpec &model, const Hardware &hw,
                    const Workload &workload, const Config &config);

/// Prices one decode step of a per-layer Helix plan (`config`: Helix on one
/// stage, its GPUs, batch and HOP-B slices; `choice`: one layout per kind
/// of layer, helix/Cost/PerLayer.h): each layer's attention under its
/// attention kind's layout, its FFN under its FFN kind's, memory with the
/// actual mix; the same figures PerLayerSearch and helix-estimate-cost
/// give, with evaluate()'s breakdown.
Evaluation evaluate(const ModelSpec &model, const Hardware &hw,
                    const Workload &workload, const Config &config,
                    const PerLayerChoice &choice);

} // namespace helix

#endif // HELIX_COST_EVALUATE_H
