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
    {"llama", importLlamaLike},      {"mistral", importLlamaLike},
    {"qwen2", importLlamaLike},      {"qwen3", importLlamaLike},
    {"qwen3_moe", importSimpleMoE},  {"mixtral", importSimpleMoE},
    {"deepseek_v2", importDeepSeek}, {"deepseek_v3", importDeepSeek},
    {"kimi_k2", importDeepSeek},     {"gpt_oss", importGptOss},
};

const std::vector<std::string> &supportedModelTypes() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> v;
    for (const Family &f : kFamilies)
      v.push_back(f.modelType);
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
  if (!r.getOptInt("num_nextn_predict_layers", count, 0, 0, kMaxLayers))
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
  const Family *family = nullptr;
  for (const Family &f : kFamilies)
    if (modelType == f.modelType)
      family = &f;
  if (!family)
    return r.fail("model_type",
                  "unsupported model type \"" + modelType +
                      "\", expected one of: " + joinedModelTypes());
  ModelSpec m;
  m.modelType = modelType;
  if (!family->importer(r, modelType, m) ||
      !appendMTPLayers(r, opts.includeMTP, m) ||
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

bool importHFConfigFile(const std::string &path, const ImportOptions &opts,
                        ModelSpec &out, std::string &error) {
  error.clear();
  std::string text;
  bool ok = false;
  try {
    if (!readConfigFile(path, text, error))
      return finish(false, path, error);
    ok = importHFConfigString(text, path, opts, out, error);
  } catch (const std::exception &e) {
    error = path + ": <file>: internal error: " + e.what();
  } catch (...) {
    error = path + ": <file>: internal error";
  }
  return finish(ok, path, error);
}

} // namespace helix
