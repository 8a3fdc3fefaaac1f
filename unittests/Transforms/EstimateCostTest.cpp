//===- EstimateCostTest.cpp - helix-estimate-cost against evaluate() ------===//
//
// For every strategy and the test models, the planned IR is priced op by op
// by helix-estimate-cost and as a whole by evaluate() (what `helix cost`
// prints): the function's total must be evaluate()'s token-to-token latency
// and the categories its breakdown, each layer's four ops its layer time.
//
//===----------------------------------------------------------------------===//

#include "helix/Cost/Evaluate.h"
#include "helix/Cost/Placement.h"
#include "helix/Cost/Search.h"
#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/Import/HFConfig.h"
#include "helix/InitAllHelix.h"
#include "helix/ModelIR/ModelIR.h"
#include "helix/Transforms/ApplyPlan.h"
#include "helix/Transforms/Passes.h"
#include "helix/Transforms/Pipeline.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <map>

using namespace helix;

namespace {

/// Agreement asked of the pass: 0.1% of the step.
constexpr double kTolerance = 1e-3;

ModelSpec load(const std::string &file) {
  ModelSpec model;
  std::string error;
  EXPECT_TRUE(importHFConfigFile(std::string(HELIX_SOURCE_DIR) +
                                     "/test/Inputs/models/" + file,
                                 ImportOptions{}, model, error))
      << error;
  return model;
}

double us(const llvm::APFloat &v) { return v.convertToDouble() * 1e-6; }

class EstimateCost : public ::testing::Test {
protected:
  EstimateCost() : context(registry()) { context.loadAllAvailableDialects(); }

  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry r;
    registerAllHelixDialects(r);
    return r;
  }

  /// Plans `model` with `config` on `hwName` (as helix compile does), runs
  /// the pass with `options` and checks it against evaluate() on `hw` /
  /// `priced` (the workload the pass is expected to price).
  void check(const ModelSpec &model, const Config &config,
             const std::string &hwName, const Workload &planned,
             const mlir::helix::HelixEstimateCostOptions &options,
             const Hardware &hw, const Workload &priced) {
    std::string what =
        model.name + " " + stringifyStrategy(config.strategy).str() + " " +
        config.layout.str() + " batch=" + std::to_string(config.batch) +
        (config.hopb ? "" : " hopb=off");
    SCOPED_TRACE(what);
    Evaluation ev = evaluate(model, hw, priced, config);
    ASSERT_TRUE(ev.valid()) << ev.error;

    mlir::OwningOpRef<mlir::ModuleOp> module = buildModelIR(context, model);
    mlir::func::FuncOp func = findDecodeStep(*module);
    PlanRecord record;
    record.config = config;
    record.hardware = hwName;
    record.workload = planned;
    applyPlan(func, record);
    mlir::PassManager pm(&context);
    pm.addPass(mlir::helix::createHelixEstimateCost(options));
    ASSERT_TRUE(mlir::succeeded(pm.run(*module)));

    auto total = func->getAttrOfType<mlir::helix::CostAttr>("helix.cost");
    ASSERT_TRUE(total);
    const double tol = kTolerance * ev.ttlS;
    EXPECT_NEAR(us(total.getTimeUs()), ev.ttlS, tol);
    const TimeBreakdown &b = ev.breakdown;
    EXPECT_NEAR(us(total.getKvReadUs()), b.kvRead, tol);
    EXPECT_NEAR(us(total.getWeightReadUs()), b.weightRead, tol);
    EXPECT_NEAR(us(total.getComputeUs()), b.compute, tol);
    EXPECT_NEAR(us(total.getOverheadUs()), b.overhead, tol);
    EXPECT_NEAR(us(total.getCommUs()), b.exposedComm, tol);
    EXPECT_NEAR(us(total.getStallUs()), b.pipelineStall, tol);

    // Per layer: its four ops add up to evaluate()'s layer time.
    std::map<int64_t, double> layerS;
    std::map<int64_t, int> layerOps;
    int64_t stepOps = 0;
    func.walk([&](mlir::Operation *op) {
      auto cost = op->getAttrOfType<mlir::helix::CostAttr>("helix.cost");
      if (mlir::isa<mlir::helix::EmbedOp, mlir::helix::LMHeadOp>(op)) {
        EXPECT_TRUE(cost) << op->getName().getStringRef().str();
        ++stepOps;
        return;
      }
      int64_t layer = -1;
      if (auto o = mlir::dyn_cast<mlir::helix::QKVProjOp>(op))
        layer = o.getLayer();
      else if (auto o = mlir::dyn_cast<mlir::helix::AttentionOp>(op))
        layer = o.getLayer();
      else if (auto o = mlir::dyn_cast<mlir::helix::LinearOp>(op))
        layer =
            o.getInput().getDefiningOp<mlir::helix::AttentionOp>().getLayer();
      else if (auto o = mlir::dyn_cast<mlir::helix::FFNOp>(op))
        layer = o.getLayer();
      else if (auto o = mlir::dyn_cast<mlir::helix::MoEOp>(op))
        layer = o.getLayer();
      else
        return;
      ASSERT_TRUE(cost) << op->getName().getStringRef().str();
      layerS[layer] += us(cost.getTimeUs());
      ++layerOps[layer];
    });
    EXPECT_EQ(stepOps, 2);
    ASSERT_EQ(layerS.size(), ev.layers.size());
    for (const LayerEvaluation &l : ev.layers) {
      EXPECT_EQ(layerOps[l.index], 4) << "layer " << l.index;
      EXPECT_NEAR(layerS[l.index], l.timeS, kTolerance * l.timeS)
          << "layer " << l.index;
    }
  }

  /// The plan's own hardware and precision.
  void check(const ModelSpec &model, const Config &config,
             const std::string &hwName, const Workload &workload) {
    Hardware hw;
    std::string error;
    ASSERT_TRUE(loadHardware(hwName, hw, error)) << error;
    check(model, config, hwName, workload, {}, hw, workload);
  }

  mlir::MLIRContext context;
};

/// Every strategy on the test models, on 2, 4 and 8 GPUs (every valid
/// layout), at a batch of 1 and a batch that is no power of two, HOP-B on
/// and off.
TEST_F(EstimateCost, EqualsEvaluateForEveryStrategyAndModel) {
  const char *files[] = {
      "tiny-llama-tied.json", "tiny-qwen2-swa.json",    "tiny-qwen3-moe.json",
      "tiny-deepseek.json",   "tiny-deepseek-mtp.json", "tiny-gpt-oss.json",
      "Llama-3.1-8B.json",    "Llama-3.1-405B.json",    "DeepSeek-R1.json",
      "Qwen3-235B-A22B.json", "gpt-oss-120b.json",      "Mixtral-8x7B.json"};
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error)) << error;
  Workload workload;
  workload.context = 65536;
  for (const char *file : files) {
    ModelSpec model = load(file);
    for (Strategy strategy : allStrategies()) {
      int64_t checked = 0;
      for (int64_t gpus : {2, 4, 8})
        for (const Layout &layout :
             enumerateLayouts(model, hw, workload, strategy, gpus))
          for (int64_t batch : {1, 6})
            for (bool hopb : {true, false}) {
              Config config;
              config.strategy = strategy;
              config.layout = layout;
              config.batch = batch;
              config.hopb = hopb;
              check(model, config, "gb200-nvl72", workload);
              ++checked;
            }
      EXPECT_GT(checked, 0) << file << " " << stringifyStrategy(strategy).str();
    }
  }
}

/// The program helix-partition emits (rank IR, with layer functions or
/// without) prices to the plan's latency too: every layer runs once, on the
/// stage the plan puts it on.
TEST_F(EstimateCost, RankIREqualsEvaluate) {
  const char *files[] = {"tiny-llama-tied.json", "tiny-qwen2-swa.json",
                         "tiny-qwen3-moe.json",  "tiny-deepseek.json",
                         "tiny-gpt-oss.json",    "Llama-3.1-8B.json"};
  Hardware hw;
  std::string error;
  ASSERT_TRUE(loadHardware("gb200-nvl72", hw, error)) << error;
  Workload workload;
  workload.context = 8192;
  int64_t checked = 0;
  for (const char *file : files) {
    ModelSpec model = load(file);
    for (Strategy strategy : allStrategies())
      for (int64_t gpus : {2, 4})
        for (const Layout &layout :
             enumerateLayouts(model, hw, workload, strategy, gpus))
          for (bool layerFunctions : {true, false}) {
            Config config;
            config.strategy = strategy;
            config.layout = layout;
            config.batch = 6;
            SCOPED_TRACE(model.name + " " + stringifyStrategy(strategy).str() +
                         " " + layout.str() +
                         (layerFunctions ? "" : " (layers inline)"));
            mlir::OwningOpRef<mlir::ModuleOp> module =
                buildModelIR(context, model);
            PlanRecord record;
            record.config = config;
            record.hardware = "gb200-nvl72";
            record.workload = workload;
            applyPlan(findDecodeStep(*module), record);
            mlir::PassManager pm(&context);
            ShardingPipelineOptions options;
            options.layerFunctions = layerFunctions;
            buildShardingPipeline(pm, options);
            pm.addPass(mlir::helix::createHelixEstimateCost());
            ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
            // The program's batch slices (one per request here: the plan
            // left them to the pass) are in its plan, only where it
            // overlaps a collective with attention (none over one GPU);
            // the cost model prices the same.
            config.hopbSlices =
                (*module)
                    ->getAttrOfType<mlir::helix::PlanAttr>("helix.plan")
                    .getSlices();
            if (config.hopbSlices > 0) {
              EXPECT_TRUE(placementFor(config).overlap);
            }
            Evaluation ev = evaluate(model, hw, workload, config);
            ASSERT_TRUE(ev.valid()) << ev.error;
            auto total =
                (*module)->getAttrOfType<mlir::helix::CostAttr>("helix.cost");
            ASSERT_TRUE(total);
            EXPECT_NEAR(us(total.getTimeUs()), ev.ttlS, kTolerance * ev.ttlS);
            ++checked;
          }
  }
  EXPECT_GT(checked, 100);
}

/// The options price the same plan on other hardware and formats.
TEST_F(EstimateCost, OptionsOverrideThePlansHardwareAndPrecision) {
  ModelSpec model = load("Qwen3-235B-A22B.json");
  Config config;
  config.strategy = Strategy::Helix;
  config.layout.kvp = 2;
  config.layout.tpa = 4;
  config.layout.tpf = 2;
  config.layout.ep = 4;
  config.batch = 8;
  Workload planned;
  planned.context = 131072;
  mlir::helix::HelixEstimateCostOptions options;
  options.hardware = "h200";
  options.dtype = "fp8";
  options.kvDtype = "bf16";
  Hardware h200;
  std::string error;
  ASSERT_TRUE(loadHardware("h200", h200, error)) << error;
  Workload priced = planned;
  priced.precision.weights = priced.precision.compute = DType::FP8;
  priced.precision.kvCache = DType::BF16;
  check(model, config, "gb200-nvl72", planned, options, h200, priced);
}

/// The plan's precision (with NVFP4 scales) is read back from the IR.
TEST_F(EstimateCost, PricesThePlansPrecision) {
  ModelSpec model = load("DeepSeek-R1.json");
  Config config;
  config.strategy = Strategy::Helix;
  config.layout.kvp = 8;
  config.layout.tpf = 2;
  config.layout.ep = 4;
  config.batch = 16;
  Workload workload;
  workload.context = 1048576;
  workload.precision.kvCache = DType::FP8;
  workload.precision.nvfp4BlockScales = true;
  check(model, config, "b200", workload);
}

} // namespace
