//===- HFConfig.h - Import a Hugging Face config.json -----------*- C++ -*-===//
//
// Turns a Hugging Face `config.json` of a supported decoder-only model into a
// ModelSpec. Plain C++ (no MLIR). Errors come back as one line of text,
// "<file>: <field>: <what was expected / what is wrong>"; nothing is thrown.
// Errors about the file as a whole use the pseudo-fields "<file>" (cannot be
// read), "<json>" (not valid JSON) and "<model>" (the model as a whole).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_IMPORT_HFCONFIG_H
#define HELIX_IMPORT_HFCONFIG_H

#include "helix/Model/ModelSpec.h"

#include <string>
#include <vector>

namespace helix {

struct ImportOptions {
  /// Append the num_nextn_predict_layers multi-token-prediction layers
  /// (marked isMTP, shaped like the last decoder layer).
  bool includeMTP = false;
  /// Model name; default: the stem of the file (or source) name, e.g.
  /// "DeepSeek-R1" for ".../DeepSeek-R1.json".
  std::string name;
};

/// Reads and imports the config at `path`. On failure returns false, leaves
/// `out` unspecified and sets `error` to one line naming the file and field.
bool importHFConfigFile(const std::string &path, const ImportOptions &opts,
                        ModelSpec &out, std::string &error);

/// Imports config text; `sourceName` stands for the file in error messages
/// and gives the default model name.
bool importHFConfigString(const std::string &json,
                          const std::string &sourceName,
                          const ImportOptions &opts, ModelSpec &out,
                          std::string &error);

/// The model_type values supported, for --help text and error messages.
const std::vector<std::string> &supportedModelTypes();

} // namespace helix

#endif // HELIX_IMPORT_HFCONFIG_H
