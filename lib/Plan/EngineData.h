//===- EngineData.h - Each engine's rules, read from data/engines -*- C++ -*-=//
//
// Private to lib/Plan. data/engines/<engine>.json (embedded at build time)
// holds what helix knows of each serving engine's configuration: the flags
// or keys it writes, their types and allowed values and the engine versions
// that have them, the KV cache formats per attention kind, and the rules
// that relate them (divisibility, what must hold under context
// parallelism), each with its source. The writer (EngineConfig*.cpp) takes
// flag names and KV formats from here and checks the files it writes
// against the rules; the validator (`helix validate-config`) checks any
// file against the same data.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_PLAN_ENGINEDATA_H
#define HELIX_LIB_PLAN_ENGINEDATA_H

#include "EngineConfigRules.h"

#include <map>
#include <string>
#include <vector>

namespace helix {
namespace engine {

struct FieldSpec {
  std::string name; // "--tensor-parallel-size", "cp_config.cp_type"
  std::string var;  // what rules call it: "tp"
  std::string type; // int, enum, flag, bool, json, string, list
  int64_t min = 0;
  std::vector<std::string> values; // enum
  std::string defaultValue;        // "" when none
  std::string since, until;        // versions ("" = always)
  std::string file;                // "" (the main file) or "disagg"
  std::string source;
};

struct RuleSpec {
  std::string when, check, text, source;
};

struct KVDTypes {
  std::vector<std::string> values;
  std::string why, source;
};

struct EngineData {
  std::string engine, syntax, command, defaultVersion;
  std::vector<std::pair<std::string, std::string>> versions; // name, source
  std::vector<FieldSpec> fields;
  std::map<std::string, KVDTypes> kvDTypes; // "mla", "gqa"
  std::vector<RuleSpec> rules;

  /// The version's position in `versions`, -1 when unknown.
  int versionIndex(const std::string &version) const;
  /// Whether `f` exists in `version`.
  bool has(const FieldSpec &f, const std::string &version) const;
  /// The field named `name`, or the one `var` names in `version`.
  const FieldSpec *field(const std::string &name) const;
  const FieldSpec *fieldFor(const std::string &var,
                            const std::string &version) const;
};

/// The engine's data (parsed once; a malformed embedded file is a build
/// bug and aborts with its error).
const EngineData &engineData(Engine engine);

/// A configuration file read back: each field's value and line.
struct FieldValue {
  std::string text;
  int line = 0;
};
struct ParsedFile {
  std::map<std::string, FieldValue> values; // by field name
  std::vector<std::string> problems;        // "line N: ..."
  bool disagg = false; // a trtllm-serve disaggregated front-end file
};
ParsedFile parseEngineFile(const EngineData &data, const std::string &text);

/// Checks a parsed file against `data` for `version`: known fields, types,
/// allowed values, the KV format for the model's attention, the rules.
/// `checkKV` false skips the KV format (the writer substitutes FP8 itself).
std::vector<std::string> checkEngineFile(const EngineData &data,
                                         const std::string &version,
                                         const ModelFacts &m,
                                         const ParsedFile &file,
                                         bool checkKV = true);

} // namespace engine
} // namespace helix

#endif // HELIX_LIB_PLAN_ENGINEDATA_H
