//===- MLIRFuzzer.cpp - Fuzz the helix dialect's parser, verifier, passes -===//
//
// Input: MLIR text. It is parsed (and verified) into a context with every
// helix dialect; IR that parses and verifies then goes through the helix
// passes, each on its own copy: helix-verify-partition, helix-estimate-cost,
// helix-resident-formats, convert-helix-to-emitc, the planned-IR chain
// (helix-insert-collectives, -hopb, -kv-placement, -partition,
// -resident-formats, -verify-partition, convert-helix-to-emitc) and the
// same chain after a small helix-search-layouts. A pass must fail with an
// error diagnostic or leave IR that verifies; nothing may crash.
//
//===----------------------------------------------------------------------===//

#include "MLIRCommon.h"

using namespace helix;

namespace {
const char *const kChain[] = {
    "helix-insert-collectives", "helix-hopb",
    "helix-kv-placement",       "helix-partition",
    "helix-resident-formats",   "helix-verify-partition",
    "convert-helix-to-emitc"};

const std::vector<std::vector<std::string>> &pipelines() {
  static const std::vector<std::vector<std::string>> all = [] {
    std::vector<std::vector<std::string>> p = {
        {"helix-verify-partition"},
        {"helix-estimate-cost"},
        {"helix-resident-formats"},
        {"convert-helix-to-emitc"},
        {std::begin(kChain), std::end(kChain)},
        {"helix-search-layouts{max-gpus=8 batch=2 context=1024}"}};
    p.back().insert(p.back().end(), std::begin(kChain), std::end(kChain));
    return p;
  }();
  return all;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static fuzz::Context context;
  fuzz::registerPassesOnce();
  mlir::MLIRContext &ctx = context.get();
  std::string text(reinterpret_cast<const char *>(data), size);

  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    fuzz::Diagnostics diags(ctx);
    module = mlir::parseSourceString<mlir::ModuleOp>(
        text, mlir::ParserConfig(&ctx, /*verifyAfterParse=*/true));
    if (!module) {
      FUZZ_CHECK(diags.errors > 0, "rejected without an error:\n" + text);
      return 0;
    }
  }
  for (const std::vector<std::string> &pipeline : pipelines()) {
    mlir::OwningOpRef<mlir::ModuleOp> copy = module->clone();
    for (const std::string &pass : pipeline)
      if (!fuzz::runPass(*copy, pass, text))
        break;
  }
  return 0;
}
