//===- BenchSearch.cpp - Speed of the exhaustive planner search -----------===//
//
// Runs the full search the paper describes for DeepSeek-R1 at 1M context on
// GB200 NVL72 (FP4, 1..64 GPUs, every strategy, every batch, HOP-B on and
// off, with a latency budget so the largest-batch bisection runs too) and
// prints configurations evaluated per second. --max-gpus 576 is rack scale
// (eight NVL72 domains); --per-layer on adds the per-layer Helix search.
//
//   helix-bench-search [--repeat N] [--model r1|llama405b|CONFIG.json]
//                      [--hw NAME] [--max-gpus N] [--per-layer on|off]
//
// --model takes a Hugging Face config.json too (test/Inputs/models/
// Kimi-K3.json: the hybrid KDA + MLA model whose per-layer search has the
// most kinds).
//
// Measured on one core of a 2-vCPU Intel Xeon VM (medians of 15 runs):
// 1..64 GPUs 22,228 configurations in 0.014 s; 1..576 GPUs with per-layer
// layouts 142,045 in 0.061-0.091 s; Kimi-K3 over 1..576 GPUs 162,424 in
// 0.066-0.076 s (docs/long-context-architectures.md, "Search speed").
//
//===----------------------------------------------------------------------===//

#include "PaperModels.h"

#include "helix/Cost/Search.h"
#include "helix/Import/HFConfig.h"

#include "helix/Common/Numbers.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace helix;

/// The CPU model (Linux /proc/cpuinfo), or "unknown".
static std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      return line.substr(line.find(':') + 2);
  return "unknown";
}

int main(int argc, char **argv) {
  int repeat = 5;
  std::string modelName = "r1", hwName = defaultHardwareName();
  int64_t maxGPUs = 64;
  bool perLayer = false;
  auto fail = [](const std::string &what) {
    std::fprintf(stderr,
                 "helix-bench-search: error: %s\nusage: helix-bench-search "
                 "[--repeat N] [--model r1|llama405b|CONFIG.json] [--hw NAME] "
                 "[--max-gpus N] [--per-layer on|off]\n",
                 what.c_str());
    return 1;
  };
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    if (i + 1 >= argc)
      return fail(flag + " needs a value");
    std::string value = argv[i + 1];
    // An integer in [1, most].
    auto inRange = [&](int64_t most, int64_t &out) {
      char *end = nullptr;
      errno = 0;
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (!end || *end || errno || v < 1 || v > most)
        return false;
      out = v;
      return true;
    };
    int64_t n = 0;
    if (flag == "--repeat" && inRange(1000, n))
      repeat = int(n);
    else if (flag == "--model")
      modelName = value;
    else if (flag == "--hw")
      hwName = value;
    else if (flag == "--max-gpus" && inRange(kMaxGPUs, n))
      maxGPUs = n;
    else if (flag == "--per-layer" && (value == "on" || value == "off"))
      perLayer = value == "on";
    else if (flag == "--repeat")
      return fail("--repeat " + value + ": expected an integer in [1, 1000]");
    else if (flag == "--max-gpus")
      return fail("--max-gpus " + value + ": expected an integer in [1, " +
                  std::to_string(kMaxGPUs) + "]");
    else if (flag == "--per-layer")
      return fail("--per-layer " + value + ": expected on or off");
    else
      return fail("unknown argument " + flag);
  }
  ModelSpec model;
  std::string error;
  if (modelName == "r1")
    model = paper::deepSeekR1();
  else if (modelName == "llama405b")
    model = paper::llama405B();
  else if (!importHFConfigFile(modelName, ImportOptions{}, model, error)) {
    std::fprintf(stderr, "helix-bench-search: %s\n", error.c_str());
    return 1;
  }
  Hardware hw;
  if (!loadHardware(hwName, hw, error)) {
    std::fprintf(stderr, "helix-bench-search: %s\n", error.c_str());
    return 1;
  }
  Workload workload; // 1M context, FP4 everywhere
  SearchOptions options;
  options.maxGPUs = maxGPUs;
  options.ttlMs = 20.0;
  options.perLayer = perLayer;

  std::vector<double> seconds, perLayerSeconds;
  PlanResult result;
  for (int i = 0; i < repeat; ++i) {
    result = search(model, hw, workload, options);
    seconds.push_back(result.searchSeconds);
    perLayerSeconds.push_back(result.perLayerSeconds);
  }
  std::sort(perLayerSeconds.begin(), perLayerSeconds.end());
  std::sort(seconds.begin(), seconds.end());
  double median = seconds[seconds.size() / 2];
  std::printf("model %s, hardware %s, context %lld, GPUs 1..%lld, "
              "strategies all%s, budget %.0f ms\n",
              model.name.c_str(), hw.name.c_str(), (long long)workload.context,
              (long long)options.maxGPUs, perLayer ? " + per-layer helix" : "",
              options.ttlMs);
  std::printf("machine: %s (one core: the search is single-threaded)\n",
              cpuModel().c_str());
  std::printf("configurations evaluated: %llu\n",
              (unsigned long long)result.configsEvaluated);
  std::printf("search time: median %.3f s, min %.3f s, max %.3f s over %d "
              "runs\n",
              median, seconds.front(), seconds.back(), repeat);
  std::printf("configurations per second: %.3g\n",
              result.configsEvaluated / median);
  if (perLayer)
    std::printf("  of which per-layer search: median %.3f s, %llu batches "
                "priced\n",
                perLayerSeconds[perLayerSeconds.size() / 2],
                (unsigned long long)result.perLayer.evaluated);
  for (const std::string &name : result.order) {
    const Frontier &f = result.frontiers.at(name);
    std::printf("  %-14s evaluated %8llu  fit %8llu  front %3zu points\n",
                name.c_str(), (unsigned long long)f.evaluated,
                (unsigned long long)f.feasible, f.points.size());
  }
  if (perLayer)
    std::printf("  %-14s evaluated %8llu  fit %8llu  front %3zu points\n",
                result.perLayer.name.c_str(),
                (unsigned long long)result.perLayer.evaluated,
                (unsigned long long)result.perLayer.feasible,
                result.perLayer.points.size());
  return 0;
}
