//===- CheckpointNames.cpp - Hugging Face tensor names by family ----------===//

#include "CheckpointNames.h"

#include "helix/Common/Routing.h"

namespace helix::sharding {

bool hasRouterBias(llvm::StringRef modelType, bool sigmoid) {
  return modelType == "gpt_oss" ||
         (sigmoid && routesAsDeepSeekV3(modelType.str()));
}

MoENames moeNames(llvm::StringRef modelType, llvm::StringRef prefix,
                  bool routerBias, bool sharedExpertGate) {
  std::string p = prefix.str();
  MoENames n;
  if (modelType == "gpt_oss") {
    n.router = p + ".router.weight";
    n.routerBias = routerBias ? p + ".router.bias" : "";
    n.fused = true;
    n.gateUp = p + ".experts.gate_up_proj";
    n.down = p + ".experts.down_proj";
    n.gateUpBias = p + ".experts.gate_up_proj_bias";
    n.downBias = p + ".experts.down_proj_bias";
    return n;
  }
  n.router = p + ".gate.weight";
  if (routerBias)
    n.routerBias = p + ".gate.e_score_correction_bias";
  std::string expert = p + ".experts.{expert}.";
  bool mixtral = modelType == "mixtral";
  n.gate = expert + (mixtral ? "w1" : "gate_proj") + ".weight";
  n.up = expert + (mixtral ? "w3" : "up_proj") + ".weight";
  n.down = expert + (mixtral ? "w2" : "down_proj") + ".weight";
  n.gateBias = expert + (mixtral ? "w1" : "gate_proj") + ".bias";
  n.upBias = expert + (mixtral ? "w3" : "up_proj") + ".bias";
  n.downBias = expert + (mixtral ? "w2" : "down_proj") + ".bias";
  std::string shared =
      p + (sharedExpertGate ? ".shared_expert." : ".shared_experts.");
  n.sharedGate = shared + "gate_proj.weight";
  n.sharedUp = shared + "up_proj.weight";
  n.sharedDown = shared + "down_proj.weight";
  if (sharedExpertGate)
    n.sharedExpertGate = p + ".shared_expert_gate.weight";
  return n;
}

} // namespace helix::sharding
