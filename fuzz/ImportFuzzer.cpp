//===- ImportFuzzer.cpp - Fuzz the Hugging Face config importer -----------===//
//
// Input: the text of a config.json. importHFConfigString must either fail
// with one error line or return a model the cost model can take: every
// accepted model is validated and priced on a few layouts (with and without
// the MTP layers), which must never crash, overflow or price NaN.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "helix/Cost/Evaluate.h"
#include "helix/Cost/Search.h"
#include "helix/Import/HFConfig.h"

#include <cmath>
#include <cstddef>
#include <cstdint>

using namespace helix;

static const Hardware &hardware() {
  static const Hardware hw = [] {
    Hardware h;
    std::string error;
    if (!loadHardware(defaultHardwareName(), h, error))
      fuzz::fail("loadHardware", error);
    return h;
  }();
  return hw;
}

static void price(const ModelSpec &model) {
  Workload workload;
  workload.context = 4096;
  workload.kvBlock = 16;
  Config config;
  config.strategy = Strategy::TP;
  Evaluation ev = evaluate(model, hardware(), workload, config);
  if (!ev.valid()) {
    fuzz::checkErrorLine(ev.error, "evaluate");
    return;
  }
  FUZZ_CHECK(std::isfinite(ev.ttlS) && ev.ttlS > 0, model.name);
  FUZZ_CHECK(std::isfinite(ev.memoryPerGPUBytes) && ev.memoryPerGPUBytes > 0,
             model.name);
  // A few valid layouts of 8 GPUs per strategy.
  for (Strategy s : {Strategy::Helix, Strategy::TPPP, Strategy::EP}) {
    std::vector<Layout> layouts =
        enumerateLayouts(model, hardware(), workload, s, 8);
    for (size_t i = 0; i < layouts.size() && i < 3; ++i) {
      Config c;
      c.strategy = s;
      c.layout = layouts[i];
      c.batch = 8;
      Evaluation e = evaluate(model, hardware(), workload, c);
      if (!e.valid())
        fuzz::fail("enumerateLayouts gave an invalid layout",
                   layouts[i].str() + ": " + e.error);
      FUZZ_CHECK(std::isfinite(e.ttlS) && e.ttlS > 0, layouts[i].str());
    }
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  for (bool mtp : {false, true}) {
    ImportOptions opts;
    opts.includeMTP = mtp;
    ModelSpec model;
    std::string error;
    if (!importHFConfigString(text, "fuzz/config.json", opts, model, error)) {
      fuzz::checkErrorLine(error, "importHFConfigString");
      return 0; // the MTP option cannot make a bad config good
    }
    FUZZ_CHECK(error.empty(), error);
    FUZZ_CHECK(model.numLayers() > 0 && model.hiddenSize > 0, model.name);
    price(model);
  }
  return 0;
}
