//===- LongContextReport.cpp - docs/results/long-context.md ---------------===//
//
// Prices the long-context models of 2026 (DeepSeek-V3.2, GLM-5, Qwen3.5,
// Kimi-K3, Nemotron-3 Super: test/Inputs/models) at 128K and 1M tokens on
// GB200 NVL72 and prints Markdown: the best per-layer Helix plan against
// uniform Helix and the best baseline, the layouts it chose, where its time
// goes, DeepSeek-V3.2's sparse attention against DeepSeek-R1 at the same
// layouts, and Kimi-K3's searched plan against TensorRT-LLM's hand-wired
// split (KDA on TP, MLA on context parallelism, MoE on EP).
//
//   helix-long-context-report [--models DIR] [--hw NAME] [--max-gpus N]
//
// The committed output is docs/results/long-context.md; the
// long-context-report test regenerates it and compares.
//
//===----------------------------------------------------------------------===//

#include "ReportText.h"

#include "helix/Cost/Evaluate.h"
#include "helix/Cost/PerLayer.h"
#include "helix/Cost/Search.h"
#include "helix/Import/HFConfig.h"

#include <cstdio>
#include <string>
#include <vector>

using namespace helix;
using namespace helix::report;

namespace {

const char *const kModels[] = {"DeepSeek-V3.2", "GLM-5-NVFP4",
                               "Qwen3.5-397B-A17B", "Kimi-K3",
                               "Nemotron-3-Super-120B-A12B-FP8"};
const int64_t kContexts[] = {128 * 1024, 1024 * 1024};
constexpr double kBudgetMs = 50;

struct Row {
  std::string model, context;
  PlanResult result;
};

void printPlans(const std::vector<Row> &rows, bool budget) {
  std::printf("| model | context | best baseline | uniform Helix | per-layer "
              "Helix | per-layer vs baseline |\n|---|---|---|---|---|---|\n");
  for (const Row &row : rows) {
    const PlanResult &r = row.result;
    auto pick = budget ? underBudget : fastest;
    const PlanPoint *base = pick(r.frontier("baseline"));
    const PlanPoint *helix = pick(r.frontier("helix"));
    const PlanPoint *per = pick(&r.perLayer);
    auto cell = [&](const PlanPoint *p) {
      return p ? pointText(*p, r) : std::string("none fits");
    };
    std::string gain = "-";
    if (base && per)
      gain = budget ? fmt("%.2fx tok/s/GPU",
                          per->tokensPerSecPerGPU / base->tokensPerSecPerGPU)
                    : fmt("%.2fx tok/s/user",
                          per->tokensPerSecPerUser / base->tokensPerSecPerUser);
    std::printf("| %s | %s | %s | %s | %s | %s |\n", row.model.c_str(),
                row.context.c_str(), cell(base).c_str(), cell(helix).c_str(),
                cell(per).c_str(), gain.c_str());
  }
}

/// The fastest per-layer plan's layouts and where its time goes.
void printWhere(const std::vector<Row> &rows,
                const std::vector<ModelSpec> &models, const Hardware &hw) {
  std::printf("| model | context | layouts (fastest per-layer plan) | KV and "
              "state read | weight read | compute | kernel overhead | "
              "exposed comm |\n|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const PlanResult &r = rows[i].result;
    const PlanPoint *p = fastest(&r.perLayer);
    const PerLayerChoice *c = p ? r.choiceOf(*p) : nullptr;
    if (!c)
      continue;
    Evaluation e = evaluate(models[i / 2], hw, r.workload, p->config, *c);
    const TimeBreakdown &b = e.breakdown;
    auto share = [&](double s) {
      return fmt("%.0f%%", 100.0 * s / (e.ttlS > 0 ? e.ttlS : 1));
    };
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n",
                rows[i].model.c_str(), rows[i].context.c_str(),
                kindsText(*c).c_str(), share(b.kvRead).c_str(),
                share(b.weightRead).c_str(), share(b.compute).c_str(),
                share(b.overhead).c_str(), share(b.exposedComm).c_str());
  }
}

Config helixLayout(int64_t kvp, int64_t tpa, int64_t tpf, int64_t ep,
                   int64_t batch) {
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.kvp = kvp;
  c.layout.tpa = tpa;
  c.layout.tpf = tpf;
  c.layout.ep = ep;
  c.batch = batch;
  return c;
}

void printSparseVsDense(const ModelSpec &v32, const ModelSpec &r1,
                        const Hardware &hw) {
  std::printf("| layout | batch | context | DeepSeek-R1 attention per layer "
              "| DeepSeek-V3.2 | R1 TTL | V3.2 TTL |\n"
              "|---|---|---|---|---|---|---|\n");
  struct Case {
    int64_t kvp, tpa, tpf, ep, batch;
  };
  for (int64_t ctx : kContexts)
    for (Case k : {Case{8, 1, 1, 8, 1}, Case{16, 1, 1, 16, 64},
                   Case{32, 1, 1, 32, 128}}) {
      Workload w;
      w.context = ctx;
      Config c = helixLayout(k.kvp, k.tpa, k.tpf, k.ep, k.batch);
      Evaluation d = evaluate(r1, hw, w, c), s = evaluate(v32, hw, w, c);
      if (!d.valid() || !s.valid())
        continue;
      std::printf(
          "| %s | %lld | %s | %s us | %s us | %s ms%s | %s ms%s |\n",
          c.layout.str().c_str(), (long long)k.batch, contextText(ctx).c_str(),
          fmt("%.1f", d.layers[10].attention.timeS * 1e6).c_str(),
          fmt("%.1f", s.layers[10].attention.timeS * 1e6).c_str(),
          fmt("%.2f", d.ttlS * 1e3).c_str(), d.fits ? "" : " (does not fit)",
          fmt("%.2f", s.ttlS * 1e3).c_str(), s.fits ? "" : " (does not fit)");
    }
}

/// TensorRT-LLM's Kimi-K3 Helix wiring (PR 17796): a tp=1 x cp=N server
/// runs MLA on decode context parallelism, KDA, the dense and shared MLPs
/// on TP over the N GPUs, routed experts on EP = N.
void printK3Split(const ModelSpec &k3, const Hardware &hw) {
  std::printf("| GPUs | batch | context | TensorRT-LLM split | searched "
              "per-layer plan | layouts searched | gain |\n"
              "|---|---|---|---|---|---|---|\n");
  for (int64_t ctx : kContexts)
    for (int64_t n : {8, 16, 32})
      for (int64_t batch : {1, 16}) {
        Workload w;
        w.context = ctx;
        PerLayerChoice split;
        std::string error;
        Layout l;
        l.kvp = n;
        l.tpa = 1;
        l.tpf = 1;
        l.ep = n;
        std::vector<KindLayout> kinds(2);
        kinds[0].kind = LayerKind::LinearAttention;
        kinds[0].kvp = 1;
        kinds[0].tpa = n;
        kinds[0].replicas = 0;
        kinds[1].kind = LayerKind::DenseFFN;
        kinds[1].tpf = n;
        kinds[1].replicas = 0;
        if (!choiceWithKinds(k3, l, kinds, split, error))
          continue;
        Config c = helixLayout(n, 1, 1, n, batch);
        c.gpus = n;
        Evaluation trt = evaluate(k3, hw, w, c, split);
        PerLayerSearch search(k3, hw, w, n);
        PlanPoint best;
        PerLayerChoice choice;
        if (!trt.valid() || !search.valid() ||
            !search.price(batch, best, choice))
          continue;
        std::printf("| %lld | %lld | %s | %s ms%s | %s ms | %s | %sx |\n",
                    (long long)n, (long long)batch, contextText(ctx).c_str(),
                    fmt("%.2f", trt.ttlS * 1e3).c_str(),
                    trt.fits ? "" : " (does not fit)",
                    fmt("%.2f", best.ttlS * 1e3).c_str(),
                    kindsText(choice).c_str(),
                    fmt("%.2f", trt.ttlS / best.ttlS).c_str());
      }
}

} // namespace

int main(int argc, char **argv) {
  ReportArgs args;
  args.models = HELIX_SOURCE_DIR "/test/Inputs/models";
  args.maxGPUs = 72;
  if (!parseReportArgs(argc, argv, "helix-long-context-report", true, args))
    return 1;
  const std::string &dir = args.models;
  const int64_t maxGPUs = args.maxGPUs;
  Hardware hw;
  std::string error;
  if (!loadHardware(args.hw, hw, error)) {
    std::fprintf(stderr, "helix-long-context-report: %s\n", error.c_str());
    return 1;
  }
  auto load = [&](const std::string &name, ModelSpec &m) {
    if (importHFConfigFile(dir + "/" + name + ".json", ImportOptions{}, m,
                           error))
      return true;
    std::fprintf(stderr, "helix-long-context-report: %s\n", error.c_str());
    return false;
  };
  std::vector<ModelSpec> models;
  std::vector<Row> rows;
  for (const char *name : kModels) {
    ModelSpec m;
    if (!load(name, m))
      return 1;
    models.push_back(m);
  }
  for (const ModelSpec &m : models)
    for (int64_t ctx : kContexts) {
      const Workload w = nativeWorkload(hw, ctx);
      SearchOptions o;
      o.maxGPUs = maxGPUs;
      o.ttlMs = kBudgetMs;
      o.perLayer = true;
      rows.push_back({m.name, contextText(ctx), search(m, hw, w, o)});
    }

  printPageHeader("helix-long-context-report", "long-context-report",
                  ("Long-context models on " + hw.name).c_str());
  std::printf("1 to %lld GPUs, every batch, strategies helix, tp, tp-pp, ep "
              "and kvp (baseline: the best of the four) and per-layer Helix; "
              "%s; MoE at the busiest expert-parallel rank (routing skew "
              "%.2f). Per-layer Helix gives each kind of layer its own "
              "layout on the same GPUs (docs/per-layer-layouts.md).\n\n",
              (long long)maxGPUs,
              rows[0].result.workload.precision.describe().c_str(),
              rows[0].result.workload.routingSkew);
  std::printf("## Interactivity: the lowest token-to-token latency\n\n");
  printPlans(rows, false);
  std::printf("\n## Throughput within a %.0f ms token-to-token budget\n\n",
              kBudgetMs);
  printPlans(rows, true);
  std::printf("\n## Where the fastest per-layer plan's time goes\n\n");
  printWhere(rows, models, hw);
  ModelSpec r1;
  if (!load("DeepSeek-R1", r1))
    return 1;
  std::printf("\n## DeepSeek-V3.2 (sparse) against DeepSeek-R1 (dense) at "
              "the same layouts\n\n");
  printSparseVsDense(models[0], r1, hw);
  std::printf("\n## Kimi-K3: TensorRT-LLM's hand-wired split against the "
              "searched per-layer plan\n\n");
  printK3Split(models[3], hw);
  return 0;
}
