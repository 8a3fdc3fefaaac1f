//===- PerLayer.cpp - One Helix layout per kind of layer ------------------===//

#include "helix/Cost/PerLayer.h"

#include "helix/Cost/Collectives.h"
#include "helix/Cost/Evaluate.h"

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
  case LayerKind::LinearAttention:
    return "linear attention";
  case LayerKind::Mamba:
    return "Mamba";
  case LayerKind::SparseAttention:
    return "sparse attention";
  }
  return "";
}

std::optional<LayerKind> mixerKindOf(const LayerSpec &l) {
  switch (l.mixer) {
  case MixerKind::Attention:
    if (l.attention.indexer.sparse())
      return LayerKind::SparseAttention;
    return l.attention.slidingWindow > 0 ? LayerKind::WindowAttention
                                         : LayerKind::FullAttention;
  case MixerKind::LinearAttention:
    return LayerKind::LinearAttention;
  case MixerKind::Mamba:
    return LayerKind::Mamba;
  case MixerKind::None:
    break;
  }
  return std::nullopt;
}

std::optional<LayerKind> ffnKindOf(const LayerSpec &l) {
  if (!l.hasFFN)
    return std::nullopt;
  return l.isMoE ? LayerKind::MoEFFN : LayerKind::DenseFFN;
}

LayerKind mixerPricingKindOf(const LayerSpec &l) {
  if (std::optional<LayerKind> k = mixerKindOf(l))
    return *k;
  return ffnKindOf(l).value_or(LayerKind::DenseFFN);
}

LayerKind ffnPricingKindOf(const LayerSpec &l) {
  if (std::optional<LayerKind> k = ffnKindOf(l))
    return *k;
  return mixerKindOf(l).value_or(LayerKind::FullAttention);
}

int64_t recurrentGroupWidth(const LayerSpec &l, int64_t tpa) {
  int64_t a = 1, b = 1;
  if (l.mixer == MixerKind::LinearAttention) {
    a = l.linear.numKeyHeads;
    b = l.linear.numValueHeads;
  } else if (l.mixer == MixerKind::Mamba) {
    a = l.mamba.numHeads;
    b = l.mamba.nGroups;
  }
  for (int64_t g = tpa; g > 1; --g)
    if (tpa % g == 0 && a % g == 0 && b % g == 0)
      return g;
  return 1;
}

std::string KindLayout::str() const {
  if (isAttention())
    return "kvp=" + std::to_string(kvp) + ",tpa=" + std::to_string(tpa);
  if (isRecurrent())
    return "tpa=" + std::to_string(tpa) +
           (replicas > 1 ? " x" + std::to_string(replicas) : "");
  std::string s = "tpf=" + std::to_string(tpf) + ",ep=" + std::to_string(ep);
  return replicas > 1 ? s + " x" + std::to_string(replicas) : s;
}

const KindLayout &PerLayerChoice::mainMixer() const {
  for (LayerKind k : {LayerKind::FullAttention, LayerKind::SparseAttention,
                      LayerKind::WindowAttention, LayerKind::LinearAttention,
                      LayerKind::Mamba})
    if (of(k).layers > 0)
      return of(k);
  return of(LayerKind::FullAttention);
}

std::vector<const KindLayout *> PerLayerChoice::present() const {
  std::vector<const KindLayout *> out;
  for (LayerKind k : {LayerKind::FullAttention, LayerKind::WindowAttention,
                      LayerKind::SparseAttention, LayerKind::LinearAttention,
                      LayerKind::Mamba, LayerKind::DenseFFN, LayerKind::MoEFFN})
    if (of(k).layers > 0)
      out.push_back(&of(k));
  return out;
}

const KindLayout &PerLayerChoice::mainFFN() const {
  return of(LayerKind::MoEFFN).layers > 0 ? of(LayerKind::MoEFFN)
                                          : of(LayerKind::DenseFFN);
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
    } else if (k.isRecurrent()) {
      // Uniform: the attention's TP group, or its widest divisor the heads
      // allow (recurrentGroupWidth), replicated.
      continue;
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
    const KindLayout &attnA = choice.of(mixerPricingKindOf(a)),
                     &attnB = choice.of(mixerPricingKindOf(b));
    const KindLayout &ffnA = choice.of(ffnPricingKindOf(a)),
                     &ffnB = choice.of(ffnPricingKindOf(b));
    if (!(attnA.kvp == attnB.kvp && attnA.tpa == attnB.tpa &&
          attnA.replicas == attnB.replicas && ffnA.tpf == ffnB.tpf &&
          ffnA.ep == ffnB.ep && ffnA.replicas == ffnB.replicas))
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
    if (k.isRecurrent() && k.replicas == 0)
      k.replicas = std::max<int64_t>(1, gpus / k.tpa);
    else if (!k.isMixer() && k.replicas == 0)
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
      if (mixerKindOf(l) != k.kind)
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
      if (k.kvp > 1) {
        std::string spread = helixHeadSpreadError(a.numHeads / k.tpa, k.kvp, a);
        if (!spread.empty())
          return what + ": " + spread;
      }
    }
    return "";
  }
  const int64_t domain = std::max<int64_t>(1, hw.nvlinkDomain);
  // Groups no wider than an NVLink domain are priced at NVLink speed
  // (Collectives.h), so their replicas must each fit inside one of the
  // domains the GPUs span: floor(domain / width) per domain. (A group
  // wider than a domain is priced on the scale-out network already.)
  auto packs = [&](int64_t width) -> std::string {
    if (width == gpus || width > domain)
      return "";
    const int64_t domains = (gpus + domain - 1) / domain;
    if (k.replicas <= domains * (domain / width))
      return "";
    return what + ": " + text(k.replicas) + " groups of " + text(width) +
           " GPUs do not pack into " + text(domains) + " NVLink domain" +
           (domains == 1 ? "" : "s") + " of " + text(domain);
  };
  if (k.isRecurrent()) {
    if (k.kvp != 1)
      return what +
             ": a recurrent layer keeps a fixed-size state, not a "
             "KV cache, so KV parallelism (kvp = " +
             text(k.kvp) +
             ") means nothing for it: use kvp=1 and a TP group (tpa), "
             "replicated over the GPUs";
    if (gpus % k.tpa != 0 || k.tpa * k.replicas != gpus)
      return what + ": tpa x replicas must be the " + text(gpus) + " GPUs";
    for (const LayerSpec &l : model.layers) {
      if (mixerKindOf(l) != k.kind)
        continue;
      if (recurrentGroupWidth(l, k.tpa) != k.tpa)
        return what + ": tpa must divide the " +
               (l.mixer == MixerKind::Mamba
                    ? text(l.mamba.numHeads) + " heads and " +
                          text(l.mamba.nGroups) + " groups"
                    : text(l.linear.numKeyHeads) + " key heads and " +
                          text(l.linear.numValueHeads) + " value heads");
    }
    return packs(k.tpa);
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
    if (ffnKindOf(l) != k.kind)
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
  return packs(width);
}

Config kindConfig(const KindLayout &k, int64_t gpus,
                  const KindLayout &attention, int64_t slices) {
  Config c;
  c.strategy = Strategy::Helix;
  c.gpus = gpus;
  c.hopbSlices = slices;
  const KindLayout &a = k.isMixer() ? k : attention;
  // A recurrent kind's group of tpa GPUs, replicated: priced as the
  // attention TP group tpa of a kvp = replicas layout (its layers read no
  // KV, so kvp only replicates them; recurrentGroupWidth is then tpa).
  c.layout.kvp = k.isRecurrent() ? gpus / k.tpa : a.kvp;
  c.layout.tpa = a.tpa;
  c.layout.tpf = k.isMixer() ? gpus : k.tpf;
  c.layout.ep = k.isMixer() ? 1 : k.ep;
  return c;
}

Placement kindPlacement(const KindLayout &k, int64_t gpus,
                        const KindLayout &attention, int64_t slices) {
  Placement p = placementFor(kindConfig(k, gpus, attention, slices));
  if (!k.isMixer()) {
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
              "window_attention, sparse_attention, linear_attention, mamba, "
              "dense_ffn or moe_ffn";
      return false;
    }
    std::string layoutText = item.substr(eq + 1);
    // Only the kind's own widths.
    const bool attn = isMixerKind(*kind);
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
    k.replicas = isAttentionKind(*kind) ? 1 : 0;
    kinds.push_back(k);
  }
  out = std::move(kinds);
  return true;
}

PerLayerChoice uniformChoice(const ModelSpec &model, const Layout &l) {
  PerLayerChoice c;
  for (int k = 0; k < kNumLayerKinds; ++k)
    c.kinds[k].kind = LayerKind(k);
  const int64_t stage = l.gpusPerStage();
  for (KindLayout &k : c.kinds) {
    k.kvp = l.kvp;
    k.tpa = l.tpa;
    k.tpf = k.kind == LayerKind::MoEFFN ? l.tpf : stage;
    k.ep = k.kind == LayerKind::MoEFFN ? l.ep : 1;
    k.replicas = k.isMixer() ? 1 : stage / (k.tpf * k.ep);
  }
  for (const LayerSpec &layer : model.layers) {
    if (std::optional<LayerKind> m = mixerKindOf(layer)) {
      KindLayout &k = c.kinds[int(*m)];
      ++k.layers;
      if (k.isRecurrent()) {
        k.kvp = 1;
        k.tpa = recurrentGroupWidth(layer, l.tpa);
        k.replicas = stage / k.tpa;
      }
    }
    if (std::optional<LayerKind> f = ffnKindOf(layer))
      ++c.kinds[int(*f)].layers;
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
  /// classifyLayers of the search's model, found once.
  std::shared_ptr<const detail::LayerClasses> classes;
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
  /// The kinds that price each class's halves (mixerPricingKindOf), and
  /// whether it has them.
  std::vector<LayerKind> attnKindOfClass, ffnKindOfClass;
  std::vector<bool> classHasMixer, classHasFFN;

  PerLayerReuse::Impl *reuse;
  /// The model's layer classes, for every candidate's prepare().
  std::shared_ptr<const detail::LayerClasses> layerClasses;

  Impl(const ModelSpec &m, const Hardware &h, const Workload &w, int64_t n,
       PerLayerReuse::Impl *r, std::optional<PerLayerChoice> fixed = {},
       int64_t hopbSlices = 0)
      : model(m), hw(h), workload(w), gpus(n), only(std::move(fixed)),
        slices(hopbSlices), reuse(only ? nullptr : r),
        layerClasses(classesOf(m, reuse)) {
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
      if (std::optional<LayerKind> k = mixerKindOf(l))
        ++layersOfKind[int(*k)];
      if (std::optional<LayerKind> k = ffnKindOf(l))
        ++layersOfKind[int(*k)];
    }
    // Mixer kinds first: FFN candidates are prepared with their widths.
    for (LayerKind k : {LayerKind::FullAttention, LayerKind::WindowAttention,
                        LayerKind::SparseAttention, LayerKind::LinearAttention,
                        LayerKind::Mamba})
      addKind(k);
    if (!ok)
      return;
    addKind(LayerKind::DenseFFN);
    addKind(LayerKind::MoEFFN);
    if (!ok)
      return;
    // Classes: from any candidate (prepare() groups layers by shape alone).
    const Prepared &p = anyPrepared();
    for (size_t c = 0; c < p.classes.size(); ++c) {
      classCount.push_back(p.stageCount(0, c));
      const LayerSpec l = detail::layerOfClass(m, p, c);
      attnKindOfClass.push_back(mixerPricingKindOf(l));
      ffnKindOfClass.push_back(ffnPricingKindOf(l));
      classHasMixer.push_back(mixerKindOf(l).has_value());
      classHasFFN.push_back(l.hasFFN);
    }
  }

  /// classifyLayers(m), from `reuse` when it has them (one search, one
  /// model).
  static std::shared_ptr<const detail::LayerClasses>
  classesOf(const ModelSpec &m, PerLayerReuse::Impl *reuse) {
    if (reuse && reuse->classes)
      return reuse->classes;
    auto classes =
        std::make_shared<const detail::LayerClasses>(detail::classifyLayers(m));
    if (reuse)
      reuse->classes = classes;
    return classes;
  }

  void fail(const std::string &why) {
    ok = false;
    if (error.empty())
      error = why;
  }

  /// A candidate prepared on these GPUs: a mixer kind's (FFN candidates
  /// may come from another GPU count through `reuse`, and the step outside
  /// the layers reads the stage width).
  const Prepared &anyPrepared() const {
    for (int k = 0; k < kNumLayerKinds; ++k)
      if (isMixerKind(LayerKind(k)) && !candidates[k].empty())
        return *candidates[k].front().prepared;
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
    if (isRecurrentKind(kind)) {
      for (int64_t tpa : divisorsOf(gpus)) {
        k.tpa = tpa;
        k.kvp = 1;
        k.replicas = gpus / tpa;
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
    const bool attention = isMixerKind(kind);
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
                        kindPlacement(k, gpus, attn, slices), *prepared,
                        layerClasses.get());
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

  /// The first mixer candidate, attention kinds first.
  const KindLayout &firstAttention() const {
    for (LayerKind k : {LayerKind::FullAttention, LayerKind::WindowAttention,
                        LayerKind::SparseAttention})
      if (!candidates[int(k)].empty())
        return candidates[int(k)].front().layout;
    return candidates[int(LayerKind::LinearAttention)].empty()
               ? candidates[int(LayerKind::Mamba)].front().layout
               : candidates[int(LayerKind::LinearAttention)].front().layout;
  }

  /// The candidates of `kind` at `batch`, those beaten by another dropped.
  std::vector<Priced> priceKind(LayerKind kind, int64_t batch) const {
    std::vector<Priced> all;
    const bool attention = isMixerKind(kind);
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
          ws = std::max(
              ws,
              (classHasMixer[c] ? pick[int(attnKindOfClass[c])]->workspace[c]
                                : 0.0) +
                  (classHasFFN[c] ? pick[int(ffnKindOfClass[c])]->workspace[c]
                                  : 0.0));
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
    const KindLayout &attn = choice.mainMixer();
    const KindLayout &ffn = choice.mainFFN();
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
