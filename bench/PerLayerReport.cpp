//===- PerLayerReport.cpp - docs/results/per-layer.md ---------------------===//
//
// What per-layer Helix layouts gain over one Helix layout for all layers
// (docs/per-layer-layouts.md) on gpt-oss-120b, DeepSeek-R1 and
// Llama-3.1-405B at a 1M-token context on GB200 NVL72: the fastest plan
// (tokens/s/user) and, under a 20 ms token-to-token budget, the largest
// batch, over 1..64 GPUs (one NVL72 domain) and 1..576 (eight), with the
// layouts per kind the per-layer search chose.
//
//   helix-per-layer-report [--models DIR] [--hw NAME]
//
// The committed output is docs/results/per-layer.md; the per-layer-report
// test regenerates it and compares.
//
//===----------------------------------------------------------------------===//

#include "ReportText.h"

#include "helix/Import/HFConfig.h"

#include <cstdio>
#include <string>
#include <vector>

using namespace helix;
using namespace helix::report;

namespace {

const char *const kModels[] = {"gpt-oss-120b", "DeepSeek-R1", "Llama-3.1-405B"};
const int64_t kMaxGPUs[] = {64, 576};
constexpr int64_t kContext = 1000000;
constexpr double kBudgetMs = 20;

/// "3.19 ms on 64 GPUs, batch 1" for the fastest point.
std::string fastestText(const PlanPoint &p) {
  return fmt("%.2f", p.ttlS * 1e3) + " ms on " + std::to_string(p.gpus) +
         " GPUs, batch " + std::to_string(p.config.batch);
}

/// "batch 631 on 64 GPUs (18.9 ms)" for the largest batch under the budget.
std::string largestText(const PlanPoint &p) {
  return "batch " + std::to_string(p.config.batch) + " on " +
         std::to_string(p.gpus) + " GPUs (" + fmt("%.2f", p.ttlS * 1e3) +
         " ms)";
}

void printRow(const char *model, int64_t maxGPUs, bool budget,
              const PlanResult &r) {
  const Frontier *helix = r.frontier("helix");
  const PlanPoint *uni = nullptr, *per = nullptr;
  if (budget) {
    if (helix && helix->budget.found)
      uni = &helix->budget.largestBatch;
    if (r.perLayer.budget.found)
      per = &r.perLayer.budget.largestBatch;
  } else {
    uni = fastest(helix);
    per = fastest(&r.perLayer);
  }
  auto text = [&](const PlanPoint *p) {
    return !p       ? std::string("none fits")
           : budget ? largestText(*p)
                    : fastestText(*p);
  };
  std::string uniLayout = uni ? uni->config.layout.str() : "-";
  const PerLayerChoice *c = per ? r.choiceOf(*per) : nullptr;
  std::string change = "-";
  if (uni && per)
    change = budget ? fmt("%.2fx batch",
                          double(per->config.batch) / double(uni->config.batch))
                    : fmt("%.2fx tok/s/user",
                          per->tokensPerSecPerUser / uni->tokensPerSecPerUser);
  std::printf("| %s | 1..%lld%s | %s (%s) | %s: %s | %s |\n", model,
              (long long)maxGPUs, budget ? ", TTL <= 20 ms" : "",
              text(uni).c_str(), uniLayout.c_str(), text(per).c_str(),
              c ? kindsText(*c).c_str() : "-", change.c_str());
}

} // namespace

int main(int argc, char **argv) {
  ReportArgs args;
  args.models = HELIX_SOURCE_DIR "/test/Inputs/models";
  if (!parseReportArgs(argc, argv, "helix-per-layer-report", false, args))
    return 1;
  Hardware hw;
  std::string error;
  if (!loadHardware(args.hw, hw, error)) {
    std::fprintf(stderr, "helix-per-layer-report: %s\n", error.c_str());
    return 1;
  }
  const Workload w = nativeWorkload(hw, kContext);

  printPageHeader("helix-per-layer-report", "per-layer-report",
                  "Per-layer Helix layouts against one layout for all");
  std::printf("%s, %lld-token context, %s; MoE at the busiest "
              "expert-parallel rank (routing skew %.2f). Uniform Helix is "
              "the best single Helix layout (HOP-B on); per-layer Helix gives "
              "each kind of layer its own layout on the same GPUs "
              "(docs/per-layer-layouts.md). Without a budget each side's "
              "fastest plan; with a %.0f ms token-to-token budget each "
              "side's largest batch.\n\n",
              hw.name.c_str(), (long long)kContext,
              w.precision.describe().c_str(), w.routingSkew, kBudgetMs);
  std::printf("| model | GPUs searched | uniform Helix | per-layer Helix: "
              "layouts | change |\n|---|---|---|---|---|\n");
  for (const char *name : kModels) {
    ModelSpec m;
    if (!importHFConfigFile(args.models + "/" + name + ".json", ImportOptions{},
                            m, error)) {
      std::fprintf(stderr, "helix-per-layer-report: %s\n", error.c_str());
      return 1;
    }
    for (int64_t maxGPUs : kMaxGPUs)
      for (bool budget : {false, true}) {
        SearchOptions o;
        o.maxGPUs = maxGPUs;
        o.strategies = {Strategy::Helix};
        o.perLayer = true;
        o.ttlMs = budget ? kBudgetMs : 0;
        printRow(m.name.c_str(), maxGPUs, budget, search(m, hw, w, o));
      }
  }
  return 0;
}
