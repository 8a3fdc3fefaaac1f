//===- HardwareFuzzer.cpp - Fuzz hardware JSON (and "base" overrides) -----===//
//
// Input: the text of a hardware file, with or without "base" (a preset
// whose figures the file overrides). parseHardwareJSON must either fail
// with one error line or return figures the cost model can use: finite,
// non-negative, efficiencies at most 1, an alpha table that interpolates
// to finite latencies. Accepted hardware prices a fixed model (tiny
// DeepSeek, Llama-3.1-8B) on a few layouts without crashing or NaN.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "helix/Common/Numbers.h"
#include "helix/Cost/Collectives.h"
#include "helix/Cost/Evaluate.h"
#include "helix/Import/HFConfig.h"

#include <cmath>

using namespace helix;

static const std::vector<ModelSpec> &models() {
  static const std::vector<ModelSpec> all = [] {
    std::vector<ModelSpec> v;
    for (const char *file : {"test/Inputs/models/tiny-deepseek.json",
                             "test/Inputs/models/Llama-3.1-8B.json"}) {
      ModelSpec m;
      std::string error;
      if (!importHFConfigString(fuzz::readSourceFile(file), file, {}, m, error))
        fuzz::fail("importing a test model", error);
      v.push_back(std::move(m));
    }
    return v;
  }();
  return all;
}

static bool finiteNonNegative(double v) { return std::isfinite(v) && v >= 0; }

static void checkFigures(const Hardware &hw) {
  for (int i = 0; i < kNumDTypes; ++i)
    FUZZ_CHECK(finiteNonNegative(hw.peakFlops[i]), hw.name);
  FUZZ_CHECK(hw.supports(DType::FP8) || hw.supports(DType::BF16), hw.name);
  for (double e :
       {hw.gemmEfficiency, hw.memoryEfficiency, hw.attentionMemoryEfficiency})
    FUZZ_CHECK(std::isfinite(e) && e > 0 && e <= 1, hw.name);
  FUZZ_CHECK(finiteNonNegative(hw.kernelOverheadS), hw.name);
  for (double v : {hw.hbmCapacityBytes, hw.hbmBandwidth, hw.nvlinkBandwidth,
                   hw.scaleOutBandwidth})
    FUZZ_CHECK(std::isfinite(v) && v > 0, hw.name);
  FUZZ_CHECK(hw.nvlinkDomain >= 1 && hw.nvlinkDomain <= kMaxGPUs, hw.name);
  for (int k = 0; k < kNumCollectiveKinds; ++k) {
    const CollectiveParams &c = hw.collectives[k];
    FUZZ_CHECK(std::isfinite(c.busEfficiency) && c.busEfficiency > 0, hw.name);
    FUZZ_CHECK(!c.alphaS.empty(), hw.name);
    for (int64_t n : {int64_t(1), int64_t(2), int64_t(3), int64_t(8),
                      int64_t(72), int64_t(1000), kMaxGPUs})
      FUZZ_CHECK(std::isfinite(c.alpha(n)),
                 std::string(stringifyCollectiveKind(CollectiveKind(k))) +
                     " alpha(" + std::to_string(n) + ")");
    // Measured times: a finite, positive time at every size and group.
    for (int64_t n : {int64_t(2), int64_t(8), int64_t(72), kMaxGPUs})
      for (double bytes : {1.0, 4096.0, 1e6, 1e9, 1e13})
        FUZZ_CHECK(
            std::isfinite(collectiveTime(hw, CollectiveKind(k), n, bytes)) &&
                collectiveTime(hw, CollectiveKind(k), n, bytes) > 0,
            std::string(stringifyCollectiveKind(CollectiveKind(k))) + " time");
  }
  // Kernel curves interpolate to finite figures, efficiencies in (0, 1].
  const KernelCurves &kc = hw.kernels;
  for (int i = 0; i < kNumDTypes; ++i)
    for (const KernelCurve *c :
         {&kc.gemm[i], &kc.groupedGemm[i], &kc.attentionGQA[i],
          &kc.attentionMLA[i], &kc.attentionMLAFewHeads[i]})
      for (double x : {0.5, 1.0, 3.0, 100.0, 1e6}) {
        if (c->empty())
          continue;
        KernelPoint p = c->at(x);
        FUZZ_CHECK(finiteNonNegative(p.fixedS) &&
                       std::isfinite(p.bandwidthEfficiency) &&
                       p.bandwidthEfficiency > 0 && p.bandwidthEfficiency <= 1,
                   hw.name + " kernel curve");
      }
}

static void price(const Hardware &hw) {
  for (const ModelSpec &model : models()) {
    Workload workload;
    workload.context = 65536;
    workload.precision.weights = workload.precision.kvCache =
        workload.precision.compute = hw.supports(DType::FP4)   ? DType::FP4
                                     : hw.supports(DType::FP8) ? DType::FP8
                                                               : DType::BF16;
    for (const char *text : {"kvp=1,tpa=1,tpf=1,ep=1", "kvp=4,tpa=1,tpf=4,ep=1",
                             "kvp=2,tpa=1,tpf=1,ep=2", "kvp=8,tpa=1,tpf=8"}) {
      Layout layout;
      std::string error;
      if (!parseLayout(text, layout, error))
        fuzz::fail("parseLayout", error);
      for (Strategy s : {Strategy::Helix, Strategy::HelixNoHopB}) {
        Config config;
        config.strategy = s;
        config.layout = layout;
        config.batch = 16;
        Evaluation ev = evaluate(model, hw, workload, config);
        if (!ev.valid())
          continue;
        // Tiny bandwidths may make a step take forever (inf is allowed),
        // never NaN or a negative time.
        FUZZ_CHECK(!std::isnan(ev.ttlS) && ev.ttlS > 0,
                   model.name + " " + text);
        FUZZ_CHECK(!std::isnan(ev.memoryPerGPUBytes), model.name + " " + text);
      }
    }
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  Hardware hw;
  std::string error;
  if (!parseHardwareJSON(text, "fuzz/hardware.json", hw, error)) {
    fuzz::checkErrorLine(error, "parseHardwareJSON");
    return 0;
  }
  FUZZ_CHECK(error.empty(), error);
  checkFigures(hw);
  price(hw);
  return 0;
}
