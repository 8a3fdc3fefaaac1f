//===- NemotronH.cpp - nemotron_h (Nemotron-H, Nemotron-3) ----------------===//
//
// A stack of single-mixer blocks named by hybrid_override_pattern, one
// letter per block: M a Mamba-2 mixer, * attention (GQA without RoPE), E an
// MoE (relu2 experts, optionally in a latent width: moe_latent_size), - a
// dense relu2 MLP. Every block is a pre-norm mixer with a residual, so a
// block is a LayerSpec with one half: a token mixer without FFN, or an FFN
// without mixer. The MTP module is described by mtp_hybrid_override_pattern
// (default "*E": attention then MoE, one LayerSpec).
//
//===----------------------------------------------------------------------===//

#include "CommonFields.h"
#include "Families.h"

#include <cmath>

namespace helix {
namespace import {

static bool readMamba2(const FieldReader &r, MambaSpec &m) {
  m = MambaSpec();
  std::string act;
  std::vector<double> limit;
  bool present = false;
  if (!r.getInt("mamba_num_heads", m.numHeads) ||
      !r.getInt("mamba_head_dim", m.headDim) ||
      !r.getInt("ssm_state_size", m.stateSize) ||
      !r.getOptInt("n_groups", m.nGroups, 1) ||
      !r.getOptInt("conv_kernel", m.convKernel, 4) ||
      !r.getOptBool("use_conv_bias", m.convBias, true) ||
      !r.getOptString("mamba_ssm_cache_dtype", m.stateDType, "float32") ||
      !r.getOptString("mamba_hidden_act", act, "silu") ||
      !r.getOptExtendedDoubleArray("time_step_limit", limit, present))
    return false;
  if (m.numHeads % m.nGroups != 0)
    return r.fail("n_groups", std::to_string(m.nGroups) +
                                  " does not divide mamba_num_heads = " +
                                  std::to_string(m.numHeads));
  if (stateDTypeBytes(m.stateDType) == 0)
    return r.fail("mamba_ssm_cache_dtype",
                  "unknown dtype \"" + m.stateDType +
                      "\", expected \"float32\", \"bfloat16\" or \"float16\"");
  if (act != "silu")
    return r.fail("mamba_hidden_act",
                  "\"" + act + "\" is not supported, expected \"silu\"");
  if (present && (limit.size() != 2 || std::isnan(limit[0]) || limit[0] < 0 ||
                  limit[1] < limit[0]))
    return r.fail("time_step_limit",
                  "expected [low, high] with 0 <= low <= high (high may be "
                  "Infinity)");
  return true;
}

static bool readNemotronMoE(const FieldReader &r, MoESpec &moe) {
  moe = MoESpec();
  if (!r.getInt("n_routed_experts", moe.numExperts) ||
      !r.getInt("num_experts_per_tok", moe.topK) ||
      !r.getInt("moe_intermediate_size", moe.expertIntermediate) ||
      !r.getOptString("mlp_hidden_act", moe.activation, "relu2") ||
      !r.getOptInt("n_shared_experts", moe.numSharedExperts, 0, 0) ||
      !r.getOptInt("moe_shared_expert_intermediate_size",
                   moe.sharedIntermediate, 0, 0) ||
      !r.getOptInt("moe_latent_size", moe.latentSize, 0, 0) ||
      !r.getOptInt("n_group", moe.nGroup, 1) ||
      !r.getOptInt("topk_group", moe.topkGroup, 1) ||
      !r.getOptDouble("routed_scaling_factor", moe.routedScalingFactor, 1.0) ||
      !r.getOptBool("norm_topk_prob", moe.normTopkProb, true))
    return false;
  if (moe.topK > moe.numExperts)
    return r.fail("num_experts_per_tok", "top-k " + std::to_string(moe.topK) +
                                             " exceeds n_routed_experts = " +
                                             std::to_string(moe.numExperts));
  if (moe.numSharedExperts > 0 && moe.sharedIntermediate == 0)
    return r.fail("moe_shared_expert_intermediate_size",
                  "missing, but n_shared_experts = " +
                      std::to_string(moe.numSharedExperts));
  moe.scoringFunc = "sigmoid"; // NemotronHTopkRouter: sigmoid + bias
  return true;
}

/// One block of each letter, filled from the specs read.
struct Blocks {
  AttentionSpec attn;
  MambaSpec mamba;
  MoESpec moe;
  FFNSpec mlp;
  bool hasMoE = false, hasMLP = false, hasAttention = false, hasMamba = false;
};

static bool blockOf(const FieldReader &r, const char *key, char letter,
                    size_t at, const Blocks &b, LayerSpec &l) {
  l = LayerSpec();
  l.hasFFN = letter == 'E' || letter == '-';
  l.mixer = letter == 'M'   ? MixerKind::Mamba
            : letter == '*' ? MixerKind::Attention
                            : MixerKind::None;
  switch (letter) {
  case 'M':
    l.mamba = b.mamba;
    return true;
  case '*':
    l.attention = b.attn;
    return true;
  case 'E':
    l.isMoE = true;
    l.moe = b.moe;
    return true;
  case '-':
    l.ffn = b.mlp;
    return true;
  default:
    return r.fail(key, "letter " + std::to_string(at) + " is '" +
                           std::string(1, letter) +
                           "', expected M (Mamba-2), * (attention), E (MoE) "
                           "or - (MLP)");
  }
}

static bool readPattern(const FieldReader &r, const char *key,
                        std::string &pattern, const std::string &dflt) {
  if (!r.getOptString(key, pattern, dflt))
    return false;
  if (pattern.empty())
    return r.fail(key, "missing, expected one letter per block (M, *, E, -)");
  return true;
}

/// The MTP module: a mixer block and an FFN block, which as one LayerSpec
/// is the usual pre-norm layer.
static bool readMTPShape(const FieldReader &r, const Blocks &b, ModelSpec &m) {
  std::string pattern;
  const char *key = "mtp_hybrid_override_pattern";
  if (!readPattern(r, key, pattern, "*E"))
    return false;
  LayerSpec mixer, ffn;
  if (pattern.size() != 2 || !blockOf(r, key, pattern[0], 0, b, mixer) ||
      !blockOf(r, key, pattern[1], 1, b, ffn) ||
      mixer.mixer == MixerKind::None || !ffn.hasFFN)
    return r.fail(key, "\"" + pattern +
                           "\" is not supported, expected a mixer block "
                           "(M or *) followed by an FFN block (E or -)");
  LayerSpec shape = mixer;
  shape.hasFFN = true;
  shape.isMoE = ffn.isMoE;
  shape.moe = ffn.moe;
  shape.ffn = ffn.ffn;
  m.mtpShape = shape;
  return true;
}

bool importNemotronH(const FieldReader &r, const std::string &, ModelSpec &m) {
  FamilyDefaults defaults;
  defaults.rmsNormEps = 1e-5;
  int64_t n = 0;
  std::string pattern;
  const char *key = "hybrid_override_pattern";
  if (!readModelBasics(r, defaults, m, n) || !readPattern(r, key, pattern, ""))
    return false;
  if (!r.getOptDouble("layer_norm_epsilon", m.rmsNormEps, m.rmsNormEps))
    return false;
  if (int64_t(pattern.size()) != n)
    return r.fail(
        key, "has " + std::to_string(pattern.size()) +
                 " letters, expected num_hidden_layers = " + std::to_string(n));
  Blocks b;
  for (char c : pattern) {
    b.hasMamba |= c == 'M';
    b.hasAttention |= c == '*';
    b.hasMoE |= c == 'E';
    b.hasMLP |= c == '-';
  }
  bool bias = false, fp32Residual = false;
  if (!r.getOptBool("residual_in_fp32", fp32Residual, false))
    return false;
  if (b.hasMamba && !readMamba2(r, b.mamba))
    return false;
  if (b.hasAttention) {
    if (!readStandardAttention(r, m.hiddenSize, b.attn) ||
        !r.getOptBool("attention_bias", bias, false))
      return false;
    b.attn.qkvBias = b.attn.outBias = bias;
    b.attn.noRope = true; // NemotronHAttention applies no RoPE
  }
  if (b.hasMoE && !readNemotronMoE(r, b.moe))
    return false;
  if (b.hasMLP) {
    b.mlp = FFNSpec();
    if (!r.getInt("intermediate_size", b.mlp.intermediate) ||
        !r.getOptString("mlp_hidden_act", b.mlp.activation, "relu2") ||
        !r.getOptBool("mlp_bias", b.mlp.bias, false))
      return false;
  }
  m.layers.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    if (!blockOf(r, key, pattern[i], size_t(i), b, m.layers[i]))
      return false;
    m.layers[i].index = i;
  }
  int64_t mtp = 0;
  if (!r.getOptInt("num_nextn_predict_layers", mtp, 0, 0))
    return false;
  if (mtp > 0) {
    // The MTP module's blocks may use kinds the decoder lacks.
    if (!b.hasAttention && (!readStandardAttention(r, m.hiddenSize, b.attn)))
      return false;
    b.attn.noRope = true;
    if (!b.hasMoE && r.has("n_routed_experts") && !readNemotronMoE(r, b.moe))
      return false;
    return readMTPShape(r, b, m);
  }
  return true;
}

} // namespace import
} // namespace helix
