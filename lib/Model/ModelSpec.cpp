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

const char *stringifyMixerKind(MixerKind kind) {
  switch (kind) {
  case MixerKind::Attention:
    return "attention";
  case MixerKind::LinearAttention:
    return "linear_attention";
  case MixerKind::Mamba:
    return "mamba";
  case MixerKind::None:
    return "none";
  }
  return "unknown";
}

const char *stringifyLinearAttentionVariant(LinearAttentionSpec::Variant v) {
  return v == LinearAttentionSpec::Variant::KDA ? "kda" : "gated_deltanet";
}

bool isGatedActivation(const std::string &activation) {
  return activation != "relu2";
}

int64_t stateDTypeBytes(const std::string &dtype) {
  if (dtype == "float32")
    return 4;
  if (dtype == "bfloat16" || dtype == "float16")
    return 2;
  return 0;
}

int64_t AttentionSpec::kvValuesPerToken() const {
  if (kind == AttentionKind::MLA)
    return kvLoraRank + qkRopeHeadDim;
  return numKVHeads * (headDim + vHeadDim);
}

int64_t indexerParameterCount(const AttentionSpec &a, int64_t h) {
  const IndexerSpec &x = a.indexer;
  int64_t qIn = a.qLoraRank > 0 ? a.qLoraRank : h;
  // wq_b (from the q latent), wk, the key LayerNorm (weight and bias),
  // weights_proj (one weight per index head).
  return qIn * x.numHeads * x.headDim + h * x.headDim + 2 * x.headDim +
         h * x.numHeads;
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
    if (a.outputGate)
      n += h * a.numHeads * a.vHeadDim;
    if (a.indexer.sparse() && !a.indexer.reusesPrevious)
      n += indexerParameterCount(a, h);
    return n;
  }
  int64_t q = a.numHeads * a.headDim;
  int64_t kv = a.numKVHeads * a.headDim + a.numKVHeads * a.vHeadDim;
  if (a.outputGate)
    n += h * a.numHeads * a.vHeadDim; // the gate's projection
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
  int64_t mats = isGatedActivation(f.activation) ? 3 : 2;
  int64_t n = mats * h * f.intermediate;
  if (f.bias)
    n += (mats - 1) * f.intermediate + h;
  return n;
}

int64_t expertParameterCount(const MoESpec &m, int64_t h) {
  int64_t mats = m.gated() ? 3 : 2;
  int64_t width = m.latentSize > 0 ? m.latentSize : h;
  int64_t n = mats * width * m.expertIntermediate;
  if (m.expertBias)
    n += (mats - 1) * m.expertIntermediate + width;
  return n;
}

int64_t sharedExpertParameterCount(const MoESpec &m, int64_t h) {
  return m.numSharedExperts * (m.gated() ? 3 : 2) * h * m.sharedIntermediate;
}

int64_t latentProjectionParameterCount(const MoESpec &m, int64_t h) {
  if (m.latentSize == 0)
    return 0;
  return 2 * h * m.latentSize + (m.latentNorm ? m.latentSize : 0);
}

int64_t linearAttentionInParameterCount(const LinearAttentionSpec &l,
                                        int64_t h) {
  const int64_t keys = l.numKeyHeads * l.keyHeadDim;
  const int64_t values = l.numValueHeads * l.valueHeadDim;
  int64_t n = l.convChannels() * l.convKernel; // short convolutions
  if (l.variant == LinearAttentionSpec::Variant::GatedDeltaNet) {
    // in_proj_qkvz (q, k, v and the output gate z), in_proj_ba (beta and
    // the decay's alpha per value head), dt_bias and A_log per value head,
    // the gated RMSNorm over a value head.
    n += h * (2 * keys + 2 * values) + h * 2 * l.numValueHeads +
         2 * l.numValueHeads + l.valueHeadDim;
    return n;
  }
  // KDA (fla kda.py, vLLM kda.py): q, k, v; the per-channel decay gate
  // through a rank-keyHeadDim bottleneck (f_a, f_b); beta per head
  // (b_proj); the output gate, one full-rank matrix (g_proj, with
  // use_full_rank_gate) or the same bottleneck (g_a, g_b); A_log per head,
  // dt_bias per key channel; the gated RMSNorm over a value head.
  n += h * (2 * keys + values);
  n += h * l.keyHeadDim + l.keyHeadDim * keys;
  n += h * l.numValueHeads;
  n += l.fullRankGate ? h * values
                      : h * l.valueHeadDim + l.valueHeadDim * values;
  n += l.numValueHeads + keys + l.valueHeadDim;
  return n;
}

int64_t linearAttentionOutParameterCount(const LinearAttentionSpec &l,
                                         int64_t h) {
  return l.outputDim() * h;
}

int64_t mambaInParameterCount(const MambaSpec &m, int64_t h) {
  // in_proj (z, x, B, C and dt), the convolution over x, B and C, dt_bias,
  // A_log and D per head, the gated RMSNorm over the inner channels.
  int64_t n =
      h * (2 * m.innerSize() + 2 * m.nGroups * m.stateSize + m.numHeads);
  n += m.convChannels() * m.convKernel + (m.convBias ? m.convChannels() : 0);
  n += 3 * m.numHeads + m.innerSize();
  return n;
}

int64_t mambaOutParameterCount(const MambaSpec &m, int64_t h) {
  return m.innerSize() * h;
}

int64_t mixerParameterCount(const LayerSpec &l, int64_t h) {
  switch (l.mixer) {
  case MixerKind::Attention:
    return attentionParameterCount(l.attention, h);
  case MixerKind::LinearAttention:
    return linearAttentionInParameterCount(l.linear, h) +
           linearAttentionOutParameterCount(l.linear, h);
  case MixerKind::Mamba:
    return mambaInParameterCount(l.mamba, h) +
           mambaOutParameterCount(l.mamba, h);
  case MixerKind::None:
    return 0;
  }
  return 0;
}

int64_t routerParameterCount(const MoESpec &m, int64_t h) {
  return h * m.numExperts + (m.expertBias ? m.numExperts : 0) +
         (m.sharedExpertGate ? h : 0);
}

int64_t moeParameterCount(const MoESpec &m, int64_t h) {
  return m.numExperts * expertParameterCount(m, h) +
         sharedExpertParameterCount(m, h) + routerParameterCount(m, h) +
         latentProjectionParameterCount(m, h);
}

LayerSpec mtpLayerOf(const ModelSpec &model, int64_t i) {
  int64_t decoder = 0;
  const LayerSpec *last = nullptr;
  for (const LayerSpec &l : model.layers)
    if (!l.isMTP) {
      ++decoder;
      last = &l;
    }
  LayerSpec mtp = model.mtpShape ? *model.mtpShape : last ? *last : LayerSpec();
  mtp.isMTP = true;
  mtp.index = decoder + i;
  return mtp;
}

int64_t ModelSpec::numMoELayers() const {
  int64_t n = 0;
  for (const LayerSpec &l : layers)
    n += l.hasFFN && l.isMoE ? 1 : 0;
  return n;
}

int64_t ModelSpec::numDenseLayers() const {
  int64_t n = 0;
  for (const LayerSpec &l : layers)
    n += l.hasFFN && !l.isMoE ? 1 : 0;
  return n;
}

bool ModelSpec::onlyClassicLayers(std::string *firstOther) const {
  for (const LayerSpec &l : layers) {
    std::string what;
    bool gdn = l.mixer == MixerKind::LinearAttention &&
               l.linear.variant == LinearAttentionSpec::Variant::GatedDeltaNet;
    if (l.mixer != MixerKind::Attention && !gdn)
      what = l.mixer == MixerKind::None ? "has no token mixer"
             : l.mixer == MixerKind::LinearAttention
                 ? "is KDA linear attention"
                 : std::string("is ") + stringifyMixerKind(l.mixer);
    else if (!l.hasFFN)
      what = "has no FFN";
    else if (!gdn && l.attention.outputGate &&
             l.attention.kind == AttentionKind::MLA)
      what = "has a gated MLA output";
    else if (!gdn && l.attention.partialRotary != 1.0 &&
             l.attention.kind == AttentionKind::MLA)
      what = "has partial RoPE on MLA";
    else if (!gdn && l.attention.noRope)
      what = "has attention without RoPE";
    else if (l.hasFFN && l.isMoE && l.moe.latentSize > 0)
      what = "has a latent MoE";
    else if (l.hasFFN &&
             !(l.isMoE ? l.moe.gated() : isGatedActivation(l.ffn.activation)))
      what = "has an ungated (relu2) MLP";
    if (what.empty())
      continue;
    if (firstOther)
      *firstOther = "layer " + std::to_string(l.index) + " " + what;
    return false;
  }
  return true;
}

static int64_t countParams(const ModelSpec &m, bool activeOnly) {
  int64_t h = m.hiddenSize;
  int64_t n = m.vocabSize * h; // embedding
  if (!m.tieWordEmbeddings)
    n += m.vocabSize * h; // LM head
  n += h;                 // final norm
  for (const LayerSpec &l : m.layers) {
    // The norm before each half.
    n += (l.mixer != MixerKind::None ? h : 0) + (l.hasFFN ? h : 0);
    n += mixerParameterCount(l, h);
    if (!l.hasFFN)
      continue;
    if (!l.isMoE) {
      n += ffnParameterCount(l.ffn, h);
      continue;
    }
    if (!activeOnly) {
      n += moeParameterCount(l.moe, h);
      continue;
    }
    n += l.moe.topK * expertParameterCount(l.moe, h) +
         sharedExpertParameterCount(l.moe, h) + routerParameterCount(l.moe, h) +
         latentProjectionParameterCount(l.moe, h);
  }
  return n;
}

int64_t ModelSpec::parameterCount() const { return countParams(*this, false); }
int64_t ModelSpec::activeParameterCount() const {
  return countParams(*this, true);
}

} // namespace helix
