//===- Families.h - Pieces that importHFConfig* composes --------*- C++ -*-===//
//
// Private to HelixImport: one importer per model family (each fills a whole
// ModelSpec except name and MTP layers), reading the file and parsing its
// JSON, and the final plausibility check.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_IMPORT_FAMILIES_H
#define HELIX_LIB_IMPORT_FAMILIES_H

#include "FieldReader.h"

#include "helix/Model/ModelSpec.h"

namespace helix {
namespace import {

/// Imports the top-level object read by `r`, of the given model_type.
using FamilyImporter = bool (*)(const FieldReader &r,
                                const std::string &modelType, ModelSpec &m);

/// llama, mistral, qwen2, qwen3 (LlamaLike.cpp).
bool importLlamaLike(const FieldReader &r, const std::string &modelType,
                     ModelSpec &m);
/// mixtral, qwen3_moe (SimpleMoE.cpp).
bool importSimpleMoE(const FieldReader &r, const std::string &modelType,
                     ModelSpec &m);
/// deepseek_v2, deepseek_v3, kimi_k2 (DeepSeek.cpp).
bool importDeepSeek(const FieldReader &r, const std::string &modelType,
                    ModelSpec &m);
/// deepseek_v32, glm_moe_dsa: the same with DeepSeek Sparse Attention.
/// MLA's fields (num_attention_heads, q_lora_rank, kv_lora_rank,
/// qk_nope_head_dim, qk_rope_head_dim, v_head_dim, attention_bias;
/// DeepSeek.cpp), shared with Kimi Linear.
bool readMLA(const FieldReader &r, AttentionSpec &attn);
/// qwen3_next, qwen3_5(_text), qwen3_5_moe(_text): Gated DeltaNet + gated
/// attention (QwenNext.cpp).
bool importQwenNext(const FieldReader &r, const std::string &modelType,
                    ModelSpec &m);
/// kimi_linear: KDA + MLA, latent MoE (KimiLinear.cpp).
bool importKimiLinear(const FieldReader &r, const std::string &modelType,
                      ModelSpec &m);
/// nemotron_h: Mamba-2, attention, MoE and MLP blocks (NemotronH.cpp).
bool importNemotronH(const FieldReader &r, const std::string &modelType,
                     ModelSpec &m);
/// gpt_oss (GptOss.cpp).
bool importGptOss(const FieldReader &r, const std::string &modelType,
                  ModelSpec &m);

/// Reads the whole file (ConfigText.cpp); errors name the "<file>".
bool readConfigFile(const std::string &path, std::string &text,
                    std::string &error);
/// Parses config text into a JSON object (ConfigText.cpp); errors name
/// "<json>" and say where parsing stopped.
bool parseConfigText(const std::string &text, const std::string &source,
                     nlohmann::json &root, std::string &error);

/// Rejects models whose parameter count would not fit comfortably in
/// int64 arithmetic (SizeCheck.cpp).
bool checkModelSize(const ModelSpec &m, const std::string &source,
                    std::string &error);

} // namespace import
} // namespace helix

#endif // HELIX_LIB_IMPORT_FAMILIES_H
