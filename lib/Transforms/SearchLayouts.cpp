//===- SearchLayouts.cpp - helix-search-layouts ---------------------------===//
//
// Runs the planner's exhaustive search on the model IR and annotates the
// chosen configuration.
//
//===----------------------------------------------------------------------===//

#include "helix/Cost/Search.h"
#include "helix/ModelIR/ModelIR.h"
#include "helix/Transforms/ApplyPlan.h"
#include "helix/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::helix {
#define GEN_PASS_DEF_HELIXSEARCHLAYOUTS
#include "helix/Transforms/Passes.h.inc"
} // namespace mlir::helix

using namespace mlir;

namespace {

struct SearchLayouts
    : public mlir::helix::impl::HelixSearchLayoutsBase<SearchLayouts> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp func = ::helix::findDecodeStep(module);
    if (!func) {
      module.emitError() << "helix-search-layouts: no decode-step function "
                            "(func.func @decode_step or one carrying "
                            "helix.model)";
      return signalPassFailure();
    }
    FailureOr<::helix::ModelSpec> model = ::helix::extractModelSpec(func);
    if (failed(model))
      return signalPassFailure();

    std::string error;
    ::helix::Hardware hw;
    ::helix::Workload workload;
    ::helix::SearchOptions opts;
    ::helix::Strategy strat;
    ::helix::DType dt;
    if (!::helix::loadHardware(hardware, hw, error) ||
        !::helix::parseStrategy(strategy, strat, error) ||
        !::helix::parseDType(dtype, dt, error))
      return fail(func, error);
    if (context <= 0 || gpus < 0 || batch < 0 || maxGpus <= 0 || ttlMs < 0)
      return fail(func, "context and max-gpus must be positive; gpus, batch "
                        "and ttl-ms must not be negative");
    workload.context = context;
    workload.precision.weights = workload.precision.kvCache =
        workload.precision.compute = dt;
    opts.strategies = {strat};
    opts.minGPUs = gpus ? gpus : 1;
    opts.maxGPUs = gpus ? gpus : maxGpus;
    opts.ttlMs = ttlMs;
    if (batch)
      opts.batches = {batch};

    ::helix::PlanResult result = ::helix::search(*model, hw, workload, opts);
    const ::helix::Frontier *front =
        result.frontier(::helix::stringifyStrategy(strat));
    const ::helix::PlanPoint *chosen = nullptr;
    if (front && ttlMs > 0 && front->budget.found)
      chosen = &front->budget.best;
    else if (front && ttlMs <= 0 && !front->empty())
      chosen = &front->fastest();
    if (!chosen)
      return fail(func, describeNoFit(*model, hw, workload, strat, opts));

    ::helix::PlanRecord record;
    record.config = chosen->config;
    record.hardware = hardware;
    record.workload = workload;
    record.ttlS = chosen->ttlS;
    ::helix::applyPlan(func, record);
  }

private:
  void fail(func::FuncOp func, const std::string &message) {
    func.emitError() << "helix-search-layouts: " << message;
    signalPassFailure();
  }

  /// Says why nothing was chosen: no valid layout at all for this model on
  /// these GPU counts, or none that fits in memory (within the budget).
  std::string describeNoFit(const ::helix::ModelSpec &model,
                            const ::helix::Hardware &hw,
                            const ::helix::Workload &workload,
                            ::helix::Strategy strat,
                            const ::helix::SearchOptions &opts) const {
    bool anyLayout = false;
    for (int64_t n = opts.minGPUs; n <= opts.maxGPUs && !anyLayout; ++n)
      anyLayout = !::helix::enumerateLayouts(model, hw, workload, strat, n)
                       .empty();
    std::string gpuText = gpus ? "on " + std::to_string(gpus) + " GPUs"
                               : "on 1 to " + std::to_string(maxGpus) +
                                     " GPUs";
    if (!anyLayout)
      return "the model has no valid " + strategy + " layout " + gpuText +
             " (the parallel widths must divide its heads, KV heads, "
             "experts and FFN sizes)";
    std::string s = "no " + strategy + " configuration " + gpuText;
    if (batch)
      s += " at batch " + std::to_string(batch);
    s += " fits in memory at context " + std::to_string(context);
    if (ttlMs > 0)
      s += " within " + llvm::formatv("{0}", ttlMs).str() + " ms per token";
    return s;
  }
};

} // namespace
