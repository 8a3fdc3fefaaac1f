//===- ModelSpec.h - Plain description of a decoder-only model --*- C++ -*-===//
//
// The one in-memory description of a model that the importer produces, the
// IR builder turns into helix ops, the IR extractor rebuilds from helix ops,
// and the cost model reads. It has no MLIR dependency so that the cost model
// and the planner can be used (and unit-tested) on their own.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_MODEL_MODELSPEC_H
#define HELIX_MODEL_MODELSPEC_H

#include "helix/Common/Rope.h"

#include <cstdint>
#include <string>
#include <vector>

namespace helix {

/// Attention variants. GQA covers MHA (kv == q) and MQA (kv == 1) as special
/// cases; the kind records what the config describes so that tools can print
/// it, the dimensions are what the cost model and passes use.
enum class AttentionKind { MHA, GQA, MQA, MLA };

const char *stringifyAttentionKind(AttentionKind kind);

/// RoPE and its scaled variants (shared with the runtime, defaults included).
using RopeSpec = RopeParams;

/// Attention of one layer.
struct AttentionSpec {
  AttentionKind kind = AttentionKind::GQA;
  int64_t numHeads = 0;   // query heads
  int64_t numKVHeads = 0; // KV heads; 1 for MLA (one shared latent)
  int64_t headDim = 0;    // q/k head dim (MLA: qk_nope + qk_rope)
  int64_t vHeadDim = 0;   // v head dim (== headDim except MLA)
  // MLA only (0 otherwise).
  int64_t qLoraRank = 0; // 0: q projected directly from hidden
  int64_t kvLoraRank = 0;
  int64_t qkNopeHeadDim = 0;
  int64_t qkRopeHeadDim = 0;
  // Features.
  bool qkvBias = false;      // bias on q/k/v projections
  bool outBias = false;      // bias on the output projection
  bool qkNorm = false;       // RMSNorm on q and k per head (Qwen3)
  bool sinks = false;        // learned attention sinks (gpt-oss)
  int64_t slidingWindow = 0; // 0: full attention; else window in tokens
  RopeSpec rope;

  /// Values cached per token per layer (all KV heads): 2*K*Hsz for GQA,
  /// kv_lora_rank + qk_rope_head_dim for MLA.
  int64_t kvValuesPerToken() const;
};

/// Dense gated FFN (SwiGLU-style: gate, up, down).
struct FFNSpec {
  int64_t intermediate = 0;
  std::string activation = "silu";
  bool bias = false;
};

/// Mixture-of-experts block of one layer.
struct MoESpec {
  int64_t numExperts = 0;
  int64_t topK = 0;
  int64_t expertIntermediate = 0;
  int64_t numSharedExperts = 0;
  int64_t sharedIntermediate = 0; // per shared expert
  int64_t nGroup = 1;             // DeepSeek grouped routing
  int64_t topkGroup = 1;
  double routedScalingFactor = 1.0;
  bool normTopkProb = false;
  std::string scoringFunc = "softmax"; // softmax | sigmoid
  std::string activation = "silu";
  bool expertBias = false; // gpt-oss experts carry biases
};

/// One decoder layer: attention followed by either a dense FFN or an MoE.
struct LayerSpec {
  int64_t index = 0;
  AttentionSpec attention;
  bool isMoE = false;
  FFNSpec ffn;        // valid when !isMoE
  MoESpec moe;        // valid when isMoE
  bool isMTP = false; // multi-token-prediction layer (only when requested)
};

/// A whole decoder-only model, as one decode step sees it.
struct ModelSpec {
  std::string name;      // e.g. "DeepSeek-R1" (from the file name or config)
  std::string modelType; // HF model_type
  int64_t hiddenSize = 0;
  int64_t vocabSize = 0;
  int64_t maxPositionEmbeddings = 0;
  double rmsNormEps = 1e-6;
  bool tieWordEmbeddings = false;
  std::string checkpointDType = "bfloat16"; // torch_dtype of the checkpoint
  std::string quantMethod;                  // "" or e.g. "fp8", "mxfp4"
  /// How the checkpoint stores its quantized linear weights, from
  /// quantization_config (helix/Common/WeightFormat.h names): "" (not
  /// quantized), "fp8-block", "fp8-tensor", "nvfp4" or "mxfp4".
  std::string quantFormat;
  /// Modules the checkpoint keeps unquantized (modules_to_not_convert /
  /// ignore / exclude_modules; `*` matches any text), e.g.
  /// "model.layers.*.self_attn".
  std::vector<std::string> quantExclude;
  std::vector<LayerSpec> layers;
  /// Multi-token-prediction layers the checkpoint ships
  /// (num_nextn_predict_layers), whether or not `layers` includes them:
  /// what speculative decoding with --mtp drafts with.
  int64_t mtpLayers = 0;

  int64_t numLayers() const { return static_cast<int64_t>(layers.size()); }
  int64_t numMoELayers() const;
  int64_t numDenseLayers() const { return numLayers() - numMoELayers(); }
  /// Total parameter count (embedding, layers, final norm, LM head).
  int64_t parameterCount() const;
  /// Parameters touched per token (top-k experts + shared), as usually quoted.
  int64_t activeParameterCount() const;
};

/// Multi-token-prediction layer `i` (of model.mtpLayers) of a model whose
/// `layers` are its decoder layers: shaped like the last decoder layer
/// (DeepSeek-V3's MTP module holds a full MLA + MoE layer), marked isMTP,
/// its index numLayers() + i (its checkpoint prefix model.layers.<index>).
LayerSpec mtpLayerOf(const ModelSpec &model, int64_t i);

/// Parameter counts of the pieces, shared by the model summary and the cost
/// model so both count the same way.
int64_t attentionParameterCount(const AttentionSpec &attn, int64_t hidden);
/// QKV (or MLA down/up) projections only, without the output projection.
int64_t qkvParameterCount(const AttentionSpec &attn, int64_t hidden);
int64_t outProjParameterCount(const AttentionSpec &attn, int64_t hidden);
int64_t ffnParameterCount(const FFNSpec &ffn, int64_t hidden);
int64_t expertParameterCount(const MoESpec &moe, int64_t hidden);
int64_t sharedExpertParameterCount(const MoESpec &moe, int64_t hidden);
int64_t routerParameterCount(const MoESpec &moe, int64_t hidden);
int64_t moeParameterCount(const MoESpec &moe, int64_t hidden);

} // namespace helix

#endif // HELIX_MODEL_MODELSPEC_H
