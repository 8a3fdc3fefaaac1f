//===- Synthetic.h - Measurements generated from known curves ---*- C++ -*-===//
//
// Times a GPU would give if each kernel cost exactly a + bytes / (peak * e)
// (and FLOPs / (peak * f) when compute-bound), times a seeded multiplicative
// noise: what the fit must recover.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_UNITTESTS_CALIBRATE_SYNTHETIC_H
#define HELIX_UNITTESTS_CALIBRATE_SYNTHETIC_H

#include "helix/Calibrate/Measurements.h"

#include <cstdint>
#include <functional>
#include <random>
#include <utility>
#include <vector>

namespace helix {
namespace test {

/// (n, k) shapes as the timing plugin sweeps them.
inline const std::vector<std::pair<int64_t, int64_t>> &gemmShapes() {
  static const std::vector<std::pair<int64_t, int64_t>> shapes = {
      {1024, 1024},  {2048, 2048}, {4096, 1024},  {1024, 4096},  {1280, 8192},
      {8192, 1024},  {4096, 4096}, {6144, 4096},  {8192, 3584},  {7168, 8192},
      {4096, 14336}, {8192, 8192}, {28672, 4096}, {16384, 16384}};
  return shapes;
}

/// Multiplicative noise in [1 - amplitude, 1 + amplitude].
class Noise {
public:
  explicit Noise(double amplitude, unsigned seed = 1234)
      : amplitude(amplitude), rng(seed) {}
  double operator()() { return 1.0 + amplitude * (2.0 * uniform(rng) - 1.0); }

private:
  double amplitude;
  std::mt19937 rng;
  std::uniform_real_distribution<double> uniform{0.0, 1.0};
};

/// GEMM samples of `format` at each m of `ms` over gemmShapes(), with
/// fixed(m) seconds and efficiency(m) of `peak` bytes/s.
inline void addGemm(calibrate::MeasurementSet &set, DType format,
                    const std::vector<int64_t> &ms, double peak,
                    const std::function<double(int64_t)> &fixed,
                    const std::function<double(int64_t)> &efficiency,
                    Noise &noise) {
  for (int64_t m : ms)
    for (auto [n, k] : gemmShapes()) {
      calibrate::GemmSample s;
      s.format = format;
      s.m = m;
      s.n = n;
      s.k = k;
      s.seconds =
          (fixed(m) + calibrate::gemmBytes(s) / (peak * efficiency(m))) *
          noise();
      s.runs = 9;
      set.gemm.push_back(s);
    }
}

/// GQA samples (head dim 128, 8 query heads per KV head) at rows 1..256 as
/// (rows, 1) and (rows / 8, 8), KV lengths 512..32768.
inline void addGQA(calibrate::MeasurementSet &set, DType kvFormat, double peak,
                   const std::function<double(int64_t)> &fixed,
                   const std::function<double(int64_t)> &efficiency,
                   Noise &noise) {
  for (int64_t rows = 1; rows <= 256; rows *= 2)
    for (int64_t kv : {int64_t(1), int64_t(8)}) {
      if (rows % kv)
        continue;
      for (int64_t len : {512, 2048, 8192, 32768}) {
        calibrate::AttentionSample s;
        s.kind = calibrate::AttentionKind::GQA;
        s.kvFormat = kvFormat;
        s.batch = rows / kv;
        s.kvHeads = kv;
        s.qHeads = 8 * kv;
        s.headDim = 128;
        s.kvLength = len;
        s.seconds = (fixed(rows) + calibrate::attentionKVBytes(s) /
                                       (peak * efficiency(rows))) *
                    noise();
        set.attention.push_back(s);
      }
    }
}

/// MLA samples (576-value latent) with `heads` query heads, batch 1..64.
inline void addMLA(calibrate::MeasurementSet &set, DType kvFormat,
                   int64_t heads, double peak,
                   const std::function<double(int64_t)> &fixed,
                   const std::function<double(int64_t)> &efficiency,
                   Noise &noise) {
  for (int64_t batch = 1; batch <= 64; batch *= 2)
    for (int64_t len : {512, 2048, 8192, 32768}) {
      calibrate::AttentionSample s;
      s.kind = calibrate::AttentionKind::MLA;
      s.kvFormat = kvFormat;
      s.batch = batch;
      s.kvHeads = 1;
      s.qHeads = heads;
      s.headDim = 576;
      s.kvLength = len;
      s.seconds = (fixed(batch) + calibrate::attentionKVBytes(s) /
                                      (peak * efficiency(batch))) *
                  noise();
      set.attention.push_back(s);
    }
}

inline calibrate::MeasurementSet namedSet() {
  calibrate::MeasurementSet set;
  set.gpu = "Test GPU";
  set.driver = "1.2.3";
  set.date = "2025-01-02";
  set.environment = "synthetic";
  set.subject = "synthetic timings";
  return set;
}

} // namespace test
} // namespace helix

#endif // HELIX_UNITTESTS_CALIBRATE_SYNTHETIC_H
