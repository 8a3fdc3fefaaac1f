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

#include "helix/Cost/Hardware.h"
#include "helix/Cost/Pareto.h"
#include "helix/Cost/Placement.h"
#include "helix/Cost/Workload.h"
#include "helix/Model/ModelSpec.h"

#include <array>
#include <memory>
#include <string>

namespace helix {

enum class LayerKind { FullAttention, WindowAttention, DenseFFN, MoEFFN };
constexpr int kNumLayerKinds = 4;

/// "full attention", "window attention", "dense FFN", "MoE FFN".
const char *layerKindName(LayerKind kind);
/// "full_attention", "window_attention", "dense_ffn", "moe_ffn" (JSON).
const char *layerKindKey(LayerKind kind);

/// The layout one kind of layer runs.
struct KindLayout {
  LayerKind kind = LayerKind::FullAttention;
  int64_t layers = 0; // layers of this kind (0: the model has none)
  /// Attention: kvp, tpa. FFN: tpf, ep of one group.
  int64_t kvp = 1, tpa = 1, tpf = 1, ep = 1;
  int64_t replicas = 1; // FFN groups on the N GPUs
  bool isAttention() const {
    return kind == LayerKind::FullAttention ||
           kind == LayerKind::WindowAttention;
  }
  /// "kvp=8,tpa=8" or "tpf=8,ep=1 x8" (x replicas when more than one).
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
  /// True when the attention kinds share their widths and every FFN group
  /// spans all `gpus` GPUs (what one uniform layout runs, when that layout
  /// does not duplicate KV heads).
  bool uniform(int64_t gpus) const;
};

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
  ~PerLayerSearch();
  PerLayerSearch(const PerLayerSearch &) = delete;
  PerLayerSearch &operator=(const PerLayerSearch &) = delete;

  /// False when some kind of layer has no valid layout on these GPUs.
  bool valid() const;
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
