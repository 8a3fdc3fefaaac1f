//===- PlanText.cpp - Readable summary for `helix plan` -------------------===//

#include "helix/Plan/PlanText.h"

#include "KindLines.h"

#include "Format.h"
#include "TimeTable.h"
#include "helix/Plan/Gains.h"

namespace helix {

namespace {

/// "off", or "on (N)" with the batch slices the overlap runs: HOP-B is on
/// exactly where more than one slice is used.
std::string hopb(const PlanPoint &p) {
  return p.hopbUsed() ? "on (" + std::to_string(p.hopbSlices) + ")" : "off";
}

void pointHeader(std::ostream &os) {
  os << "  " << fmt::pad("", 22) << fmt::pad("GPUs", 5, true) << "  "
     << fmt::pad("layout", 31) << fmt::pad("batch", 6, true)
     << fmt::pad("HOP-B", 7, true) << fmt::pad("TTL", 10, true)
     << fmt::pad("tok/s/user", 12, true) << fmt::pad("tok/s/GPU", 11, true)
     << fmt::pad("mem/GPU", 10, true) << "\n";
}

/// One point; `layout` replaces the layout column (per-layer points).
void pointRow(std::ostream &os, const std::string &label, const PlanPoint &p,
              const std::string &layout = "") {
  os << "  " << fmt::pad(label, 22) << fmt::pad(std::to_string(p.gpus), 5, true)
     << "  " << fmt::pad(layout.empty() ? p.config.layout.str() : layout, 31)
     << fmt::pad(std::to_string(p.config.batch), 6, true)
     << fmt::pad(hopb(p), 7, true) << fmt::pad(fmt::duration(p.ttlS), 10, true)
     << fmt::pad(fmt::number(p.tokensPerSecPerUser), 12, true)
     << fmt::pad(fmt::number(p.tokensPerSecPerGPU), 11, true)
     << fmt::pad(fmt::bytes(p.memoryPerGPUBytes), 10, true) << "\n";
}

/// Indices of at most `max` rows, evenly spread, first and last kept (only
/// the first when max is 1).
std::vector<size_t> thin(size_t n, size_t max) {
  std::vector<size_t> idx;
  if (max == 0 || n <= max) {
    for (size_t i = 0; i < n; ++i)
      idx.push_back(i);
    return idx;
  }
  if (max == 1)
    return {0}; // room for one row: the highest interactivity
  for (size_t k = 0; k < max; ++k) {
    size_t i = (k * (n - 1) + (max - 1) / 2) / (max - 1);
    if (idx.empty() || i != idx.back())
      idx.push_back(i);
  }
  return idx;
}

/// Prints the chosen point of frontier `name` (and its largest batch under
/// the budget when that differs) and returns it in `out`.
void chosenBlock(std::ostream &os, const PlanResult &r, const std::string &name,
                 const std::string &label, const PlanPoint *&out) {
  const Frontier *f = r.frontier(name);
  out = f ? chosenPoint(r, *f) : nullptr;
  if (!f)
    return;
  if (!out) {
    os << "  " << fmt::pad(label, 22)
       << (f->empty() ? "no configuration fits in memory\n"
                      : "no configuration meets the budget\n");
    return;
  }
  std::string strategy = stringifyStrategy(out->strategy).str();
  pointRow(os, strategy == name ? label : label + ": " + strategy, *out);
  if (r.options.ttlMs > 0 && f->budget.found &&
      f->budget.largestBatch.config.batch != out->config.batch)
    pointRow(os, "  largest batch", f->budget.largestBatch);
}

/// What per-layer layouts change against the uniform Helix plan.
void perLayerBlock(std::ostream &os, const PlanResult &r) {
  os << "\nPer-layer layouts (Helix, one layout per kind of layer on the same "
        "GPUs):\n";
  const PerLayerComparison &cmp = r.perLayerAtHelix;
  const PlanPoint &u = cmp.uniform, &p = cmp.perLayer;
  if (cmp.found) {
    os << "  on the Helix configuration's " << u.gpus << " GPUs at batch "
       << u.config.batch << ":\n";
    kindLines(os, cmp.choice, "    ");
    os << "    TTL " << fmt::duration(p.ttlS) << " vs " << fmt::duration(u.ttlS)
       << " with " << u.config.layout.str()
       << " for all layers: " << fmt::ratio(u.ttlS / p.ttlS)
       << " tokens/s/user and tokens/s/GPU\n";
    os << "    layout changes at " << cmp.choice.layoutChanges
       << " layer boundaries; resharding "
       << fmt::bytes(cmp.choice.reshardBytes)
       << " (every Helix layout leaves the residual stream replicated)\n";
  } else {
    os << (u.gpus == 0 ? "  no Helix configuration to compare with\n"
                       : "  no per-layer plan fits on the Helix "
                         "configuration's GPUs\n");
  }
  const Frontier &f = r.perLayer;
  if (const PlanPoint *best = chosenPoint(r, f)) {
    os << "  best per-layer plan"
       << (r.options.ttlMs > 0 ? " under the budget" : "") << ":\n";
    pointHeader(os);
    pointRow(os, "Helix per-layer", *best, "per layer:");
    if (const PerLayerChoice *c = r.choiceOf(*best))
      kindLines(os, *c, "    ");
  }
  Gains g = computeGains(r, "helix-per-layer", "helix");
  if (g.interactivity > 0) {
    os << "  gains over uniform Helix: interactivity "
       << fmt::ratio(g.interactivity);
    if (g.haveBudget)
      os << ", throughput at the budget " << fmt::ratio(g.throughput)
         << ", batch at the budget " << fmt::ratio(g.batch);
    os << "\n";
  }
  if (const PlanPoint *best = chosenPoint(r, f))
    os << "  helix compile --per-layer on --gpus " << best->gpus << " --batch "
       << best->config.batch
       << " builds the per-layer plan; without --per-layer, helix compile "
          "and --emit-config (engines run one layout) build the uniform "
          "layout"
       << (u.gpus > 0 ? " " + u.config.layout.str() + " (TTL " +
                            fmt::duration(u.ttlS) + ")"
                      : std::string())
       << ".\n";
  else if (u.gpus > 0)
    os << "  helix compile and --emit-config build the uniform layout "
       << u.config.layout.str() << " (TTL " << fmt::duration(u.ttlS) << ").\n";
}

} // namespace

void writePlanSummary(std::ostream &os, const PlanResult &r,
                      const ModelSpec &model, const Hardware &hw,
                      const TextOptions &opt) {
  const bool budget = r.options.ttlMs > 0;
  os << "Helix plan: " << r.model << " on " << r.hardware << ", "
     << fmt::count(r.workload.context) << "-token context, "
     << r.workload.precision.describe() << "\n";
  if (r.workload.mtpTokens > 0)
    os << "Speculative decoding with MTP: " << r.workload.mtpTokens
       << " draft tokens per step, acceptance "
       << fmt::number(r.workload.mtpAcceptance) << " ("
       << fmt::number(expectedAcceptedTokens(r.workload.mtpTokens,
                                             r.workload.mtpAcceptance))
       << " tokens per request per step); TTL is per accepted token.\n";
  os << "Searched " << fmt::count(int64_t(r.configsEvaluated))
     << " configurations (" << r.options.minGPUs << ".." << r.options.maxGPUs
     << " GPUs, all batches) in " << fmt::fixed(r.searchSeconds, 3) << " s.\n";
  if (budget)
    os << "Latency budget: TTL <= " << fmt::number(r.options.ttlMs)
       << " ms (>= " << fmt::number(1000.0 / r.options.ttlMs)
       << " tokens/s/user); best = most tokens/s/GPU under it.\n\n";
  else
    os << "No latency budget: comparing at maximum interactivity "
          "(lowest TTL).\n\n";

  pointHeader(os);
  const PlanPoint *helixPt = nullptr, *basePt = nullptr;
  chosenBlock(os, r, "helix", "Helix", helixPt);
  chosenBlock(os, r, "baseline", "Baseline", basePt);

  Gains g = computeGains(r);
  if (g.interactivity > 0) {
    const Frontier &h = *r.frontier("helix"), &b = *r.frontier("baseline");
    os << "\nGains of Helix over the baseline:\n";
    os << "  interactivity (max tokens/s/user): " << fmt::ratio(g.interactivity)
       << "  (" << fmt::number(h.fastest().tokensPerSecPerUser) << " vs "
       << fmt::number(b.fastest().tokensPerSecPerUser) << ")\n";
    if (g.haveBudget) {
      os << "  throughput at the budget:          " << fmt::ratio(g.throughput)
         << "  (" << fmt::number(h.budget.best.tokensPerSecPerGPU) << " vs "
         << fmt::number(b.budget.best.tokensPerSecPerGPU) << " tokens/s/GPU)\n";
      os << "  batch at the budget:               " << fmt::ratio(g.batch)
         << "  (largest batch " << h.budget.largestBatch.config.batch << " vs "
         << b.budget.largestBatch.config.batch << ")\n";
    } else if (budget) {
      os << "  (one side has no configuration under the budget)\n";
    }
  }

  if (r.options.perLayer)
    perLayerBlock(os, r);

  Workload w = r.workload;
  for (auto [label, pt] :
       {std::pair<const char *, const PlanPoint *>{"Helix", helixPt},
        {"Baseline", basePt}}) {
    if (!pt)
      continue;
    Evaluation ev = evaluate(model, hw, w, pt->config);
    if (!ev.valid())
      continue;
    os << "\nWhere time goes, " << label << " ("
       << stringifyStrategy(pt->strategy).str() << " "
       << pt->config.layout.str() << ", batch " << pt->config.batch << "): TTL "
       << fmt::duration(ev.ttlS) << "\n";
    writeTimeTable(os, ev.breakdown, "  ");
  }

  os << "\nPareto fronts (tokens/s/GPU against tokens/s/user):\n";
  for (const std::string &name : r.order) {
    const Frontier &f = r.frontiers.at(name);
    os << "\n  " << name;
    if (f.empty()) {
      os << ": no configuration fits in memory\n";
      continue;
    }
    std::vector<size_t> rows = thin(f.points.size(), opt.maxRowsPerFront);
    os << " (" << f.points.size() << " points";
    if (rows.size() < f.points.size())
      os << ", " << rows.size() << " shown";
    os << ")\n";
    pointHeader(os);
    for (size_t i : rows) {
      const PlanPoint &p = f.points[i];
      pointRow(
          os, name == "baseline" ? stringifyStrategy(p.strategy).str() : "", p);
    }
  }
}

} // namespace helix
