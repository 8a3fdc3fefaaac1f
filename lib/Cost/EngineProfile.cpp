//===- EngineProfile.cpp - Per-engine kernel and collective curves --------===//

#include "helix/Cost/EngineProfile.h"

#include <algorithm>

namespace helix {

namespace {

struct Profile {
  const char *name; // "<engine>-<preset>"
  const char *json;
};

const Profile kProfiles[] = {
#include "EngineProfiles.inc"
};

} // namespace

const std::vector<std::string> &listEngineProfiles() {
  static const std::vector<std::string> engines = {"trtllm", "vllm", "sglang"};
  return engines;
}

std::vector<std::string> engineProfilePresets(const std::string &engine) {
  std::vector<std::string> presets;
  std::string prefix = engine + "-";
  for (const Profile &p : kProfiles) {
    std::string name = p.name;
    if (name.rfind(prefix, 0) == 0)
      presets.push_back(name.substr(prefix.size()));
  }
  std::sort(presets.begin(), presets.end());
  return presets;
}

bool applyEngineProfile(const std::string &engine, Hardware &hw,
                        std::string &note, std::string &error) {
  const std::vector<std::string> &engines = listEngineProfiles();
  if (std::find(engines.begin(), engines.end(), engine) == engines.end()) {
    error = "unknown engine '" + engine + "' (expected trtllm, vllm or sglang)";
    return false;
  }
  if (engine == "trtllm") {
    hw.engineProfile = engine;
    note = "the presets' curves are TensorRT-LLM's own kernel tables; the "
           "trtllm profile adds nothing to them";
    return true;
  }
  if (hw.preset.empty()) {
    note = "the hardware file names no preset (\"base\"), and profiles are "
           "measured per preset: no " +
           engine + " curves applied";
    return true;
  }
  std::string key = engine + "-" + hw.preset;
  for (const Profile &p : kProfiles)
    if (key == p.name) {
      if (!overlayHardwareJSON(p.json, "engine profile " + key, hw, error))
        return false;
      hw.name += " (" + engine + " profile)";
      hw.engineProfile = engine;
      note = "kernel and all-reduce curves of the " + engine + " profile for " +
             hw.preset + " (data/engines/profiles/" + key + ".json)";
      return true;
    }
  std::string have;
  for (const std::string &p : engineProfilePresets(engine))
    have += (have.empty() ? "" : ", ") + p;
  note = "no " + engine + " kernel tables for " + hw.preset + " (the " +
         engine + " profile covers " + (have.empty() ? "none" : have) +
         "): the preset's curves stay";
  return true;
}

} // namespace helix
