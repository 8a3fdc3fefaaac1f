//===- FieldReader.h - Typed config.json field reads ------------*- C++ -*-===//
//
// Private to HelixImport. A FieldReader reads the fields of one JSON object
// of a config. Each read either succeeds or writes one error line
// "<source>: <prefix><field>: <what>" and returns false; callers stop at the
// first false, so no value read after a failure is ever used.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_IMPORT_FIELDREADER_H
#define HELIX_LIB_IMPORT_FIELDREADER_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace helix {
namespace import {

/// Largest value accepted for any size or count: anything above is
/// certainly a mistake (and would overflow parameter counts).
constexpr int64_t kMaxSize = int64_t(1) << 40;

/// Lower bound of a number read as a double.
enum class Bound { Positive, NonNegative, Any };

/// Short description of a JSON value for messages: 4096.5, null, true,
/// string "4096", an array, an object.
std::string describeValue(const nlohmann::json &value);

class FieldReader {
public:
  FieldReader(const nlohmann::json &object, const std::string &source,
              std::string &error, std::string prefix = "");

  /// The value of `key`, or nullptr when absent.
  const nlohmann::json *find(const char *key) const;
  /// Present and not null.
  bool has(const char *key) const;

  /// Integers in [min, max]. The required form rejects absent and null; the
  /// optional form gives `dflt` for absent and null.
  bool getInt(const char *key, int64_t &out, int64_t min = 1,
              int64_t max = kMaxSize) const;
  bool getOptInt(const char *key, int64_t &out, int64_t dflt, int64_t min = 1,
                 int64_t max = kMaxSize) const;
  /// Numbers (integer or float JSON literals), finite.
  bool getDouble(const char *key, double &out,
                 Bound bound = Bound::Positive) const;
  bool getOptDouble(const char *key, double &out, double dflt,
                    Bound bound = Bound::Positive) const;
  bool getOptBool(const char *key, bool &out, bool dflt) const;
  /// Non-empty strings.
  bool getString(const char *key, std::string &out) const;
  bool getOptString(const char *key, std::string &out,
                    const std::string &dflt) const;
  /// Arrays; absent and null give an empty array and `present` = false.
  bool getOptIntArray(const char *key, std::vector<int64_t> &out, bool &present,
                      int64_t min = 0, int64_t max = kMaxSize) const;
  bool getOptStringArray(const char *key, std::vector<std::string> &out,
                         bool &present) const;
  /// Arrays of numbers where Python's Infinity and -Infinity are allowed
  /// (ConfigText.cpp quotes them), NaN never; absent and null give an
  /// empty array and `present` = false.
  bool getOptExtendedDoubleArray(const char *key, std::vector<double> &out,
                                 bool &present) const;
  /// Nested object; absent and null give nullptr.
  bool getOptObject(const char *key, const nlohmann::json *&out) const;
  /// A reader of a nested object whose field names are prefixed "key.".
  FieldReader nested(const char *key, const nlohmann::json &object) const;

  /// Records "<source>: <prefix><field>: <what>" (unless an error is already
  /// recorded) and returns false.
  bool fail(const std::string &field, const std::string &what) const;

  const std::string &source() const { return source_; }

private:
  bool checkInt(const std::string &field, const nlohmann::json &value,
                int64_t &out, int64_t min, int64_t max) const;
  bool checkDouble(const std::string &field, const nlohmann::json &value,
                   double &out, Bound bound) const;

  const nlohmann::json &object_;
  const std::string &source_;
  std::string &error_;
  std::string prefix_;
};

} // namespace import
} // namespace helix

#endif // HELIX_LIB_IMPORT_FIELDREADER_H
