//===- AppendixATest.cpp - The paper's Appendix A roofline, exactly -------===//
//
// Per-layer KV read time and weight read time of the Figure 1 model
// (B=8, Q=128, K=8, Hsz=128, H=16384, F=65536, FP4 = 0.5 bytes, 8000 GB/s),
// computed by hand from the Appendix A formulas and compared with what the
// cost model reads per GPU.
//
//===----------------------------------------------------------------------===//

#include "PaperModels.h"
#include "TestHardware.h"

#include "helix/Cost/Evaluate.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace helix;

namespace {

constexpr double B = 8, Q = 128, K = 8, Hsz = 128, H = 16384, F = 65536;
constexpr double bytesParam = 0.5, memBW = 8000e9;

double kvReadTime(double tpa, double kvp, double s) {
  return B * 2 * std::ceil(K / tpa) * Hsz * (s / kvp) * bytesParam / memBW;
}

/// Appendix A: Q and O projections (2*H*(Q/TPA)*Hsz), K and V projections,
/// three SwiGLU matrices sharded TPF ways.
double weightReadTime(double tpa, double tpf) {
  return ((2 * H * (Q / tpa) * Hsz) + (2 * H * std::ceil(K / tpa) * Hsz) +
          (3 * H * F / tpf)) *
         bytesParam / memBW;
}

Evaluation run(Strategy strategy, int64_t kvp, int64_t tpa, int64_t tpf,
               int64_t context) {
  static const ModelSpec model = paper::figure1Model(1);
  static const Hardware hw = test::appendixAHardware();
  Workload w;
  w.context = context;
  Config c;
  c.strategy = strategy;
  c.layout.kvp = kvp;
  c.layout.tpa = tpa;
  c.layout.tpf = tpf;
  c.batch = int64_t(B);
  Evaluation ev = evaluate(model, hw, w, c);
  EXPECT_TRUE(ev.valid()) << ev.error;
  return ev;
}

double kvTime(const Evaluation &ev) {
  return ev.layers.at(0).attention.kvBytesPerGPU / memBW;
}

double weightTime(const Evaluation &ev) {
  const LayerEvaluation &l = ev.layers.at(0);
  return (l.attention.weightBytesPerGPU + l.ffn.weightBytesPerGPU) / memBW;
}

TEST(AppendixA, TensorParallelSweepMatchesExactly) {
  // Figure 1 (left): TP = TPA = TPF; KV stops shrinking at TP = K = 8.
  for (int64_t tp : {1, 2, 4, 8, 16, 32, 64}) {
    Evaluation ev = run(Strategy::TP, 1, tp, tp, 1000000);
    EXPECT_DOUBLE_EQ(kvTime(ev), kvReadTime(tp, 1, 1000000)) << "tp=" << tp;
    EXPECT_DOUBLE_EQ(weightTime(ev), weightReadTime(tp, tp)) << "tp=" << tp;
  }
  // Hand value: TP=8 at S=1M: 8*2*1*128*1e6*0.5/8e12 = 128 us.
  EXPECT_DOUBLE_EQ(kvTime(run(Strategy::TP, 1, 8, 8, 1000000)), 128e-6);
  EXPECT_DOUBLE_EQ(kvTime(run(Strategy::TP, 1, 64, 64, 1000000)), 128e-6);
}

TEST(AppendixA, KVPWithTiedFFNMatchesExactly) {
  // The formula shards the output projection TPA ways and the FFN TPF ways;
  // the kvp (Medha-style) strategy does exactly that with TPF = TPA.
  for (int64_t s : {4096, 131072, 1000000, 4000000})
    for (int64_t tpa : {1, 2, 4, 8})
      for (int64_t kvp : {1, 2, 4, 8}) {
        Evaluation ev = run(Strategy::KVP, kvp, tpa, tpa, s);
        EXPECT_DOUBLE_EQ(kvTime(ev), kvReadTime(tpa, kvp, s))
            << "kvp=" << kvp << " tpa=" << tpa << " S=" << s;
        EXPECT_DOUBLE_EQ(weightTime(ev), weightReadTime(tpa, tpa))
            << "kvp=" << kvp << " tpa=" << tpa;
      }
}

TEST(AppendixA, HelixKVReadMatchesExactly) {
  // Figure 1 (right): Helix KVP x TPA with TPF = N. The KV term is exact; the
  // weight term differs from the formula only by the output projection,
  // which Helix shards N ways (Section 2.2) instead of TPA ways.
  for (int64_t s : {131072, 1000000})
    for (int64_t tpa : {1, 2, 4, 8})
      for (int64_t kvp : {1, 2, 4, 8}) {
        int64_t n = kvp * tpa;
        Evaluation ev = run(Strategy::Helix, kvp, tpa, n, s);
        EXPECT_DOUBLE_EQ(kvTime(ev), kvReadTime(tpa, kvp, s));
        double oprojAtTPA = H * (Q / tpa) * Hsz * bytesParam / memBW;
        double oprojAtN = H * (Q / double(n)) * Hsz * bytesParam / memBW;
        EXPECT_NEAR(weightTime(ev),
                    weightReadTime(tpa, n) - oprojAtTPA + oprojAtN, 1e-15);
      }
  // Hand value: KVP=8, TPA=8, S=1M: 8*2*1*128*125000*0.5/8e12 = 16 us.
  EXPECT_DOUBLE_EQ(kvTime(run(Strategy::Helix, 8, 8, 64, 1000000)), 16e-6);
}

TEST(AppendixA, KVReadTimeIsWhereTimeGoes) {
  // With unlimited FLOP/s and no overheads the KV read time of the breakdown
  // is exactly the Appendix A KV term.
  Evaluation ev = run(Strategy::TP, 1, 8, 8, 1000000);
  EXPECT_DOUBLE_EQ(ev.breakdown.kvRead, kvReadTime(8, 1, 1000000));
  EXPECT_EQ(ev.breakdown.compute, 0.0);
}

} // namespace
