//===- Routing.h - How MoE routing is assumed to spread -------*- C++ -*-===//
//
// The default skew of expert popularity, shared by the cost model
// (helix/Cost/MoE.h, ExpertLoadModel) and #helix.plan's routing_skew; and
// which model families route as DeepSeek-V3 does (the lowering's router
// bias and grouped selection).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_ROUTING_H
#define HELIX_COMMON_ROUTING_H

#include <string_view>

namespace helix {

/// Default Zipf exponent of expert popularity, from a published measurement
/// of real routing: NVIDIA's TensorRT-LLM tech blog "Scaling Expert
/// Parallelism in TensorRT-LLM (Part 1)", Table 1 (DeepSeek-R1 on 32 GB200,
/// a machine-translation dataset, EP 32, local batch 256, no EPLB): per
/// expert slot, routed-token load has mean 128 and standard deviation 164.1
/// (coefficient of variation 1.28). Over 256 experts with top-8 routing,
/// exponent 0.64 gives that coefficient of variation. Checked against the
/// same table's other figure, which was not used to choose it: the model
/// then puts the busiest of the 32 ranks at about 2.6x the mean load
/// (ExpertLoadModel::busiest), and the blog measured 2.56x (imbalance ratio
/// 1.564). With EPLB the blog measured 1.11x; pass a skew of 0 for a
/// balanced deployment (docs/cost-model.md, "MoE load").
constexpr double kDefaultRoutingSkew = 0.64;

/// Whether `modelType` routes as DeepSeek-V3 (topk_method noaux_tc): a
/// sigmoid router whose selection adds e_score_correction_bias, groups
/// ranked by the sum of their top-2 scores. DeepSeek-V3, Kimi-K2 and
/// DeepSeek-V3.2 / GLM-5 (whose MoE is DeepSeek-V3's).
inline bool routesAsDeepSeekV3(std::string_view modelType) {
  return modelType == "deepseek_v3" || modelType == "kimi_k2" ||
         modelType == "deepseek_v32" || modelType == "glm_moe_dsa";
}

} // namespace helix

#endif // HELIX_COMMON_ROUTING_H
