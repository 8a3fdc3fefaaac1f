//===- PerLayer.cpp - One Helix layout per kind of layer ------------------===//

#include "helix/Cost/PerLayer.h"

#include "helix/Cost/Collectives.h"

#include "Engine.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

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

LayerKind attentionKindOf(const LayerSpec &l) {
  return l.attention.slidingWindow > 0 ? LayerKind::WindowAttention
                                       : LayerKind::FullAttention;
}

LayerKind ffnKindOf(const LayerSpec &l) {
  return l.isMoE ? LayerKind::MoEFFN : LayerKind::DenseFFN;
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

int64_t layoutChanges(const ModelSpec &model, const PerLayerChoice &choice) {
  int64_t changes = 0;
  for (size_t i = 1; i < model.layers.size(); ++i) {
    const LayerSpec &a = model.layers[i - 1], &b = model.layers[i];
    const KindLayout &attnA = choice.of(attentionKindOf(a)),
                     &attnB = choice.of(attentionKindOf(b));
    const KindLayout &ffnA = choice.of(ffnKindOf(a)),
                     &ffnB = choice.of(ffnKindOf(b));
    if (!(attnA.kvp == attnB.kvp && attnA.tpa == attnB.tpa &&
          ffnA.tpf == ffnB.tpf && ffnA.ep == ffnB.ep &&
          ffnA.replicas == ffnB.replicas))
      ++changes;
  }
  return changes;
}

bool choiceWithKinds(const ModelSpec &model, const Layout &layout,
                     const std::vector<KindLayout> &kinds,
                     PerLayerChoice &choice, std::string &error) {
  PerLayerChoice c = uniformChoice(model, layout);
  const int64_t gpus = layout.gpusPerStage();
  for (KindLayout k : kinds) {
    KindLayout &slot = c.kinds[int(k.kind)];
    if (slot.layers == 0) {
      error = model.name + " has no " + layerKindName(k.kind) + " layers";
      return false;
    }
    if (!k.isAttention() && k.replicas == 0)
      k.replicas = std::max<int64_t>(1, gpus / (k.tpf * k.ep));
    k.layers = slot.layers;
    slot = k;
  }
  c.layoutChanges = layoutChanges(model, c);
  choice = c;
  return true;
}

double reshardBytes(const Placement &from, const Placement &to, int64_t batch,
                    double hidden, double activationBytes) {
  if (!from.tokensSplit || (to.tokensSplit && to.dp == from.dp))
    return 0;
  return double(batch) * hidden * activationBytes;
}

std::string validateKindLayout(const ModelSpec &model, const Hardware &hw,
                               int64_t gpus, const KindLayout &k) {
  auto text = [](int64_t v) { return std::to_string(v); };
  // Built only for a message (the search validates every candidate).
  struct What {
    const KindLayout &k;
    operator std::string() const {
      return std::string(layerKindName(k.kind)) + " " + k.str();
    }
    std::string operator+(const std::string &rest) const {
      return std::string(*this) + rest;
    }
  } what{k};
  if (gpus < 1 || k.kvp < 1 || k.tpa < 1 || k.tpf < 1 || k.ep < 1 ||
      k.replicas < 1)
    return what + ": every width must be at least 1";
  if (k.isAttention()) {
    if (k.kvp * k.tpa != gpus)
      return what + ": kvp x tpa must be the " + text(gpus) + " GPUs";
    for (const LayerSpec &l : model.layers) {
      if (attentionKindOf(l) != k.kind)
        continue;
      const AttentionSpec &a = l.attention;
      int64_t kv = a.kind == AttentionKind::MLA ? 1 : a.numKVHeads;
      if (a.numHeads < 1 || kv < 1 || a.numHeads % k.tpa != 0)
        return what + ": tpa must divide the " + text(a.numHeads) +
               " query heads";
      if (!(kv % k.tpa == 0 || (k.kvp == 1 && k.tpa % kv == 0)))
        return what + ": tpa must divide the " + text(kv) +
               " KV heads (or, at kvp=1, be a multiple of them)";
      if ((a.numHeads * a.vHeadDim) % gpus != 0)
        return what + ": the output projection's " +
               text(a.numHeads * a.vHeadDim) + " inputs must split over the " +
               text(gpus) + " GPUs";
    }
    return "";
  }
  const bool moe = k.kind == LayerKind::MoEFFN;
  const int64_t width = k.tpf * k.ep;
  if (!moe && k.ep != 1)
    return what + ": a dense FFN has no experts (ep must be 1)";
  if (gpus % width != 0)
    return what + ": the group of tpf x ep = " + text(width) +
           " GPUs must divide the " + text(gpus) + " GPUs";
  if (width * k.replicas != gpus)
    return what + ": tpf x ep x replicas must be the " + text(gpus) + " GPUs";
  for (const LayerSpec &l : model.layers) {
    if (l.isMoE != moe)
      continue;
    if (!moe) {
      if (l.ffn.intermediate % width != 0)
        return what + ": tpf must divide the intermediate size " +
               text(l.ffn.intermediate);
      continue;
    }
    const MoESpec &m = l.moe;
    if (m.numExperts % k.ep != 0)
      return what + ": ep must divide the " + text(m.numExperts) + " experts";
    if (m.expertIntermediate % k.tpf != 0)
      return what + ": tpf must divide the expert intermediate size " +
             text(m.expertIntermediate);
    if (m.numSharedExperts > 0 && m.sharedIntermediate % width != 0)
      return what + ": the group of " + text(width) +
             " GPUs must divide the shared experts' intermediate size " +
             text(m.sharedIntermediate);
  }
  // A group no wider than an NVLink domain is priced at NVLink speed
  // (Collectives.h), so its replicas must each fit inside one of the
  // domains the GPUs span: floor(domain / width) per domain. (A group
  // wider than a domain is priced on the scale-out network already.)
  const int64_t domain = std::max<int64_t>(1, hw.nvlinkDomain);
  if (width != gpus && width <= domain) {
    const int64_t domains = (gpus + domain - 1) / domain;
    if (k.replicas > domains * (domain / width))
      return what + ": " + text(k.replicas) + " groups of " + text(width) +
             " GPUs do not pack into " + text(domains) + " NVLink domain" +
             (domains == 1 ? "" : "s") + " of " + text(domain);
  }
  return "";
}

Config kindConfig(const KindLayout &k, int64_t gpus,
                  const KindLayout &attention, int64_t slices) {
  Config c;
  c.strategy = Strategy::Helix;
  c.gpus = gpus;
  c.hopbSlices = slices;
  const KindLayout &a = k.isAttention() ? k : attention;
  c.layout.kvp = a.kvp;
  c.layout.tpa = a.tpa;
  c.layout.tpf = k.isAttention() ? gpus : k.tpf;
  c.layout.ep = k.isAttention() ? 1 : k.ep;
  return c;
}

Placement kindPlacement(const KindLayout &k, int64_t gpus,
                        const KindLayout &attention, int64_t slices) {
  Placement p = placementFor(kindConfig(k, gpus, attention, slices));
  if (!k.isAttention()) {
    p.ffnWidth = k.tpf * k.ep;
    p.sharedWidth = p.ffnWidth;
  }
  return p;
}

bool parseKindLayouts(const std::string &text, std::vector<KindLayout> &out,
                      std::string &error) {
  std::vector<KindLayout> kinds;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    std::string item =
        text.substr(start, end == std::string::npos ? end : end - start);
    start = end == std::string::npos ? text.size() + 1 : end + 1;
    size_t eq = item.find('=');
    std::string kindText = item.substr(0, eq);
    std::optional<LayerKind> kind = symbolizeLayerKind(kindText);
    if (eq == std::string::npos || !kind) {
      error = "per-layer layout '" + item +
              "' is not KIND=LAYOUT with KIND full_attention, "
              "window_attention, dense_ffn or moe_ffn";
      return false;
    }
    std::string layoutText = item.substr(eq + 1);
    // Only the kind's own widths.
    const bool attn = isAttentionKind(*kind);
    for (size_t i = 0; i < layoutText.size();) {
      size_t comma = layoutText.find(',', i);
      std::string key = layoutText.substr(i, layoutText.find('=', i) - i);
      bool allowed =
          attn ? (key == "kvp" || key == "tpa") : (key == "tpf" || key == "ep");
      if (!allowed) {
        error = "per-layer layout '" + item + "': " + kindText + " takes " +
                (attn ? "kvp and tpa" : "tpf and ep") + ", not '" + key + "'";
        return false;
      }
      i = comma == std::string::npos ? layoutText.size() : comma + 1;
    }
    Layout l;
    if (!parseLayout(layoutText, l, error)) {
      error = "per-layer layout '" + item + "': " + error;
      return false;
    }
    for (const KindLayout &k : kinds)
      if (k.kind == *kind) {
        error = "per-layer layouts give " + kindText + " twice";
        return false;
      }
    KindLayout k;
    k.kind = *kind;
    k.kvp = attn ? l.kvp : 1;
    k.tpa = attn ? l.tpa : 1;
    k.tpf = attn ? 1 : l.tpf;
    k.ep = attn ? 1 : l.ep;
    k.replicas = attn ? 1 : 0;
    kinds.push_back(k);
  }
  out = std::move(kinds);
  return true;
}

PerLayerChoice uniformChoice(const ModelSpec &model, const Layout &l) {
  PerLayerChoice c;
  for (int k = 0; k < kNumLayerKinds; ++k)
    c.kinds[k].kind = LayerKind(k);
  for (const LayerSpec &layer : model.layers) {
    ++c.kinds[int(attentionKindOf(layer))].layers;
    ++c.kinds[int(ffnKindOf(layer))].layers;
  }
  const int64_t stage = l.gpusPerStage();
  for (KindLayout &k : c.kinds) {
    k.kvp = l.kvp;
    k.tpa = l.tpa;
    k.tpf = k.kind == LayerKind::MoEFFN ? l.tpf : stage;
    k.ep = k.kind == LayerKind::MoEFFN ? l.ep : 1;
    k.replicas = k.isAttention() ? 1 : stage / (k.tpf * k.ep);
  }
  return c;
}

namespace {

using detail::LayerCost;
using detail::LayerShape;
using detail::Prepared;

} // namespace

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

namespace {

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
  std::string error;
  /// An explicit choice: only its layouts are candidates (null: search).
  std::optional<PerLayerChoice> only;
  int64_t slices = 0; // HOP-B slices the candidates are priced with
  /// Candidates by kind (empty for kinds the model lacks).
  std::array<std::vector<Candidate>, kNumLayerKinds> candidates;
  std::array<int64_t, kNumLayerKinds> layersOfKind{};
  /// Class structure (the same in every candidate's Prepared).
  std::vector<int64_t> classCount;
  std::vector<LayerKind> attnKindOfClass, ffnKindOfClass;

  PerLayerReuse::Impl *reuse;

  Impl(const ModelSpec &m, const Hardware &h, const Workload &w, int64_t n,
       PerLayerReuse::Impl *r, std::optional<PerLayerChoice> fixed = {},
       int64_t hopbSlices = 0)
      : model(m), hw(h), workload(w), gpus(n), only(std::move(fixed)),
        slices(hopbSlices), reuse(only ? nullptr : r) {
    if (m.numLayers() == 0 || n < 1) {
      fail("no layers, or no GPUs");
      return;
    }
    if (!h.supports(w.precision.compute)) {
      fail(h.name + " has no " + stringifyDType(w.precision.compute).str() +
           " math");
      return;
    }
    for (const LayerSpec &l : m.layers) {
      ++layersOfKind[int(attentionKindOf(l))];
      ++layersOfKind[int(ffnKindOf(l))];
    }
    // Attention kinds first: FFN candidates are prepared with their widths.
    addKind(LayerKind::FullAttention);
    addKind(LayerKind::WindowAttention);
    if (!ok)
      return;
    addKind(LayerKind::DenseFFN);
    addKind(LayerKind::MoEFFN);
    if (!ok)
      return;
    // Classes: from any candidate (prepare() groups layers by shape alone).
    const Prepared &p = anyPrepared();
    for (size_t c = 0; c < p.classes.size(); ++c) {
      classCount.push_back(p.stageCounts[0][c]);
      int64_t layer = 0;
      while (p.classOfLayer[layer] != int64_t(c))
        ++layer;
      attnKindOfClass.push_back(attentionKindOf(m.layers[layer]));
      ffnKindOfClass.push_back(ffnKindOf(m.layers[layer]));
    }
  }

  void fail(const std::string &why) {
    ok = false;
    if (error.empty())
      error = why;
  }

  const Prepared &anyPrepared() const {
    for (const auto &list : candidates)
      if (!list.empty())
        return *list.front().prepared;
    return *candidates[0].front().prepared; // unreachable when ok
  }

  /// The layouts of `kind` to consider: the explicit choice's, or every
  /// split of the GPUs (attention: tpa x kvp; FFN: a group of tpf x ep,
  /// replicated).
  std::vector<KindLayout> layoutsOf(LayerKind kind) const {
    if (only)
      return {only->of(kind)};
    std::vector<KindLayout> all;
    KindLayout k;
    k.kind = kind;
    if (isAttentionKind(kind)) {
      for (int64_t tpa : divisorsOf(gpus)) {
        k.tpa = tpa;
        k.kvp = gpus / tpa;
        all.push_back(k);
      }
      return all;
    }
    for (int64_t width : divisorsOf(gpus))
      for (int64_t ep : kind == LayerKind::MoEFFN ? divisorsOf(width)
                                                  : std::vector<int64_t>{1}) {
        k.tpf = width / ep;
        k.ep = ep;
        k.replicas = gpus / width;
        all.push_back(k);
      }
    return all;
  }

  /// The valid layouts of `kind` as candidates (none when the model lacks
  /// the kind); an explicit choice's invalid layout fails the search with
  /// its reason. FFN kinds are prepared with the first attention
  /// candidate's widths (FFN costs do not read them) and shared between GPU
  /// counts through `reuse`.
  void addKind(LayerKind kind) {
    if (layersOfKind[int(kind)] == 0)
      return;
    const bool attention = isAttentionKind(kind);
    for (KindLayout k : layoutsOf(kind)) {
      std::string why = validateKindLayout(model, hw, gpus, k);
      if (!why.empty()) {
        if (only)
          fail(why);
        continue;
      }
      k.layers = layersOfKind[int(kind)];
      Candidate cand;
      cand.layout = k;
      const KindLayout &attn = attention ? k : firstAttention();
      std::shared_ptr<const Prepared> *slot = nullptr;
      if (reuse && !attention)
        slot = &reuse->prepared[{int64_t(kind), k.tpf * k.ep, k.tpf, k.ep}];
      if (slot && *slot) {
        cand.prepared = *slot;
      } else {
        auto prepared = std::make_shared<Prepared>();
        detail::prepare(model, hw, workload, kindConfig(k, gpus, attn, slices),
                        kindPlacement(k, gpus, attn, slices), *prepared);
        cand.prepared = std::move(prepared);
        if (slot)
          *slot = cand.prepared;
      }
      candidates[int(kind)].push_back(std::move(cand));
    }
    if (candidates[int(kind)].empty())
      fail(std::string("no valid ") + layerKindName(kind) + " layout on " +
           std::to_string(gpus) + " GPUs");
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
    choice.layoutChanges = layoutChanges(model, choice);
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

PerLayerSearch::PerLayerSearch(const ModelSpec &model, const Hardware &hw,
                               const Workload &workload, int64_t gpus,
                               const PerLayerChoice &only, int64_t slices)
    : impl(std::make_unique<Impl>(model, hw, workload, gpus, nullptr, only,
                                  slices)) {}

bool PerLayerSearch::valid() const { return impl->ok; }

const std::string &PerLayerSearch::error() const { return impl->error; }

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
