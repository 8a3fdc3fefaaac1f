//===- LongContextTest.cpp - Sparse, linear and Mamba-2 layers priced -----===//
//
// The 2026 long-context layers in the cost model
// (docs/long-context-architectures.md): DeepSeek Sparse Attention reads the
// index keys of the whole context but latent KV of the top-k only, and
// pays an all-gather for an exact selection under KVP; recurrent layers
// keep a fixed-size state whatever the context and run on TP groups; the
// per-layer search lays each kind out on its own.
//
//===----------------------------------------------------------------------===//

#include "helix/Cost/Collectives.h"
#include "helix/Cost/Evaluate.h"
#include "helix/Cost/PerLayer.h"

#include "TestHardware.h"

#include "gtest/gtest.h"

using namespace helix;

namespace {

Hardware gb200() { return test::presetHardware("gb200-nvl72"); }

Config helixConfig(int64_t kvp, int64_t tpa, int64_t tpf, int64_t ep,
                   int64_t batch) {
  Config c;
  c.strategy = Strategy::Helix;
  c.layout.kvp = kvp;
  c.layout.tpa = tpa;
  c.layout.tpf = tpf;
  c.layout.ep = ep;
  c.batch = batch;
  return c;
}

Precision bf16() {
  Precision p;
  p.weights = p.kvCache = p.compute = DType::BF16;
  return p;
}

Workload context(int64_t tokens) {
  Workload w;
  w.context = tokens;
  return w;
}

/// The attention time of layer `i` and its exposed communication.
double attentionS(const Evaluation &e, size_t i) {
  return e.layers[i].attention.timeS;
}

TEST(LongContext, SparseAttentionReadsTheTopKNotTheContext) {
  // DeepSeek-V3.2 is DeepSeek-R1 (same MLA, MoE and sizes) plus the
  // indexer: at 1M tokens its attention reads the index keys of every
  // token (132 B each) and the latent KV of 2048 only.
  ModelSpec r1 = test::importTestModel("DeepSeek-R1.json");
  ModelSpec v32 = test::importTestModel("DeepSeek-V3.2.json");
  Hardware hw = gb200();
  Workload w = context(1 << 20);
  w.precision = bf16();
  Config c = helixConfig(8, 1, 1, 8, 64);
  Evaluation dense = evaluate(r1, hw, w, c);
  Evaluation sparse = evaluate(v32, hw, w, c);
  ASSERT_TRUE(dense.valid()) << dense.error;
  ASSERT_TRUE(sparse.valid()) << sparse.error;
  // Latent KV read per layer: the top-k, about k / kvp per rank (the
  // busiest of 8 a little more), against all 1M / 8 tokens.
  const double denseKV = dense.layers[10].attention.kvBytesPerGPU;
  const double sparseKV = sparse.layers[10].attention.kvBytesPerGPU;
  EXPECT_LT(sparseKV, 0.2 * denseKV);
  // The indexer's keys: 132 bytes per token of the rank's share.
  EXPECT_GT(sparseKV, 64 * (double(1 << 20) / 8) * 132 * 0.99);
  // Far below R1 at the same layout where attention matters.
  EXPECT_LT(attentionS(sparse, 10), 0.35 * attentionS(dense, 10));
  EXPECT_LT(sparse.ttlS, 0.6 * dense.ttlS);
  // Memory: the index keys beside the same latent KV.
  EXPECT_GT(sparse.memory.kvCache, dense.memory.kvCache);
  EXPECT_LT(sparse.memory.kvCache, 1.25 * dense.memory.kvCache);
}

TEST(LongContext, ExactSelectionUnderKVPPaysAnAllGather) {
  ModelSpec v32 = test::importTestModel("DeepSeek-V3.2.json");
  ModelSpec r1 = test::importTestModel("DeepSeek-R1.json");
  Hardware hw = gb200();
  Workload w = context(1 << 20);
  // kvp = 1: no collective for the selection; kvp = 8: the k candidate
  // scores of every rank gathered, on top of R1's exchange.
  Evaluation one = evaluate(v32, hw, w, helixConfig(1, 1, 1, 1, 16));
  Evaluation oneDense = evaluate(r1, hw, w, helixConfig(1, 1, 1, 1, 16));
  Evaluation eight = evaluate(v32, hw, w, helixConfig(8, 1, 8, 1, 16));
  Evaluation eightDense = evaluate(r1, hw, w, helixConfig(8, 1, 8, 1, 16));
  ASSERT_TRUE(one.valid() && eight.valid() && oneDense.valid() &&
              eightDense.valid());
  EXPECT_DOUBLE_EQ(one.layers[5].comm.timeS, oneDense.layers[5].comm.timeS);
  EXPECT_GT(eight.layers[5].comm.exposedS, eightDense.layers[5].comm.exposedS);
  // What the program gathers: each rank's k (score, position) pairs of two
  // 4-byte values for each of the 16 requests (helix.index_candidates'
  // [1, B, k, 2] f32 result; test/Transforms/insert-collectives-dsa.test).
  ASSERT_EQ(v32.layers[5].attention.indexer.topK, 2048);
  EXPECT_NEAR(
      eight.layers[5].comm.exposedS - eightDense.layers[5].comm.exposedS,
      collectiveTime(hw, CollectiveKind::AllGather, 8, 8.0 * 16 * 2048 * 8.0),
      1e-12);
}

TEST(LongContext, RecurrentStateDoesNotGrowWithTheContext) {
  // Qwen3.5: 45 Gated DeltaNet layers (4 MiB of FP32 state per request
  // each) and 15 full-attention layers (2 KV heads of 256). From 128K to
  // 1M tokens only the full-attention layers' KV grows.
  ModelSpec q = test::importTestModel("Qwen3.5-397B-A17B.json");
  Hardware hw = gb200();
  Workload w = context(128 * 1024);
  w.precision = bf16();
  Config c = helixConfig(1, 2, 2, 1, 1);
  Evaluation small = evaluate(q, hw, w, c);
  w.context = 1 << 20;
  Evaluation large = evaluate(q, hw, w, c);
  ASSERT_TRUE(small.valid() && large.valid());
  // Per GPU (tpa = 2): each full layer holds one of 2 KV heads.
  const double kvPerToken = 15 * 1 * (256 + 256) * 2.0;
  EXPECT_NEAR(large.memory.kvCache - small.memory.kvCache,
              kvPerToken * double((1 << 20) - 128 * 1024),
              1e-6 * large.memory.kvCache);
  // The state: 45 layers x 64 heads x 128 x 128 FP32, halved by tpa = 2,
  // plus the convolution's last 3 inputs (12288 channels, BF16).
  const double state = 45 * (64.0 * 128 * 128 * 4 + 12288.0 * 3 * 2) / 2.0;
  const double fullKV = kvPerToken * double(1 << 20);
  EXPECT_NEAR(large.memory.kvCache, state + fullKV, 1e-6 * state);
  // A linear-attention layer's time does not depend on the context.
  EXPECT_DOUBLE_EQ(small.layers[0].attention.timeS,
                   large.layers[0].attention.timeS);
  EXPECT_GT(large.layers[3].attention.timeS, small.layers[3].attention.timeS);
}

TEST(LongContext, SingleHalfBlocksCostOnlyTheirHalf) {
  // Nemotron-3: Mamba-2 blocks without FFN, MoE blocks without mixer.
  ModelSpec n = test::importTestModel("Nemotron-3-Super-120B-A12B-FP8.json");
  Hardware hw = gb200();
  Evaluation e = evaluate(n, hw, context(1 << 20), helixConfig(4, 2, 8, 1, 4));
  ASSERT_TRUE(e.valid()) << e.error;
  ASSERT_EQ(e.layers.size(), 88u);
  EXPECT_EQ(e.layers[0].ffn.timeS, 0.0); // M
  EXPECT_GT(e.layers[0].attention.timeS, 0.0);
  EXPECT_EQ(e.layers[1].attention.timeS, 0.0); // E
  EXPECT_GT(e.layers[1].ffn.timeS, 0.0);
  EXPECT_EQ(e.layers[7].ffn.timeS, 0.0); // *
  EXPECT_GT(e.layers[7].attention.kvBytesPerGPU, 0.0);
}

TEST(LongContext, RecurrentKindsRefuseKVParallelism) {
  ModelSpec k3 = test::importTestModel("Kimi-K3.json");
  KindLayout k;
  k.kind = LayerKind::LinearAttention;
  k.kvp = 2;
  k.tpa = 16;
  k.replicas = 1;
  std::string why = validateKindLayout(k3, gb200(), 32, k);
  EXPECT_NE(why.find("KV parallelism (kvp = 2) means nothing"),
            std::string::npos)
      << why;
  k.kvp = 1;
  k.tpa = 32; // 96 KDA heads / 32
  EXPECT_EQ(validateKindLayout(k3, gb200(), 32, k), "");
  k.tpa = 64; // does not divide 96
  k.replicas = 1;
  EXPECT_NE(validateKindLayout(k3, gb200(), 64, k).find("tpa must divide"),
            std::string::npos);
}

TEST(LongContext, PerLayerSearchShardsRecurrentLayersOverHeads) {
  // Kimi-K3 at 1M tokens on 48 GPUs: uniform Helix at kvp = 48 leaves each
  // KDA layer on a TP group of 1 (all its weights on every GPU); the
  // per-layer plan runs KDA on a TP group and keeps MLA on KVP, and is
  // much faster. (64 GPUs have no Helix layout: KVP 64 cannot spread the
  // 96 MLA heads evenly in the all-to-all.)
  ModelSpec k3 = test::importTestModel("Kimi-K3.json");
  Hardware hw = gb200();
  Workload w = context(1 << 20);
  EXPECT_FALSE(PerLayerSearch(k3, hw, w, 64).valid());
  PerLayerSearch s(k3, hw, w, 48);
  ASSERT_TRUE(s.valid()) << s.error();
  PlanPoint point;
  PerLayerChoice choice;
  ASSERT_TRUE(s.price(1, point, choice));
  const KindLayout &kda = choice.of(LayerKind::LinearAttention);
  const KindLayout &mla = choice.of(LayerKind::FullAttention);
  EXPECT_EQ(kda.layers, 69);
  EXPECT_EQ(mla.layers, 24);
  EXPECT_EQ(kda.kvp, 1);
  EXPECT_GE(kda.tpa, 16);
  EXPECT_GE(mla.kvp, 16);
  Evaluation uniform = evaluate(k3, hw, w, helixConfig(48, 1, 48, 1, 1));
  ASSERT_TRUE(uniform.valid()) << uniform.error;
  EXPECT_LT(point.ttlS, 0.75 * uniform.ttlS);
  // The per-layer evaluation of the same choice prices what the search did.
  Config c = point.config;
  Evaluation again = evaluate(k3, hw, w, c, choice);
  ASSERT_TRUE(again.valid()) << again.error;
  EXPECT_NEAR(again.ttlS, point.ttlS, 1e-9 * point.ttlS);
}

} // namespace
