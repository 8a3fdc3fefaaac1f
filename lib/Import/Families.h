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
