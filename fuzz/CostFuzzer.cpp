//===- CostFuzzer.cpp - Fuzz layout strings into the cost model -----------===//
//
// Input: a layout string ("kvp=4,tpa=8,tpf=32,ep=1"), then, after a NUL
// byte, the bytes that choose the model (of ten test models), the hardware
// preset, the strategy, batch, context, KV block, GPU count, HOP-B and the
// number formats (read by ByteReader.h; missing bytes give the first
// model and preset, helix, and the smallest valid numbers). An empty layout
// string picks one of enumerateLayouts' layouts for a GPU count instead.
// parseLayout, validateConfig and evaluate must never crash, hang or
// overflow; errors are fine. Oracles: a parsed layout prints back to
// itself, and a valid configuration prices to a finite, positive TTL and
// memory.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "helix/Common/Numbers.h"
#include "helix/Cost/Evaluate.h"
#include "helix/Cost/Search.h"
#include "helix/Import/HFConfig.h"

#include "ByteReader.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace helix;

namespace {
struct Fixture {
  std::vector<ModelSpec> models;
  std::vector<Hardware> hardware;
};
} // namespace

static const Fixture &fixture() {
  static const Fixture f = [] {
    Fixture f;
    for (const char *name :
         {"tiny-deepseek", "tiny-deepseek-mtp", "tiny-gpt-oss",
          "tiny-llama-tied", "tiny-qwen2-swa", "tiny-qwen3-moe", "Llama-3.1-8B",
          "DeepSeek-R1", "gpt-oss-120b", "Mixtral-8x7B"}) {
      ModelSpec m;
      std::string error;
      ImportOptions opts;
      opts.includeMTP = std::string(name).find("mtp") != std::string::npos;
      std::string file = std::string("test/Inputs/models/") + name + ".json";
      if (!importHFConfigString(fuzz::readSourceFile(file), file, opts, m,
                                error))
        fuzz::fail("importing a test model", error);
      f.models.push_back(std::move(m));
    }
    for (const std::string &name : listHardwarePresets()) {
      Hardware hw;
      std::string error;
      if (!loadHardware(name, hw, error))
        fuzz::fail("loadHardware", error);
      f.hardware.push_back(std::move(hw));
    }
    return f;
  }();
  return f;
}

/// A number from `fdp`: mostly inside [lo, hi], sometimes anything.
static int64_t number(helix::fuzz::ByteReader &fdp, int64_t lo, int64_t hi) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 3)) {
  case 0: // small values, where most layouts are valid
    return fdp.ConsumeIntegralInRange<int64_t>(lo, std::min<int64_t>(hi, 64));
  case 1:
    return fdp.ConsumeIntegral<int64_t>();
  default:
    return fdp.ConsumeIntegralInRange<int64_t>(lo, hi);
  }
}

static DType dtype(helix::fuzz::ByteReader &fdp) {
  return static_cast<DType>(fdp.ConsumeIntegralInRange<int>(0, kNumDTypes - 1));
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const Fixture &f = fixture();
  const uint8_t *nul = static_cast<const uint8_t *>(std::memchr(data, 0, size));
  std::string text(reinterpret_cast<const char *>(data),
                   nul ? size_t(nul - data) : size);
  size_t rest = nul ? size - text.size() - 1 : 0;
  helix::fuzz::ByteReader fdp(nul ? nul + 1 : data, rest);
  const ModelSpec &model =
      f.models[fdp.ConsumeIntegralInRange<size_t>(0, f.models.size() - 1)];
  const Hardware &hw =
      f.hardware[fdp.ConsumeIntegralInRange<size_t>(0, f.hardware.size() - 1)];
  const std::vector<Strategy> &strategies = allStrategies();
  Config config;
  config.strategy =
      strategies[fdp.ConsumeIntegralInRange<size_t>(0, strategies.size() - 1)];
  config.batch = number(fdp, 1, kMaxBatch);
  config.hopb = fdp.ConsumeBool();
  config.hopbSlices = number(fdp, 0, kMaxBatch);
  Workload workload;
  workload.context = number(fdp, 1, kMaxContext);
  workload.kvBlock = number(fdp, 1, kMaxContext);
  workload.precision.weights = dtype(fdp);
  workload.precision.kvCache = dtype(fdp);
  workload.precision.compute = dtype(fdp);
  workload.precision.nvfp4BlockScales = fdp.ConsumeBool();
  bool explicitGpus = fdp.ConsumeBool();
  int64_t gpus = number(fdp, 0, kMaxGPUs);

  Layout layout;
  std::string error;
  if (text.empty()) {
    // No layout text: one of the search's layouts for a GPU count, so that
    // most of these inputs price (deep in the model) rather than fail
    // validation.
    int64_t count = fdp.ConsumeIntegralInRange<int64_t>(1, 128);
    std::vector<Layout> valid =
        enumerateLayouts(model, hw, workload, config.strategy, count);
    if (valid.empty())
      return 0;
    layout = valid[fdp.ConsumeIntegralInRange<size_t>(0, valid.size() - 1)];
  } else if (!parseLayout(text, layout, error)) {
    FUZZ_CHECK(!error.empty(), text);
    return 0;
  }
  // The printed layout parses back to the same layout.
  Layout again;
  std::string error2;
  FUZZ_CHECK(parseLayout(layout.str(), again, error2) && again == layout,
             layout.str() + ": " + error2);
  config.layout = layout;
  if (explicitGpus)
    config.gpus = gpus;

  Evaluation ev = evaluate(model, hw, workload, config);
  if (!ev.valid())
    return 0;
  std::string where = model.name + " " + hw.name + " " + layout.str() + " " +
                      stringifyStrategy(config.strategy).str() +
                      " batch=" + std::to_string(config.batch) +
                      " context=" + std::to_string(workload.context) +
                      " kv-block=" + std::to_string(workload.kvBlock) +
                      " gpus=" + std::to_string(config.gpus) +
                      " hopb=" + std::to_string(config.hopb) +
                      " slices=" + std::to_string(config.hopbSlices) + " " +
                      workload.precision.describe() + " -> ttl " +
                      std::to_string(ev.ttlS) + " s, memory " +
                      std::to_string(ev.memoryPerGPUBytes) + " B (weights " +
                      std::to_string(ev.memory.weights) + ", kv " +
                      std::to_string(ev.memory.kvCache) + ", activations " +
                      std::to_string(ev.memory.activations) + ")";
  FUZZ_CHECK(std::isfinite(ev.ttlS) && ev.ttlS > 0, where);
  FUZZ_CHECK(std::isfinite(ev.memoryPerGPUBytes) && ev.memoryPerGPUBytes > 0,
             where);
  FUZZ_CHECK(std::isfinite(ev.tokensPerSecPerGPU), where);
  FUZZ_CHECK(ev.layers.size() == model.layers.size(), where);
  // The same layout is one of the search's candidates.
  if (layout.gpus() <= 64 && !explicitGpus) {
    bool found = false;
    for (const Layout &l :
         enumerateLayouts(model, hw, workload, config.strategy, layout.gpus()))
      found = found || l == layout;
    FUZZ_CHECK(found, "valid layout not enumerated: " + where);
  }
  return 0;
}
