//===- JSONParse.cpp - JSON text with numbers checked ---------------------===//

#include "helix/Common/JSONParse.h"

#include <vector>

namespace helix {

namespace {
/// The path of the value being parsed, kept from the parser's events.
class PathTracker {
public:
  void event(nlohmann::json::parse_event_t e, const nlohmann::json &parsed) {
    using E = nlohmann::json::parse_event_t;
    switch (e) {
    case E::object_start:
      frames.push_back({false, "", 0});
      break;
    case E::array_start:
      frames.push_back({true, "", 0});
      break;
    case E::key:
      if (!frames.empty() && parsed.is_string())
        frames.back().key = parsed.get<std::string>();
      break;
    case E::object_end:
    case E::array_end:
      if (!frames.empty())
        frames.pop_back();
      elementDone();
      break;
    case E::value:
      elementDone();
      break;
    }
  }

  std::string path() const {
    std::string p;
    for (const Frame &f : frames)
      p += f.array ? "[" + std::to_string(f.count) + "]"
                   : (p.empty() ? "" : ".") + escapeJSONText(f.key);
    return p.empty() ? "<top level>" : p;
  }

private:
  struct Frame {
    bool array;
    std::string key;
    size_t count; // elements of an array parsed so far
  };
  void elementDone() {
    if (!frames.empty() && frames.back().array)
      ++frames.back().count;
  }
  std::vector<Frame> frames;
};
} // namespace

std::string escapeJSONText(const std::string &text) {
  std::string quoted = nlohmann::json(text).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return quoted.substr(1, quoted.size() - 2);
}

bool parseJSONChecked(const std::string &text, nlohmann::json &root,
                      std::string &error) {
  PathTracker tracker;
  try {
    root = nlohmann::json::parse(
        text, [&](int, nlohmann::json::parse_event_t e, nlohmann::json &v) {
          tracker.event(e, v);
          return true;
        });
  } catch (const nlohmann::json::out_of_range &e) {
    // "[json.exception.out_of_range.406] number overflow parsing '1e999'"
    std::string what = e.what();
    size_t open = what.find('\''), close = what.rfind('\'');
    std::string number = open != std::string::npos && close > open
                             ? what.substr(open + 1, close - open - 1)
                             : "";
    error = "field '" + tracker.path() + "': number " + number +
            " is outside the range of a double (about 1.8e308)";
    return false;
  }
  return true;
}

bool parseJSONObject(const std::string &text, const std::string &origin,
                     nlohmann::json &root, std::string &error) {
  try {
    if (!parseJSONChecked(text, root, error)) {
      error = origin + ": " + error;
      return false;
    }
  } catch (const nlohmann::json::parse_error &e) {
    error = origin + ": not valid JSON (byte " + std::to_string(e.byte) + ")";
    return false;
  }
  if (!root.is_object()) {
    error = origin + ": the top level must be a JSON object";
    return false;
  }
  return true;
}

} // namespace helix
