//===- EngineProfile.h - Per-engine kernel and collective curves -*- C++ -*-=//
//
// The serving engines run different kernels for the same operation:
// TensorRT-LLM its trtllm-gen and CUTLASS kernels and its own all-reduce,
// vLLM and SGLang FlashInfer, CUTLASS, Triton or DeepGEMM kernels and their
// own custom all-reduce. An engine profile holds the kernel curves (GEMM,
// MoE grouped GEMM, decode attention, MLA) and the all-reduce latency by
// size measured in that engine on a preset's GPU, fitted by
// scripts/curves-from-aiconfigurator.py --backend ENGINE from kernel-level
// measurements (never from end-to-end rows), and applied over the preset
// with `--engine trtllm|vllm|sglang`.
//
// Without --engine, helix prices with the presets' own curves, the
// engine-neutral profile. Those curves are fitted to TensorRT-LLM's kernel
// tables, so --engine trtllm changes nothing today; a profile lacks the
// curves its engine's tables do not measure (and every curve on presets it
// has no tables for), and there the preset's curve stays.
//
// Profiles are data: data/engines/profiles/<engine>-<preset>.json, embedded
// at build time (docs/cost-model.md, "Engine profiles").
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_ENGINEPROFILE_H
#define HELIX_COST_ENGINEPROFILE_H

#include "helix/Cost/Hardware.h"

#include <string>
#include <vector>

namespace helix {

/// `loadHardware("b200+vllm")` loads a preset under a profile, and fails
/// when the profile has no curves for the preset: the spelling plans
/// record, so every pass reloads the same curves.

/// The engines --engine accepts: "trtllm", "vllm", "sglang".
const std::vector<std::string> &listEngineProfiles();

/// The presets `engine` has measured curves for, sorted.
std::vector<std::string> engineProfilePresets(const std::string &engine);

/// Applies `engine`'s curves for `hw.preset` over `hw`, setting
/// `hw.engineProfile` and appending " (ENGINE profile)" to `hw.name` when it
/// did (trtllm: always, its curves being the presets'). Returns false with
/// `error`
/// for an unknown engine or a malformed profile. `note` says what was
/// applied, or why nothing was (no tables for the preset, a user file with
/// no preset, trtllm being the presets' own curves).
bool applyEngineProfile(const std::string &engine, Hardware &hw,
                        std::string &note, std::string &error);

} // namespace helix

#endif // HELIX_COST_ENGINEPROFILE_H
