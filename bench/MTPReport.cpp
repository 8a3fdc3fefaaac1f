//===- MTPReport.cpp - docs/results/mtp.md --------------------------------===//
//
// What speculative decoding with the model's MTP layer changes for
// DeepSeek-R1 at a 1M-token context on GB200 NVL72 (docs/
// speculative-decoding.md): for K = 0..3 draft tokens at the default
// acceptance, the best Helix configuration of `helix plan --max-gpus 72
// --mtp K --per-layer off`: the fastest, and the most tokens/s/GPU within
// 20 ms per token.
//
//   helix-mtp-report [--models DIR] [--hw NAME]
//
// The committed output is docs/results/mtp.md; the mtp-report test
// regenerates it and compares.
//
//===----------------------------------------------------------------------===//

#include "ReportText.h"

#include "helix/Common/Speculative.h"
#include "helix/Import/HFConfig.h"

#include <cstdio>
#include <string>

using namespace helix;
using namespace helix::report;

int main(int argc, char **argv) {
  ReportArgs args;
  args.models = HELIX_SOURCE_DIR "/test/Inputs/models";
  if (!parseReportArgs(argc, argv, "helix-mtp-report", false, args))
    return 1;
  Hardware hw;
  ModelSpec m;
  std::string error;
  if (!loadHardware(args.hw, hw, error) ||
      !importHFConfigFile(args.models + "/DeepSeek-R1.json", ImportOptions{}, m,
                          error)) {
    std::fprintf(stderr, "helix-mtp-report: %s\n", error.c_str());
    return 1;
  }
  const int64_t maxGPUs = 72, context = 1000000;
  const double budgetMs = 20;
  const Workload w = nativeWorkload(hw, context);

  printPageHeader("helix-mtp-report", "mtp-report",
                  "DeepSeek-R1 with MTP speculative decoding");
  std::printf("%s, %s, %lld-token context, %s, 1 to %lld GPUs, Helix "
              "(HOP-B on), acceptance %.2f per draft token; E is the "
              "expected tokens per step. Per token: the step's time divided "
              "by E.\n\n",
              m.name.c_str(), hw.name.c_str(), (long long)context,
              w.precision.describe().c_str(), (long long)maxGPUs,
              w.mtpAcceptance);
  std::printf("| K | E | fastest: GPUs, layout, batch, ms per token, "
              "tok/s/user | within %.0f ms per token: GPUs, batch, "
              "tok/s/GPU |\n|---|---|---|---|\n",
              budgetMs);
  for (int64_t k = 0; k <= 3; ++k) {
    Workload wk = w;
    wk.mtpTokens = k;
    SearchOptions o;
    o.maxGPUs = maxGPUs;
    o.strategies = {Strategy::Helix};
    o.ttlMs = budgetMs;
    PlanResult r = search(m, hw, wk, o);
    const Frontier *f = r.frontier("helix");
    const PlanPoint *fast = fastest(f), *best = underBudget(f);
    std::string a = "none fits", b = "none fits";
    if (fast)
      a = std::to_string(fast->gpus) + ", " + fast->config.layout.str() +
          ", batch " + std::to_string(fast->config.batch) + ", " +
          fmt("%.2f", fast->ttlS * 1e3) + " ms, " +
          fmt("%.0f", fast->tokensPerSecPerUser);
    if (best)
      b = std::to_string(best->gpus) + ", " +
          std::to_string(best->config.batch) + ", " +
          fmt("%.0f", best->tokensPerSecPerGPU);
    std::printf("| %lld | %s | %s | %s |\n", (long long)k,
                fmt("%.2f", expectedAcceptedTokens(k, w.mtpAcceptance)).c_str(),
                a.c_str(), b.c_str());
  }
  return 0;
}
