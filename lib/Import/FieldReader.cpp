//===- FieldReader.cpp - Typed config.json field reads --------------------===//

#include "FieldReader.h"

#include <cmath>
#include <limits>

namespace helix {
namespace import {

using nlohmann::json;

std::string describeValue(const json &value) {
  switch (value.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return value.get<bool>() ? "true" : "false";
  case json::value_t::string: {
    std::string text = value.dump();
    if (text.size() > 40)
      text = text.substr(0, 36) + "...\"";
    return "string " + text;
  }
  case json::value_t::array:
    return "an array";
  case json::value_t::object:
    return "an object";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
  case json::value_t::number_float:
    return value.dump();
  default:
    return value.type_name();
  }
}

static std::string expectedInt(int64_t min) {
  if (min == 1)
    return "a positive integer";
  if (min == 0)
    return "a non-negative integer";
  return "an integer >= " + std::to_string(min);
}

FieldReader::FieldReader(const json &object, const std::string &source,
                         std::string &error, std::string prefix)
    : object_(object), source_(source), error_(error),
      prefix_(std::move(prefix)) {}

const json *FieldReader::find(const char *key) const {
  if (!object_.is_object())
    return nullptr;
  auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

bool FieldReader::has(const char *key) const {
  const json *v = find(key);
  return v && !v->is_null();
}

bool FieldReader::fail(const std::string &field,
                       const std::string &what) const {
  if (error_.empty())
    error_ = source_ + ": " + prefix_ + field + ": " + what;
  return false;
}

FieldReader FieldReader::nested(const char *key, const json &object) const {
  return FieldReader(object, source_, error_, prefix_ + key + ".");
}

bool FieldReader::checkInt(const std::string &field, const json &value,
                           int64_t &out, int64_t min, int64_t max) const {
  if (!value.is_number_integer())
    return fail(field, "expected " + expectedInt(min) + ", got " +
                           describeValue(value));
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return fail(field, "unreasonably large value " + value.dump() +
                             " (the limit is 2^40)");
    out = static_cast<int64_t>(u);
  } else {
    out = value.get<int64_t>();
  }
  if (out < min)
    return fail(field,
                "expected " + expectedInt(min) + ", got " + value.dump());
  if (out > max) {
    if (max == kMaxSize)
      return fail(field, "unreasonably large value " + value.dump() +
                             " (the limit is 2^40)");
    return fail(field, "expected at most " + std::to_string(max) + ", got " +
                           value.dump());
  }
  return true;
}

bool FieldReader::getInt(const char *key, int64_t &out, int64_t min,
                         int64_t max) const {
  const json *v = find(key);
  if (!v)
    return fail(key, "missing required field, expected " + expectedInt(min));
  return checkInt(key, *v, out, min, max);
}

bool FieldReader::getOptInt(const char *key, int64_t &out, int64_t dflt,
                            int64_t min, int64_t max) const {
  const json *v = find(key);
  if (!v || v->is_null()) {
    out = dflt;
    return true;
  }
  return checkInt(key, *v, out, min, max);
}

bool FieldReader::checkDouble(const std::string &field, const json &value,
                              double &out, Bound bound) const {
  const char *expected = bound == Bound::Positive      ? "a positive number"
                         : bound == Bound::NonNegative ? "a non-negative number"
                                                       : "a number";
  if (!value.is_number())
    return fail(field, std::string("expected ") + expected + ", got " +
                           describeValue(value));
  out = value.get<double>();
  bool ok = std::isfinite(out) &&
            (bound == Bound::Any || (bound == Bound::Positive && out > 0) ||
             (bound == Bound::NonNegative && out >= 0));
  if (!ok)
    return fail(field,
                std::string("expected ") + expected + ", got " + value.dump());
  return true;
}

bool FieldReader::getDouble(const char *key, double &out, Bound bound) const {
  const json *v = find(key);
  if (!v)
    return fail(key, "missing required field, expected a number");
  return checkDouble(key, *v, out, bound);
}

bool FieldReader::getOptDouble(const char *key, double &out, double dflt,
                               Bound bound) const {
  const json *v = find(key);
  if (!v || v->is_null()) {
    out = dflt;
    return true;
  }
  return checkDouble(key, *v, out, bound);
}

bool FieldReader::getOptBool(const char *key, bool &out, bool dflt) const {
  const json *v = find(key);
  if (!v || v->is_null()) {
    out = dflt;
    return true;
  }
  if (!v->is_boolean())
    return fail(key, "expected true or false, got " + describeValue(*v));
  out = v->get<bool>();
  return true;
}

bool FieldReader::getString(const char *key, std::string &out) const {
  const json *v = find(key);
  if (!v)
    return fail(key, "missing required field, expected a string");
  if (!v->is_string() || v->get_ref<const std::string &>().empty())
    return fail(key, "expected a non-empty string, got " + describeValue(*v));
  out = v->get<std::string>();
  return true;
}

bool FieldReader::getOptString(const char *key, std::string &out,
                               const std::string &dflt) const {
  if (!has(key)) {
    out = dflt;
    return true;
  }
  return getString(key, out);
}

bool FieldReader::getOptIntArray(const char *key, std::vector<int64_t> &out,
                                 bool &present, int64_t min,
                                 int64_t max) const {
  out.clear();
  present = has(key);
  if (!present)
    return true;
  const json &v = *find(key);
  if (!v.is_array())
    return fail(key, "expected an array of integers, got " + describeValue(v));
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t x = 0;
    if (!checkInt(std::string(key) + "[" + std::to_string(i) + "]", v[i], x,
                  min, max))
      return false;
    out.push_back(x);
  }
  return true;
}

bool FieldReader::getOptExtendedDoubleArray(const char *key,
                                            std::vector<double> &out,
                                            bool &present) const {
  out.clear();
  present = has(key);
  if (!present)
    return true;
  const json &v = *find(key);
  if (!v.is_array())
    return fail(key, "expected an array of numbers, got " + describeValue(v));
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string field = std::string(key) + "[" + std::to_string(i) + "]";
    if (v[i].is_string() && (v[i] == "Infinity" || v[i] == "-Infinity")) {
      out.push_back(v[i] == "Infinity"
                        ? std::numeric_limits<double>::infinity()
                        : -std::numeric_limits<double>::infinity());
      continue;
    }
    double x = 0;
    if (!checkDouble(field, v[i], x, Bound::Any))
      return false;
    out.push_back(x);
  }
  return true;
}

bool FieldReader::getOptStringArray(const char *key,
                                    std::vector<std::string> &out,
                                    bool &present) const {
  out.clear();
  present = has(key);
  if (!present)
    return true;
  const json &v = *find(key);
  if (!v.is_array())
    return fail(key, "expected an array of strings, got " + describeValue(v));
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string())
      return fail(std::string(key) + "[" + std::to_string(i) + "]",
                  "expected a string, got " + describeValue(v[i]));
    out.push_back(v[i].get<std::string>());
  }
  return true;
}

bool FieldReader::getOptObject(const char *key, const json *&out) const {
  out = nullptr;
  if (!has(key))
    return true;
  const json &v = *find(key);
  if (!v.is_object())
    return fail(key, "expected an object or null, got " + describeValue(v));
  out = &v;
  return true;
}

} // namespace import
} // namespace helix
