//===- PlanJSON.cpp - JSON reports of plans and costs ---------------------===//

#include "helix/Plan/PlanJSON.h"

#include "helix/Plan/Gains.h"

#include <nlohmann/json.hpp>

namespace helix {

using ojson = nlohmann::ordered_json;

static ojson layoutJSON(const Layout &l) {
  return ojson{{"kvp", l.kvp}, {"tpa", l.tpa}, {"tpf", l.tpf},
               {"ep", l.ep},   {"pp", l.pp},   {"dp", l.dp}};
}

static ojson pointJSON(const PlanPoint &p) {
  return ojson{{"gpus", p.gpus},
               {"batch", p.config.batch},
               {"layout", layoutJSON(p.config.layout)},
               {"hopb", p.hopbUsed()},
               {"hopb_slices", p.hopbSlices},
               {"ttl_s", p.ttlS},
               {"tokens_per_sec_per_user", p.tokensPerSecPerUser},
               {"tokens_per_sec_per_gpu", p.tokensPerSecPerGPU},
               {"memory_per_gpu_bytes", p.memoryPerGPUBytes},
               {"strategy", stringifyStrategy(p.strategy).str()}};
}

static ojson choiceJSON(const PerLayerChoice &c) {
  ojson kinds = ojson::array();
  for (const KindLayout *kp : c.present()) {
    const KindLayout &k = *kp;
    ojson j{{"kind", stringifyLayerKind(k.kind).str()}, {"layers", k.layers}};
    if (k.isAttention()) {
      j["kvp"] = k.kvp;
      j["tpa"] = k.tpa;
    } else if (k.isRecurrent()) {
      j["tpa"] = k.tpa;
      j["replicas"] = k.replicas;
    } else {
      j["tpf"] = k.tpf;
      j["ep"] = k.ep;
      j["replicas"] = k.replicas;
    }
    kinds.push_back(std::move(j));
  }
  return ojson{{"layouts", std::move(kinds)},
               {"layout_changes", c.layoutChanges},
               {"reshard_bytes", c.reshardBytes},
               {"reshard_s", c.reshardS}};
}

/// A per-layer point: the point's figures and its layouts by kind.
static ojson perLayerPointJSON(const PlanResult &r, const PlanPoint &p) {
  ojson j = pointJSON(p);
  j.erase("layout"); // one per kind instead
  if (const PerLayerChoice *c = r.choiceOf(p))
    j["per_layer"] = choiceJSON(*c);
  return j;
}

static ojson perLayerJSON(const PlanResult &r) {
  ojson j;
  ojson front = ojson::array();
  for (const PlanPoint &p : r.perLayer.points)
    front.push_back(perLayerPointJSON(r, p));
  j["front"] = std::move(front);
  if (r.options.ttlMs > 0)
    j["budget"] =
        r.perLayer.budget.found
            ? ojson{{"best", perLayerPointJSON(r, r.perLayer.budget.best)},
                    {"largest_batch",
                     perLayerPointJSON(r, r.perLayer.budget.largestBatch)}}
            : ojson();
  const PerLayerComparison &cmp = r.perLayerAtHelix;
  if (cmp.found) {
    ojson at = pointJSON(cmp.perLayer);
    at.erase("layout");
    at["per_layer"] = choiceJSON(cmp.choice);
    j["at_helix"] = {{"uniform", pointJSON(cmp.uniform)},
                     {"per_layer", std::move(at)},
                     {"ttl_ratio", cmp.uniform.ttlS / cmp.perLayer.ttlS}};
  } else {
    j["at_helix"] = ojson();
  }
  Gains g = computeGains(r, "helix-per-layer", "helix");
  if (g.interactivity > 0) {
    j["gains_over_uniform"] = {{"interactivity", g.interactivity}};
    if (g.haveBudget) {
      j["gains_over_uniform"]["throughput_at_budget"] = g.throughput;
      j["gains_over_uniform"]["batch_at_budget"] = g.batch;
    }
  }
  // What helix compile (without --per-layer on) and --emit-config build;
  // helix compile --per-layer on builds the per-layer plan.
  j["compiled_layout"] = "uniform";
  j["per_layer_compile_flags"] = "--per-layer on";
  j["configs_evaluated"] = r.perLayer.evaluated;
  j["search_seconds"] = r.perLayerSeconds;
  return j;
}

static ojson breakdownJSON(const TimeBreakdown &t) {
  return ojson{
      {"kv_read_s", t.kvRead},           {"weight_read_s", t.weightRead},
      {"compute_s", t.compute},          {"kernel_overhead_s", t.overhead},
      {"exposed_comm_s", t.exposedComm}, {"pipeline_stall_s", t.pipelineStall}};
}

void writePlanJSON(std::ostream &os, const PlanResult &r) {
  const Precision &p = r.workload.precision;
  ojson j;
  j["model"] = r.model;
  j["hardware"] = r.hardware;
  j["context"] = r.workload.context;
  j["precision"] = {{"weights", stringifyDType(p.weights).str()},
                    {"kv_cache", stringifyDType(p.kvCache).str()},
                    {"compute", stringifyDType(p.compute).str()},
                    {"nvfp4_block_scales", p.nvfp4BlockScales}};
  j["ttl_budget_ms"] = r.options.ttlMs > 0 ? ojson(r.options.ttlMs) : ojson();
  // Speculative decoding: every point's TTL is per accepted token.
  if (r.workload.mtpTokens > 0)
    j["mtp"] = {{"draft_tokens", r.workload.mtpTokens},
                {"acceptance", r.workload.mtpAcceptance},
                {"expected_accepted_tokens",
                 expectedAcceptedTokens(r.workload.mtpTokens,
                                        r.workload.mtpAcceptance)}};
  ojson fronts = ojson::object();
  ojson budget = ojson::object();
  for (const std::string &name : r.order) {
    const Frontier &f = r.frontiers.at(name);
    ojson list = ojson::array();
    for (const PlanPoint &pt : f.points)
      list.push_back(pointJSON(pt));
    fronts[name] = std::move(list);
    if (r.options.ttlMs > 0)
      budget[name] =
          f.budget.found
              ? ojson{{"best", pointJSON(f.budget.best)},
                      {"largest_batch", pointJSON(f.budget.largestBatch)}}
              : ojson();
  }
  j["frontiers"] = std::move(fronts);
  if (r.options.ttlMs > 0)
    j["budget"] = std::move(budget);
  Gains g = computeGains(r);
  if (g.interactivity > 0) {
    j["gains"] = {{"interactivity", g.interactivity}};
    if (g.haveBudget) {
      j["gains"]["throughput_at_budget"] = g.throughput;
      j["gains"]["batch_at_budget"] = g.batch;
    }
  }
  if (r.options.perLayer)
    j["per_layer"] = perLayerJSON(r);
  j["configs_evaluated"] = r.configsEvaluated;
  j["search_seconds"] = r.searchSeconds;
  os << j.dump(2) << "\n";
}

/// Kernels by kind, the kinds launched only: {"gemm": 3, "norm": 1, ...}.
static ojson kindsJSON(const KernelCounts &k) {
  ojson j = ojson::object();
  for (int i = 0; i < kNumKernelKinds; ++i)
    if (k.n[i])
      j[kernelKindName(static_cast<KernelKind>(i))] = k.n[i];
  return j;
}

void writeCostJSON(std::ostream &os, const Evaluation &ev,
                   const PerLayerChoice *perLayer) {
  if (!ev.valid()) {
    os << ojson{{"error", ev.error}}.dump(2) << "\n";
    return;
  }
  ojson j;
  j["gpus"] = ev.gpus;
  j["batch"] = ev.batch;
  j["ttl_s"] = ev.ttlS;
  if (perLayer)
    j["per_layer"] = choiceJSON(*perLayer);
  // The same step with every EP rank at the mean expert load (= ttl_s
  // without MoE layers or with balanced experts).
  j["balanced_ttl_s"] = ev.balancedTtlS;
  j["tokens_per_sec_per_user"] = ev.tokensPerSecPerUser;
  j["tokens_per_sec_per_gpu"] = ev.tokensPerSecPerGPU;
  j["memory_per_gpu_bytes"] = ev.memoryPerGPUBytes;
  j["fits"] = ev.fits;
  ojson layers = ojson::array();
  for (const LayerEvaluation &l : ev.layers)
    layers.push_back(
        {{"index", l.index},
         {"attention",
          {{"kv_bytes_per_gpu", l.attention.kvBytesPerGPU},
           {"weight_bytes_per_gpu", l.attention.weightBytesPerGPU},
           {"flops_per_gpu", l.attention.flopsPerGPU},
           {"kernels", l.attention.kernels},
           {"kernels_by_op",
            {{"qkv", l.attention.qkvKernels},
             {"core", l.attention.coreKernels},
             {"combine", l.attention.combineKernels},
             {"oproj", l.attention.oprojKernels}}},
           {"kernels_by_kind", kindsJSON(l.attention.kernelsByKind)},
           {"time_s", l.attention.timeS}}},
         {"ffn",
          {{"weight_bytes_per_gpu", l.ffn.weightBytesPerGPU},
           {"flops_per_gpu", l.ffn.flopsPerGPU},
           {"kernels", l.ffn.kernels},
           {"kernels_by_kind", kindsJSON(l.ffn.kernelsByKind)},
           {"active_experts", l.ffn.activeExperts},
           {"time_s", l.ffn.timeS}}},
         {"comm", {{"time_s", l.comm.timeS}, {"exposed_s", l.comm.exposedS}}},
         {"stage", l.stage}});
  j["layers"] = std::move(layers);
  j["strategy"] = stringifyStrategy(ev.config.strategy).str();
  j["layout"] = layoutJSON(ev.config.layout);
  j["hopb"] = ev.hopbUsed();
  j["hopb_slices"] = ev.hopbSlices;
  j["micro_batch"] = ev.microBatch;
  j["micro_batches"] = ev.microBatches;
  j["memory"] = {{"weights_bytes", ev.memory.weights},
                 {"kv_cache_bytes", ev.memory.kvCache},
                 {"activations_bytes", ev.memory.activations},
                 {"hbm_capacity_bytes", ev.hbmCapacityBytes}};
  j["breakdown"] = breakdownJSON(ev.breakdown);
  if (ev.mtp.draftTokens > 0)
    j["mtp"] = {{"draft_tokens", ev.mtp.draftTokens},
                {"acceptance", ev.mtp.acceptance},
                {"expected_accepted_tokens", ev.mtp.expectedTokens},
                {"verify_step_s", ev.mtp.verifyStepS},
                {"draft_s", ev.mtp.draftS}};
  j["step"] = {{"compute_s", ev.step.computeS},
               {"weight_bytes_per_gpu", ev.step.weightBytesPerGPU},
               {"kernels", ev.step.kernels},
               {"kernels_by_kind", kindsJSON(ev.step.kernelsByKind)},
               {"comm_s", ev.step.commS},
               {"exposed_s", ev.step.exposedS}};
  os << j.dump(2) << "\n";
}

} // namespace helix
