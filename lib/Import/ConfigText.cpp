//===- ConfigText.cpp - Read a config file and parse its JSON -------------===//

#include "Families.h"

#include "helix/Common/JSONParse.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace helix {
namespace import {

using nlohmann::json;

/// A config.json is a few KiB; anything this big is the wrong file.
static constexpr size_t kMaxFileBytes = size_t(16) << 20;
/// Configs nest objects a few levels deep; refuse pathological nesting
/// before the parser sees it.
static constexpr int kMaxDepth = 64;

bool readConfigFile(const std::string &path, std::string &text,
                    std::string &error) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string &what) {
    error = path + ": <file>: " + what;
    return false;
  };
  if (path.empty())
    return fail("empty path, expected a config.json file");
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found)
    return fail("no such file");
  if (ec)
    return fail("cannot access: " + ec.message());
  if (fs::is_directory(status))
    return fail("is a directory, expected a config.json file");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(std::string("cannot open: ") +
                (errno ? std::strerror(errno) : "unknown error"));
  text.clear();
  char buffer[1 << 16];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes)
      return fail("larger than 16 MiB, expected a config.json of a few KiB");
  }
  if (in.bad())
    return fail("read error");
  return true;
}

/// The reason part of a nlohmann parse error, printable ASCII only.
static std::string parseErrorReason(const std::string &what) {
  std::string reason = what;
  size_t p = reason.find("] ");
  if (p != std::string::npos)
    reason = reason.substr(p + 2);
  // "parse error at line 1, column 35: syntax error ..." -> "syntax error ..."
  if (reason.rfind("parse error", 0) == 0) {
    p = reason.find(": ");
    if (p != std::string::npos)
      reason = reason.substr(p + 2);
  }
  if (reason.size() > 160)
    reason = reason.substr(0, 157) + "...";
  for (char &c : reason)
    if (static_cast<unsigned char>(c) < 0x20 ||
        static_cast<unsigned char>(c) >= 0x7f)
      c = '?';
  return reason;
}

/// Byte offset of the first bracket nested deeper than kMaxDepth, or npos.
static size_t findDeepNesting(const std::string &text) {
  int depth = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      if (++depth > kMaxDepth)
        return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return std::string::npos;
}

/// Python's json.dump writes the non-finite floats as the bare words
/// Infinity, -Infinity and NaN (Nemotron-H's "time_step_limit": [0.0,
/// Infinity]), which JSON does not have. Outside strings they become the
/// strings "Infinity", "-Infinity" and "NaN", which the fields that accept
/// them read (FieldReader::getOptExtendedDouble) and every other numeric
/// field refuses as a string.
static std::string quotePythonNonFinite(const std::string &text) {
  std::string out;
  out.reserve(text.size() + 16);
  bool inString = false, escaped = false;
  auto wordAt = [&](size_t i, const char *word) {
    size_t n = std::strlen(word);
    if (text.compare(i, n, word) != 0)
      return size_t(0);
    char next = i + n < text.size() ? text[i + n] : ' ';
    return std::isalnum(static_cast<unsigned char>(next)) ? size_t(0) : n;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        inString = false;
      out += c;
      continue;
    }
    if (c == '"') {
      inString = true;
      out += c;
      continue;
    }
    size_t n = 0;
    for (const char *word : {"-Infinity", "Infinity", "NaN"})
      if ((n = wordAt(i, word)) != 0)
        break;
    if (n == 0) {
      out += c;
      continue;
    }
    out += '"';
    out.append(text, i, n);
    out += '"';
    i += n - 1;
  }
  return out;
}

bool parseConfigText(const std::string &rawText, const std::string &source,
                     json &root, std::string &error) {
  const std::string text = quotePythonNonFinite(rawText);
  auto fail = [&](const std::string &what) {
    error = source + ": <json>: " + what;
    return false;
  };
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return fail("the file is empty, expected a JSON object");
  size_t deep = findDeepNesting(text);
  if (deep != std::string::npos)
    return fail("nested deeper than " + std::to_string(kMaxDepth) +
                " levels at byte " + std::to_string(deep + 1) +
                ", expected a config object");
  try {
    std::string overflow;
    if (!parseJSONChecked(text, root, overflow))
      return fail(overflow);
  } catch (const json::parse_error &e) {
    size_t byte = std::min<size_t>(e.byte, text.size());
    size_t line = 1, lineStart = 0;
    for (size_t i = 0; i + 1 < byte; ++i)
      if (text[i] == '\n') {
        ++line;
        lineStart = i + 1;
      }
    size_t column = byte > lineStart ? byte - lineStart : 1;
    return fail("malformed JSON at line " + std::to_string(line) + ", column " +
                std::to_string(column) + " (byte " + std::to_string(e.byte) +
                "): " + parseErrorReason(e.what()));
  }
  if (!root.is_object())
    return fail("expected a JSON object at the top level, got " +
                describeValue(root));
  return true;
}

} // namespace import
} // namespace helix
