//===- HFConfig.cpp - Import a Hugging Face config.json -------------------===//
//
// The public entry points: read the file, parse the JSON, dispatch on
// model_type to a family importer, append MTP layers, check plausibility.
//
//===----------------------------------------------------------------------===//

#include "helix/Import/HFConfig.h"

#include "CommonFields.h"
#include "Families.h"

#include <exception>
#include <filesystem>

namespace helix {

using namespace import;

namespace {
struct Family {
  const char *modelType;
  FamilyImporter importer;
};
} // namespace

static const Family kFamilies[] = {
    {"llama", importLlamaLike},           {"mistral", importLlamaLike},
    {"qwen2", importLlamaLike},           {"qwen3", importLlamaLike},
    {"qwen3_moe", importSimpleMoE},       {"mixtral", importSimpleMoE},
    {"deepseek_v2", importDeepSeek},      {"deepseek_v3", importDeepSeek},
    {"kimi_k2", importDeepSeek},          {"gpt_oss", importGptOss},
    {"deepseek_v32", importDeepSeek},     {"glm_moe_dsa", importDeepSeek},
    {"qwen3_next", importQwenNext},       {"qwen3_5_text", importQwenNext},
    {"qwen3_5_moe_text", importQwenNext}, {"kimi_linear", importKimiLinear},
    {"nemotron_h", importNemotronH},
};

namespace {
/// A multimodal config whose language model sits in text_config: the text
/// config's model_type (or `textType` when it has none) picks the family.
struct Wrapper {
  const char *modelType;
  const char *textType;
};
} // namespace

static const Wrapper kWrappers[] = {
    {"qwen3_5", "qwen3_5_text"},
    {"qwen3_5_moe", "qwen3_5_moe_text"},
    {"kimi_k3", "kimi_linear"},
    {"kimi_k25", "kimi_k2"},
};

const std::vector<std::string> &supportedModelTypes() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> v;
    for (const Family &f : kFamilies)
      v.push_back(f.modelType);
    for (const Wrapper &w : kWrappers)
      v.push_back(w.modelType);
    return v;
  }();
  return types;
}

static std::string joinedModelTypes() {
  std::string s;
  for (const std::string &t : supportedModelTypes())
    s += (s.empty() ? "" : ", ") + t;
  return s;
}

/// num_nextn_predict_layers multi-token-prediction layers, each shaped like
/// the last decoder layer.
static bool appendMTPLayers(const FieldReader &r, bool include, ModelSpec &m) {
  int64_t count = 0;
  // Qwen3-Next and Qwen3.5 call them mtp_num_hidden_layers.
  const char *key = r.has("mtp_num_hidden_layers") ? "mtp_num_hidden_layers"
                                                   : "num_nextn_predict_layers";
  if (!r.getOptInt(key, count, 0, 0, kMaxLayers))
    return false;
  m.mtpLayers = count;
  if (!include || count == 0 || m.layers.empty())
    return true;
  for (int64_t i = 0; i < count; ++i)
    m.layers.push_back(mtpLayerOf(m, i));
  return true;
}

static std::string defaultName(const std::string &source,
                               const std::string &modelType) {
  // "<stdin>", "<input>": no file to name the model after.
  if (!source.empty() && source.front() == '<')
    return modelType;
  std::string stem = std::filesystem::path(source).stem().string();
  return stem.empty() ? modelType : stem;
}

/// `source` names the input in errors; `sourceName` is what the caller
/// passed (possibly empty) and gives the default model name.
static bool importObject(const nlohmann::json &root, const std::string &source,
                         const std::string &sourceName,
                         const ImportOptions &opts, ModelSpec &out,
                         std::string &error) {
  FieldReader r(root, source, error);
  std::string modelType;
  if (!r.has("model_type"))
    return r.fail("model_type", "missing required field, expected one of: " +
                                    joinedModelTypes());
  if (!r.getString("model_type", modelType))
    return false;
  // A multimodal wrapper: the language model's fields are text_config's.
  const Wrapper *wrapper = nullptr;
  for (const Wrapper &w : kWrappers)
    if (modelType == w.modelType)
      wrapper = &w;
  const nlohmann::json *textConfig = nullptr;
  if (wrapper) {
    if (!r.getOptObject("text_config", textConfig))
      return false;
    if (!textConfig)
      return r.fail("text_config", "missing, expected the language model's "
                                   "config inside this " +
                                       modelType + " config");
  }
  FieldReader text = textConfig ? r.nested("text_config", *textConfig) : r;
  std::string familyType = modelType;
  if (wrapper &&
      !text.getOptString("model_type", familyType, wrapper->textType))
    return false;
  const Family *family = nullptr;
  for (const Family &f : kFamilies)
    if (familyType == f.modelType)
      family = &f;
  if (!family)
    return (wrapper ? text : r)
        .fail("model_type", "unsupported model type \"" + familyType +
                                "\", expected one of: " + joinedModelTypes());
  ModelSpec m;
  m.modelType = modelType;
  if (!family->importer(text, familyType, m))
    return false;
  // Wrappers may keep tied embeddings and the quantization at the top
  // level (Qwen3.5: tie_word_embeddings).
  if (wrapper && !text.has("tie_word_embeddings") &&
      !r.getOptBool("tie_word_embeddings", m.tieWordEmbeddings, false))
    return false;
  const nlohmann::json *quant = nullptr;
  if (wrapper && m.quantMethod.empty() &&
      (!r.getOptObject("quantization_config", quant) ||
       (quant &&
        !readQuantization(r.nested("quantization_config", *quant), m))))
    return false;
  if (!appendMTPLayers(text, opts.includeMTP, m) ||
      !checkModelSize(m, source, error))
    return false;
  m.name = opts.name.empty() ? defaultName(sourceName, modelType) : opts.name;
  out = std::move(m);
  return true;
}

/// Makes sure a failure yields exactly one line.
static bool finish(bool ok, const std::string &source, std::string &error) {
  if (ok) {
    error.clear();
    return true;
  }
  if (error.empty())
    error = source + ": <model>: import failed";
  for (char &c : error)
    if (c == '\n' || c == '\r')
      c = ' ';
  return false;
}

bool importHFConfigString(const std::string &json,
                          const std::string &sourceName,
                          const ImportOptions &opts, ModelSpec &out,
                          std::string &error) {
  std::string source = sourceName.empty() ? "<input>" : sourceName;
  error.clear();
  bool ok = false;
  try {
    nlohmann::json root;
    ok = parseConfigText(json, source, root, error) &&
         importObject(root, source, sourceName, opts, out, error);
  } catch (const std::exception &e) {
    error = source + ": <model>: internal error: " + e.what();
  } catch (...) {
    error = source + ": <model>: internal error";
  }
  return finish(ok, source, error);
}

/// TensorRT Model Optimizer checkpoints keep their quantization in
/// hf_quant_config.json beside config.json ({"quantization": {"quant_algo",
/// "exclude_modules", ...}}), not in quantization_config: read it, as
/// "<stem>.hf_quant_config.json" or "hf_quant_config.json" next to `path`,
/// when the config has no quantization of its own.
static bool readSiblingQuantConfig(const std::string &path, ModelSpec &m,
                                   std::string &error) {
  namespace fs = std::filesystem;
  fs::path config(path);
  std::error_code ec;
  fs::path found;
  for (fs::path candidate : {config.parent_path() / (config.stem().string() +
                                                     ".hf_quant_config.json"),
                             config.parent_path() / "hf_quant_config.json"})
    if (found.empty() && fs::is_regular_file(candidate, ec))
      found = candidate;
  if (found.empty())
    return true;
  const std::string source = found.string();
  std::string text;
  nlohmann::json root;
  if (!readConfigFile(source, text, error) ||
      !parseConfigText(text, source, root, error))
    return false;
  FieldReader r(root, source, error);
  const nlohmann::json *q = nullptr;
  if (!r.getOptObject("quantization", q))
    return false;
  if (!q)
    return r.fail("quantization", "missing, expected ModelOpt's "
                                  "quantization object");
  nlohmann::json withMethod = *q;
  if (!withMethod.contains("quant_method"))
    withMethod["quant_method"] = "modelopt";
  return readQuantization(r.nested("quantization", withMethod), m);
}

bool importHFConfigFile(const std::string &path, const ImportOptions &opts,
                        ModelSpec &out, std::string &error) {
  error.clear();
  std::string text;
  bool ok = false;
  try {
    if (!readConfigFile(path, text, error))
      return finish(false, path, error);
    ok = importHFConfigString(text, path, opts, out, error) &&
         (!out.quantMethod.empty() || readSiblingQuantConfig(path, out, error));
  } catch (const std::exception &e) {
    error = path + ": <file>: internal error: " + e.what();
  } catch (...) {
    error = path + ": <file>: internal error";
  }
  return finish(ok, path, error);
}

} // namespace helix
