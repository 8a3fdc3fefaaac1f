//===- PerLayer.cpp - One Helix layout per kind of layer ------------------===//

#include "helix/Cost/PerLayer.h"

#include "helix/Cost/Collectives.h"

#include "Engine.h"

#include <algorithm>
#include <limits>
#include <map>

namespace helix {

const char *layerKindName(LayerKind kind) {
  switch (kind) {
  case LayerKind::FullAttention:
    return "full attention";
  case LayerKind::WindowAttention:
    return "window attention";
  case LayerKind::DenseFFN:
    return "dense FFN";
  case LayerKind::MoEFFN:
    return "MoE FFN";
  }
  return "";
}

const char *layerKindKey(LayerKind kind) {
  switch (kind) {
  case LayerKind::FullAttention:
    return "full_attention";
  case LayerKind::WindowAttention:
    return "window_attention";
  case LayerKind::DenseFFN:
    return "dense_ffn";
  case LayerKind::MoEFFN:
    return "moe_ffn";
  }
  return "";
}

std::string KindLayout::str() const {
  if (isAttention())
    return "kvp=" + std::to_string(kvp) + ",tpa=" + std::to_string(tpa);
  std::string s = "tpf=" + std::to_string(tpf) + ",ep=" + std::to_string(ep);
  return replicas > 1 ? s + " x" + std::to_string(replicas) : s;
}

bool PerLayerChoice::uniform(int64_t gpus) const {
  const KindLayout *attn = nullptr;
  for (const KindLayout &k : kinds) {
    if (k.layers == 0)
      continue;
    if (k.isAttention()) {
      if (attn && (attn->kvp != k.kvp || attn->tpa != k.tpa))
        return false;
      attn = &k;
    } else if (k.replicas != 1 || k.tpf * k.ep != gpus) {
      return false;
    }
  }
  return true;
}

double reshardBytes(const Placement &from, const Placement &to, int64_t batch,
                    double hidden, double activationBytes) {
  if (!from.tokensSplit || (to.tokensSplit && to.dp == from.dp))
    return 0;
  return double(batch) * hidden * activationBytes;
}

namespace {

using detail::LayerCost;
using detail::LayerShape;
using detail::Prepared;

static std::vector<int64_t> divisorsOf(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      d.push_back(i);
      if (i != n / i)
        d.push_back(n / i);
    }
  std::sort(d.begin(), d.end());
  return d;
}

/// One candidate layout of one kind, prepared.
struct Candidate {
  KindLayout layout;
  std::shared_ptr<const Prepared> prepared;
};

/// A candidate priced at one batch: its kind's layers' time and resident
/// bytes, and the workspace of each layer class it covers.
struct Priced {
  double timeS = 0, bytes = 0;
  int64_t slices = 1;
  std::vector<double> workspace; // per class (0 for classes of other kinds)
  const Candidate *candidate = nullptr;
};

bool dominates(const Priced &a, const Priced &b) {
  if (a.timeS > b.timeS || a.bytes > b.bytes)
    return false;
  for (size_t c = 0; c < a.workspace.size(); ++c)
    if (a.workspace[c] > b.workspace[c])
      return false;
  return true;
}

} // namespace

/// FFN candidates do not depend on the GPU count: the FFN half of a layer
/// reads only its group (Engine.h, costFFNHalf; the per-layer plan's step
/// and attention are priced per count). Keyed by kind, group and batch.
struct PerLayerReuse::Impl {
  using GroupKey = std::array<int64_t, 4>; // kind, width, tpf, ep
  std::map<GroupKey, std::shared_ptr<const Prepared>> prepared;
  std::map<std::pair<GroupKey, int64_t>, Priced> priced;
};

PerLayerReuse::PerLayerReuse() : impl(std::make_unique<Impl>()) {}
PerLayerReuse::~PerLayerReuse() = default;

struct PerLayerSearch::Impl {
  const ModelSpec &model;
  const Hardware &hw;
  /// A copy: callers may pass a temporary (the workload is small).
  const Workload workload;
  int64_t gpus;
  bool ok = true;
  /// Candidates by kind (empty for kinds the model lacks).
  std::array<std::vector<Candidate>, kNumLayerKinds> candidates;
  std::array<int64_t, kNumLayerKinds> layersOfKind{};
  /// Class structure (the same in every candidate's Prepared).
  std::vector<int64_t> classCount;
  std::vector<LayerKind> attnKindOfClass, ffnKindOfClass;

  PerLayerReuse::Impl *reuse;

  Impl(const ModelSpec &m, const Hardware &h, const Workload &w, int64_t n,
       PerLayerReuse::Impl *r)
      : model(m), hw(h), workload(w), gpus(n), reuse(r) {
    if (m.numLayers() == 0 || n < 1 || !h.supports(w.precision.compute)) {
      ok = false;
      return;
    }
    // The output projection is TP over the stage in every Helix layout.
    for (const LayerSpec &l : m.layers)
      if ((l.attention.numHeads * l.attention.vHeadDim) % n != 0) {
        ok = false;
        return;
      }
    for (const LayerSpec &l : m.layers) {
      ++layersOfKind[int(attentionKind(l))];
      ++layersOfKind[int(l.isMoE ? LayerKind::MoEFFN : LayerKind::DenseFFN)];
    }
    addAttention(LayerKind::FullAttention);
    addAttention(LayerKind::WindowAttention);
    if (!ok)
      return;
    addFFN(LayerKind::DenseFFN);
    addFFN(LayerKind::MoEFFN);
    if (!ok)
      return;
    // Classes: from any candidate (prepare() groups layers by shape alone).
    const Prepared &p = anyPrepared();
    for (size_t c = 0; c < p.classes.size(); ++c) {
      classCount.push_back(p.stageCounts[0][c]);
      int64_t layer = 0;
      while (p.classOfLayer[layer] != int64_t(c))
        ++layer;
      attnKindOfClass.push_back(attentionKind(m.layers[layer]));
      ffnKindOfClass.push_back(m.layers[layer].isMoE ? LayerKind::MoEFFN
                                                     : LayerKind::DenseFFN);
    }
  }

  static LayerKind attentionKind(const LayerSpec &l) {
    return l.attention.slidingWindow > 0 ? LayerKind::WindowAttention
                                         : LayerKind::FullAttention;
  }

  const Prepared &anyPrepared() const {
    for (const auto &list : candidates)
      if (!list.empty())
        return *list.front().prepared;
    return *candidates[0].front().prepared; // unreachable when ok
  }

  Config configFor(int64_t kvp, int64_t tpa, int64_t tpf, int64_t ep) const {
    Config c;
    c.strategy = Strategy::Helix;
    c.layout.kvp = kvp;
    c.layout.tpa = tpa;
    c.layout.tpf = tpf;
    c.layout.ep = ep;
    return c;
  }

  void addAttention(LayerKind kind) {
    if (layersOfKind[int(kind)] == 0)
      return;
    for (int64_t tpa : divisorsOf(gpus)) {
      int64_t kvp = gpus / tpa;
      bool fits = true;
      for (const LayerSpec &l : model.layers) {
        if (attentionKind(l) != kind)
          continue;
        const AttentionSpec &a = l.attention;
        int64_t k = a.kind == AttentionKind::MLA ? 1 : a.numKVHeads;
        if (a.numHeads < 1 || k < 1 || a.numHeads % tpa != 0 ||
            !(k % tpa == 0 || (kvp == 1 && tpa % k == 0)))
          fits = false;
      }
      if (!fits)
        continue;
      Config c = configFor(kvp, tpa, gpus, 1);
      Candidate cand;
      cand.layout.kind = kind;
      cand.layout.layers = layersOfKind[int(kind)];
      cand.layout.kvp = kvp;
      cand.layout.tpa = tpa;
      auto prepared = std::make_shared<Prepared>();
      detail::prepare(model, hw, workload, c, *prepared);
      cand.prepared = std::move(prepared);
      candidates[int(kind)].push_back(std::move(cand));
    }
    ok = ok && !candidates[int(kind)].empty();
  }

  void addFFN(LayerKind kind) {
    if (layersOfKind[int(kind)] == 0)
      return;
    bool moe = kind == LayerKind::MoEFFN;
    // Attention widths for the prepared shapes (unused for FFN costs).
    const KindLayout &attn = firstAttention();
    for (int64_t width : divisorsOf(gpus)) {
      for (int64_t ep : moe ? divisorsOf(width) : std::vector<int64_t>{1}) {
        int64_t tpf = width / ep;
        bool fits = true;
        for (const LayerSpec &l : model.layers) {
          if (l.isMoE != moe)
            continue;
          if (!moe) {
            fits = fits && l.ffn.intermediate % width == 0;
            continue;
          }
          const MoESpec &s = l.moe;
          fits = fits && s.numExperts % ep == 0 &&
                 s.expertIntermediate % tpf == 0 &&
                 (s.numSharedExperts == 0 || s.sharedIntermediate % width == 0);
        }
        if (!fits || !replicasPack(width))
          continue;
        Config c = configFor(attn.kvp, attn.tpa, tpf, ep);
        Placement pl = placementFor(c);
        pl.ffnWidth = width;
        pl.sharedWidth = width;
        Candidate cand;
        cand.layout.kind = kind;
        cand.layout.layers = layersOfKind[int(kind)];
        cand.layout.tpf = tpf;
        cand.layout.ep = ep;
        cand.layout.replicas = gpus / width;
        std::shared_ptr<const Prepared> *slot = nullptr;
        if (reuse)
          slot = &reuse->prepared[{int64_t(kind), width, tpf, ep}];
        if (slot && *slot) {
          cand.prepared = *slot;
        } else {
          auto prepared = std::make_shared<Prepared>();
          detail::prepare(model, hw, workload, c, pl, *prepared);
          cand.prepared = std::move(prepared);
          if (slot)
            *slot = cand.prepared;
        }
        candidates[int(kind)].push_back(std::move(cand));
      }
    }
    ok = ok && !candidates[int(kind)].empty();
  }

  /// A group of `width` GPUs no wider than an NVLink domain is priced at
  /// NVLink speed (Collectives.h), so its N / width replicas must each fit
  /// inside one of the domains the N GPUs span: floor(domain / width) per
  /// domain. (A group wider than a domain is priced on the scale-out
  /// network already.)
  bool replicasPack(int64_t width) const {
    const int64_t domain = std::max<int64_t>(1, hw.nvlinkDomain);
    if (width == gpus || width > domain)
      return true;
    const int64_t domains = (gpus + domain - 1) / domain;
    return gpus / width <= domains * (domain / width);
  }

  const KindLayout &firstAttention() const {
    const auto &full = candidates[int(LayerKind::FullAttention)];
    return full.empty()
               ? candidates[int(LayerKind::WindowAttention)].front().layout
               : full.front().layout;
  }

  /// The candidates of `kind` at `batch`, those beaten by another dropped.
  std::vector<Priced> priceKind(LayerKind kind, int64_t batch) const {
    std::vector<Priced> all;
    bool attention =
        kind == LayerKind::FullAttention || kind == LayerKind::WindowAttention;
    for (const Candidate &cand : candidates[int(kind)]) {
      const Prepared &p = *cand.prepared;
      Priced *known = nullptr;
      if (reuse && !attention) {
        const KindLayout &l = cand.layout;
        known =
            &reuse->priced[{{int64_t(kind), l.tpf * l.ep, l.tpf, l.ep}, batch}];
        if (known->candidate) {
          all.push_back(*known);
          all.back().candidate = &cand;
          continue;
        }
      }
      Priced pr;
      pr.candidate = &cand;
      pr.workspace.assign(p.classes.size(), 0.0);
      const double requests = detail::attentionRequests(p, batch);
      for (size_t c = 0; c < p.classes.size(); ++c) {
        if ((attention ? attnKindOfClass[c] : ffnKindOfClass[c]) != kind)
          continue;
        const LayerShape &s = p.classes[c];
        const double n = double(classCount[c]);
        if (attention) {
          LayerCost lc;
          lc.qkv = detail::costQKV(p, s, batch);
          lc.core = detail::costAttentionCore(p, s, batch);
          lc.combine = detail::costCombine(p, s, batch);
          lc.oproj = detail::costOutProj(p, s, batch);
          detail::costAttentionComm(p, s, batch, lc);
          pr.timeS += n * (lc.qkv.timeS + lc.core.timeS + lc.combine.timeS +
                           lc.oproj.timeS + lc.exchange.exposedS +
                           lc.oprojComm.exposedS);
          pr.bytes += n * detail::attentionWeightBytes(p, s) +
                      detail::kvCacheBytes(p, s, n * requests);
          pr.workspace[c] =
              detail::attentionWorkspaceBytes(p, s, double(batch));
          pr.slices = std::max(pr.slices, lc.slices);
        } else {
          double active = 0;
          OpCost ffn = s.moe ? detail::costMoE(p, s, batch, active)
                             : detail::costDenseFFN(p, s, batch);
          pr.timeS +=
              n * (ffn.timeS + detail::costFFNComm(p, s, batch).exposedS);
          pr.bytes += n * (detail::ffnMatrixBytes(p, s) +
                           detail::normRouterBytes(p, s));
          pr.workspace[c] = detail::ffnWorkspaceBytes(p, s, double(batch));
        }
      }
      if (known)
        *known = pr;
      all.push_back(std::move(pr));
    }
    std::vector<Priced> kept;
    for (size_t i = 0; i < all.size(); ++i) {
      bool beaten = false;
      for (size_t j = 0; j < all.size() && !beaten; ++j)
        // Of equal candidates the first is kept.
        beaten = j != i && dominates(all[j], all[i]) &&
                 (j < i || !dominates(all[i], all[j]));
      if (!beaten)
        kept.push_back(std::move(all[i]));
    }
    return kept;
  }

  bool price(int64_t batch, PlanPoint &point, PerLayerChoice &choice) const {
    if (!ok)
      return false;
    std::array<std::vector<Priced>, kNumLayerKinds> priced;
    std::vector<int> kinds;
    for (int k = 0; k < kNumLayerKinds; ++k)
      if (!candidates[k].empty()) {
        priced[k] = priceKind(LayerKind(k), batch);
        kinds.push_back(k);
      }
    // Outside the layers (pp = 1: one stage, one micro-batch).
    const Prepared &p0 = anyPrepared();
    detail::StepCost step = detail::costStep(p0, batch);
    const double stepS = (step.first.timeS + step.firstCommS) +
                         (step.last.timeS + step.lastCommS);
    const double mb = double(batch);
    double fixedBytes = mb * p0.hidden * 4.0; // residual stream (fp32)
    detail::addStageWeights(p0, 0, fixedBytes);
    const double logits = detail::logitsWorkspaceBytes(p0, mb);
    const double capacity = hw.hbmCapacityBytes;
    const size_t numClasses = classCount.size();

    std::array<const Priced *, kNumLayerKinds> pick{}, best{};
    double bestS = std::numeric_limits<double>::infinity(), bestBytes = 0;
    // Depth-first over the kinds; time and bytes add up.
    auto visit = [&](auto &&self, size_t depth, double timeS,
                     double bytes) -> void {
      if (depth == kinds.size()) {
        double ws = logits;
        for (size_t c = 0; c < numClasses; ++c)
          ws = std::max(ws, pick[int(attnKindOfClass[c])]->workspace[c] +
                                pick[int(ffnKindOfClass[c])]->workspace[c]);
        double total = bytes + fixedBytes + ws;
        if (total <= capacity && timeS < bestS) {
          bestS = timeS;
          bestBytes = total;
          best = pick;
        }
        return;
      }
      int k = kinds[depth];
      for (const Priced &pr : priced[k]) {
        if (timeS + pr.timeS >= bestS || bytes + pr.bytes > capacity)
          continue;
        pick[k] = &pr;
        self(self, depth + 1, timeS + pr.timeS, bytes + pr.bytes);
      }
    };
    visit(visit, 0, 0.0, 0.0);
    if (!best[kinds.front()])
      return false;

    choice = PerLayerChoice();
    int64_t slices = 1;
    for (int k : kinds) {
      choice.kinds[k] = best[k]->candidate->layout;
      slices = std::max(slices, best[k]->slices);
    }
    for (int k = 0; k < kNumLayerKinds; ++k)
      choice.kinds[k].kind = LayerKind(k);
    // Layer boundaries whose layouts differ; every Helix layout leaves the
    // residual stream replicated, so no bytes move (reshardBytes).
    for (size_t i = 1; i < model.layers.size(); ++i) {
      const LayerSpec &a = model.layers[i - 1], &b = model.layers[i];
      const KindLayout &attnA = choice.of(attentionKind(a)),
                       &attnB = choice.of(attentionKind(b));
      const KindLayout &ffnA =
          choice.of(a.isMoE ? LayerKind::MoEFFN : LayerKind::DenseFFN);
      const KindLayout &ffnB =
          choice.of(b.isMoE ? LayerKind::MoEFFN : LayerKind::DenseFFN);
      if (!(attnA.kvp == attnB.kvp && attnA.tpa == attnB.tpa &&
            ffnA.tpf == ffnB.tpf && ffnA.ep == ffnB.ep &&
            ffnA.replicas == ffnB.replicas))
        ++choice.layoutChanges;
    }
    const Placement &pl = p0.place;
    choice.reshardBytes = double(choice.layoutChanges) *
                          reshardBytes(pl, pl, batch, p0.hidden,
                                       workload.precision.activationBytes());
    choice.reshardS = choice.reshardBytes > 0
                          ? collectiveTime(hw, CollectiveKind::AllGather, gpus,
                                           choice.reshardBytes)
                          : 0.0;

    const double ttl = bestS + stepS + choice.reshardS;
    point = PlanPoint();
    point.strategy = Strategy::Helix;
    point.config.strategy = Strategy::Helix;
    const KindLayout &attn = choice.of(LayerKind::FullAttention).layers > 0
                                 ? choice.of(LayerKind::FullAttention)
                                 : choice.of(LayerKind::WindowAttention);
    const KindLayout &ffn = choice.of(LayerKind::MoEFFN).layers > 0
                                ? choice.of(LayerKind::MoEFFN)
                                : choice.of(LayerKind::DenseFFN);
    point.config.layout.kvp = attn.kvp;
    point.config.layout.tpa = attn.tpa;
    point.config.layout.tpf = ffn.tpf;
    point.config.layout.ep = ffn.ep;
    point.config.batch = batch;
    point.config.gpus = gpus;
    point.gpus = gpus;
    point.ttlS = ttl;
    point.tokensPerSecPerUser = 1.0 / ttl;
    point.tokensPerSecPerGPU = double(batch) / (ttl * double(gpus));
    point.memoryPerGPUBytes = bestBytes;
    point.hopbSlices = slices;
    return true;
  }
};

PerLayerSearch::PerLayerSearch(const ModelSpec &model, const Hardware &hw,
                               const Workload &workload, int64_t gpus,
                               PerLayerReuse *reuse)
    : impl(std::make_unique<Impl>(model, hw, workload, gpus,
                                  reuse ? reuse->impl.get() : nullptr)) {}

PerLayerSearch::~PerLayerSearch() = default;

bool PerLayerSearch::valid() const { return impl->ok; }

uint64_t PerLayerSearch::combinations() const {
  uint64_t n = 1;
  for (const auto &list : impl->candidates)
    if (!list.empty())
      n *= list.size();
  return impl->ok ? n : 0;
}

bool PerLayerSearch::price(int64_t batch, PlanPoint &point,
                           PerLayerChoice &choice) {
  return impl->price(batch, point, choice);
}

} // namespace helix
