//===- KimiLinear.cpp - kimi_linear (Kimi Linear, Kimi-K3) ----------------===//
//
// Kimi Delta Attention (KDA) layers interleaved with MLA layers
// (linear_attn_config: kda_layers and full_attn_layers, 1-based), MLA
// without RoPE (mla_use_nope) and with a sigmoid output gate
// (mla_use_output_gate), and a DeepSeek-style MoE whose routed experts may
// run in a latent width (routed_expert_hidden_size, Kimi-K3). Kimi-K3's
// config wraps this one in text_config (HFConfig.cpp unwraps it).
//
//===----------------------------------------------------------------------===//

#include "CommonFields.h"
#include "Families.h"

namespace helix {
namespace import {

/// The KDA layers' sizes, and which layers they are (`isKDA`, 0-based).
static bool readLinearAttnConfig(const FieldReader &r, int64_t n,
                                 LinearAttentionSpec &l,
                                 std::vector<bool> &isKDA) {
  const nlohmann::json *object = nullptr;
  if (!r.getOptObject("linear_attn_config", object))
    return false;
  isKDA.assign(n, false);
  if (!object)
    return true; // every layer MLA
  FieldReader c = r.nested("linear_attn_config", *object);
  l = LinearAttentionSpec();
  l.variant = LinearAttentionSpec::Variant::KDA;
  std::vector<int64_t> kda, full;
  bool kdaPresent = false, fullPresent = false;
  if (!c.getInt("num_heads", l.numValueHeads) ||
      !c.getInt("head_dim", l.keyHeadDim) ||
      !c.getOptInt("short_conv_kernel_size", l.convKernel, 4) ||
      !c.getOptBool("use_full_rank_gate", l.fullRankGate, false) ||
      !c.getOptDouble("gate_lower_bound", l.gateLowerBound, 0, Bound::Any) ||
      !c.getOptIntArray("kda_layers", kda, kdaPresent, 1, n) ||
      !c.getOptIntArray("full_attn_layers", full, fullPresent, 1, n))
    return false;
  if (l.gateLowerBound > 0)
    return c.fail("gate_lower_bound",
                  "expected a number <= 0 (a log-decay bound), got " +
                      nlohmann::json(l.gateLowerBound).dump());
  // KDA: as many key heads as value heads, of one head size; the state is
  // FP32 (vLLM kda_state_dtype).
  l.numKeyHeads = l.numValueHeads;
  l.valueHeadDim = l.keyHeadDim;
  l.stateDType = "float32";
  if (!kdaPresent)
    return c.fail("kda_layers", "missing, expected the 1-based indices of "
                                "the KDA layers");
  std::vector<int> seen(n, 0);
  for (size_t i = 0; i < kda.size(); ++i) {
    isKDA[kda[i] - 1] = true;
    ++seen[kda[i] - 1];
  }
  for (int64_t f : full)
    ++seen[f - 1];
  for (int64_t i = 0; i < n; ++i) {
    if (seen[i] == 1 || (!fullPresent && seen[i] == 0))
      continue;
    return c.fail(seen[i] == 0 ? "full_attn_layers" : "kda_layers",
                  "layer " + std::to_string(i + 1) +
                      (seen[i] == 0
                           ? " is in neither kda_layers nor full_attn_layers"
                           : " is listed twice (kda_layers and "
                             "full_attn_layers name each layer once)"));
  }
  return true;
}

/// Kimi's MoE keys, its latent experts and the SiTU activation.
static bool readKimiMoE(const FieldReader &r, MoESpec &moe) {
  moe = MoESpec();
  std::string router;
  bool grouped = false;
  if (!readRoutedExperts(r, "num_experts", "num_experts_per_token",
                         "moe_intermediate_size", moe) ||
      !r.getOptInt("num_shared_experts", moe.numSharedExperts, 0, 0) ||
      !r.getOptInt("routed_expert_hidden_size", moe.latentSize, 0, 0) ||
      !r.getOptBool("latent_moe_use_norm", moe.latentNorm, false) ||
      !r.getOptString("moe_router_activation_func", router, "sigmoid") ||
      !r.getOptBool("moe_renormalize", moe.normTopkProb, true) ||
      !r.getOptDouble("routed_scaling_factor", moe.routedScalingFactor, 1.0) ||
      !r.getOptBool("use_grouped_topk", grouped, false) ||
      !r.getOptInt("num_expert_group", moe.nGroup, 1) ||
      !r.getOptInt("topk_group", moe.topkGroup, 1))
    return false;
  if (router != "sigmoid" && router != "softmax")
    return r.fail("moe_router_activation_func",
                  "unknown \"" + router +
                      "\", expected \"sigmoid\" or \"softmax\"");
  moe.scoringFunc = router;
  if (moe.topkGroup > moe.nGroup || moe.numExperts % moe.nGroup != 0)
    return r.fail(
        "num_expert_group",
        std::to_string(moe.nGroup) + " groups cannot hold " +
            std::to_string(moe.numExperts) +
            " experts with topk_group = " + std::to_string(moe.topkGroup));
  moe.sharedIntermediate =
      moe.numSharedExperts > 0 ? moe.expertIntermediate : 0;
  if (moe.latentNorm && moe.latentSize == 0)
    return r.fail("latent_moe_use_norm",
                  "true, but no routed_expert_hidden_size gives a latent");
  return true;
}

/// SiTU (Kimi's gated activation): beta * tanh(g / beta) * sigmoid(g)
/// times linear_beta * tanh(up / linear_beta). Still a gated MLP: gate,
/// up and down matrices.
static bool readSiTU(const FieldReader &r, const std::string &activation) {
  double beta = 0, linearBeta = 0;
  if (activation != "situ")
    return true;
  return r.getDouble("activation_situ_beta", beta) &&
         r.getOptDouble("activation_situ_linear_beta", linearBeta, 0,
                        Bound::NonNegative);
}

bool importKimiLinear(const FieldReader &r, const std::string &, ModelSpec &m) {
  int64_t n = 0, firstDense = 0, freq = 1, resBlock = 0;
  AttentionSpec attn;
  LinearAttentionSpec kda;
  std::vector<bool> isKDA;
  MoESpec moe;
  FFNSpec ffn;
  if (!readModelBasics(r, FamilyDefaults(), m, n) || !readMLA(r, attn) ||
      !readRope(r, rope_defaults::kTheta, m.maxPositionEmbeddings, attn.rope) ||
      !r.getOptBool("mla_use_nope", attn.noRope, false) ||
      !r.getOptBool("mla_use_output_gate", attn.outputGate, false) ||
      !readLinearAttnConfig(r, n, kda, isKDA) || !readKimiMoE(r, moe) ||
      !readSiTU(r, moe.activation) ||
      !r.getOptInt("first_k_dense_replace", firstDense, 0, 0) ||
      !r.getOptInt("moe_layer_freq", freq, 1) ||
      // Kimi-K3's attention residuals: a block's layers read a softmax
      // mix of the earlier blocks' outputs (docs/long-context-
      // architectures.md: read, its small cost not priced).
      !r.getOptInt("attn_res_block_size", resBlock, 0, 0))
    return false;
  std::vector<bool> isMoE(n, false);
  bool anyDense = false;
  for (int64_t i = 0; i < n; ++i) {
    isMoE[i] = i >= firstDense && i % freq == 0;
    anyDense |= !isMoE[i];
  }
  if (!readDenseFFN(r, anyDense, ffn))
    return false;
  buildLayers(attn, ffn, moe, std::vector<int64_t>(n, 0), isMoE, m);
  for (int64_t i = 0; i < n; ++i)
    if (isKDA[i]) {
      m.layers[i].mixer = MixerKind::LinearAttention;
      m.layers[i].linear = kda;
    }
  return true;
}

} // namespace import
} // namespace helix
