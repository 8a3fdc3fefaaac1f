//===- LayerPatterns.cpp - Per-layer sliding-window patterns --------------===//
//
// The three ways configs say which layers use sliding-window attention:
// one window for every layer (Mistral, Mixtral), use_sliding_window with
// max_window_layers (Qwen2, Qwen3), and an explicit layer_types list
// (gpt-oss, and newer Qwen configs).
//
//===----------------------------------------------------------------------===//

#include "CommonFields.h"

namespace helix {
namespace import {

bool readUniformWindow(const FieldReader &r, int64_t numLayers,
                       std::vector<int64_t> &window) {
  int64_t w = 0;
  if (!r.getOptInt("sliding_window", w, 0))
    return false;
  window.assign(numLayers, w);
  return true;
}

bool readLayerTypes(const FieldReader &r, int64_t numLayers,
                    std::vector<bool> &sliding, bool &present) {
  std::vector<std::string> types;
  if (!r.getOptStringArray("layer_types", types, present))
    return false;
  sliding.assign(numLayers, false);
  if (!present)
    return true;
  if (static_cast<int64_t>(types.size()) != numLayers)
    return r.fail("layer_types", "has " + std::to_string(types.size()) +
                                     " entries, expected num_hidden_layers = " +
                                     std::to_string(numLayers));
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] == "sliding_attention")
      sliding[i] = true;
    else if (types[i] != "full_attention")
      return r.fail("layer_types[" + std::to_string(i) + "]",
                    "unknown layer type " + nlohmann::json(types[i]).dump() +
                        ", expected \"full_attention\" or "
                        "\"sliding_attention\"");
  }
  return true;
}

bool windowsFromSliding(const FieldReader &r, const std::vector<bool> &sliding,
                        std::vector<int64_t> &window) {
  bool anySliding = false;
  for (bool s : sliding)
    anySliding |= s;
  int64_t w = 0;
  if (anySliding && !r.has("sliding_window"))
    return r.fail("sliding_window", "missing, but layer_types has "
                                    "\"sliding_attention\" layers");
  if (!r.getOptInt("sliding_window", w, 0))
    return false;
  window.assign(sliding.size(), 0);
  for (size_t i = 0; i < sliding.size(); ++i)
    if (sliding[i])
      window[i] = w;
  return true;
}

bool readQwenWindows(const FieldReader &r, int64_t numLayers,
                     std::vector<int64_t> &window) {
  // Hugging Face: sliding_window counts only when use_sliding_window is set;
  // then layers >= max_window_layers slide, unless layer_types says which.
  bool use = false;
  int64_t w = 0, maxWindowLayers = 0;
  if (!r.getOptBool("use_sliding_window", use, false))
    return false;
  for (const char *key : {"sliding_window", "max_window_layers"})
    if (use && !r.has(key))
      return r.fail(key, "missing, but use_sliding_window is true");
  if (!r.getOptInt("sliding_window", w, 0) ||
      !r.getOptInt("max_window_layers", maxWindowLayers, 0, 0))
    return false;
  std::vector<bool> sliding;
  bool present = false;
  if (!readLayerTypes(r, numLayers, sliding, present))
    return false;
  window.assign(numLayers, 0);
  if (!use)
    return true;
  for (int64_t i = 0; i < numLayers; ++i)
    if (present ? sliding[i] : i >= maxWindowLayers)
      window[i] = w;
  return true;
}

} // namespace import
} // namespace helix
