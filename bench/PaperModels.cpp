//===- PaperModels.cpp - The Helix paper's models, built by hand ----------===//

#include "PaperModels.h"

namespace helix {
namespace paper {

static LayerSpec gqaLayer(int64_t index, int64_t heads, int64_t kvHeads,
                          int64_t headDim, int64_t intermediate) {
  LayerSpec l;
  l.index = index;
  l.attention.kind = AttentionKind::GQA;
  l.attention.numHeads = heads;
  l.attention.numKVHeads = kvHeads;
  l.attention.headDim = headDim;
  l.attention.vHeadDim = headDim;
  l.ffn.intermediate = intermediate;
  return l;
}

ModelSpec deepSeekR1() {
  ModelSpec m;
  m.name = "DeepSeek-R1";
  m.modelType = "deepseek_v3";
  m.hiddenSize = 7168;
  m.vocabSize = 129280;
  m.maxPositionEmbeddings = 163840;
  m.checkpointDType = "bfloat16";
  m.quantMethod = "fp8";
  for (int64_t i = 0; i < 61; ++i) {
    LayerSpec l;
    l.index = i;
    AttentionSpec &a = l.attention;
    a.kind = AttentionKind::MLA;
    a.numHeads = 128;
    a.numKVHeads = 1;
    a.qkNopeHeadDim = 128;
    a.qkRopeHeadDim = 64;
    a.headDim = 192;
    a.vHeadDim = 128;
    a.qLoraRank = 1536;
    a.kvLoraRank = 512;
    a.rope.theta = 10000.0;
    a.rope.scaling = "yarn";
    a.rope.factor = 40.0;
    a.rope.originalMaxPosition = 4096;
    a.rope.betaFast = 32;
    a.rope.betaSlow = 1;
    a.rope.mscale = 1.0;
    a.rope.mscaleAllDim = 1.0;
    if (i < 3) {
      l.ffn.intermediate = 18432;
    } else {
      l.isMoE = true;
      MoESpec &e = l.moe;
      e.numExperts = 256;
      e.topK = 8;
      e.expertIntermediate = 2048;
      e.numSharedExperts = 1;
      e.sharedIntermediate = 2048;
      e.nGroup = 8;
      e.topkGroup = 4;
      e.routedScalingFactor = 2.5;
      e.normTopkProb = true;
      e.scoringFunc = "sigmoid";
    }
    m.layers.push_back(l);
  }
  return m;
}

ModelSpec llama405B() {
  ModelSpec m;
  m.name = "Llama-3.1-405B";
  m.modelType = "llama";
  m.hiddenSize = 16384;
  m.vocabSize = 128256;
  m.maxPositionEmbeddings = 131072;
  m.rmsNormEps = 1e-5;
  for (int64_t i = 0; i < 126; ++i) {
    LayerSpec l = gqaLayer(i, 128, 8, 128, 53248);
    l.attention.rope.theta = 500000.0;
    l.attention.rope.scaling = "llama3";
    l.attention.rope.factor = 8.0;
    l.attention.rope.originalMaxPosition = 8192;
    l.attention.rope.lowFreqFactor = 1.0;
    l.attention.rope.highFreqFactor = 4.0;
    m.layers.push_back(l);
  }
  return m;
}

ModelSpec figure1Model(int64_t layers) {
  ModelSpec m;
  m.name = "Figure-1 dense";
  m.modelType = "llama";
  m.hiddenSize = 16384;
  m.vocabSize = 128256;
  for (int64_t i = 0; i < layers; ++i)
    m.layers.push_back(gqaLayer(i, 128, 8, 128, 65536));
  return m;
}

} // namespace paper
} // namespace helix
