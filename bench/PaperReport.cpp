//===- PaperReport.cpp - docs/results/paper-comparison.md -----------------===//
//
// Reproduces the Helix paper's evaluation with this cost model and prints
// Markdown (docs/results/paper-comparison.md, which docs/paper-comparison.md
// reads): DeepSeek-R1 and Llama-3.1-405B at 1M context, FP4, 1..64 GPUs;
// interactivity gain, throughput and batch gains at fixed latency, the HOP-B
// ablation, the Figure 1 DRAM-read curves, a what-if without fixed latencies,
// published reference points and TensorRT-LLM's Helix measurement priced at
// its own settings (GB300 NVL72, NVFP4 weights, FP8 KV cache, no HOP-B).
//
//   helix-paper-report [--hw NAME] [--svg-dir DIR]
//
// With --svg-dir, also writes DIR/<model>-pareto.svg for both models.
//
//===----------------------------------------------------------------------===//

#include "PaperModels.h"

#include "helix/Cost/Evaluate.h"
#include "helix/Cost/Search.h"
#include "helix/Plan/Gains.h"
#include "helix/Plan/PlanSVG.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

using namespace helix;

namespace {

std::string describe(const PlanPoint &p) {
  char buf[200];
  std::snprintf(buf, sizeof(buf), "%s %s (%lld GPUs), batch %lld",
                stringifyStrategy(p.strategy).str().c_str(),
                p.config.layout.str().c_str(), (long long)p.gpus,
                (long long)p.config.batch);
  return buf;
}

/// Hardware without fixed latencies: no kernel overhead or fixed kernel
/// cost (the curves keep their bandwidth efficiencies), no collective alpha
/// and no measured collective times (alpha-beta at alpha 0).
Hardware withoutLatencies(Hardware hw) {
  hw.name += " without fixed latencies";
  hw.kernelOverheadS = 0;
  KernelCurves &k = hw.kernels;
  k.elementwiseS = 0;
  for (int i = 0; i < kNumDTypes; ++i)
    for (KernelCurve *c : {&k.gemm[i], &k.groupedGemm[i], &k.attentionGQA[i],
                           &k.attentionMLA[i], &k.attentionMLAFewHeads[i]})
      for (KernelPoint &p : c->points)
        p.fixedS = 0;
  for (CollectiveParams &c : hw.collectives) {
    for (auto &point : c.alphaS)
      point.second = 0;
    c.measured.clear();
  }
  return hw;
}

/// Decode attention below 8 rows streaming at the 8-row bandwidth efficiency
/// (fixed costs kept): the curves are fitted to kernels measured at up to
/// 131,072 KV tokens, where one or two rows do not fill the GPU; a split-KV
/// kernel over a 1M-token cache may.
Hardware attentionAtEightRows(Hardware hw) {
  hw.name += " with decode attention at its 8-row efficiency";
  for (int i = 0; i < kNumDTypes; ++i)
    for (KernelCurve *c :
         {&hw.kernels.attentionGQA[i], &hw.kernels.attentionMLA[i],
          &hw.kernels.attentionMLAFewHeads[i]}) {
      if (c->empty())
        continue;
      double eff = c->at(8).bandwidthEfficiency;
      for (KernelPoint &p : c->points)
        if (p.x < 8)
          p.bandwidthEfficiency = eff;
    }
  return hw;
}

/// The paper's Appendix A machine: 8000 GB/s, full efficiency, no overhead
/// (no kernel curves).
Hardware appendixA(Hardware hw) {
  hw.hbmBandwidth = 8000e9;
  hw.memoryEfficiency = hw.attentionMemoryEfficiency = 1.0;
  hw.kernelOverheadS = 0;
  hw.kernels = KernelCurves();
  return hw;
}

struct BudgetGains {
  double throughput = 0, throughputAt = 0;
  double batch = 0, batchAt = 0;
};

struct HopBLoss {
  double max = 0, median = 0;
  double exposedShare = 0; // exposed communication / TTL with HOP-B off
  int sliced = 0;          // front points HOP-B splits into several slices
  size_t points = 0;
};

class Report {
public:
  Report(ModelSpec model, Hardware hw, std::string paperSet,
         std::string helixName = "helix", Workload workload = Workload(),
         int64_t maxGPUs = 64)
      : model(std::move(model)), hw(std::move(hw)),
        paperSet(std::move(paperSet)), helixName(std::move(helixName)),
        workload(workload), maxGPUs(maxGPUs) {
    all = run("all");
  }

  void print() {
    // The time goes to stderr: stdout is docs/results/paper-comparison.md,
    // which a test compares (paper-report.test).
    std::printf("## %s\n\nSearch: %llu configurations.\n\n", model.name.c_str(),
                (unsigned long long)all.configsEvaluated);
    std::fprintf(stderr,
                 "helix-paper-report: %s: %llu configurations in %.3f s\n",
                 model.name.c_str(), (unsigned long long)all.configsEvaluated,
                 all.searchSeconds);
    std::printf("### Fronts\n\n");
    frontSummary();
    std::printf("### Interactivity\n\n");
    interactivityTable();
    std::printf("### Throughput and batch at fixed latency\n\n");
    budgets("tp,tp-pp,ep,kvp", "all (tp, tp-pp, ep, kvp)", true);
    budgets(paperSet, "the paper's (" + paperSet + ")", true);
    std::printf("### HOP-B ablation\n\n");
    HopBLoss h = hopbLoss();
    std::printf("Turning HOP-B off for the %zu configurations of the Helix "
                "front lowers tokens/s/user by at most **%.2f%%** (median "
                "%.2f%%); %d of them overlap in more than one batch slice. "
                "With HOP-B off, exposed communication is %.1f%% of TTL "
                "(average over the front).\n\n",
                h.points, h.max * 100, h.median * 100, h.sliced,
                h.exposedShare * 100);
  }

  /// Writes the Pareto chart of every strategy to `path`.
  bool writeSVG(const std::string &path) const {
    std::ofstream out(path);
    writePlanSVG(out, all);
    return bool(out);
  }

  /// One row of the what-if table.
  void summaryRow() {
    BudgetGains b = budgets("tp,tp-pp,ep,kvp", "", false);
    HopBLoss h = hopbLoss();
    std::printf("| %s | %.2fx | %.2fx (at %.3f ms) | %.2fx (at %.3f ms) | "
                "%.1f%% |\n",
                model.name.c_str(), interactivity(*all.frontier("baseline")),
                b.throughput, b.throughputAt, b.batch, b.batchAt, h.max * 100);
  }

  double interactivity(const Frontier &base) const {
    return all.frontier(helixName)->fastest().tokensPerSecPerUser /
           base.fastest().tokensPerSecPerUser;
  }

  /// The fastest point of the Helix front and of the baseline front of
  /// `baselineSet`.
  std::pair<PlanPoint, PlanPoint> fastest(const std::string &baselineSet) {
    PlanResult r = run(helixName + "," + baselineSet);
    return {r.frontier(helixName)->fastest(),
            r.frontier("baseline")->fastest()};
  }

  /// Throughput and batch gains over a sweep of TTL budgets; prints the
  /// table when `print`.
  BudgetGains budgets(const std::string &baselineSet, const std::string &label,
                      bool print) {
    std::string set = helixName + "," + baselineSet;
    PlanResult fronts = run(set);
    double h = fronts.frontier(helixName)->fastest().ttlS * 1e3;
    double b = fronts.frontier("baseline")->fastest().ttlS * 1e3;
    std::vector<double> budgets;
    for (double f : {1.02, 1.1, 1.25, 1.5, 2.0, 3.0, 5.0, 10.0})
      budgets.push_back(h * f);
    for (double f : {1.01, 1.05})
      budgets.push_back(b * f);
    std::sort(budgets.begin(), budgets.end());
    budgets.erase(std::unique(budgets.begin(), budgets.end(),
                              [](double a, double b) { return b < a * 1.002; }),
                  budgets.end());
    if (print)
      std::printf("Baseline set: %s.\n\n| TTL budget | Helix tokens/s/GPU | "
                  "baseline tokens/s/GPU | throughput gain | Helix largest "
                  "batch | baseline largest batch | batch gain |\n"
                  "|---|---|---|---|---|---|---|\n",
                  label.c_str());
    BudgetGains best;
    for (double ms : budgets) {
      PlanResult r = run(set, ms);
      const Frontier &hf = *r.frontier(helixName),
                     &bf = *r.frontier("baseline");
      if (!hf.budget.found)
        continue;
      if (!bf.budget.found) {
        if (print)
          std::printf("| %.3f ms | %.1f | none meets it | - | %lld | - | - "
                      "|\n",
                      ms, hf.budget.best.tokensPerSecPerGPU,
                      (long long)hf.budget.largestBatch.config.batch);
        continue;
      }
      Gains g = computeGains(r, helixName, "baseline");
      if (print)
        std::printf("| %.3f ms | %.1f | %.1f | **%.2fx** | %lld | %lld | "
                    "**%.2fx** |\n",
                    ms, hf.budget.best.tokensPerSecPerGPU,
                    bf.budget.best.tokensPerSecPerGPU, g.throughput,
                    (long long)hf.budget.largestBatch.config.batch,
                    (long long)bf.budget.largestBatch.config.batch, g.batch);
      if (g.throughput > best.throughput)
        best.throughput = g.throughput, best.throughputAt = ms;
      if (g.batch > best.batch)
        best.batch = g.batch, best.batchAt = ms;
    }
    if (print)
      std::printf("\nWhere both meet the budget: up to **%.2fx** "
                  "tokens/s/GPU (at %.3f ms) and **%.2fx** batch (at %.3f "
                  "ms).\n\n",
                  best.throughput, best.throughputAt, best.batch, best.batchAt);
    return best;
  }

private:
  PlanResult run(const std::string &strategies, double ttlMs = 0) {
    SearchOptions o;
    std::string error;
    parseStrategyList(strategies, o.strategies, error);
    o.ttlMs = ttlMs;
    o.maxGPUs = maxGPUs;
    return search(model, hw, workload, o);
  }

  void frontSummary() {
    std::printf("| front | lowest TTL | tokens/s/user | at | highest "
                "tokens/s/GPU | at |\n|---|---|---|---|---|---|\n");
    for (const std::string &name : all.order) {
      const Frontier &f = all.frontiers.at(name);
      if (f.empty()) {
        std::printf("| %s | - | - | nothing fits | - | - |\n", name.c_str());
        continue;
      }
      const PlanPoint &a = f.fastest(), &b = f.points.back();
      std::printf("| %s | %.2f ms | %.1f | %s | %.1f | %s |\n", name.c_str(),
                  a.ttlS * 1e3, a.tokensPerSecPerUser, describe(a).c_str(),
                  b.tokensPerSecPerGPU, describe(b).c_str());
    }
    std::printf("\n");
  }

  void interactivityTable() {
    const PlanPoint &h = all.frontier(helixName)->fastest();
    std::printf("Helix lowest TTL: %.2f ms (%.1f tokens/s/user), %s.\n\n"
                "| baseline set | its lowest TTL | tokens/s/user | Helix "
                "interactivity gain |\n|---|---|---|---|\n",
                h.ttlS * 1e3, h.tokensPerSecPerUser, describe(h).c_str());
    auto row = [&](const std::string &label, const Frontier &b) {
      std::printf("| %s | %s | %.1f | **%.2fx** |\n", label.c_str(),
                  describe(b.fastest()).c_str(),
                  b.fastest().tokensPerSecPerUser, interactivity(b));
    };
    row("all (tp, tp-pp, ep, kvp)", *all.frontier("baseline"));
    PlanResult paper = run(helixName + "," + paperSet);
    row("the paper's (" + paperSet + ")", *paper.frontier("baseline"));
    row("tp only", *all.frontier("tp"));
    std::printf("\n");
  }

  /// HOP-B on against off for the same configurations (the Helix front).
  HopBLoss hopbLoss() {
    HopBLoss h;
    const Frontier &on = *all.frontier("helix");
    std::vector<double> losses;
    double exposed = 0, ttl = 0;
    for (const PlanPoint &p : on.points) {
      Config off = p.config;
      off.strategy = Strategy::HelixNoHopB;
      Evaluation evOn = evaluate(model, hw, workload, p.config);
      Evaluation evOff = evaluate(model, hw, workload, off);
      losses.push_back(1 - evOn.ttlS / evOff.ttlS);
      h.sliced += evOn.hopbSlices > 1;
      exposed += evOff.breakdown.exposedComm;
      ttl += evOff.ttlS;
    }
    std::sort(losses.begin(), losses.end());
    h.points = losses.size();
    if (!losses.empty()) {
      h.max = losses.back();
      h.median = losses[losses.size() / 2];
      h.exposedShare = exposed / ttl;
    }
    return h;
  }

  ModelSpec model;
  Hardware hw;
  std::string paperSet;
  std::string helixName;
  Workload workload;
  int64_t maxGPUs;
  PlanResult all;
};

void figure1(const Hardware &base) {
  Hardware hw = appendixA(base);
  ModelSpec model = paper::figure1Model(1);
  auto row = [&](const std::string &label, Strategy s, int64_t kvp, int64_t tpa,
                 int64_t tpf, int64_t context) {
    Config c;
    c.strategy = s;
    c.layout.kvp = kvp;
    c.layout.tpa = tpa;
    c.layout.tpf = tpf;
    c.batch = 8;
    Workload w;
    w.context = context;
    Evaluation ev = evaluate(model, hw, w, c);
    const LayerEvaluation &l = ev.layers.at(0);
    double kv = l.attention.kvBytesPerGPU / hw.hbmBandwidth * 1e6;
    double wt = (l.attention.weightBytesPerGPU + l.ffn.weightBytesPerGPU) /
                hw.hbmBandwidth * 1e6;
    std::printf("| %s | %.1f | %.1f | %.1f |\n", label.c_str(), kv, wt,
                kv + wt);
  };
  const char *head = " | KV read us | weight read us | total us |\n"
                     "|---|---|---|---|\n";
  std::printf("Left: TP = TPA = TPF, S = 1M.\n\n| TP%s", head);
  for (int64_t tp : {1, 2, 4, 8, 16, 32, 64})
    row(std::to_string(tp), Strategy::TP, 1, tp, tp, 1000000);
  std::printf("\nMiddle: TP = 8, S varies.\n\n| S%s", head);
  for (int64_t s : {128000, 256000, 512000, 1000000, 2000000, 4000000, 8000000})
    row(std::to_string(s / 1000) + "K", Strategy::TP, 1, 8, 8, s);
  std::printf("\nRight: Helix, TPA = 8, TPF = N = 8 x KVP, S = 1M (output "
              "projection sharded N ways).\n\n| KVP%s",
              head);
  for (int64_t kvp : {1, 2, 4, 8})
    row(std::to_string(kvp), Strategy::Helix, kvp, 8, 8 * kvp, 1000000);
  std::printf("\n");
}

void referencePoints() {
  Hardware b200;
  std::string error;
  loadHardware("b200", b200, error);
  ModelSpec r1 = paper::deepSeekR1();
  Config c;
  c.strategy = Strategy::TP;
  parseLayout("tpa=8,tpf=4,ep=2", c.layout, error);
  c.batch = 1;
  std::printf("| case | this model | published |\n|---|---|---|\n");
  // NVFP4 weights (with their block scales) and a BF16 KV cache, as the
  // fidelity table prices TensorRT-LLM's recipe; then everything BF16.
  for (DType d : {DType::FP4, DType::BF16}) {
    Workload w;
    w.context = 2048;
    w.precision.compute = d;
    w.precision.weights = d;
    w.precision.kvCache = DType::BF16;
    w.precision.nvfp4BlockScales = d == DType::FP4;
    Evaluation ev = evaluate(r1, b200, w, c);
    std::printf("| DeepSeek-R1 on 8xB200, TP8 attention + TP4xEP2 MoE, "
                "batch 1, 2K context, %s weights and math, bf16 KV | %.2f ms "
                "per step (%.0f tokens/s/user) | 9.0 ms (111 tokens/s/user; "
                "BF16 attention, NVFP4 MoE, no MTP) |\n",
                d == DType::FP4 ? "NVFP4" : "bf16", ev.ttlS * 1e3,
                ev.tokensPerSecPerUser);
  }
  std::printf("\n");
}

/// TensorRT-LLM's published Helix result (DeepSeek-R1 on GB300 NVL72, 1M
/// tokens, FP4) priced at its settings: NVFP4 weights with their scales, an
/// FP8 KV cache, 1..72 GPUs, Helix without HOP-B (not implemented there)
/// against TP, PP and attention DP + EP, then one change at a time.
void trtllmSettings() {
  Hardware gb300;
  std::string error;
  loadHardware("gb300-nvl72", gb300, error);
  Workload w;
  w.precision.weights = w.precision.compute = DType::FP4;
  w.precision.kvCache = DType::FP8;
  w.precision.nvfp4BlockScales = true;
  const std::string theirs = "tp,tp-pp,ep";
  std::printf("DeepSeek-R1 on gb300-nvl72, 1,000,000-token context, NVFP4 "
              "weights (block scales counted), FP8 KV cache, FP4 arithmetic, "
              "1..72 GPUs; helix-no-hopb against the front of %s.\n\n",
              theirs.c_str());
  Report main(paper::deepSeekR1(), gb300, theirs, "helix-no-hopb", w, 72);
  auto [h, b] = main.fastest(theirs);
  std::printf("Helix lowest TTL: %s, %.2f ms. Baseline lowest TTL: %s, %.2f "
              "ms.\n\n",
              describe(h).c_str(), h.ttlS * 1e3, describe(b).c_str(),
              b.ttlS * 1e3);
  main.budgets(theirs, theirs, true);

  std::printf("| variant | Helix lowest TTL | baseline lowest TTL | "
              "interactivity gain | tokens/s/GPU gain, up to | batch gain, up "
              "to |\n|---|---|---|---|---|---|\n");
  auto row = [&](const std::string &label, Report &r, const std::string &set) {
    auto [h, b] = r.fastest(set);
    BudgetGains g = r.budgets(set, "", false);
    std::printf("| %s | %.2f ms | %.2f ms | **%.2fx** | %.2fx (at %.3f ms) | "
                "%.2fx (at %.3f ms) |\n",
                label.c_str(), h.ttlS * 1e3, b.ttlS * 1e3,
                h.tokensPerSecPerUser / b.tokensPerSecPerUser, g.throughput,
                g.throughputAt, g.batch, g.batchAt);
  };
  row("their settings (above)", main, theirs);
  Workload fp4kv = w;
  fp4kv.precision.kvCache = DType::FP4;
  Report r2(paper::deepSeekR1(), gb300, theirs, "helix-no-hopb", fp4kv, 72);
  row("FP4 KV cache", r2, theirs);
  Workload mib = w;
  mib.context = 1 << 20;
  Report r3(paper::deepSeekR1(), gb300, theirs, "helix-no-hopb", mib, 72);
  row("context 1,048,576", r3, theirs);
  Workload balanced = w;
  balanced.balancedExperts = true;
  Report r4(paper::deepSeekR1(), gb300, theirs, "helix-no-hopb", balanced, 72);
  row("every EP rank at the mean expert load", r4, theirs);
  Report r5(paper::deepSeekR1(), attentionAtEightRows(gb300), theirs,
            "helix-no-hopb", w, 72);
  row("what-if: decode attention below 8 rows at its 8-row efficiency", r5,
      theirs);
  row("baseline with Medha-style kvp too", main, theirs + ",kvp");
  std::printf("\n");
}

} // namespace

int main(int argc, char **argv) {
  std::string hwName = defaultHardwareName(), svgDir;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--hw"))
      hwName = argv[i + 1];
    else if (!std::strcmp(argv[i], "--svg-dir"))
      svgDir = argv[i + 1];
  }
  Hardware hw;
  std::string error;
  if (!loadHardware(hwName, hw, error)) {
    std::fprintf(stderr, "helix-paper-report: %s\n", error.c_str());
    return 1;
  }
  std::printf("<!-- Generated by build/bin/helix-paper-report --hw %s "
              "--svg-dir docs/images; do not edit (the paper-report test "
              "compares). -->\n\n"
              "# The paper's comparisons, by helix's cost model\n\n"
              "Hardware %s, 1,000,000-token context, FP4 weights, KV cache "
              "and arithmetic (0.5 bytes per value), 1..64 GPUs, every "
              "batch.\n\n",
              hw.name.c_str(), hw.name.c_str());
  // The paper compares DeepSeek-R1 without Medha ("not applicable") and
  // Llama-405B against TP and Medha.
  Report r1(paper::deepSeekR1(), hw, "tp,tp-pp,ep");
  Report llama(paper::llama405B(), hw, "tp,tp-pp,kvp");
  r1.print();
  llama.print();
  if (!svgDir.empty() && !(r1.writeSVG(svgDir + "/deepseek-r1-pareto.svg") &&
                           llama.writeSVG(svgDir + "/llama-405b-pareto.svg"))) {
    std::fprintf(stderr, "helix-paper-report: cannot write to %s\n",
                 svgDir.c_str());
    return 1;
  }

  std::printf("## Figure 1: DRAM read time per layer (Appendix A)\n\n"
              "Batch 8, Q=128, K=8, Hsz=128, H=16384, F=65536, FP4, "
              "8000 GB/s at full efficiency.\n\n");
  figure1(hw);

  std::printf("## What-if: no fixed latencies\n\nKernel overhead and every "
              "collective latency (alpha) set to zero, all else equal; "
              "baseline = tp, tp-pp, ep, kvp.\n\n| model | interactivity "
              "gain | throughput gain, up to | batch gain, up to | HOP-B "
              "loss, up to |\n|---|---|---|---|---|\n");
  Hardware ideal = withoutLatencies(hw);
  Report(paper::deepSeekR1(), ideal, "tp,tp-pp,ep").summaryRow();
  Report(paper::llama405B(), ideal, "tp,tp-pp,kvp").summaryRow();

  std::printf("\n## What-if: decode attention at one request as at eight\n\n"
              "Decode attention below 8 rows (requests x KV heads on a GPU) "
              "streams at the curve's 8-row bandwidth efficiency, fixed costs "
              "kept, all else equal (the curves were measured at up to "
              "131,072 KV tokens); baseline = tp, tp-pp, ep, kvp.\n\n"
              "| model | interactivity gain | throughput gain, up to | batch "
              "gain, up to | HOP-B loss, up to |\n|---|---|---|---|---|\n");
  Hardware wide = attentionAtEightRows(hw);
  Report(paper::deepSeekR1(), wide, "tp,tp-pp,ep").summaryRow();
  Report(paper::llama405B(), wide, "tp,tp-pp,kvp").summaryRow();

  std::printf("\n## Reference points\n\n");
  referencePoints();
  std::printf("## TensorRT-LLM's Helix at its own settings\n\n");
  trtllmSettings();
  return 0;
}
