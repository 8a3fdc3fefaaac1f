//===- MLIRCommon.h - A helix MLIR context for the fuzz targets -*- C++ -*-===//
//
// One MLIRContext with every helix dialect (renewed every few thousand
// inputs so that uniqued attributes do not pile up), diagnostics captured
// instead of printed, and the oracle for pass runs: a pass run on valid IR
// either fails with an error diagnostic or leaves IR that verifies.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_FUZZ_MLIRCOMMON_H
#define HELIX_FUZZ_MLIRCOMMON_H

#include "FuzzCommon.h"

#include "helix/InitAllHelix.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>

// The Debian LLVM/MLIR libraries are not instrumented, but the LLVM
// headers compiled into the targets poison their allocators' slabs: without
// this every MLIRContext reads as use-after-poison (as in
// scripts/test-sanitize.sh).
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

namespace helix {
namespace fuzz {

/// Collects the diagnostics of one step (the errors counted, the first
/// kept for reports).
class Diagnostics {
public:
  explicit Diagnostics(mlir::MLIRContext &ctx)
      : handler(&ctx, [this](mlir::Diagnostic &d) {
          if (d.getSeverity() == mlir::DiagnosticSeverity::Error) {
            if (errors++ == 0)
              first = d.str();
          }
          return mlir::success();
        }) {}
  int errors = 0;
  std::string first;

private:
  mlir::ScopedDiagnosticHandler handler;
};

class Context {
public:
  Context() { renew(); }

  /// The context for this input (a fresh one every `kRenewEvery` inputs).
  mlir::MLIRContext &get() {
    if (++uses > kRenewEvery)
      renew();
    return *ctx;
  }

private:
  static constexpr int kRenewEvery = 2000;
  void renew() {
    ctx.reset();
    mlir::DialectRegistry registry;
    registerAllHelixDialects(registry);
    ctx = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    ctx->loadAllAvailableDialects();
    uses = 0;
  }
  std::unique_ptr<mlir::MLIRContext> ctx;
  int uses = 0;
};

inline void registerPassesOnce() {
  static bool done = [] {
    registerAllHelixPasses();
    return true;
  }();
  (void)done;
}

/// Runs the textual pass `pipeline` (one pass, with options) on `module`.
/// Returns false when the pass fails, which must come with an error
/// diagnostic; when it succeeds, the IR must verify.
inline bool runPass(mlir::ModuleOp module, const std::string &pipeline,
                    const std::string &input) {
  mlir::MLIRContext &ctx = *module->getContext();
  mlir::PassManager pm(&ctx, mlir::ModuleOp::getOperationName());
  pm.enableVerifier(false); // verified below, to name the pass
  std::string parseError;
  llvm::raw_string_ostream os(parseError);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm, os)))
    fail("fixed pass pipeline does not parse", pipeline + ": " + parseError);
  Diagnostics diags(ctx);
  static const bool verbose = std::getenv("HELIX_FUZZ_VERBOSE") != nullptr;
  if (mlir::failed(pm.run(module))) {
    if (verbose)
      std::fprintf(stderr, "%s: failed: %s\n", pipeline.c_str(),
                   diags.first.c_str());
    if (diags.errors == 0)
      fail("pass failed without an error diagnostic", pipeline + "\n" + input);
    return false;
  }
  if (verbose)
    std::fprintf(stderr, "%s: ok\n", pipeline.c_str());
  Diagnostics verifier(ctx);
  if (mlir::failed(mlir::verify(module))) {
    std::string ir;
    llvm::raw_string_ostream irs(ir);
    module->print(irs);
    fail("pass succeeded but left IR that does not verify",
         pipeline + ": " + verifier.first + "\n--- input\n" + input +
             "\n--- output\n" + ir);
  }
  return true;
}

} // namespace fuzz
} // namespace helix

#endif // HELIX_FUZZ_MLIRCOMMON_H
