//===- JSONParse.h - JSON text with numbers checked -------------*- C++ -*-===//
//
// nlohmann::json::parse throws json::out_of_range for a number beyond a
// double ("value": 1e999). parseJSONChecked turns that into an error naming
// the field, for every reader of JSON files (hardware, config.json).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_JSONPARSE_H
#define HELIX_COMMON_JSONPARSE_H

#include <nlohmann/json.hpp>

#include <string>

namespace helix {

/// Parses `text` into `root`. A number outside the double range gives false
/// and `error` = "field 'a.b[2].value': number 1e999 is outside the range of
/// a double (about 1.8e308)". Malformed JSON throws json::parse_error as
/// json::parse does, for the caller to word.
bool parseJSONChecked(const std::string &text, nlohmann::json &root,
                      std::string &error);

/// parseJSONChecked for a file whose top level must be an object, every
/// error one line starting with `origin`: "ORIGIN: not valid JSON (byte N)",
/// "ORIGIN: the top level must be a JSON object", or the range error.
bool parseJSONObject(const std::string &text, const std::string &origin,
                     nlohmann::json &root, std::string &error);

/// A string read from JSON (a key, a name) as JSON escapes it, without the
/// quotes: control characters, '"' and '\\' escaped, so that an error
/// quoting it stays one line ("a\nb" stays a\nb).
std::string escapeJSONText(const std::string &text);

} // namespace helix

#endif // HELIX_COMMON_JSONPARSE_H
