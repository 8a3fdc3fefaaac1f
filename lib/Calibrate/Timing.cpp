//===- Timing.cpp - Loading the CUDA timing plugin ------------------------===//

#include "helix/Calibrate/Timing.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <fstream>

namespace helix {
namespace calibrate {

TimingStatus timeOnGPU(const std::vector<std::string> &candidates,
                       const TimingOptions &options, MeasurementSet &set,
                       std::string &reason) {
  std::string path;
  for (const std::string &c : candidates)
    if (std::ifstream(c).good()) {
      path = c;
      break;
    }
  if (path.empty()) {
    reason = "the CUDA timing plugin is not installed (looked for ";
    for (size_t i = 0; i < candidates.size(); ++i)
      reason += (i ? ", " : "") + candidates[i];
    reason += ")";
    return TimingStatus::NoGPU;
  }
  // The plugin stays loaded: the CUDA and NCCL libraries it pulls in may
  // have threads and exit handlers of their own.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *e = dlerror();
    reason = "cannot load " + path + ": " + (e ? e : "dlopen failed");
    return TimingStatus::NoGPU;
  }
  auto entry =
      reinterpret_cast<TimingEntryPoint>(dlsym(handle, kTimingEntryPoint));
  if (!entry) {
    reason = path + " has no entry point " + kTimingEntryPoint;
    return TimingStatus::NoGPU;
  }
  int status = entry(&options, &set, &reason);
  if (status < 0 || status > static_cast<int>(TimingStatus::Failed))
    return TimingStatus::Failed;
  return static_cast<TimingStatus>(status);
}

std::string presetForGPU(const std::string &gpuName) {
  std::string u = gpuName;
  std::transform(u.begin(), u.end(), u.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  // Most specific first: "GB200" contains "B200".
  if (u.find("GB300") != std::string::npos)
    return "gb300-nvl72";
  if (u.find("GB200") != std::string::npos)
    return "gb200-nvl72";
  if (u.find("B200") != std::string::npos)
    return "b200";
  if (u.find("H200") != std::string::npos)
    return "h200";
  if (u.find("H100") != std::string::npos)
    return "h100";
  return "";
}

} // namespace calibrate
} // namespace helix
