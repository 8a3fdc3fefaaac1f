//===- ImportTest.cpp - Structure of the imported test/Inputs/models ------===//

#include "ImportTestUtil.h"

namespace helix {
namespace {

using testing::loadModel;
using testing::near;

std::vector<bool> moePattern(const ModelSpec &m) {
  std::vector<bool> v;
  for (const LayerSpec &l : m.layers)
    v.push_back(l.isMoE);
  return v;
}

std::vector<int64_t> windows(const ModelSpec &m) {
  std::vector<int64_t> v;
  for (const LayerSpec &l : m.layers)
    v.push_back(l.attention.slidingWindow);
  return v;
}

TEST(ImportModels, DeepSeekR1) {
  ModelSpec m = loadModel("DeepSeek-R1.json");
  EXPECT_EQ(m.name, "DeepSeek-R1");
  EXPECT_EQ(m.modelType, "deepseek_v3");
  EXPECT_EQ(m.hiddenSize, 7168);
  EXPECT_EQ(m.vocabSize, 129280);
  EXPECT_EQ(m.maxPositionEmbeddings, 163840);
  EXPECT_EQ(m.checkpointDType, "bfloat16");
  EXPECT_EQ(m.quantMethod, "fp8");
  EXPECT_FALSE(m.tieWordEmbeddings);
  ASSERT_EQ(m.numLayers(), 61);
  EXPECT_EQ(m.numMoELayers(), 58);
  for (const LayerSpec &l : m.layers) {
    EXPECT_EQ(l.index, &l - &m.layers[0]);
    EXPECT_FALSE(l.isMTP);
    EXPECT_EQ(l.isMoE, l.index >= 3);
    if (!l.isMoE) {
      EXPECT_EQ(l.ffn.intermediate, 18432);
    }
  }
  const AttentionSpec &a = m.layers[0].attention;
  EXPECT_EQ(a.kind, AttentionKind::MLA);
  EXPECT_EQ(a.numHeads, 128);
  EXPECT_EQ(a.numKVHeads, 1);
  EXPECT_EQ(a.headDim, 192);
  EXPECT_EQ(a.vHeadDim, 128);
  EXPECT_EQ(a.qLoraRank, 1536);
  EXPECT_EQ(a.kvLoraRank, 512);
  EXPECT_EQ(a.qkNopeHeadDim, 128);
  EXPECT_EQ(a.qkRopeHeadDim, 64);
  EXPECT_EQ(a.kvValuesPerToken(), 576);
  EXPECT_EQ(a.rope.scaling, "yarn");
  EXPECT_EQ(a.rope.theta, 10000.0);
  EXPECT_EQ(a.rope.factor, 40.0);
  EXPECT_EQ(a.rope.originalMaxPosition, 4096);
  EXPECT_EQ(a.rope.betaFast, 32.0);
  EXPECT_EQ(a.rope.betaSlow, 1.0);
  EXPECT_EQ(a.rope.mscale, 1.0);
  EXPECT_EQ(a.rope.mscaleAllDim, 1.0);
  const MoESpec &moe = m.layers[3].moe;
  EXPECT_EQ(moe.numExperts, 256);
  EXPECT_EQ(moe.topK, 8);
  EXPECT_EQ(moe.expertIntermediate, 2048);
  EXPECT_EQ(moe.numSharedExperts, 1);
  EXPECT_EQ(moe.sharedIntermediate, 2048);
  EXPECT_EQ(moe.nGroup, 8);
  EXPECT_EQ(moe.topkGroup, 4);
  EXPECT_EQ(moe.routedScalingFactor, 2.5);
  EXPECT_TRUE(moe.normTopkProb);
  EXPECT_EQ(moe.scoringFunc, "sigmoid");
  EXPECT_FALSE(moe.expertBias);
  EXPECT_TRUE(near(m.parameterCount(), 671e9, 0.01));
  EXPECT_TRUE(near(m.activeParameterCount(), 37e9, 0.05));
}

TEST(ImportModels, DeepSeekR1WithMTP) {
  ImportOptions opts;
  opts.includeMTP = true;
  ModelSpec m = loadModel("DeepSeek-R1.json", opts);
  ASSERT_EQ(m.numLayers(), 62);
  EXPECT_EQ(m.numMoELayers(), 59);
  const LayerSpec &mtp = m.layers.back();
  EXPECT_TRUE(mtp.isMTP);
  EXPECT_EQ(mtp.index, 61);
  EXPECT_TRUE(mtp.isMoE);
  EXPECT_EQ(mtp.moe.numExperts, 256);
  EXPECT_EQ(mtp.attention.kind, AttentionKind::MLA);
  EXPECT_FALSE(m.layers[60].isMTP);
}

TEST(ImportModels, DeepSeekV2Lite) {
  ModelSpec m = loadModel("DeepSeek-V2-Lite.json");
  EXPECT_EQ(m.modelType, "deepseek_v2");
  ASSERT_EQ(m.numLayers(), 27);
  EXPECT_EQ(m.numMoELayers(), 26);
  EXPECT_FALSE(m.layers[0].isMoE);
  EXPECT_EQ(m.layers[0].ffn.intermediate, 10944);
  const AttentionSpec &a = m.layers[0].attention;
  EXPECT_EQ(a.qLoraRank, 0); // null: q projected straight from hidden
  EXPECT_EQ(a.numHeads, 16);
  EXPECT_EQ(a.rope.mscale, 0.707);
  const MoESpec &moe = m.layers[1].moe;
  EXPECT_EQ(moe.numExperts, 64);
  EXPECT_EQ(moe.topK, 6);
  EXPECT_EQ(moe.numSharedExperts, 2);
  EXPECT_EQ(moe.sharedIntermediate, 1408);
  EXPECT_EQ(moe.scoringFunc, "softmax");
  EXPECT_FALSE(moe.normTopkProb);
  EXPECT_TRUE(near(m.parameterCount(), 15.7e9, 0.01));
}

TEST(ImportModels, KimiK2) {
  ModelSpec m = loadModel("Kimi-K2.json");
  EXPECT_EQ(m.modelType, "kimi_k2");
  ASSERT_EQ(m.numLayers(), 61);
  EXPECT_EQ(m.numMoELayers(), 60);
  EXPECT_EQ(m.layers[0].attention.numHeads, 64);
  EXPECT_EQ(m.layers[0].attention.rope.theta, 50000.0);
  const MoESpec &moe = m.layers[1].moe;
  EXPECT_EQ(moe.numExperts, 384);
  EXPECT_EQ(moe.nGroup, 1);
  EXPECT_EQ(moe.topkGroup, 1);
  EXPECT_EQ(moe.routedScalingFactor, 2.827);
  EXPECT_TRUE(near(m.parameterCount(), 1.03e12, 0.02));
  EXPECT_TRUE(near(m.activeParameterCount(), 32e9, 0.05));
}

TEST(ImportModels, Llama31_405B) {
  ModelSpec m = loadModel("Llama-3.1-405B.json");
  ASSERT_EQ(m.numLayers(), 126);
  EXPECT_EQ(m.numMoELayers(), 0);
  const AttentionSpec &a = m.layers[0].attention;
  EXPECT_EQ(a.kind, AttentionKind::GQA);
  EXPECT_EQ(a.numHeads, 128);
  EXPECT_EQ(a.numKVHeads, 8);
  EXPECT_EQ(a.headDim, 128);
  EXPECT_EQ(a.vHeadDim, 128);
  EXPECT_FALSE(a.qkvBias);
  EXPECT_EQ(a.rope.scaling, "llama3");
  EXPECT_EQ(a.rope.theta, 500000.0);
  EXPECT_EQ(a.rope.factor, 8.0);
  EXPECT_EQ(a.rope.lowFreqFactor, 1.0);
  EXPECT_EQ(a.rope.highFreqFactor, 4.0);
  EXPECT_EQ(a.rope.originalMaxPosition, 8192);
  EXPECT_EQ(m.layers[0].ffn.intermediate, 53248);
  EXPECT_EQ(m.layers[0].ffn.activation, "silu");
  EXPECT_EQ(m.rmsNormEps, 1e-5);
  EXPECT_TRUE(near(m.parameterCount(), 405.8e9, 0.003));
}

TEST(ImportModels, Llama31_8B) {
  ModelSpec m = loadModel("Llama-3.1-8B.json");
  EXPECT_EQ(m.numLayers(), 32);
  EXPECT_TRUE(near(m.parameterCount(), 8.03e9, 0.01));
}

TEST(ImportModels, Qwen3_235B_A22B) {
  ModelSpec m = loadModel("Qwen3-235B-A22B.json");
  EXPECT_EQ(m.modelType, "qwen3_moe");
  ASSERT_EQ(m.numLayers(), 94);
  EXPECT_EQ(m.numMoELayers(), 94);
  const AttentionSpec &a = m.layers[0].attention;
  EXPECT_TRUE(a.qkNorm);
  EXPECT_FALSE(a.qkvBias);
  EXPECT_EQ(a.numKVHeads, 4);
  EXPECT_EQ(a.headDim, 128);
  EXPECT_EQ(a.rope.scaling, "");
  const MoESpec &moe = m.layers[0].moe;
  EXPECT_EQ(moe.numExperts, 128);
  EXPECT_EQ(moe.topK, 8);
  EXPECT_EQ(moe.expertIntermediate, 1536);
  EXPECT_EQ(moe.numSharedExperts, 0);
  EXPECT_TRUE(moe.normTopkProb);
  EXPECT_TRUE(near(m.parameterCount(), 235e9, 0.01));
  EXPECT_TRUE(near(m.activeParameterCount(), 22e9, 0.02));
}

TEST(ImportModels, Qwen25_72B) {
  ModelSpec m = loadModel("Qwen2.5-72B.json");
  ASSERT_EQ(m.numLayers(), 80);
  const AttentionSpec &a = m.layers[0].attention;
  EXPECT_TRUE(a.qkvBias);
  EXPECT_FALSE(a.outBias);
  EXPECT_FALSE(a.qkNorm);
  // sliding_window is set but use_sliding_window is false.
  EXPECT_EQ(windows(m), std::vector<int64_t>(80, 0));
  EXPECT_TRUE(near(m.parameterCount(), 72.7e9, 0.01));
}

TEST(ImportModels, Qwen3_8B) {
  ModelSpec m = loadModel("Qwen3-8B.json");
  EXPECT_EQ(m.modelType, "qwen3");
  ASSERT_EQ(m.numLayers(), 36);
  EXPECT_TRUE(m.layers[0].attention.qkNorm);
  EXPECT_EQ(m.layers[0].attention.headDim, 128);
  EXPECT_TRUE(near(m.parameterCount(), 8.19e9, 0.01));
}

TEST(ImportModels, Mistral7B) {
  ModelSpec m = loadModel("Mistral-7B-v0.1.json");
  EXPECT_EQ(m.modelType, "mistral");
  ASSERT_EQ(m.numLayers(), 32);
  EXPECT_EQ(windows(m), std::vector<int64_t>(32, 4096));
  EXPECT_EQ(m.layers[0].attention.kind, AttentionKind::GQA);
  EXPECT_TRUE(near(m.parameterCount(), 7.24e9, 0.01));
}

TEST(ImportModels, Mixtral8x7B) {
  ModelSpec m = loadModel("Mixtral-8x7B.json");
  ASSERT_EQ(m.numLayers(), 32);
  EXPECT_EQ(m.numMoELayers(), 32);
  EXPECT_EQ(windows(m), std::vector<int64_t>(32, 0)); // sliding_window null
  const MoESpec &moe = m.layers[0].moe;
  EXPECT_EQ(moe.numExperts, 8);
  EXPECT_EQ(moe.topK, 2);
  EXPECT_EQ(moe.expertIntermediate, 14336);
  EXPECT_TRUE(moe.normTopkProb);
  EXPECT_TRUE(near(m.parameterCount(), 46.7e9, 0.01));
  EXPECT_TRUE(near(m.activeParameterCount(), 12.9e9, 0.01));
}

TEST(ImportModels, GptOss120B) {
  ModelSpec m = loadModel("gpt-oss-120b.json");
  EXPECT_EQ(m.modelType, "gpt_oss");
  EXPECT_EQ(m.quantMethod, "mxfp4");
  EXPECT_EQ(m.checkpointDType, "bfloat16"); // default
  ASSERT_EQ(m.numLayers(), 36);
  EXPECT_EQ(m.numMoELayers(), 36);
  // No layer_types in this file: sliding first, then alternating.
  for (const LayerSpec &l : m.layers)
    EXPECT_EQ(l.attention.slidingWindow, l.index % 2 == 0 ? 128 : 0);
  const AttentionSpec &a = m.layers[0].attention;
  EXPECT_TRUE(a.sinks);
  EXPECT_TRUE(a.qkvBias);
  EXPECT_TRUE(a.outBias);
  EXPECT_EQ(a.headDim, 64);
  EXPECT_EQ(a.rope.scaling, "yarn");
  const MoESpec &moe = m.layers[0].moe;
  EXPECT_EQ(moe.numExperts, 128);
  EXPECT_EQ(moe.topK, 4); // from experts_per_token
  EXPECT_TRUE(moe.expertBias);
  EXPECT_TRUE(near(m.parameterCount(), 116.8e9, 0.01));
  // OpenAI's 5.1B active leaves out the input embedding.
  EXPECT_TRUE(near(m.activeParameterCount() - m.vocabSize * m.hiddenSize,
                   5.13e9, 0.02));
}

TEST(ImportTiny, DeepSeekFirstKDenseAndFreq) {
  ModelSpec m = loadModel("tiny-deepseek.json");
  // first_k_dense_replace = 1, moe_layer_freq = 2.
  EXPECT_EQ(moePattern(m),
            (std::vector<bool>{false, false, true, false, true}));
  EXPECT_EQ(m.layers[0].ffn.intermediate, 256);
  EXPECT_EQ(m.layers[2].moe.expertIntermediate, 64);
  EXPECT_EQ(m.layers[2].moe.nGroup, 2);
  EXPECT_EQ(m.layers[0].attention.qLoraRank, 64);
  EXPECT_EQ(m.checkpointDType, "float32");
}

TEST(ImportTiny, DeepSeekMTP) {
  ModelSpec plain = loadModel("tiny-deepseek-mtp.json");
  EXPECT_EQ(moePattern(plain), (std::vector<bool>{false, true, true}));
  ImportOptions opts;
  opts.includeMTP = true;
  ModelSpec m = loadModel("tiny-deepseek-mtp.json", opts);
  ASSERT_EQ(m.numLayers(), 4);
  EXPECT_TRUE(m.layers[3].isMTP);
  EXPECT_TRUE(m.layers[3].isMoE);
  EXPECT_EQ(m.layers[3].index, 3);
  EXPECT_EQ(m.layers[3].moe.numExperts, 4);
  EXPECT_EQ(m.layers[3].attention.qLoraRank, 0);
  EXPECT_GT(m.parameterCount(), plain.parameterCount());
}

TEST(ImportTiny, Qwen3MoESparseStepAndMlpOnly) {
  ModelSpec m = loadModel("tiny-qwen3-moe.json");
  // decoder_sparse_step = 2: layers 1, 3, 5; mlp_only_layers removes 3.
  EXPECT_EQ(moePattern(m),
            (std::vector<bool>{false, true, false, false, false, true}));
  EXPECT_EQ(m.layers[0].ffn.intermediate, 256);
  EXPECT_EQ(m.layers[1].moe.expertIntermediate, 64);
}

TEST(ImportTiny, GptOssLayerTypes) {
  ModelSpec m = loadModel("tiny-gpt-oss.json");
  EXPECT_EQ(windows(m), (std::vector<int64_t>{0, 16, 16, 0}));
  EXPECT_EQ(m.layers[0].moe.topK, 2);
}

TEST(ImportTiny, Qwen2MaxWindowLayers) {
  ModelSpec m = loadModel("tiny-qwen2-swa.json");
  EXPECT_EQ(windows(m), (std::vector<int64_t>{0, 0, 32, 32}));
  EXPECT_TRUE(m.layers[0].attention.qkvBias);
}

TEST(ImportTiny, LlamaTiedExplicitHeadDim) {
  ModelSpec m = loadModel("tiny-llama-tied.json");
  EXPECT_TRUE(m.tieWordEmbeddings);
  const AttentionSpec &a = m.layers[0].attention;
  EXPECT_EQ(a.headDim, 32); // given, not 64 / 4
  EXPECT_EQ(a.kind, AttentionKind::MQA);
  EXPECT_TRUE(a.qkvBias);
  EXPECT_TRUE(a.outBias);
  EXPECT_TRUE(m.layers[0].ffn.bias);
}

} // namespace
} // namespace helix
