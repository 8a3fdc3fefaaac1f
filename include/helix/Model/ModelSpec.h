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
#include <optional>
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

/// DeepSeek Sparse Attention's lightning indexer (DeepSeek-V3.2, GLM-5):
/// every cached token keeps one index key of `headDim` values; each query
/// scores all of them with `numHeads` index heads (ReLU(q.k) weighted per
/// head and summed) and the layer's MLA attends only to the `topK` best.
/// topK == 0: dense attention (no indexer).
struct IndexerSpec {
  int64_t numHeads = 0; // index_n_heads
  int64_t headDim = 0;  // index_head_dim
  int64_t topK = 0;     // index_topk
  /// Of headDim, the values RoPE rotates (the MLA's qk_rope_head_dim), and
  /// whether pairs are interleaved (GLM-5 indexer_rope_interleave).
  int64_t ropeDim = 0;
  bool ropeInterleave = false;
  /// The layer reuses the previous layer's selection (GLM-5's "shared"
  /// layers, index_topk_pattern "S"): no indexer and no index keys of its
  /// own.
  bool reusesPrevious = false;
  /// Bytes one cached index key takes: FP8 values plus one FP32 scale per
  /// key (DeepSeek-V3.2's index-key cache; docs/long-context-architectures.md).
  int64_t keyBytes() const { return headDim + 4; }
  bool sparse() const { return topK > 0; }
};

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
  /// A sigmoid gate on the attention output, computed from the layer's
  /// input by a projection as wide as the output (Qwen3.5 attn_output_gate,
  /// Kimi mla_use_output_gate).
  bool outputGate = false;
  /// MLA without RoPE on its decoupled key (Kimi Linear mla_use_nope): the
  /// rope dims are still cached, positions are not applied.
  bool noRope = false;
  /// Fraction of each q/k head RoPE rotates (partial_rotary_factor).
  double partialRotary = 1.0;
  IndexerSpec indexer; // DSA (MLA only)
  RopeSpec rope;

  /// Values cached per token per layer (all KV heads): 2*K*Hsz for GQA,
  /// kv_lora_rank + qk_rope_head_dim for MLA.
  int64_t kvValuesPerToken() const;
};

/// True when `activation` gates an up projection with a gate projection
/// (SwiGLU-style: gate, up, down); false for the plain two-matrix MLPs
/// ("relu2": Nemotron-H's squared ReLU).
bool isGatedActivation(const std::string &activation);

/// Dense FFN: gated (gate, up, down) or, for relu2, plain (up, down).
struct FFNSpec {
  int64_t intermediate = 0;
  std::string activation = "silu";
  bool bias = false;
};

/// A recurrent linear-attention token mixer (its state is fixed-size,
/// whatever the context): Gated DeltaNet (Qwen3-Next, Qwen3.5) or Kimi
/// Delta Attention (Kimi Linear, Kimi-K3). Per value head it keeps a
/// keyHeadDim x valueHeadDim state that each token decays by its gate and
/// updates by the delta rule; q, k and v first pass a short causal
/// convolution of convKernel taps (whose last convKernel - 1 inputs are
/// state too).
struct LinearAttentionSpec {
  enum class Variant { GatedDeltaNet, KDA };
  Variant variant = Variant::GatedDeltaNet;
  int64_t numKeyHeads = 0;   // q and k heads
  int64_t numValueHeads = 0; // v heads (= state heads); a multiple of keys
  int64_t keyHeadDim = 0;
  int64_t valueHeadDim = 0;
  int64_t convKernel = 4;
  /// KDA: the output gate is one full-rank projection (use_full_rank_gate)
  /// rather than a rank-keyHeadDim bottleneck (the decay gate always is);
  /// the decay's lower bound (gate_lower_bound).
  bool fullRankGate = false;
  double gateLowerBound = 0;
  /// dtype of the recurrent state ("float32", "bfloat16": mamba_ssm_dtype).
  std::string stateDType = "float32";

  int64_t stateValues() const {
    return numValueHeads * keyHeadDim * valueHeadDim;
  }
  /// Channels of the short convolution (q, k and v).
  int64_t convChannels() const {
    return 2 * numKeyHeads * keyHeadDim + numValueHeads * valueHeadDim;
  }
  int64_t outputDim() const { return numValueHeads * valueHeadDim; }
};
const char *stringifyLinearAttentionVariant(LinearAttentionSpec::Variant v);

/// A Mamba-2 token mixer (Nemotron-H): numHeads heads of headDim channels,
/// each with a headDim x stateSize SSM state; B and C are shared by the
/// heads of each of nGroups groups; x, B and C pass a causal convolution of
/// convKernel taps.
struct MambaSpec {
  int64_t numHeads = 0;
  int64_t headDim = 0;
  int64_t stateSize = 0; // ssm_state_size
  int64_t nGroups = 1;
  int64_t convKernel = 4;
  bool convBias = true;
  /// dtype of the SSM state (mamba_ssm_cache_dtype).
  std::string stateDType = "float32";

  int64_t innerSize() const { return numHeads * headDim; }
  int64_t stateValues() const { return numHeads * headDim * stateSize; }
  int64_t convChannels() const { return innerSize() + 2 * nGroups * stateSize; }
};

/// Bytes of one value of a state dtype ("float32" 4, "bfloat16"/"float16"
/// 2); 0 for names it does not know.
int64_t stateDTypeBytes(const std::string &dtype);

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
  /// Latent MoE (Nemotron-3 moe_latent_size, Kimi-K3
  /// routed_expert_hidden_size): the routed experts read and write
  /// `latentSize` values per token, projected down from and back up to the
  /// hidden size by two matrices all experts share (0: the hidden size).
  int64_t latentSize = 0;
  /// The shared experts' output is scaled by a sigmoid gate computed from
  /// the token (Qwen3-Next shared_expert_gate: one H-vector).
  bool sharedExpertGate = false;
  /// An RMSNorm over the latent expert output before the up projection
  /// (Kimi-K3 latent_moe_use_norm).
  bool latentNorm = false;
  /// Each expert: gate, up, down (gated activation) or up, down (relu2).
  bool gated() const { return isGatedActivation(activation); }
};

/// What mixes tokens in a layer: softmax attention over a KV cache (full,
/// windowed or sparse), a recurrent linear attention, a Mamba-2 SSM, or
/// nothing (a hybrid model's FFN-only block).
enum class MixerKind { Attention, LinearAttention, Mamba, None };
const char *stringifyMixerKind(MixerKind kind);

/// One decoder layer: a token mixer followed by a dense FFN or an MoE.
/// Hybrid models (Nemotron-H) have blocks with one half only: a mixer
/// without FFN, or an FFN without mixer (mixer == None).
struct LayerSpec {
  int64_t index = 0;
  MixerKind mixer = MixerKind::Attention;
  AttentionSpec attention;    // valid when mixer == Attention
  LinearAttentionSpec linear; // valid when mixer == LinearAttention
  MambaSpec mamba;            // valid when mixer == Mamba
  bool hasFFN = true;
  bool isMoE = false;
  FFNSpec ffn;        // valid when hasFFN && !isMoE
  MoESpec moe;        // valid when hasFFN && isMoE
  bool isMTP = false; // multi-token-prediction layer (only when requested)

  bool hasAttention() const { return mixer == MixerKind::Attention; }
  /// A recurrent mixer: fixed-size state, no KV cache.
  bool isRecurrent() const {
    return mixer == MixerKind::LinearAttention || mixer == MixerKind::Mamba;
  }
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
  /// The decoder's RMSNorm weights are zero-centred: stored as w and
  /// applied as (1 + w) (Qwen3-Next and Qwen3.5: the input, post-attention,
  /// q/k and final norms; not the linear-attention layers' gated norm).
  bool zeroCenteredNorms = false;
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
  /// The shape of an MTP layer where it is not the last decoder layer's
  /// (Nemotron-H's mtp_hybrid_override_pattern "*E": attention and MoE).
  std::optional<LayerSpec> mtpShape;

  int64_t numLayers() const { return static_cast<int64_t>(layers.size()); }
  int64_t numMoELayers() const;
  int64_t numDenseLayers() const;
  /// True when every layer is the program generator's and the runtime's:
  /// softmax attention (DeepSeek's sparse indexer included; output gate
  /// and partial RoPE on GQA) or Gated DeltaNet linear attention, plus an
  /// FFN (no latent MoE). helix compile refuses the others, naming them.
  bool onlyClassicLayers(std::string *firstOther = nullptr) const;
  /// Total parameter count (embedding, layers, final norm, LM head).
  int64_t parameterCount() const;
  /// Parameters touched per token (top-k experts + shared), as usually quoted.
  int64_t activeParameterCount() const;
};

/// Multi-token-prediction layer `i` (of model.mtpLayers) of a model whose
/// `layers` are its decoder layers: shaped like model.mtpShape when set,
/// else like the last decoder layer (DeepSeek-V3's MTP module holds a full
/// MLA + MoE layer), marked isMTP,
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
/// The latent MoE's shared down and up projections and its latent norm
/// (0 when not latent).
int64_t latentProjectionParameterCount(const MoESpec &moe, int64_t hidden);
/// The DSA indexer's projections (q from the MLA's q latent, k, head
/// weights) and key norm; `attn` must be MLA with an indexer.
int64_t indexerParameterCount(const AttentionSpec &attn, int64_t hidden);
/// A linear-attention / Mamba-2 mixer: its input projections, convolution
/// and per-head parameters (`In`), and its output projection (`Out`).
int64_t linearAttentionInParameterCount(const LinearAttentionSpec &l,
                                        int64_t hidden);
int64_t linearAttentionOutParameterCount(const LinearAttentionSpec &l,
                                         int64_t hidden);
int64_t mambaInParameterCount(const MambaSpec &m, int64_t hidden);
int64_t mambaOutParameterCount(const MambaSpec &m, int64_t hidden);
/// The mixer of a layer, all of it (0 for None).
int64_t mixerParameterCount(const LayerSpec &l, int64_t hidden);

} // namespace helix

#endif // HELIX_MODEL_MODELSPEC_H
