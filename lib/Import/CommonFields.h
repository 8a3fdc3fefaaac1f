//===- CommonFields.h - Readers shared by the model families ----*- C++ -*-===//
//
// Private to HelixImport. Readers for the fields that several model families
// spell the same way, the per-layer patterns (sliding windows, dense/MoE
// placement) and the assembly of ModelSpec layers. Every function returns
// false after recording one error line through the FieldReader.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_IMPORT_COMMONFIELDS_H
#define HELIX_LIB_IMPORT_COMMONFIELDS_H

#include "FieldReader.h"

#include "helix/Model/ModelSpec.h"

namespace helix {
namespace import {

/// Most decoder layers (or MTP layers) accepted.
constexpr int64_t kMaxLayers = int64_t(1) << 16;

/// Defaults of a family for fields that may be left out.
struct FamilyDefaults {
  double ropeTheta = rope_defaults::kTheta;
  double rmsNormEps = 1e-6;
};

//===--- Whole-model fields ---------------------------------------------===//

/// hidden_size, vocab_size, max_position_embeddings, rms_norm_eps,
/// tie_word_embeddings, torch_dtype (or dtype), quantization_config and
/// num_hidden_layers (returned in `numLayers`).
bool readModelBasics(const FieldReader &r, const FamilyDefaults &defaults,
                     ModelSpec &m, int64_t &numLayers);

/// quantization_config: the method, the checkpoint format it implies
/// (ModelSpec::quantFormat; empty for methods programs cannot load, which
/// helix compile refuses) and the modules it leaves unquantized.
bool readQuantization(const FieldReader &q, ModelSpec &m);

/// rope_theta and rope_scaling (or the newer rope_parameters).
bool readRope(const FieldReader &r, double defaultTheta, int64_t maxPosition,
              RopeSpec &rope);

//===--- Attention and MLP ----------------------------------------------===//

/// MHA / MQA / GQA from the query and KV head counts.
AttentionKind attentionKindFor(int64_t numHeads, int64_t numKVHeads);

/// num_attention_heads, num_key_value_heads (default: = heads) and head_dim
/// (default: hidden / heads) of a non-MLA attention.
bool readStandardAttention(const FieldReader &r, int64_t hidden,
                           AttentionSpec &attn);

/// hidden_act (default "silu").
bool readActivation(const FieldReader &r, std::string &activation);

/// intermediate_size and hidden_act of the dense MLP; intermediate_size is
/// required only when `needed` (some layer is dense).
bool readDenseFFN(const FieldReader &r, bool needed, FFNSpec &ffn);

/// Routed experts: count `expertsKey` (>= 1), top-k `topKKey` (1..count),
/// per-expert intermediate `interKey`, and hidden_act.
bool readRoutedExperts(const FieldReader &r, const char *expertsKey,
                       const char *topKKey, const char *interKey, MoESpec &moe);

//===--- Per-layer patterns (LayerPatterns.cpp) --------------------------===//

/// Mistral/Mixtral: sliding_window (null or absent: full) on every layer.
bool readUniformWindow(const FieldReader &r, int64_t numLayers,
                       std::vector<int64_t> &window);

/// Qwen2/Qwen3: sliding_window applies only when use_sliding_window is true,
/// to layers >= max_window_layers, or to the "sliding_attention" entries of
/// layer_types when that is given.
bool readQwenWindows(const FieldReader &r, int64_t numLayers,
                     std::vector<int64_t> &window);

/// layer_types: one "full_attention" / "sliding_attention" per layer.
/// `present` is false when the field is absent or null.
bool readLayerTypes(const FieldReader &r, int64_t numLayers,
                    std::vector<bool> &sliding, bool &present);

/// Window per layer from sliding flags: sliding_window (required when some
/// layer slides) for sliding layers, 0 for the others.
bool windowsFromSliding(const FieldReader &r, const std::vector<bool> &sliding,
                        std::vector<int64_t> &window);

//===--- Assembly -------------------------------------------------------===//

/// Fills m.layers: layer i gets `attn` with window[i], and `moe` when
/// isMoE[i], else `ffn`.
void buildLayers(const AttentionSpec &attn, const FFNSpec &ffn,
                 const MoESpec &moe, const std::vector<int64_t> &window,
                 const std::vector<bool> &isMoE, ModelSpec &m);

} // namespace import
} // namespace helix

#endif // HELIX_LIB_IMPORT_COMMONFIELDS_H
