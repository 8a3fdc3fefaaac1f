//===- PerLayer.h - One Helix layout per kind of layer ----------*- C++ -*-===//
//
// Real models mix layer kinds: gpt-oss alternates sliding-window and full
// attention, DeepSeek-R1 has dense-FFN layers before its MoE layers. A
// per-layer plan gives each kind its own layout on the same N GPUs of the
// stage (Helix, HOP-B on, pp = 1):
//
//   attention kind (full, window)  kvp x tpa = N, tpa dividing the query
//                                  heads and dividing the KV heads, or, at
//                                  kvp = 1, a multiple of them (KV heads
//                                  duplicated, as tp does); output
//                                  projection TP = N
//   FFN kind (dense, MoE)          a group of tpf x ep GPUs (ep = 1 when
//                                  dense) dividing N, replicated N / (tpf x
//                                  ep) times; every replica computes every
//                                  token and all-reduces over its group
//
// Uniform Helix is the choice kvp, tpa for every attention kind and an FFN
// group of all N GPUs, so a per-layer plan is never slower at the same GPUs
// and batch. Every one of these layouts leaves the residual stream
// replicated on all N GPUs at each layer boundary (the output projection
// all-reduces over the stage, each FFN group over itself), so consecutive
// layers with different layouts need no resharding collective: 0 bytes
// (reshardBytes). The kinds' times and memory add up; only the memory
// capacity and the largest live workspace couple them, so the search prices
// each kind's candidates once and enumerates the combinations of the
// candidates no other candidate of the kind beats in time, memory and
// workspace (exact, docs/per-layer-layouts.md).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_PERLAYER_H
#define HELIX_COST_PERLAYER_H

#include "helix/Common/LayerKind.h"
#include "helix/Cost/Hardware.h"
#include "helix/Cost/Pareto.h"
#include "helix/Cost/Placement.h"
#include "helix/Cost/Workload.h"
#include "helix/Model/ModelSpec.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace helix {

/// "full attention", "window attention", "dense FFN", "MoE FFN", "linear
/// attention", "Mamba", "sparse attention" (the JSON and IR keys are
/// stringifyLayerKind's: "full_attention", ...).
const char *layerKindName(LayerKind kind);
/// The kind of a layer's token mixer (attention: window when it has a
/// sliding window, sparse with a DSA indexer, else full; linear attention;
/// Mamba) and of its FFN; nullopt for a layer without that half (hybrid
/// models' single-mixer blocks).
std::optional<LayerKind> mixerKindOf(const LayerSpec &layer);
std::optional<LayerKind> ffnKindOf(const LayerSpec &layer);
/// The kinds that price a layer's two halves: its own, or for a missing
/// half (which costs nothing) the other half's kind.
LayerKind mixerPricingKindOf(const LayerSpec &layer);
LayerKind ffnPricingKindOf(const LayerSpec &layer);

/// The TP group a recurrent mixer runs on inside an attention TP group of
/// `tpa` GPUs: the widest divisor of tpa that divides its heads (Gated
/// DeltaNet: key and value heads; KDA: heads; Mamba-2: heads and groups).
int64_t recurrentGroupWidth(const LayerSpec &layer, int64_t tpa);

/// The layout one kind of layer runs.
struct KindLayout {
  LayerKind kind = LayerKind::FullAttention;
  int64_t layers = 0; // layers of this kind (0: the model has none)
  /// Attention: kvp, tpa. Recurrent mixer: tpa of one group (kvp = 1).
  /// FFN: tpf, ep of one group.
  int64_t kvp = 1, tpa = 1, tpf = 1, ep = 1;
  int64_t replicas = 1; // FFN or recurrent groups on the N GPUs
  bool isAttention() const { return isAttentionKind(kind); }
  bool isRecurrent() const { return isRecurrentKind(kind); }
  bool isMixer() const { return isMixerKind(kind); }
  /// "kvp=8,tpa=8", "tpa=8 x9" (recurrent) or "tpf=8,ep=1 x8" (x replicas
  /// when more than one).
  std::string str() const;
  bool operator==(const KindLayout &o) const {
    return kind == o.kind && kvp == o.kvp && tpa == o.tpa && tpf == o.tpf &&
           ep == o.ep && replicas == o.replicas;
  }
};

/// One layout per kind (indexed by LayerKind; kinds the model lacks have
/// layers == 0), and the resharding between consecutive layers.
struct PerLayerChoice {
  std::array<KindLayout, kNumLayerKinds> kinds;
  int64_t layoutChanges = 0; // layer boundaries where the layout changes
  double reshardBytes = 0;   // per GPU per step for them (0 within Helix)
  double reshardS = 0;
  const KindLayout &of(LayerKind k) const { return kinds[int(k)]; }
  /// The layout that names the plan's attention widths: full attention's,
  /// else sparse, window, linear attention or Mamba (the first with
  /// layers); and its FFN's: MoE, else dense.
  const KindLayout &mainMixer() const;
  const KindLayout &mainFFN() const;
  /// The kinds with layers, token mixers first (full, window, sparse
  /// attention, linear attention, Mamba), then dense and MoE FFN: the
  /// order reports list them in.
  std::vector<const KindLayout *> present() const;
  /// True when the attention kinds share their widths and every FFN group
  /// spans all `gpus` GPUs (what one uniform layout runs, when that layout
  /// does not duplicate KV heads).
  bool uniform(int64_t gpus) const;
};

/// Why `k` cannot lay out its kind's layers of `model` on the `gpus` GPUs of
/// one stage, or "" when it can. Attention: kvp x tpa = gpus, tpa dividing
/// the query heads and either dividing the KV heads or, at kvp = 1, a
/// multiple of them; the output projection TP over all gpus. FFN: a group
/// of tpf x ep GPUs (ep = 1 when dense; ep dividing the experts, tpf the
/// (expert) intermediate, the group the shared experts' intermediate),
/// replicated gpus / group times, the replicas packing into `hw`'s NVLink
/// domains when a group is no wider than one. The rules the search
/// enumerates and helix-apply-layout checks.
std::string validateKindLayout(const ModelSpec &model, const Hardware &hw,
                               int64_t gpus, const KindLayout &k);

/// The Helix configuration and placement a kind's layout is priced with
/// and lowered by: an attention kind runs kvp x tpa with the output
/// projection and an FFN of all `gpus`; an FFN kind one group of tpf x ep
/// GPUs, replicated, its configuration carrying `attention`'s widths (FFN
/// costs do not read them). `slices`: HOP-B slices (0: the best count).
Config kindConfig(const KindLayout &k, int64_t gpus,
                  const KindLayout &attention, int64_t slices = 0);
Placement kindPlacement(const KindLayout &k, int64_t gpus,
                        const KindLayout &attention, int64_t slices = 0);

/// Parses "KIND=LAYOUT[;KIND=LAYOUT...]": full_attention / window_attention
/// take kvp=..,tpa=..; dense_ffn / moe_ffn take tpf=..[,ep=..] (the group;
/// its replicas fill the GPUs: `replicas` is left 0 here). One entry per
/// kind at most. A one-line `error` names the bad item.
bool parseKindLayouts(const std::string &text, std::vector<KindLayout> &out,
                      std::string &error);

/// The uniform layout as a per-layer choice of `model`'s kinds: kvp, tpa
/// for every attention kind; the MoE group tpf x ep and the dense FFN over
/// all GPUs of the stage (what helix-apply-layout gives a uniform Helix
/// plan's ops).
PerLayerChoice uniformChoice(const ModelSpec &model, const Layout &layout);

/// Layer boundaries of `model` where `choice` changes layout (the
/// resharding there moves 0 bytes within Helix: reshardBytes).
int64_t layoutChanges(const ModelSpec &model, const PerLayerChoice &choice);

/// The choice of `layout`'s widths for every kind (uniformChoice) with the
/// kinds of `kinds` (parseKindLayouts) in their place, an FFN group's
/// replicas filling the layout's GPUs. Fails with a one-line `error` when
/// `model` has no layers of a kind named.
bool choiceWithKinds(const ModelSpec &model, const Layout &layout,
                     const std::vector<KindLayout> &kinds,
                     PerLayerChoice &choice, std::string &error);

/// Bytes one GPU receives to move the residual stream of `batch` requests
/// (`hidden` values of `activationBytes`) from the placement of one layer to
/// the next: 0 when `from` holds every request on every GPU (each GPU takes
/// what it needs locally); with data-parallel attention (`from` splits the
/// requests over dp replicas) an all-gather of the batch, unless `to` splits
/// them the same way.
double reshardBytes(const Placement &from, const Placement &to, int64_t batch,
                    double hidden, double activationBytes);

/// FFN candidates priced on one GPU count, for searches of other counts of
/// the same model, hardware and workload (an FFN group's cost does not
/// depend on the GPUs around it).
class PerLayerReuse {
public:
  PerLayerReuse();
  ~PerLayerReuse();

private:
  friend class PerLayerSearch;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// Prices per-layer plans on one GPU count: candidates are enumerated and
/// prepared once, then each batch is priced from them. The model and the
/// hardware must outlive the search; the workload is copied.
class PerLayerSearch {
public:
  PerLayerSearch(const ModelSpec &model, const Hardware &hw,
                 const Workload &workload, int64_t gpus,
                 PerLayerReuse *reuse = nullptr);
  /// Prices exactly `only` (its kinds' layouts, with `slices` HOP-B slices;
  /// 0: the best count): an explicit per-layer plan. Invalid when a kind's
  /// layout is (error() says why).
  PerLayerSearch(const ModelSpec &model, const Hardware &hw,
                 const Workload &workload, int64_t gpus,
                 const PerLayerChoice &only, int64_t slices = 0);
  ~PerLayerSearch();
  PerLayerSearch(const PerLayerSearch &) = delete;
  PerLayerSearch &operator=(const PerLayerSearch &) = delete;

  /// False when some kind of layer has no valid layout on these GPUs.
  bool valid() const;
  /// Why not valid (a kind without layouts, or the explicit choice's
  /// problem).
  const std::string &error() const;
  /// Configurations one price() call weighs (the product of the kinds'
  /// candidate counts; the search prunes most of them).
  uint64_t combinations() const;
  /// The fastest choice that fits in memory at `batch`; false when none
  /// does. `point.config` is Helix on the GPUs at the batch, its layout the
  /// full (else window) attention's kvp, tpa and the MoE (else dense) FFN
  /// group's tpf, ep.
  bool price(int64_t batch, PlanPoint &point, PerLayerChoice &choice);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace helix

#endif // HELIX_COST_PERLAYER_H
