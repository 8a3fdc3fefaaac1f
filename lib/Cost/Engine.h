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

#include <vector>

namespace helix {
namespace detail {

/// How a strategy maps the GPUs of one pipeline stage.
struct Placement {
  enum class Exchange { None, AllToAll, AllGather };
  int64_t stageGPUs = 1;
  int64_t kvp = 1, tpa = 1, dp = 1;
  int64_t oprojWidth = 1;   // GPUs sharing the output projection
  int64_t ffnWidth = 1;     // GPUs sharing one copy of the FFN (TPF x EP)
  int64_t tpf = 1, ep = 1;  // MoE grid inside the FFN group
  int64_t sharedWidth = 1;  // GPUs sharing the shared experts
  bool tokensSplit = false; // data-parallel attention (ep strategy)
  bool overlap = false;     // batch-wise overlap of the attention exchange
  Exchange exchange = Exchange::None; // how KVP partial outputs are combined
};

Placement placementFor(const Config &config);

/// Per-GPU shape of one class of identical layers under one placement.
struct LayerShape {
  bool mla = false;
  bool moe = false;
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
  int qkvKernels = 0;
  int coreKernels = 0;
  // FFN.
  double ffnParams = 0; // dense shard
  double ffnWidth = 0;  // dense: local gate+up outputs per token
  double numExperts = 0, topK = 0, localExperts = 0;
  double expertParams = 0; // one expert's shard (TPF)
  double expertWidth = 0;  // local gate+up outputs per token of one expert
  double sharedParams = 0;
  double routerParams = 0;
  double residentFFNParams = 0; // all FFN weights one GPU holds
};

struct Prepared {
  const Hardware *hw = nullptr;
  Precision precision;
  Config config;
  Placement place;
  int64_t pp = 1;
  double hidden = 0;
  double vocab = 0;
  bool tiedEmbeddings = false;
  std::vector<LayerShape> classes;
  std::vector<int64_t> classOfLayer;
  std::vector<int64_t> stageOfLayer;
  std::vector<std::vector<int64_t>> stageCounts; // [stage][class]
};

/// Builds the prepared shapes; `config` must be valid (validateConfig).
void prepare(const ModelSpec &model, const Hardware &hw,
             const Workload &workload, const Config &config, Prepared &out);

/// One layer of a class at a batch (or micro-batch).
struct LayerCost {
  OpCost qkv, core, combine, oproj;
  OpCost ffn;
  double activeExperts = 0;
  double commS = 0;
  double exposedS = 0;
  int64_t slices = 1;

  OpCost attention() const;
  double timeS() const;
  TimeBreakdown where() const;
};

LayerCost costLayer(const Prepared &p, const LayerShape &shape, int64_t batch);

/// Once-per-step work of the first and last stage.
struct StepCost {
  OpCost first;          // embedding lookup
  OpCost last;           // final norm, LM head, sampling
  double firstCommS = 0; // new-token broadcast
  double lastCommS = 0;  // sampling all-gather
  double p2pS = 0;       // one stage-to-stage transfer of a micro-batch
};

StepCost costStep(const Prepared &p, int64_t batch);

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
};

/// Prices a whole step. `perClass`, when given, receives each class's
/// LayerCost at the micro-batch.
Totals computeTotals(const Prepared &p, int64_t batch,
                     std::vector<LayerCost> *perClass = nullptr);

} // namespace detail
} // namespace helix

#endif // HELIX_LIB_COST_ENGINE_H
