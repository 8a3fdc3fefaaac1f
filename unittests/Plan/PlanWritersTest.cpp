//===- PlanWritersTest.cpp - JSON, CSV, SVG and text reports --------------===//

#include "helix/Plan/Gains.h"
#include "helix/Plan/PlanCSV.h"
#include "helix/Plan/PlanJSON.h"
#include "helix/Plan/PlanSVG.h"
#include "helix/Plan/PlanText.h"

#include "PaperModels.h"

#include "gtest/gtest.h"

#include <nlohmann/json.hpp>

#include <sstream>

using namespace helix;
using nlohmann::json;

namespace {

class PlanWriters : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::string error;
    ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error)) << error;
    model = paper::deepSeekR1();
    SearchOptions o;
    o.maxGPUs = 32;
    o.ttlMs = 30; // met by several layouts at <= 32 GPUs
    result = search(model, hw, Workload(), o);
  }
  static Hardware hw;
  static ModelSpec model;
  static PlanResult result;
};
Hardware PlanWriters::hw;
ModelSpec PlanWriters::model;
PlanResult PlanWriters::result;

TEST_F(PlanWriters, PlanJSONSchema) {
  std::ostringstream os;
  writePlanJSON(os, result);
  json j = json::parse(os.str());
  EXPECT_EQ(j["model"], "DeepSeek-R1");
  EXPECT_EQ(j["hardware"], "gb200-nvl72");
  EXPECT_EQ(j["context"], 1000000);
  for (const char *name :
       {"helix", "helix-no-hopb", "tp", "tp-pp", "ep", "kvp", "baseline"}) {
    ASSERT_TRUE(j["frontiers"].contains(name)) << name;
    const json &list = j["frontiers"][name];
    ASSERT_TRUE(list.is_array());
    EXPECT_EQ(list.size(), result.frontier(name)->points.size());
    double lastUser = 1e300;
    for (const json &p : list) {
      for (const char *key : {"gpus", "batch", "layout", "hopb", "ttl_s",
                              "tokens_per_sec_per_user",
                              "tokens_per_sec_per_gpu", "memory_per_gpu_bytes"})
        EXPECT_TRUE(p.contains(key)) << key;
      for (const char *key : {"kvp", "tpa", "tpf", "ep", "pp"})
        EXPECT_TRUE(p["layout"][key].is_number_integer()) << key;
      EXPECT_TRUE(p["hopb"].is_boolean());
      EXPECT_LT(p["tokens_per_sec_per_user"].get<double>(), lastUser);
      lastUser = p["tokens_per_sec_per_user"].get<double>();
      EXPECT_LE(p["memory_per_gpu_bytes"].get<double>(), hw.hbmCapacityBytes);
    }
  }
  // HOP-B is reported on exactly where more than one batch slice is used.
  for (const auto &[name, list] : j["frontiers"].items())
    for (const json &p : list) {
      ASSERT_TRUE(p["hopb_slices"].is_number_integer()) << name;
      EXPECT_EQ(p["hopb"].get<bool>(), p["hopb_slices"].get<int64_t>() > 1)
          << name;
    }
  for (const json &p : j["frontiers"]["helix-no-hopb"])
    EXPECT_EQ(p["hopb"], false);
  EXPECT_TRUE(j["budget"]["helix"].contains("largest_batch"));
  EXPECT_GT(j["gains"]["interactivity"].get<double>(), 0.0);
}

TEST_F(PlanWriters, CostJSONSchema) {
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.kvp = 16;
  c.layout.ep = 16;
  c.batch = 8;
  Evaluation ev = evaluate(model, hw, Workload(), c);
  std::ostringstream os;
  writeCostJSON(os, ev);
  json j = json::parse(os.str());
  EXPECT_EQ(j["gpus"], 16);
  EXPECT_EQ(j["batch"], 8);
  EXPECT_DOUBLE_EQ(j["ttl_s"].get<double>(), ev.ttlS);
  EXPECT_EQ(j["fits"], true);
  for (const char *key : {"tokens_per_sec_per_user", "tokens_per_sec_per_gpu",
                          "memory_per_gpu_bytes"})
    EXPECT_TRUE(j[key].is_number()) << key;
  ASSERT_EQ(j["layers"].size(), 61u);
  const json &l = j["layers"][5];
  EXPECT_EQ(l["index"], 5);
  for (const char *key :
       {"kv_bytes_per_gpu", "weight_bytes_per_gpu", "flops_per_gpu", "time_s"})
    EXPECT_TRUE(l["attention"][key].is_number()) << key;
  for (const char *key :
       {"weight_bytes_per_gpu", "flops_per_gpu", "active_experts", "time_s"})
    EXPECT_TRUE(l["ffn"][key].is_number()) << key;
  EXPECT_DOUBLE_EQ(l["ffn"]["active_experts"].get<double>(),
                   ev.layers[5].ffn.activeExperts);
  EXPECT_EQ(l["attention"]["kernels"].get<int>(),
            ev.layers[5].attention.kernels);
  EXPECT_EQ(l["ffn"]["kernels"].get<int>(), ev.layers[5].ffn.kernels);
  EXPECT_GT(ev.layers[5].ffn.kernels, 0);
  // By op: each part as evaluated, and together the attention's count.
  const auto &byOp = l["attention"]["kernels_by_op"];
  const AttentionEvaluation &a = ev.layers[5].attention;
  EXPECT_EQ(byOp["qkv"].get<int>(), a.qkvKernels);
  EXPECT_EQ(byOp["core"].get<int>(), a.coreKernels);
  EXPECT_EQ(byOp["combine"].get<int>(), a.combineKernels);
  EXPECT_EQ(byOp["oproj"].get<int>(), a.oprojKernels);
  EXPECT_GT(a.coreKernels, 0);
  EXPECT_EQ(a.qkvKernels + a.coreKernels + a.combineKernels + a.oprojKernels,
            a.kernels);
  EXPECT_EQ(j["step"]["kernels"].get<int>(), ev.step.kernels);
  // By kind (helix/Common/KernelTable.h): the same kernels, named.
  auto sumKinds = [](const json &kinds) {
    int n = 0;
    for (const auto &[kind, count] : kinds.items())
      n += count.get<int>();
    return n;
  };
  EXPECT_EQ(sumKinds(l["attention"]["kernels_by_kind"]), a.kernels);
  EXPECT_EQ(sumKinds(l["ffn"]["kernels_by_kind"]), ev.layers[5].ffn.kernels);
  EXPECT_EQ(sumKinds(j["step"]["kernels_by_kind"]), ev.step.kernels);
  EXPECT_EQ(l["attention"]["kernels_by_kind"]["attention"].get<int>(),
            a.kernelsByKind.of(KernelKind::Attention));
  EXPECT_GT(a.kernelsByKind.of(KernelKind::Attention), 0);
  EXPECT_EQ(j["step"]["kernels_by_kind"]["embedding"].get<int>(), 1);
  EXPECT_TRUE(l["comm"]["time_s"].is_number());
  EXPECT_TRUE(l["comm"]["exposed_s"].is_number());
  EXPECT_DOUBLE_EQ(l["attention"]["kv_bytes_per_gpu"].get<double>(),
                   ev.layers[5].attention.kvBytesPerGPU);

  c.layout.tpa = 2; // MLA: invalid for helix
  std::ostringstream bad;
  writeCostJSON(bad, evaluate(model, hw, Workload(), c));
  EXPECT_TRUE(json::parse(bad.str()).contains("error"));
}

TEST_F(PlanWriters, CSVHasOneRowPerPoint) {
  std::ostringstream os;
  writePlanCSV(os, result);
  std::istringstream in(os.str());
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(
      line,
      "frontier,strategy,gpus,batch,kvp,tpa,tpf,ep,pp,dp,hopb,hopb_slices,"
      "ttl_s,tokens_per_sec_per_user,tokens_per_sec_per_gpu,"
      "memory_per_gpu_bytes");
  size_t rows = 0, points = 0;
  while (std::getline(in, line)) {
    ++rows;
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 15) << line;
  }
  for (const auto &entry : result.frontiers)
    points += entry.second.points.size();
  EXPECT_EQ(rows, points);
}

TEST_F(PlanWriters, SVGIsAChart) {
  std::ostringstream os;
  writePlanSVG(os, result);
  std::string svg = os.str();
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_NE(svg.find("DeepSeek-R1 on gb200-nvl72"), std::string::npos);
  EXPECT_NE(svg.find("Interactivity (tokens/s/user"), std::string::npos);
  EXPECT_NE(svg.find("Throughput (tokens/s/GPU)"), std::string::npos);
  EXPECT_NE(svg.find("TTL budget 30 ms"), std::string::npos);
  for (const char *name : {">helix<", ">tp<", ">tp-pp<", ">ep<", ">kvp<",
                           ">baseline<", "helix-no-hopb"})
    EXPECT_NE(svg.find(name), std::string::npos) << name;
  EXPECT_GT(std::count(svg.begin(), svg.end(), '\n'), 100);
}

TEST_F(PlanWriters, TextSummary) {
  std::ostringstream os;
  writePlanSummary(os, result, model, hw);
  std::string text = os.str();
  for (const char *want :
       {"Helix plan: DeepSeek-R1 on gb200-nvl72", "TTL <= 30 ms", "Helix",
        "Baseline", "interactivity (max tokens/s/user)",
        "throughput at the budget", "batch at the budget", "Where time goes",
        "KV read", "weight read", "compute", "exposed communication",
        "Pareto fronts", "tp-pp ("})
    EXPECT_NE(text.find(want), std::string::npos) << want;
  Gains g = computeGains(result);
  EXPECT_TRUE(g.haveBudget);
  EXPECT_GT(g.batch, 1.0);
}

TEST_F(PlanWriters, TextSummaryWithoutBudget) {
  SearchOptions o;
  o.maxGPUs = 8;
  o.strategies = {Strategy::Helix, Strategy::TP};
  PlanResult r = search(model, hw, Workload(), o);
  std::ostringstream os;
  writePlanSummary(os, r, model, hw);
  EXPECT_NE(os.str().find("comparing at maximum interactivity"),
            std::string::npos);
  EXPECT_FALSE(computeGains(r).haveBudget);
}

TEST_F(PlanWriters, NothingFits) {
  SearchOptions o;
  o.maxGPUs = 1;
  o.strategies = {Strategy::Helix};
  PlanResult r = search(model, hw, Workload(), o);
  std::ostringstream text, svg, js, csv;
  writePlanSummary(text, r, model, hw);
  EXPECT_NE(text.str().find("no configuration fits in memory"),
            std::string::npos);
  writePlanSVG(svg, r);
  EXPECT_NE(svg.str().find("helix (none fit)"), std::string::npos);
  writePlanJSON(js, r);
  EXPECT_TRUE(json::parse(js.str())["frontiers"]["helix"].empty());
  writePlanCSV(csv, r);
  std::string rows = csv.str();
  EXPECT_EQ(std::count(rows.begin(), rows.end(), '\n'), 1);
}

TEST_F(PlanWriters, CostText) {
  Config c;
  c.strategy = Strategy::TPPP;
  c.layout.tpa = 8;
  c.layout.ep = 8;
  c.layout.pp = 4;
  c.batch = 8;
  Evaluation ev = evaluate(model, hw, Workload(), c);
  std::ostringstream os;
  writeCostText(os, ev, model, hw, Workload());
  std::string text = os.str();
  for (const char *want :
       {"tp-pp kvp=1,tpa=8,tpf=1,ep=8,pp=4 (32 GPUs)",
        "Pipeline: 4 stages, 4 micro-batches of 2", "Memory per GPU",
        "Where time goes", "layers 0-2 (3 x mla + dense FFN, stage 0)",
        "distinct experts read per GPU", "per step"})
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  std::ostringstream bad;
  c.layout.kvp = 2;
  writeCostText(bad, evaluate(model, hw, Workload(), c), model, hw, Workload());
  EXPECT_EQ(bad.str().rfind("invalid configuration: ", 0), 0u);
}

TEST_F(PlanWriters, HopBIsOnExactlyWhereSlicesAreUsed) {
  // Without fixed latencies slicing is free, so HOP-B splits the batch and
  // says so; on the preset one slice is cheapest at batch 1 and the text
  // says HOP-B is off although the configuration asked for it.
  Hardware free = hw;
  free.kernelOverheadS = 0;
  free.kernels = KernelCurves();
  for (CollectiveParams &cp : free.collectives) {
    cp.measured.clear();
    for (auto &a : cp.alphaS)
      a.second = 0;
  }
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.kvp = 8;
  c.layout.tpf = 8;
  c.batch = 64;
  Evaluation on = evaluate(model, free, Workload(), c);
  ASSERT_TRUE(on.valid()) << on.error;
  EXPECT_GT(on.hopbSlices, 1);
  std::ostringstream os;
  writeCostText(os, on, model, free, Workload());
  std::string want = "HOP-B on (" + std::to_string(on.hopbSlices) + " slices)";
  EXPECT_NE(os.str().find(want), std::string::npos) << os.str();
  std::ostringstream js;
  writeCostJSON(js, on);
  EXPECT_EQ(json::parse(js.str())["hopb"], true);

  c.batch = 1;
  Evaluation one = evaluate(model, hw, Workload(), c);
  ASSERT_TRUE(one.valid()) << one.error;
  EXPECT_EQ(one.hopbSlices, 1);
  std::ostringstream os1, js1;
  writeCostText(os1, one, model, hw, Workload());
  EXPECT_NE(os1.str().find("HOP-B off (one batch slice"), std::string::npos)
      << os1.str();
  writeCostJSON(js1, one);
  EXPECT_EQ(json::parse(js1.str())["hopb"], false);
}

} // namespace
