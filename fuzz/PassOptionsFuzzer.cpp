//===- PassOptionsFuzzer.cpp - Fuzz the options of the helix passes -------===//
//
// Input: "<pass or pipeline name> <options>", e.g.
// "helix-apply-layout layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192". The
// options go through the pass's own parser (PassRegistryEntry::
// addToPipeline -> Pass::initializeOptions, or the pipeline's options
// struct); a parse failure must say why. Options that parse are then run:
// the pass on the IR it expects (a model IR for the planning passes and
// helix-sharding-pipeline, the planned, collective, placed or partitioned
// IR of the same model for the later passes; the model, of three test
// models, chosen by a hash of the input). A run must fail with an error
// diagnostic or leave IR that verifies. Options naming a file ('/', e.g.
// hardware=/dev/zero) are parsed but not run.
//
//===----------------------------------------------------------------------===//

#include "MLIRCommon.h"

#include "mlir/Pass/PassRegistry.h"

#include <map>

using namespace helix;

namespace {
enum Stage { Model, Planned, Collectives, Placed, Partitioned, Rank, Stages };

const std::map<std::string, Stage> &passes() {
  static const std::map<std::string, Stage> all = {
      {"helix-search-layouts", Model},         {"helix-apply-layout", Model},
      {"helix-sharding-pipeline", Model},      {"helix-estimate-cost", Planned},
      {"helix-insert-collectives", Planned},   {"helix-hopb", Collectives},
      {"helix-kv-placement", Collectives},     {"helix-partition", Placed},
      {"helix-resident-formats", Partitioned}, {"helix-verify-partition", Rank},
      {"convert-helix-to-emitc", Rank},
  };
  return all;
}

struct TestModel {
  const char *file;
  const char *layout; // helix-apply-layout options that fit it
};
const TestModel kModels[] = {
    {"test/Transforms/Inputs/gqa.mlir",
     "layout=kvp=2,tpa=2,tpf=4 batch=4 context=8192"},
    {"test/Transforms/Inputs/mla-moe.mlir",
     "layout=kvp=4,tpa=1,tpf=2,ep=2 batch=2 context=4096"},
    {"test/Transforms/Inputs/swa.mlir",
     "layout=kvp=4,tpa=2,tpf=2,ep=4 batch=2 context=8192"},
};
constexpr int kNumModels = 3;

/// The IR of every stage of every test model, as text (parsed again into
/// the current context for each run).
const std::string &stageIR(int model, Stage stage) {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> v;
    mlir::DialectRegistry registry;
    registerAllHelixDialects(registry);
    mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
    for (const TestModel &m : kModels) {
      std::string text = fuzz::readSourceFile(m.file);
      mlir::OwningOpRef<mlir::ModuleOp> module =
          mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
      if (!module)
        fuzz::fail("parsing a test model", m.file);
      const std::string steps[Stages] = {"",
                                         std::string("helix-apply-layout{") +
                                             m.layout + "}",
                                         "helix-insert-collectives",
                                         "helix-hopb,helix-kv-placement",
                                         "helix-partition",
                                         "helix-resident-formats"};
      for (int s = 0; s < Stages; ++s) {
        if (!steps[s].empty()) {
          mlir::PassManager pm(&ctx, mlir::ModuleOp::getOperationName());
          fuzz::Diagnostics diags(ctx);
          if (mlir::failed(mlir::parsePassPipeline(steps[s], pm)) ||
              mlir::failed(pm.run(*module)))
            fuzz::fail("preparing a stage", steps[s] + ": " + diags.first);
        }
        std::string ir;
        llvm::raw_string_ostream os(ir);
        module->print(os);
        v.push_back(ir);
      }
    }
    return v;
  }();
  return all[model * Stages + stage];
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fuzz::Context context;
  fuzz::registerPassesOnce();
  (void)stageIR(0, Model); // prepare before the first input
  std::string text(reinterpret_cast<const char *>(data), size);
  size_t space = text.find(' ');
  std::string name = text.substr(0, space);
  std::string options =
      space == std::string::npos ? "" : text.substr(space + 1);
  auto known = passes().find(name);
  if (known == passes().end())
    return 0;

  const mlir::PassRegistryEntry *entry = mlir::PassPipelineInfo::lookup(name);
  if (!entry)
    entry = mlir::PassInfo::lookup(name);
  FUZZ_CHECK(entry != nullptr, name);

  mlir::MLIRContext &ctx = context.get();
  mlir::PassManager pm(&ctx, mlir::ModuleOp::getOperationName());
  std::string parseError;
  int messages = 0;
  if (mlir::failed(
          entry->addToPipeline(pm, options, [&](const llvm::Twine &message) {
            ++messages;
            parseError = message.str();
            return mlir::failure();
          }))) {
    // (llvm::cl reports some errors to stderr and none to the handler.)
    (void)messages;
    return 0;
  }
  if (options.find('/') != std::string::npos)
    return 0;

  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 1099511628211ull;
  const std::string &ir = stageIR(int(h % kNumModels), known->second);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(ir, &ctx);
  FUZZ_CHECK(module, "stage IR does not parse again");
  pm.enableVerifier(false);
  fuzz::Diagnostics diags(ctx);
  if (mlir::failed(pm.run(*module))) {
    FUZZ_CHECK(diags.errors > 0, "pass failed without an error: " + text);
    return 0;
  }
  fuzz::Diagnostics verifier(ctx);
  if (mlir::failed(mlir::verify(*module)))
    fuzz::fail("pass succeeded but left IR that does not verify",
               text + ": " + verifier.first);
  return 0;
}
