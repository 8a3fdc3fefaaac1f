//===- ReportText.cpp - Text of plan points in the Markdown reports -------===//

#include "ReportText.h"

#include <cstdio>
#include <cstdlib>

namespace helix {
namespace report {

bool parseReportArgs(int argc, char **argv, const char *tool, bool withMaxGPUs,
                     ReportArgs &args) {
  for (int i = 1; i < argc; i += 2) {
    std::string flag = argv[i];
    bool known = flag == "--models" || flag == "--hw" ||
                 (withMaxGPUs && flag == "--max-gpus");
    if (!known || i + 1 >= argc) {
      std::fprintf(stderr, "%s: error: %s '%s'\n", tool,
                   known ? "missing value after" : "unknown argument",
                   flag.c_str());
      return false;
    }
    std::string value = argv[i + 1];
    if (flag == "--models") {
      args.models = value;
    } else if (flag == "--hw") {
      args.hw = value;
    } else {
      char *end = nullptr;
      long long n = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end || n < 1 || n > 4096) {
        std::fprintf(stderr,
                     "%s: error: --max-gpus must be an integer from 1 to "
                     "4096, got '%s'\n",
                     tool, value.c_str());
        return false;
      }
      args.maxGPUs = n;
    }
  }
  return true;
}

Workload nativeWorkload(const Hardware &hw, int64_t context) {
  Workload w;
  w.context = context;
  w.precision.weights = w.precision.kvCache = w.precision.compute =
      hw.nativeDType();
  w.precision.nvfp4BlockScales = hw.nativeDType() == DType::FP4;
  return w;
}

std::string fmt(const char *format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

std::string contextText(int64_t c) {
  return c >= (1 << 20) ? std::to_string(c >> 20) + "M"
                        : std::to_string(c >> 10) + "K";
}

std::string kindsText(const PerLayerChoice &c) {
  std::string s;
  for (const KindLayout *k : c.present())
    s += (s.empty() ? "" : "; ") + std::string(stringifyLayerKind(k->kind)) +
         " " + k->str();
  return s;
}

std::string pointText(const PlanPoint &p, const PlanResult &r) {
  std::string layout;
  if (r.choiceOf(p))
    layout = "per layer";
  else
    layout = std::string(stringifyStrategy(p.strategy)) + " " +
             p.config.layout.str();
  return layout + ", " + std::to_string(p.gpus) + " GPUs, batch " +
         std::to_string(p.config.batch) + ": " + fmt("%.2f", p.ttlS * 1e3) +
         " ms, " + fmt("%.0f", p.tokensPerSecPerUser) + " tok/s/user, " +
         fmt("%.1f", p.tokensPerSecPerGPU) + " tok/s/GPU";
}

const PlanPoint *fastest(const Frontier *f) {
  return f && !f->empty() ? &f->fastest() : nullptr;
}

const PlanPoint *underBudget(const Frontier *f) {
  return f && f->budget.found ? &f->budget.best : nullptr;
}

} // namespace report
} // namespace helix
