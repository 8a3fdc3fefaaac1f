//===- Planning.cpp - Choose the configuration a plan records -------------===//

#include "helix/Plan/Planning.h"

#include "helix/Common/Numbers.h"
#include "helix/Cost/Evaluate.h"
#include "helix/Cost/PerLayer.h"
#include "helix/Cost/Placement.h"
#include "helix/Cost/Search.h"

#include "Format.h"

#include <algorithm>
#include <limits>

namespace helix {

static std::string gigabytes(double bytes) {
  return fmt::fixed(bytes / 1e9, 1) + " GB";
}

static PlanRecord recordOf(const Config &config, double ttlS,
                           const PlanRequest &request,
                           const Workload &workload) {
  PlanRecord r;
  r.config = config;
  r.hardware = request.hardware;
  r.workload = workload;
  r.ttlS = ttlS;
  return r;
}

/// An explicit layout: valid for the model and hardware, and fits.
static bool checkLayout(const ModelSpec &model, const Hardware &hw,
                        const Workload &workload, const PlanRequest &request,
                        PlanRecord &out, std::string &error) {
  Config config;
  config.strategy = request.strategy;
  config.layout = *request.layout;
  config.batch = request.batch;
  config.hopb = request.hopb;
  config.gpus = request.gpus;
  if (request.batch < 1) {
    error = "a batch of at least 1 is needed with an explicit layout";
    return false;
  }
  std::string invalid = validateConfig(model, hw, workload, config);
  if (!invalid.empty()) {
    error = "layout " + config.layout.str() + " does not fit " + model.name +
            ": " + invalid;
    return false;
  }
  Evaluation ev = evaluate(model, hw, workload, config);
  if (!ev.fits) {
    error = "batch " + std::to_string(config.batch) + " at context " +
            std::to_string(workload.context) + " does not fit in memory with " +
            stringifyStrategy(config.strategy).str() + " " +
            config.layout.str() + ": " + gigabytes(ev.memoryPerGPUBytes) +
            " per GPU (weights " + gigabytes(ev.memory.weights) +
            ", KV cache " + gigabytes(ev.memory.kvCache) + ", activations " +
            gigabytes(ev.memory.activations) + ") but " + hw.name + " has " +
            gigabytes(ev.hbmCapacityBytes);
    return false;
  }
  out = recordOf(config, ev.ttlS, request, workload);
  return true;
}

/// Says why a search chose nothing: no valid layout at all for this model on
/// these GPU counts, or none that fits in memory (within the budget).
static std::string describeNoFit(const ModelSpec &model, const Hardware &hw,
                                 const Workload &workload,
                                 const PlanRequest &request,
                                 const SearchOptions &opts) {
  std::string strategy = stringifyStrategy(request.strategy).str();
  bool anyLayout = false;
  for (int64_t n = opts.minGPUs; n <= opts.maxGPUs && !anyLayout; ++n)
    anyLayout =
        !enumerateLayouts(model, hw, workload, request.strategy, n).empty();
  std::string gpuText =
      request.gpus ? "on " + std::to_string(request.gpus) + " GPUs"
                   : "on 1 to " + std::to_string(request.maxGpus) + " GPUs";
  if (!anyLayout)
    return "the model has no valid " + strategy + " layout " + gpuText +
           " (the parallel widths must divide its heads, KV heads, "
           "experts and FFN sizes)";
  std::string s = "no " + strategy + " configuration " + gpuText;
  if (request.batch)
    s += " at batch " + std::to_string(request.batch);
  s += " fits in memory at context " + std::to_string(workload.context);
  if (request.ttlMs > 0)
    s += " within " + fmt::number(request.ttlMs) + " ms per token";
  return s;
}

static bool searchPlan(const ModelSpec &model, const Hardware &hw,
                       const Workload &workload, const PlanRequest &request,
                       PlanRecord &out, std::string &error) {
  SearchOptions opts;
  opts.strategies = {request.strategy};
  opts.minGPUs = request.gpus ? request.gpus : 1;
  opts.maxGPUs = request.gpus ? request.gpus : request.maxGpus;
  opts.ttlMs = request.ttlMs;
  if (request.batch)
    opts.batches = {request.batch};
  PlanResult result = search(model, hw, workload, opts);
  const Frontier *front =
      result.frontier(stringifyStrategy(request.strategy).str());
  const PlanPoint *chosen = nullptr;
  if (front && request.ttlMs > 0 && front->budget.found)
    chosen = &front->budget.best;
  else if (front && request.ttlMs <= 0 && !front->empty())
    chosen = &front->fastest();
  if (!chosen) {
    error = describeNoFit(model, hw, workload, request, opts);
    return false;
  }
  out = recordOf(chosen->config, chosen->ttlS, request, workload);
  out.evaluated = result.configsEvaluated;
  return true;
}

/// A per-layer plan: the explicit kinds' layouts, or the search's choice,
/// priced at the batch.
static bool perLayerPlan(const ModelSpec &model, const Hardware &hw,
                         const Workload &workload, const PlanRequest &request,
                         PlanRecord &out, std::string &error) {
  if (request.strategy != Strategy::Helix) {
    error = "per-layer layouts are Helix plans with HOP-B (not " +
            stringifyStrategy(request.strategy).str() + ")";
    return false;
  }
  if (request.batch < 1 || (request.gpus < 1 && !request.layout)) {
    error = "per-layer layouts need the GPUs and a batch of at least 1";
    return false;
  }
  int64_t gpus = request.layout ? request.layout->gpus() : request.gpus;
  if (request.gpus && request.gpus != gpus) {
    error = "the layout uses " + std::to_string(gpus) + " GPUs, not " +
            std::to_string(request.gpus);
    return false;
  }
  if (request.layout && (request.layout->pp != 1 || request.layout->dp != 1)) {
    error = "per-layer layouts run one pipeline stage without DP attention";
    return false;
  }
  if (workload.mtpTokens > 0) {
    error = "per-layer layouts are not priced with --mtp yet";
    return false;
  }
  PlanPoint point;
  PerLayerChoice choice;
  if (request.layerLayouts.empty() && !request.layout) {
    PerLayerSearch search(model, hw, workload, gpus);
    if (!search.valid()) {
      error = search.error();
      return false;
    }
    if (!search.price(request.batch, point, choice)) {
      error = "no per-layer Helix plan on " + std::to_string(gpus) +
              " GPUs fits batch " + std::to_string(request.batch) +
              " in memory at context " + std::to_string(workload.context);
      return false;
    }
  } else {
    Layout uniform;
    if (request.layout) {
      uniform = *request.layout;
    } else {
      // Kinds not given: Helix's uniform widths at kvp = gpus.
      uniform.kvp = gpus;
      uniform.tpf = gpus;
    }
    if (!choiceWithKinds(model, uniform, request.layerLayouts, choice, error))
      return false;
    PerLayerSearch fixed(model, hw, workload, gpus, choice);
    if (!fixed.valid()) {
      error = fixed.error();
      return false;
    }
    PerLayerChoice priced;
    if (!fixed.price(request.batch, point, priced)) {
      error = "batch " + std::to_string(request.batch) + " at context " +
              std::to_string(workload.context) +
              " does not fit in memory with these per-layer layouts";
      return false;
    }
    choice = priced;
  }
  Config config = point.config;
  config.hopb = true;
  out = recordOf(config, point.ttlS, request, workload);
  out.perLayer = choice;
  return true;
}

bool loadPassWorkload(const std::string &hardware, const std::string &dtype,
                      int64_t context, double routingSkew, Hardware &hw,
                      Workload &workload, std::string &error) {
  DType dt;
  if (!loadHardware(hardware, hw, error))
    return false;
  // No dtype: the hardware's narrowest native format.
  dt = hw.nativeDType();
  if ((!dtype.empty() && !parseDType(dtype, dt, error)) ||
      !checkReal("routing-skew", routingSkew, 0, 4, error))
    return false;
  workload.context = context;
  workload.routingSkew = routingSkew;
  workload.precision.weights = workload.precision.kvCache =
      workload.precision.compute = dt;
  return true;
}

void fixHopBSlices(const ModelSpec &model, const Hardware &hw, PlanRecord &plan,
                   int64_t slices) {
  Config &c = plan.config;
  if (plan.perLayer) {
    // Every kind is priced with the program's slice count.
    PlanPoint point;
    PerLayerChoice priced;
    if (slices <= 0) {
      PerLayerSearch best(model, hw, plan.workload, c.layout.gpus(),
                          *plan.perLayer);
      if (best.price(c.batch, point, priced))
        slices = point.hopbSlices;
    }
    c.hopbSlices = std::max<int64_t>(1, std::min(slices, c.batch));
    PerLayerSearch fixed(model, hw, plan.workload, c.layout.gpus(),
                         *plan.perLayer, c.hopbSlices);
    if (fixed.price(c.batch, point, priced))
      plan.ttlS = point.ttlS;
    return;
  }
  // The batch-wise overlap the program runs: HOP-B's all-to-all, or the TP
  // baselines' output-projection all-reduce.
  if (!placementFor(c).overlap) {
    c.hopbSlices = 0;
    return;
  }
  if (slices <= 0) {
    c.hopbSlices = 0;
    slices = evaluate(model, hw, plan.workload, c).hopbSlices;
  }
  c.hopbSlices = std::min(slices, c.batch);
  plan.ttlS = evaluate(model, hw, plan.workload, c).ttlS;
}

bool choosePlan(const ModelSpec &model, const Hardware &hw,
                const Workload &workload, const PlanRequest &request,
                PlanRecord &out, std::string &error) {
  // The pass options' names; helix compile checks its flags first.
  if (!checkInteger("context", workload.context, 1, kMaxContext, error) ||
      !checkInteger("gpus", request.gpus, 0, kMaxGPUs, error) ||
      !checkInteger("max-gpus", request.maxGpus, 1, kMaxGPUs, error) ||
      !checkInteger("batch", request.batch, 0, kMaxBatch, error) ||
      !checkReal("ttl-ms", request.ttlMs, 0, std::numeric_limits<double>::max(),
                 error))
    return false;
  bool perLayer = request.perLayer || !request.layerLayouts.empty();
  if (!(perLayer ? perLayerPlan(model, hw, workload, request, out, error)
        : request.layout
            ? checkLayout(model, hw, workload, request, out, error)
            : searchPlan(model, hw, workload, request, out, error)))
    return false;
  // The program slices HOP-B as the cost model finds best unless told
  // otherwise (helix compile --slices), and the plan is priced so.
  fixHopBSlices(model, hw, out, 0);
  return true;
}

} // namespace helix
