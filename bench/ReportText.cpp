//===- ReportText.cpp - Text of plan points in the Markdown reports -------===//

#include "ReportText.h"

#include <cstdio>

namespace helix {
namespace report {

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
