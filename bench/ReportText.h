//===- ReportText.h - Text of plan points in the Markdown reports -*- C++ -*-=//
//
// How the bench reports (helix-long-context-report, helix-per-layer-report)
// write a plan point and a per-layer choice, so that their tables read
// alike.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_BENCH_REPORTTEXT_H
#define HELIX_BENCH_REPORTTEXT_H

#include "helix/Cost/PerLayer.h"
#include "helix/Cost/Search.h"

#include <string>

namespace helix {
namespace report {

/// The reports' command line: --models DIR (the configs), --hw NAME and,
/// where `withMaxGPUs`, --max-gpus N.
struct ReportArgs {
  std::string models;
  std::string hw = "gb200-nvl72";
  int64_t maxGPUs = 0;
};

/// Parses the command line of report `tool` over `args`' defaults; false
/// after printing a one-line error (an unknown flag, a flag without its
/// value, a bad count) to stderr.
bool parseReportArgs(int argc, char **argv, const char *tool, bool withMaxGPUs,
                     ReportArgs &args);

/// The first line of a generated page: the tool that prints it and the
/// test that compares the committed copy; then its title.
void printPageHeader(const char *tool, const char *test, const char *title);

/// A workload at `context` tokens in the hardware's native format (FP4 with
/// NVFP4 block scales on Blackwell, FP8 on Hopper), as `helix plan`
/// defaults to.
Workload nativeWorkload(const Hardware &hw, int64_t context);

/// printf of one number.
std::string fmt(const char *format, double v);

/// "128K" or "1M".
std::string contextText(int64_t context);

/// "full_attention kvp=8,tpa=1; moe_ffn tpf=1,ep=8": the kinds' layouts,
/// mixers first.
std::string kindsText(const PerLayerChoice &c);

/// "helix kvp=..., 32 GPUs, batch 2: 10.68 ms, 94 tok/s/user, 5.8 tok/s/GPU"
/// ("per layer" for a point of the per-layer front of `r`).
std::string pointText(const PlanPoint &p, const PlanResult &r);

/// The fastest point of a front, or the best under the budget; nullptr
/// when there is none.
const PlanPoint *fastest(const Frontier *f);
const PlanPoint *underBudget(const Frontier *f);

} // namespace report
} // namespace helix

#endif // HELIX_BENCH_REPORTTEXT_H
