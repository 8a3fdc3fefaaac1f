//===- PerLayerTest.cpp - One Helix layout per kind of layer --------------===//

#include "helix/Cost/PerLayer.h"

#include "helix/Cost/Evaluate.h"
#include "helix/Cost/OpCosts.h"
#include "helix/Cost/Search.h"
#include "helix/Import/HFConfig.h"

#include "PaperModels.h"

#include "TestHardware.h"

#include "gtest/gtest.h"

#include <set>

using namespace helix;

namespace {

Hardware gb200() { return test::presetHardware("gb200-nvl72"); }
ModelSpec importModel(const std::string &file) {
  return test::importTestModel(file);
}

struct Priced {
  bool fits = false;
  PlanPoint point;
  PerLayerChoice choice;
};

Priced perLayer(const ModelSpec &m, const Hardware &hw, const Workload &w,
                int64_t gpus, int64_t batch) {
  Priced p;
  PerLayerSearch s(m, hw, w, gpus);
  p.fits = s.valid() && s.price(batch, p.point, p.choice);
  return p;
}

TEST(PerLayer, GptOssWindowLayersTakeNoKVParallelism) {
  // gpt-oss-120b at 1M tokens on 16 GPUs (8 KV heads): a 128-token window
  // gains nothing from KVP, so its layers run kvp=1 (KV heads duplicated
  // over tpa=16), while the full-attention layers shard the context.
  ModelSpec m = importModel("gpt-oss-120b.json");
  Hardware hw = gb200();
  Priced p = perLayer(m, hw, Workload(), 16, 64);
  ASSERT_TRUE(p.fits);
  const KindLayout &window = p.choice.of(LayerKind::WindowAttention);
  const KindLayout &full = p.choice.of(LayerKind::FullAttention);
  EXPECT_EQ(window.layers, 18);
  EXPECT_EQ(full.layers, 18);
  EXPECT_EQ(window.kvp, 1);
  EXPECT_EQ(window.tpa, 16);
  EXPECT_GT(full.kvp, 1);
  EXPECT_EQ(full.kvp * full.tpa, 16);
  EXPECT_EQ(p.choice.of(LayerKind::DenseFFN).layers, 0);
  // Every other layer changes layout; no bytes move between them.
  EXPECT_EQ(p.choice.layoutChanges, 35);
  EXPECT_EQ(p.choice.reshardBytes, 0.0);
  // Faster than every uniform Helix layout on the same GPUs.
  for (const Layout &l :
       enumerateLayouts(m, hw, Workload(), Strategy::Helix, 16)) {
    Config c;
    c.layout = l;
    c.batch = 64;
    Evaluation ev = evaluate(m, hw, Workload(), c);
    ASSERT_TRUE(ev.valid()) << ev.error;
    EXPECT_LT(p.point.ttlS, ev.ttlS) << l.str();
  }
}

TEST(PerLayer, DeepSeekDenseAndMoELayersTakeDifferentFFNGroups) {
  // DeepSeek-R1 on 64 GPUs at batch 54: the 3 dense FFNs run in two
  // replicated 32-GPU groups (a cheaper all-reduce for a small matrix),
  // the 58 MoE layers over all 64 GPUs.
  ModelSpec m = paper::deepSeekR1();
  Hardware hw = gb200();
  Priced p = perLayer(m, hw, Workload(), 64, 54);
  ASSERT_TRUE(p.fits);
  const KindLayout &dense = p.choice.of(LayerKind::DenseFFN);
  const KindLayout &moe = p.choice.of(LayerKind::MoEFFN);
  EXPECT_EQ(dense.layers, 3);
  EXPECT_EQ(moe.layers, 58);
  EXPECT_EQ(dense.tpf * dense.replicas, 64);
  EXPECT_GT(dense.replicas, 1);
  EXPECT_EQ(moe.tpf * moe.ep, 64);
  EXPECT_EQ(moe.replicas, 1);
  EXPECT_EQ(p.choice.layoutChanges, 1); // between layers 2 and 3
  EXPECT_EQ(dense.str(), "tpf=32,ep=1 x2");
}

TEST(PerLayer, NeverSlowerThanAnyUniformLayout) {
  Hardware hw = gb200();
  for (const ModelSpec &m :
       {paper::deepSeekR1(), paper::llama405B(),
        importModel("gpt-oss-120b.json"), importModel("Qwen3-235B-A22B.json")})
    for (int64_t gpus : {8, 16, 32, 64, 128})
      for (int64_t batch : {1, 8, 64}) {
        Priced p = perLayer(m, hw, Workload(), gpus, batch);
        for (const Layout &l :
             enumerateLayouts(m, hw, Workload(), Strategy::Helix, gpus)) {
          Config c;
          c.layout = l;
          c.batch = batch;
          Evaluation ev = evaluate(m, hw, Workload(), c);
          if (!ev.fits)
            continue;
          ASSERT_TRUE(p.fits) << m.name << " " << l.str() << " b" << batch;
          EXPECT_LE(p.point.ttlS, ev.ttlS * (1 + 1e-12))
              << m.name << " " << l.str() << " b" << batch;
        }
      }
}

TEST(PerLayer, OneCandidatePerKindPricesAsEvaluate) {
  // On one GPU every kind has one layout: the per-layer plan is the uniform
  // one, priced the same (time and memory) as evaluate().
  Hardware hw = gb200();
  for (const char *file : {"tiny-gpt-oss.json", "tiny-deepseek.json",
                           "tiny-qwen2-swa.json", "Llama-3.1-8B.json"}) {
    ModelSpec m = importModel(file);
    Config c;
    c.batch = 4;
    Evaluation ev = evaluate(m, hw, Workload(), c);
    ASSERT_TRUE(ev.valid()) << file << ": " << ev.error;
    Priced p = perLayer(m, hw, Workload(), 1, 4);
    ASSERT_EQ(p.fits, ev.fits) << file;
    if (!p.fits)
      continue;
    EXPECT_TRUE(p.choice.uniform(1)) << file;
    EXPECT_EQ(p.choice.layoutChanges, 0) << file;
    EXPECT_NEAR(p.point.ttlS, ev.ttlS, 1e-12 * ev.ttlS) << file;
    EXPECT_NEAR(p.point.memoryPerGPUBytes, ev.memoryPerGPUBytes,
                1e-9 * ev.memoryPerGPUBytes)
        << file;
    EXPECT_EQ(p.point.hopbSlices, ev.hopbSlices) << file;
  }
}

TEST(PerLayer, CapacityChecksTheActualMix) {
  // DeepSeek-R1 on 64 GPUs at batch 54: replicating the dense FFN is faster
  // but holds more weights. With HBM just below that mix, the plan falls
  // back to a mix that fits; with far less, none fits.
  ModelSpec m = paper::deepSeekR1();
  Hardware hw = gb200();
  Priced fast = perLayer(m, hw, Workload(), 64, 54);
  ASSERT_TRUE(fast.fits);
  ASSERT_GT(fast.choice.of(LayerKind::DenseFFN).replicas, 1);
  hw.hbmCapacityBytes = fast.point.memoryPerGPUBytes * (1 - 1e-9);
  Priced tight = perLayer(m, hw, Workload(), 64, 54);
  ASSERT_TRUE(tight.fits);
  EXPECT_LE(tight.point.memoryPerGPUBytes, hw.hbmCapacityBytes);
  EXPECT_GT(tight.point.ttlS, fast.point.ttlS);
  EXPECT_FALSE(tight.choice.of(LayerKind::DenseFFN) ==
               fast.choice.of(LayerKind::DenseFFN));
  hw.hbmCapacityBytes = 1e9; // nothing of a 671B model fits in 1 GB
  EXPECT_FALSE(perLayer(m, hw, Workload(), 64, 54).fits);
}

TEST(PerLayer, ReshardingBytes) {
  Placement replicated, dp4, dp2;
  dp4.tokensSplit = dp2.tokensSplit = true;
  dp4.dp = 4;
  dp2.dp = 2;
  // Every GPU holds every request: nothing moves, whatever comes next.
  EXPECT_EQ(reshardBytes(replicated, replicated, 8, 1024, 2), 0.0);
  EXPECT_EQ(reshardBytes(replicated, dp4, 8, 1024, 2), 0.0);
  // The same data-parallel split on both sides: nothing moves.
  EXPECT_EQ(reshardBytes(dp4, dp4, 8, 1024, 2), 0.0);
  // Requests split over replicas, needed whole or split otherwise: an
  // all-gather of the batch's residual stream.
  EXPECT_EQ(reshardBytes(dp4, replicated, 8, 1024, 2), 8.0 * 1024 * 2);
  EXPECT_EQ(reshardBytes(dp4, dp2, 8, 1024, 2), 8.0 * 1024 * 2);
}

TEST(PerLayer, InvalidOnGPUCountsWithoutALayout) {
  Hardware hw = gb200();
  // 3 GPUs do not divide DeepSeek-R1's 128 x 128 output-projection rows.
  PerLayerSearch s(paper::deepSeekR1(), hw, Workload(), 3);
  EXPECT_FALSE(s.valid());
  EXPECT_EQ(s.combinations(), 0u);
  PlanPoint p;
  PerLayerChoice c;
  EXPECT_FALSE(s.price(1, p, c));
}

TEST(PerLayer, SearchReportsAFrontAndTheComparison) {
  Hardware hw = gb200();
  SearchOptions o;
  o.maxGPUs = 16;
  o.strategies = {Strategy::Helix};
  o.perLayer = true;
  o.ttlMs = 30;
  PlanResult r = search(importModel("gpt-oss-120b.json"), hw, Workload(), o);
  ASSERT_FALSE(r.perLayer.empty());
  EXPECT_EQ(r.frontier("helix-per-layer"), &r.perLayer);
  for (const PlanPoint &p : r.perLayer.points)
    ASSERT_NE(r.choiceOf(p), nullptr);
  ASSERT_TRUE(r.perLayerAtHelix.found);
  EXPECT_EQ(r.perLayerAtHelix.perLayer.gpus, r.perLayerAtHelix.uniform.gpus);
  EXPECT_LE(r.perLayerAtHelix.perLayer.ttlS,
            r.perLayerAtHelix.uniform.ttlS * (1 + 1e-12));
  // Under the budget the per-layer front serves at least the uniform batch.
  ASSERT_TRUE(r.perLayer.budget.found);
  EXPECT_GE(r.perLayer.budget.largestBatch.config.batch,
            r.frontier("helix")->budget.largestBatch.config.batch);
  // Without the option nothing is searched.
  o.perLayer = false;
  PlanResult u = search(importModel("gpt-oss-120b.json"), hw, Workload(), o);
  EXPECT_TRUE(u.perLayer.empty());
  EXPECT_EQ(u.frontier("helix-per-layer"), nullptr);
}

} // namespace

namespace {

TEST(PerLayer, ReuseAcrossGPUCountsChangesNothing) {
  // The search shares FFN candidates between GPU counts (PerLayerReuse):
  // every figure must be the one a fresh search of the count gives.
  Hardware hw = gb200();
  for (const ModelSpec &m :
       {paper::deepSeekR1(), importModel("gpt-oss-120b.json")}) {
    PerLayerReuse reuse;
    for (int64_t gpus = 1; gpus <= 64; ++gpus) {
      PerLayerSearch shared(m, hw, Workload(), gpus, &reuse);
      PerLayerSearch fresh(m, hw, Workload(), gpus);
      ASSERT_EQ(shared.valid(), fresh.valid());
      for (int64_t batch : {1, 7, 64}) {
        Priced a, b;
        a.fits = shared.valid() && shared.price(batch, a.point, a.choice);
        b.fits = fresh.valid() && fresh.price(batch, b.point, b.choice);
        ASSERT_EQ(a.fits, b.fits) << m.name << " " << gpus << " " << batch;
        if (!a.fits)
          continue;
        EXPECT_EQ(a.point.ttlS, b.point.ttlS) << m.name << " " << gpus;
        EXPECT_EQ(a.point.memoryPerGPUBytes, b.point.memoryPerGPUBytes);
        for (int k = 0; k < kNumLayerKinds; ++k)
          EXPECT_TRUE(a.choice.kinds[k] == b.choice.kinds[k]);
      }
    }
  }
}

} // namespace

namespace {

TEST(PerLayer, ReplicatedFFNGroupsPackIntoNVLinkDomains) {
  // A group no wider than an NVLink domain is priced at NVLink speed, so
  // its replicas must fit in the domains: 128 GPUs in 64-GPU domains hold
  // four 32-GPU groups (two per domain), in 48-GPU domains (three of them,
  // one 32-GPU group each) they do not.
  ModelSpec m = paper::deepSeekR1();
  Hardware hw = gb200();
  // The (group width, replicas) the FFN kinds take over the batch sweep.
  auto groups = [&](int64_t domain) {
    hw.nvlinkDomain = domain;
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t batch : defaultBatchSweep(256)) {
      Priced p = perLayer(m, hw, Workload(), 128, batch);
      if (p.fits)
        for (LayerKind k : {LayerKind::DenseFFN, LayerKind::MoEFFN}) {
          const KindLayout &l = p.choice.of(k);
          seen.insert({l.tpf * l.ep, l.replicas});
        }
    }
    return seen;
  };
  std::pair<int64_t, int64_t> fourOf32{32, 4};
  EXPECT_EQ(groups(64).count(fourOf32), 1u);
  EXPECT_EQ(groups(48).count(fourOf32), 0u);
}

TEST(PerLayer, RackScaleCollectivesUseTheScaleOutNetwork) {
  // Beyond one NVL72 domain the FFN and output-projection all-reduces cross
  // the hardware file's scale-out network: a faster one (a quarter of the
  // crossing latency, four times the NIC bandwidth) speeds up 128 GPUs but
  // not 64.
  ModelSpec m = paper::llama405B();
  Hardware hw = gb200();
  Hardware fast = hw;
  fast.scaleOutBandwidth *= 4;
  for (auto &round : fast.scaleOutLatencyS)
    round.second /= 4;
  for (int64_t gpus : {64, 128}) {
    Config c;
    c.layout.tpa = 8;
    c.layout.kvp = gpus / 8;
    c.layout.tpf = gpus;
    c.batch = 32;
    Evaluation a = evaluate(m, hw, Workload(), c);
    Evaluation b = evaluate(m, fast, Workload(), c);
    ASSERT_TRUE(a.valid()) << a.error;
    if (gpus <= hw.nvlinkDomain)
      EXPECT_EQ(a.ttlS, b.ttlS);
    else
      EXPECT_GT(a.ttlS, b.ttlS * 1.01);
  }
}

} // namespace

namespace {

/// The per-layer search's choice for gpt-oss-120b (window and full layers
/// differ, the MoE replicated) and DeepSeek-R1 (dense and MoE FFN groups
/// differ) at configurations where they do.
struct Case {
  ModelSpec model;
  int64_t gpus, batch;
};

std::vector<Case> mixedCases() {
  return {{importModel("gpt-oss-120b.json"), 64, 2},
          {importModel("gpt-oss-120b.json"), 16, 64},
          {paper::deepSeekR1(), 64, 121}};
}

TEST(PerLayer, AnExplicitChoicePricesAsTheSearchFoundIt) {
  // helix compile --per-layer / helix-apply-layout layer-layouts price the
  // chosen layouts alone: the same figures as the search that chose them.
  Hardware hw = gb200();
  for (const Case &c : mixedCases()) {
    Priced searched = perLayer(c.model, hw, Workload(), c.gpus, c.batch);
    ASSERT_TRUE(searched.fits) << c.model.name << " " << c.gpus;
    EXPECT_FALSE(searched.choice.uniform(c.gpus)) << c.model.name;
    PerLayerSearch fixed(c.model, hw, Workload(), c.gpus, searched.choice);
    ASSERT_TRUE(fixed.valid()) << fixed.error();
    EXPECT_EQ(fixed.combinations(), 1u);
    Priced again;
    ASSERT_TRUE(fixed.price(c.batch, again.point, again.choice));
    EXPECT_DOUBLE_EQ(again.point.ttlS, searched.point.ttlS);
    EXPECT_DOUBLE_EQ(again.point.memoryPerGPUBytes,
                     searched.point.memoryPerGPUBytes);
    for (int k = 0; k < kNumLayerKinds; ++k)
      EXPECT_TRUE(again.choice.kinds[k] == searched.choice.kinds[k]);
  }
}

TEST(PerLayer, EvaluateAndOpPricesAgreeWithTheSearch) {
  // plan.json's evaluation and helix-estimate-cost's op prices of a
  // per-layer plan are the search's figures: TTL and memory, and the ops of
  // every layer plus the embedding and LM head sum to the TTL.
  Hardware hw = gb200();
  for (const Case &c : mixedCases()) {
    Priced p = perLayer(c.model, hw, Workload(), c.gpus, c.batch);
    ASSERT_TRUE(p.fits);
    Config config = p.point.config;
    config.hopbSlices = p.point.hopbSlices;
    Evaluation ev = evaluate(c.model, hw, Workload(), config, p.choice);
    ASSERT_TRUE(ev.valid()) << ev.error;
    EXPECT_TRUE(ev.fits);
    EXPECT_NEAR(ev.ttlS, p.point.ttlS, 1e-12 * p.point.ttlS) << c.model.name;
    EXPECT_NEAR(ev.memoryPerGPUBytes, p.point.memoryPerGPUBytes,
                1e-9 * p.point.memoryPerGPUBytes);
    EXPECT_NEAR(ev.breakdown.total(), ev.ttlS, 1e-9 * ev.ttlS);
    ASSERT_EQ(ev.layers.size(), c.model.layers.size());

    OpPricer pricer(c.model, hw, Workload(), config, p.choice);
    ASSERT_TRUE(pricer.valid()) << pricer.error();
    double sum = pricer.embedding().timeS() + pricer.lmHead().timeS();
    for (size_t i = 0; i < c.model.layers.size(); ++i) {
      LayerOps ops = pricer.layer(i);
      double layer = ops.qkv.timeS() + ops.attention.timeS() +
                     ops.outProj.timeS() + ops.ffn.timeS();
      EXPECT_NEAR(layer, ev.layers[i].timeS, 1e-9 * layer) << i;
      sum += layer;
    }
    EXPECT_NEAR(sum, ev.ttlS, 1e-9 * ev.ttlS) << c.model.name;
  }
}

TEST(PerLayer, TheUniformChoiceEvaluatesAsTheUniformLayout) {
  // A uniform layout written as a per-layer choice prices as evaluate()
  // prices the layout (DeepSeek: dense FFN over all GPUs, MoE tpf x ep).
  Hardware hw = gb200();
  ModelSpec m = paper::deepSeekR1();
  Config c;
  c.layout.kvp = 64;
  c.layout.tpf = 8;
  c.layout.ep = 8;
  c.batch = 16;
  Evaluation uniform = evaluate(m, hw, Workload(), c);
  ASSERT_TRUE(uniform.valid()) << uniform.error;
  c.hopbSlices = uniform.hopbSlices;
  Evaluation asChoice =
      evaluate(m, hw, Workload(), c, uniformChoice(m, c.layout));
  ASSERT_TRUE(asChoice.valid()) << asChoice.error;
  EXPECT_NEAR(asChoice.ttlS, uniform.ttlS, 1e-9 * uniform.ttlS);
  EXPECT_NEAR(asChoice.memoryPerGPUBytes, uniform.memoryPerGPUBytes,
              1e-9 * uniform.memoryPerGPUBytes);
}

TEST(PerLayer, ParseKindLayouts) {
  std::vector<KindLayout> kinds;
  std::string error;
  ASSERT_TRUE(parseKindLayouts(
      "window_attention=kvp=1,tpa=64;moe_ffn=tpf=16,ep=2;dense_ffn=tpf=8",
      kinds, error))
      << error;
  ASSERT_EQ(kinds.size(), 3u);
  EXPECT_EQ(kinds[0].kind, LayerKind::WindowAttention);
  EXPECT_EQ(kinds[0].tpa, 64);
  EXPECT_EQ(kinds[1].kind, LayerKind::MoEFFN);
  EXPECT_EQ(kinds[1].tpf, 16);
  EXPECT_EQ(kinds[1].ep, 2);
  EXPECT_EQ(kinds[1].replicas, 0); // filled from the GPUs by the planner
  EXPECT_EQ(kinds[2].kind, LayerKind::DenseFFN);

  for (const char *bad :
       {"", "moe_ffn", "sliding=kvp=2", "full_attention=tpf=2",
        "dense_ffn=kvp=2", "moe_ffn=tpf=0", "moe_ffn=tpf=2;moe_ffn=tpf=4",
        "full_attention=kvp=two"}) {
    EXPECT_FALSE(parseKindLayouts(bad, kinds, error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

TEST(PerLayer, ValidateKindLayoutSaysWhy) {
  Hardware hw = gb200();
  ModelSpec m = importModel("gpt-oss-120b.json"); // 64 heads, 8 KV heads
  KindLayout k;
  k.kind = LayerKind::WindowAttention;
  k.kvp = 1;
  k.tpa = 64; // a multiple of the KV heads at kvp = 1
  EXPECT_EQ(validateKindLayout(m, hw, 64, k), "");
  k.kvp = 2;
  k.tpa = 32; // KV heads not divided, and kvp > 1
  EXPECT_NE(validateKindLayout(m, hw, 64, k).find("KV heads"),
            std::string::npos);
  k.kvp = 4;
  k.tpa = 4;
  EXPECT_NE(validateKindLayout(m, hw, 64, k).find("must be the 64 GPUs"),
            std::string::npos);
  KindLayout f;
  f.kind = LayerKind::MoEFFN;
  f.tpf = 3;
  f.replicas = 21;
  EXPECT_NE(validateKindLayout(m, hw, 64, f).find("must divide the 64 GPUs"),
            std::string::npos);
  f.tpf = 32;
  f.replicas = 2;
  EXPECT_EQ(validateKindLayout(m, hw, 64, f), "");
  f.kind = LayerKind::DenseFFN;
  f.tpf = 16;
  f.ep = 2;
  EXPECT_NE(validateKindLayout(m, hw, 64, f).find("no experts"),
            std::string::npos);
}

} // namespace
