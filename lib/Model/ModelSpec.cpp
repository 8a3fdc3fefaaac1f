//===- ModelSpec.cpp - Parameter counting for ModelSpec -------------------===//

#include "helix/Model/ModelSpec.h"

namespace helix {

const char *stringifyAttentionKind(AttentionKind kind) {
  switch (kind) {
  case AttentionKind::MHA:
    return "mha";
  case AttentionKind::GQA:
    return "gqa";
  case AttentionKind::MQA:
    return "mqa";
  case AttentionKind::MLA:
    return "mla";
  }
  return "unknown";
}

int64_t AttentionSpec::kvValuesPerToken() const {
  if (kind == AttentionKind::MLA)
    return kvLoraRank + qkRopeHeadDim;
  return numKVHeads * (headDim + vHeadDim);
}

int64_t qkvParameterCount(const AttentionSpec &a, int64_t h) {
  int64_t n = 0;
  if (a.kind == AttentionKind::MLA) {
    int64_t qOut = a.numHeads * a.headDim;
    if (a.qLoraRank > 0)
      n += h * a.qLoraRank + a.qLoraRank + a.qLoraRank * qOut; // a, norm, b
    else
      n += h * qOut;
    n += h * (a.kvLoraRank + a.qkRopeHeadDim) + a.kvLoraRank; // kv_a + norm
    n += a.kvLoraRank * a.numHeads * (a.qkNopeHeadDim + a.vHeadDim);
    return n;
  }
  int64_t q = a.numHeads * a.headDim;
  int64_t kv = a.numKVHeads * a.headDim + a.numKVHeads * a.vHeadDim;
  n += h * (q + kv);
  if (a.qkvBias)
    n += q + kv;
  if (a.qkNorm)
    n += 2 * a.headDim;
  if (a.sinks)
    n += a.numHeads;
  return n;
}

int64_t outProjParameterCount(const AttentionSpec &a, int64_t h) {
  int64_t n = a.numHeads * a.vHeadDim * h;
  if (a.outBias)
    n += h;
  return n;
}

int64_t attentionParameterCount(const AttentionSpec &a, int64_t h) {
  return qkvParameterCount(a, h) + outProjParameterCount(a, h);
}

int64_t ffnParameterCount(const FFNSpec &f, int64_t h) {
  int64_t n = 3 * h * f.intermediate;
  if (f.bias)
    n += 2 * f.intermediate + h;
  return n;
}

int64_t expertParameterCount(const MoESpec &m, int64_t h) {
  int64_t n = 3 * h * m.expertIntermediate;
  if (m.expertBias)
    n += 2 * m.expertIntermediate + h;
  return n;
}

int64_t sharedExpertParameterCount(const MoESpec &m, int64_t h) {
  return m.numSharedExperts * 3 * h * m.sharedIntermediate;
}

int64_t routerParameterCount(const MoESpec &m, int64_t h) {
  return h * m.numExperts + (m.expertBias ? m.numExperts : 0);
}

int64_t moeParameterCount(const MoESpec &m, int64_t h) {
  return m.numExperts * expertParameterCount(m, h) +
         sharedExpertParameterCount(m, h) + routerParameterCount(m, h);
}

LayerSpec mtpLayerOf(const ModelSpec &model, int64_t i) {
  int64_t decoder = 0;
  const LayerSpec *last = nullptr;
  for (const LayerSpec &l : model.layers)
    if (!l.isMTP) {
      ++decoder;
      last = &l;
    }
  LayerSpec mtp = last ? *last : LayerSpec();
  mtp.isMTP = true;
  mtp.index = decoder + i;
  return mtp;
}

int64_t ModelSpec::numMoELayers() const {
  int64_t n = 0;
  for (const LayerSpec &l : layers)
    n += l.isMoE ? 1 : 0;
  return n;
}

static int64_t countParams(const ModelSpec &m, bool activeOnly) {
  int64_t h = m.hiddenSize;
  int64_t n = m.vocabSize * h; // embedding
  if (!m.tieWordEmbeddings)
    n += m.vocabSize * h; // LM head
  n += h;                 // final norm
  for (const LayerSpec &l : m.layers) {
    n += 2 * h; // input and post-attention norms
    n += attentionParameterCount(l.attention, h);
    if (!l.isMoE) {
      n += ffnParameterCount(l.ffn, h);
      continue;
    }
    if (!activeOnly) {
      n += moeParameterCount(l.moe, h);
      continue;
    }
    n += l.moe.topK * expertParameterCount(l.moe, h) +
         sharedExpertParameterCount(l.moe, h) + routerParameterCount(l.moe, h);
  }
  return n;
}

int64_t ModelSpec::parameterCount() const { return countParams(*this, false); }
int64_t ModelSpec::activeParameterCount() const {
  return countParams(*this, true);
}

} // namespace helix
