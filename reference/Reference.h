//===- Reference.h - Unsharded plain-loops model reference ------*- C++ -*-===//
//
// An independent implementation of the decoder architectures helix
// supports, written from the Hugging Face modeling code
// (modeling_llama / mistral / qwen2 / qwen3, modeling_mixtral,
// modeling_qwen3_moe, modeling_deepseek_v2 / v3, modeling_gpt_oss,
// modeling_qwen3_next) and DeepSeek-V3.2's inference code: one process,
// whole tensors, plain loops accumulating in double, and MLA in its
// original (non-absorbed) form. It shares nothing with the runtime's kernels
// or number-format codecs; only the safetensors reader (stored bytes) and the
// decode file formats are common.
//
// Long-context architectures:
//   - DeepSeek Sparse Attention (deepseek_v32; glm_moe_dsa, whose "S"
//     layers reuse the previous layer's selection): per MLA layer a
//     lightning indexer (self_attn.indexer.*: wq_b on the MLA's normalised
//     q latent, wk + LayerNorm k_norm, weights_proj) scores every cached
//     token, s_t = sum_h w_h relu(q_h . k_t), and the MLA attends to the
//     index_topk best only (ties to the lower position; every token while
//     the context is at most index_topk long). Index keys are kept in f32
//     (DeepSeek's FP8 index-key cache and Hadamard rotation are not
//     modelled; the rotation leaves q . k unchanged).
//   - Qwen3-Next / Qwen3.5 (qwen3_next, qwen3_5, qwen3_5_moe): Gated
//     DeltaNet layers (linear_attn.*: in_proj_qkvz / in_proj_ba grouped per
//     key head, causal depthwise conv1d + SiLU, L2-normalised q / k, the
//     gated delta rule on an f32 [dk, dv] state per value head, the gated
//     RMSNorm and out_proj), full attention with a sigmoid output gate
//     (q_proj yields [query; gate] per head), per-head q/k norms and
//     partial RoPE, zero-centred RMSNorms (applied as 1 + w), and an MoE
//     with one shared expert scaled by sigmoid(shared_expert_gate(x)).
//     Its multi-token-prediction module (mtp.*) is not implemented.
// Kimi Delta Attention, Mamba-2 and latent MoE are refused at load.
//
// Checkpoints (docs/quantization.md; Weights.h): bf16 / f16 / f32, and the
// quantized fp8-block (quant_method "fp8", F8_E4M3 + weight_scale_inv per
// weight_block_size block), fp8-tensor (modelopt FP8, F8_E4M3 +
// weight_scale), nvfp4 (modelopt NVFP4, packed E2M1 + E4M3 weight_scale per
// 16 values + F32 weight_scale_2) and mxfp4 (gpt-oss experts' _blocks +
// E8M0 _scales, stored [E, out, in] and transposed to the bf16 layout).
// Every quantized tensor is dequantized to f32 once at load with the
// reference's own decoders (Formats.h); which tensors are quantized is read
// from each tensor's stored dtype and cross-checked with config.json's
// quantization_config; contradictions, missing or misshapen scales and
// unknown formats are errors.
//
// KV cache (`--kv-dtype`, Formats.h roundKv): f32 (default) keeps K and V as
// computed; bf16 (nearest even), fp8 (E4M3, scale 1.0, saturating) and fp4
// (NVFP4: E4M3 scale e4m3(amax/6) per 16 values along each head, E2M1
// values) round them when they are appended, and attention reads the
// rounded values back, the new token's own included. Standard attention
// rounds K after RoPE (and QK-norm) and V, per KV head. MLA rounds what a
// real MLA cache stores, the per-token vector [normalized kv_a latent
// (kv_lora_rank), roped k_pe (qk_rope_head_dim)], as one vector (fp4 blocks
// along it), before kv_b_proj decompresses it; the reference keeps the
// decompressed K / V of that rounded latent per position, which equals
// re-expanding a latent cache at every step. fp4 needs the head dims (MLA:
// kv_lora_rank + qk_rope_head_dim) to be multiples of 16. DSA's index keys
// and the Gated DeltaNet's convolution and recurrent states are not
// rounded.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_REFERENCE_REFERENCE_H
#define HELIX_REFERENCE_REFERENCE_H

#include "Formats.h"
#include "Weights.h"

#include "helix/Model/ModelSpec.h"
#include "helix/Runtime/Safetensors.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace helix {
namespace reference {

class ReferenceModel {
public:
  /// Loads every tensor the architecture needs, dequantizing quantized
  /// checkpoints (Weights.h); throws rt::Error on a missing tensor, a wrong
  /// shape, a malformed quantized tensor or an unsupported feature (also
  /// --kv-dtype fp4 with a cached head not a multiple of 16 long).
  /// `withMTP` also loads the model's first multi-token-prediction layer
  /// (DeepSeek-V3's MTP module, model.layers.<num_hidden_layers>.*).
  ReferenceModel(const ModelSpec &spec, const nlohmann::json &config,
                 const rt::SafetensorsCheckpoint &ckpt, int64_t batch,
                 KvDtype kvDtype = KvDtype::F32, bool withMTP = false);
  ~ReferenceModel();

  /// Feeds `token` at `position` to batch row `row` (positions must come in
  /// order 0, 1, 2, ... per row) and returns the logits [vocab].
  std::vector<float> step(int64_t row, int64_t token, int64_t position);
  /// The final norm's output of row `row`'s last step: what the LM head
  /// read, and what the MTP layer reads as the main model's hidden state.
  const std::vector<float> &lastHidden(int64_t row) const {
    return lastHidden_.at(row);
  }

  /// The MTP layer on the pair (hidden state of position `position`, the
  /// token at position + 1) of row `row`, at `position` of its own KV cache
  /// (a position fed again replaces itself and what came after it):
  /// eh_proj([enorm(embed(token)); hnorm(hidden)]), the decoder layer,
  /// shared_head.norm and shared_head.head. Returns the logits (its
  /// guess of the token at position + 2) and the layer's output hidden
  /// state (before shared_head.norm: what a next draft reads).
  struct MTPOutput {
    std::vector<float> logits, hidden;
  };
  MTPOutput mtpStep(int64_t row, int64_t token, int64_t position,
                    const std::vector<float> &hidden);

  int64_t vocabSize() const { return spec_.vocabSize; }

  /// Testing: `false` makes DeepSeek Sparse Attention's layers attend to
  /// every cached token (the indexer still runs, its selection is
  /// ignored): dense MLA, as DeepSeek-V3.
  void setSparseSelection(bool on) { sparseSelection_ = on; }

private:
  struct Layer;
  struct RowCache;
  ModelSpec spec_;
  LayerSpec mtpSpec_;
  std::string type_;
  std::string topkMethod_;
  double swigluLimit_ = 7.0;
  KvDtype kvDtype_ = KvDtype::F32;
  bool sparseSelection_ = true;
  Mat embed_, finalNorm_, lmHead_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<std::unique_ptr<RowCache>> rows_;
  std::vector<std::vector<float>> lastHidden_;
  // The MTP layer (withMTP) and its KV cache per row.
  std::unique_ptr<Layer> mtp_;
  Mat mtpEmbed_, enorm_, hnorm_, ehProj_, sharedNorm_, sharedHead_;
  std::vector<std::unique_ptr<RowCache>> mtpRows_;

  std::unique_ptr<Layer> loadLayer(const WeightLoader &W,
                                   const rt::SafetensorsCheckpoint &ckpt,
                                   const LayerSpec &ls);
  /// A decoder RMSNorm weight [n] as applied: w, or 1 + w where the
  /// model's norms are zero-centred (ModelSpec::zeroCenteredNorms).
  Mat decoderNorm(const WeightLoader &W, const std::string &name,
                  int64_t n) const;
  /// A decoder layer on the residual stream `h` at `pos`.
  std::vector<float> decoderLayer(Layer &l, RowCache &c, size_t li,
                                  std::vector<float> h, int64_t pos);

  std::vector<float> attention(Layer &l, RowCache &c, size_t li,
                               const std::vector<float> &x, int64_t pos);
  std::vector<float> mla(Layer &l, RowCache &c, size_t li,
                         const std::vector<float> &x, int64_t pos);
  /// DSA's lightning indexer of an MLA layer at `pos`: caches the token's
  /// index key and returns the positions the layer attends to, ascending.
  std::vector<int64_t> indexerSelect(Layer &l, RowCache &c, size_t li,
                                     const std::vector<float> &x,
                                     const std::vector<float> &qr, int64_t pos);
  std::vector<float> gatedDeltaNet(Layer &l, RowCache &c, size_t li,
                                   const std::vector<float> &x, int64_t pos);
  std::vector<float> ffn(Layer &l, const std::vector<float> &x);
  std::vector<float> moe(Layer &l, const std::vector<float> &x);
};

} // namespace reference
} // namespace helix

#endif // HELIX_REFERENCE_REFERENCE_H
