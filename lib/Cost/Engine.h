//===- Engine.h - Prepared cost model shared by evaluate and search -*- C++
//-*-//
//
// Private to lib/Cost. Pricing is split in two: prepare() turns a model and a
// configuration into per-GPU shapes of each class of identical layers (done
// once per layout), and costLayer()/computeTotals() price a batch from those
// shapes with arithmetic only, so the search stays fast.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_COST_ENGINE_H
#define HELIX_LIB_COST_ENGINE_H

#include "helix/Cost/Evaluate.h"
#include "helix/Cost/MoE.h"
#include "helix/Cost/OpCosts.h"
#include "helix/Cost/Placement.h"

#include <vector>

namespace helix {
namespace detail {

// The strategy rules (helix/Cost/Placement.h), shared with lib/Transforms.
using ::helix::Placement;
using ::helix::placementFor;

/// Per-GPU shape of one class of identical layers under one placement.
struct LayerShape {
  bool mla = false;
  bool moe = false;
  /// The halves the layer has (hybrid blocks have one), and what its mixer
  /// is: attention over a KV cache (qkv.. below) or a recurrent mixer
  /// (linear attention, Mamba-2: the recurrent fields).
  bool hasMixer = true, hasFFN = true;
  bool recurrent = false;
  double norms = 2; // RMSNorm weight vectors of H (one per half)
  // Recurrent mixer (qkvParams / oprojParams hold its in / out projections'
  // shards, qkvOutWidth what the in projections produce per token).
  double recurrentGroup = 1;       // GPUs its heads split over
  double stateBytesPerRequest = 0; // recurrent + convolution state, one GPU
  double recurrentFlopsPerToken = 0;
  // DeepSeek Sparse Attention (MLA with an indexer; tokensRead is then the
  // busiest KVP rank's share of the selected tokens).
  bool sparse = false;
  double topK = 0;          // tokens each query attends to
  double indexerParams = 0; // the indexer's projections (replicated)
  double indexKeyBytes = 0; // bytes of one cached index key (0: none)
  double indexHeads = 0, indexHeadDim = 0;
  double tokensScored = 0;      // cached index keys one GPU scores
  double indexTokensStored = 0; // index-key slots one GPU holds
  double latentParams = 0;      // latent MoE: shared down / up projections
  double expertInput = 0;       // values a routed expert reads per token
  // Attention.
  double qkvParams = 0;   // QKV / MLA projections held and read (TPA shard)
  double qkvOutWidth = 0; // values the projections produce per token
  double oprojParams = 0; // output-projection shard
  double qHeads = 0;      // query heads per GPU
  double qkDim = 0;       // q.k length per head (MLA: kv_lora + rope)
  double vDim = 0;        // value length per head (MLA: kv_lora)
  double outHeadDim = 0;  // per-head output after V (or W_UV) projection
  double kvValuesPerToken = 0; // cached values per token on one GPU
  double tokensRead = 0;       // min(window, S) / KVP
  double tokensStored = 0;     // ceil of that
  double coreFlopsPerRequest = 0;
  double attnRowsPerRequest = 1; // attention kernel rows: local KV heads
  // The kernels of the QKV (or MLA, or recurrent in-projection) op and of
  // the mixer's core (helix/Common/KernelTable.h; the core's split-K merge
  // is added where the attention splits).
  KernelCounts qkvKernels, coreKernels;
  // FFN.
  double ffnParams = 0; // dense shard
  double ffnWidth = 0;  // dense: local gate+up outputs per token
  double numExperts = 0, expertTopK = 0, localExperts = 0;
  double expertParams = 0; // one expert's shard (TPF)
  double expertWidth = 0;  // local gate+up outputs per token of one expert
  double sharedParams = 0;
  double routerParams = 0;
  double residentFFNParams = 0; // all FFN weights one GPU holds
  ExpertLoadModel experts;      // load of the busiest EP rank
};

struct Prepared {
  const Hardware *hw = nullptr;
  Precision precision;
  /// Bytes per value of the weights by what the program keeps them in
  /// (docs/quantization.md, helix-resident-formats): the linear weights of
  /// attention and of the FFN take the planned format unless the
  /// checkpoint keeps their module unquantized; embeddings, the LM head,
  /// norms and routers stay BF16.
  double attnWeightBytes = 0, ffnWeightBytes = 0;
  /// The same as formats: which GEMM curve their kernels read.
  DType attnWeightFormat = DType::BF16, ffnWeightFormat = DType::BF16;
  /// The FFN's FP4 weights are an MXFP4 checkpoint's, kept as stored
  /// (E8M0 scale per 32 values: 4.25 bits with scales counted): the routed
  /// experts read the MXFP4 grouped-GEMM curve (Hardware.h).
  bool ffnMXFP4 = false;
  static constexpr double kMXFP4BytesWithScales = 4.25 / 8;
  static constexpr double kPlainWeightBytes = 2.0;
  static constexpr DType kPlainWeightFormat = DType::BF16;
  Config config;
  /// Price the MoE at the mean EP rank's load instead of the busiest's
  /// (the "balanced" figure of helix cost).
  bool balancedMoE = false;
  /// Speculative decoding (Workload::mtpTokens): every step verifies
  /// `queryTokens` = 1 + draftTokens query tokens per request (GEMMs,
  /// activations and exchanges scale with them; each request's KV is read
  /// once), after draftTokens passes of the MTP layer, shaped like the
  /// class `draftClass`, at one token per request.
  double queryTokens = 1;
  int64_t draftTokens = 0;
  double acceptance = 1;
  int64_t draftClass = -1;
  Placement place;
  int64_t pp = 1;
  double hidden = 0;
  double vocab = 0;
  bool tiedEmbeddings = false;
  std::vector<LayerShape> classes;
  std::vector<int64_t> classOfLayer;
  std::vector<int64_t> stageOfLayer;
  /// Layers of each class in each stage, [stage * classes + class]
  /// (stageCount()).
  std::vector<int64_t> stageCounts;
  /// The first stage with the same class counts as each stage: their layers
  /// cost the same, so totals price one of them (Totals.cpp).
  std::vector<int64_t> sameLayersAs;
  /// The distinct stages (each the first with its counts), how many stages
  /// have each one's counts, and whether one of those is a middle stage
  /// (neither the first nor the last, which add the step's own work).
  std::vector<int64_t> distinctStages, distinctStageCount;
  std::vector<char> distinctInMiddle;
  /// The stages whose memory can be the fullest GPU's: the first, the last,
  /// and one middle stage of each distinct count vector but the first's (a
  /// middle stage like the first holds less: no embedding).
  std::vector<int64_t> memoryStages;
  /// Each stage's layers' resident memory per GPU, which the batch only
  /// scales (stageMemory(), Totals.cpp): weights; KV cache (and recurrent
  /// state) per request; the largest layer workspace per query token.
  std::vector<double> stageWeights, stageKVPerRequest, stageWorkspacePerToken;

  int64_t stageCount(int64_t stage, size_t cls) const {
    return stageCounts[size_t(stage) * classes.size() + cls];
  }
};

/// Fills p's stageWeights, stageKVPerRequest and stageWorkspacePerToken
/// (after its classes and stage counts).
void stageMemory(Prepared &p);

/// A layer of class `c` of `p` (the MTP layer's shape for the class only
/// the MTP drafter has).
LayerSpec layerOfClass(const ModelSpec &model, const Prepared &p, size_t c);

/// The decoder layers grouped into classes of one cost shape: a function
/// of the model alone, so a search computes it once (prepare() otherwise
/// computes it per layout).
struct LayerClasses {
  std::vector<int64_t> classOfLayer;   ///< per decoder layer
  std::vector<int64_t> representative; ///< the first layer of each class
  /// The class whose shape the MTP layer has (mtpLayerOf), or -1 when it
  /// has a shape of its own.
  int64_t mtpClass = -1;
};
LayerClasses classifyLayers(const ModelSpec &model);

/// Builds the prepared shapes; `config` must be valid (validateConfig).
/// `classes`, when given, is classifyLayers(model).
void prepare(const ModelSpec &model, const Hardware &hw,
             const Workload &workload, const Config &config, Prepared &out,
             const LayerClasses *classes = nullptr);
/// The same with `place` instead of placementFor(config) (the per-layer
/// search prices an FFN group narrower than the stage this way).
void prepare(const ModelSpec &model, const Hardware &hw,
             const Workload &workload, const Config &config,
             const Placement &place, Prepared &out,
             const LayerClasses *classes = nullptr);

/// Memory pieces of one layer of `shape` on one GPU (Totals.cpp): the
/// attention projections, the KV cache of `layerRequests` (layers x
/// requests), the FFN matrices, the layer's norms and router; the live
/// workspace at `micro` requests of attention (partials and QKV outputs)
/// and of the FFN.
double attentionWeightBytes(const Prepared &p, const LayerShape &shape);
double kvCacheBytes(const Prepared &p, const LayerShape &shape,
                    double layerRequests);
double ffnMatrixBytes(const Prepared &p, const LayerShape &shape);
double normRouterBytes(const Prepared &p, const LayerShape &shape);
double attentionWorkspaceBytes(const Prepared &p, const LayerShape &shape,
                               double micro);
double ffnWorkspaceBytes(const Prepared &p, const LayerShape &shape,
                         double micro);
/// Adds the weights of `stage` outside its layers (embedding and LM head
/// shards, final norm) to `weights`.
void addStageWeights(const Prepared &p, int64_t stage, double &weights);
/// The logits workspace of the last stage at `micro` requests.
double logitsWorkspaceBytes(const Prepared &p, double micro);
/// Requests one GPU's attention serves: all of them, or its DP share.
double attentionRequests(const Prepared &p, int64_t batch);

/// Time in one op's collectives (all HOP-B slices) and the part of it on the
/// critical path.
struct CommCost {
  double timeS = 0;
  double exposedS = 0;
  CommCost &operator+=(const CommCost &o) {
    timeS += o.timeS;
    exposedS += o.exposedS;
    return *this;
  }
};

/// One layer of a class at a batch (or micro-batch), op by op: each op's
/// kernels and the collectives that follow it. helix-estimate-cost attaches
/// exactly these to the planned IR's ops (OpCosts.h).
struct LayerCost {
  OpCost qkv;     // norm, QKV (or MLA) projections, RoPE + KV append
  OpCost core;    // attention kernel over the local KV
  OpCost combine; // rescale-and-sum of the KVP partials (KVP > 1)
  OpCost oproj;   // output projection
  OpCost ffn;     // norm and dense FFN, or router, experts and their sum
  double activeExperts = 0;
  /// KVP all-to-all (HOP-B) or all-gather of partials; for DSA under KVP
  /// also the all-gather of the ranks' top-k scores (exposed).
  CommCost exchange;
  CommCost oprojComm; // output-projection all-reduce (overlapped for TP)
  CommCost ffnComm;   // FFN / MoE collectives
  int64_t slices = 1;

  OpCost attention() const;
  double commS() const;
  double exposedS() const;
  double timeS() const;
  TimeBreakdown where() const;
};

// The per-op functions. Each prices one op of one layer of `shape` at
// `batch` requests (the micro-batch for tp-pp).
OpCost costQKV(const Prepared &p, const LayerShape &shape, int64_t batch);
OpCost costAttentionCore(const Prepared &p, const LayerShape &shape,
                         int64_t batch);
OpCost costCombine(const Prepared &p, const LayerShape &shape, int64_t batch);
OpCost costOutProj(const Prepared &p, const LayerShape &shape, int64_t batch);
/// The attention exchange and the output-projection all-reduce, with their
/// overlap (HOP-B for Helix, batch-wise for TP) against `c.core` and
/// `c.oproj`; sets c.exchange, c.oprojComm and c.slices.
void costAttentionComm(const Prepared &p, const LayerShape &shape,
                       int64_t batch, LayerCost &c);
/// Dense FFN (norm, gate-up, down).
OpCost costDenseFFN(const Prepared &p, const LayerShape &shape, int64_t batch);
/// MoE block (norm, router, top-k, routed and shared experts, weighted sum);
/// `activeExperts` receives the expected distinct experts read.
OpCost costMoE(const Prepared &p, const LayerShape &shape, int64_t batch,
               double &activeExperts);
/// The collectives after the FFN or MoE block (never overlapped).
CommCost costFFNComm(const Prepared &p, const LayerShape &shape, int64_t batch);

/// All of the above for one layer: its attention half (qkv, core, combine,
/// oproj, exchange, oprojComm, slices), which reads only the placement's
/// attention widths, and its FFN half (ffn, activeExperts, ffnComm), which
/// reads only its FFN group.
LayerCost costLayer(const Prepared &p, const LayerShape &shape, int64_t batch);
void costAttentionHalf(const Prepared &p, const LayerShape &shape,
                       int64_t batch, LayerCost &c);
void costFFNHalf(const Prepared &p, const LayerShape &shape, int64_t batch,
                 LayerCost &c);

/// Once-per-step work of the first and last stage.
struct StepCost {
  OpCost first;          // embedding lookup
  OpCost last;           // final norm, LM head, sampling
  double firstCommS = 0; // new-token broadcast
  double lastCommS = 0;  // sampling all-gather
  double p2pS = 0;       // one stage-to-stage transfer of a micro-batch
};

StepCost costStep(const Prepared &p, int64_t batch);

/// One draft pass of the MTP layer (Prepared::draftClass) for `batch`
/// requests at the verify step's queryTokens rows each (what the generated
/// program runs): the layer itself (its attention reads its own KV cache
/// of the context once per request), its eh_proj (2H -> H, sharded like
/// the output projection, then all-reduced), the embedding of the tokens
/// and the shared LM head with sampling.
struct DraftCost {
  double timeS = 0;
  TimeBreakdown where;
};
DraftCost costDraft(const Prepared &p, int64_t batch);

/// The drafter's eh_proj of costDraft: its GEMM and its all-reduce (over
/// the output projection's GPUs, exposed).
struct DraftProjectionCost {
  OpCost kernels;
  double commS = 0;
};
DraftProjectionCost costDraftProjection(const Prepared &p, int64_t batch);
/// eh_proj parameters per GPU.
double mtpProjectionParams(const Prepared &p);

/// Pipeline: the micro-batches a batch is cut into, M = min(pp, B).
int64_t microBatchesOf(const Prepared &p, int64_t batch);

struct Totals {
  double ttlS = 0;
  int64_t microBatch = 0;
  int64_t microBatches = 1;
  MemoryUse memory;
  bool fits = false;
  TimeBreakdown where;
  double stepCommS = 0;
  double stepExposedS = 0;
  double stepComputeS = 0;
  double stepWeightBytes = 0; // embedding rows read + LM head, per GPU
  KernelCounts stepKernels;   // their kernels
  /// MTP (Prepared::draftTokens > 0): the verify step, the draft passes
  /// and the tokens a step yields per request; ttlS is then their time
  /// per token, (verify + drafts) / expected tokens.
  double mtpVerifyS = 0, mtpDraftS = 0, mtpExpectedTokens = 1;
  /// Batch slices of the attention-side overlap (the most of any layer
  /// class); 1 = nothing overlapped.
  int64_t slices = 1;
};

/// Prices a whole step. `perClass`, when given, receives each class's
/// LayerCost at the micro-batch; without `breakdown` Totals::where is left
/// empty (the search needs times and memory only).
Totals computeTotals(const Prepared &p, int64_t batch,
                     std::vector<LayerCost> *perClass = nullptr,
                     bool breakdown = true);
/// The same from each class's LayerCost at the micro-batch
/// (microBatchesOf) and the step's cost at it, priced already.
Totals totalsFrom(const Prepared &p, int64_t batch,
                  const std::vector<LayerCost> &costs, const StepCost &step,
                  bool breakdown);

} // namespace detail
} // namespace helix

#endif // HELIX_LIB_COST_ENGINE_H
