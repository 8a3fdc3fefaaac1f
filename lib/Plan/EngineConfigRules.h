//===- EngineConfigRules.h - Per-engine mapping rules -----------*- C++ -*-===//
//
// Private to lib/Plan: what each engine can run and how its configuration
// is written (EngineConfigTRTLLM.cpp, EngineConfigVLLM.cpp,
// EngineConfigSGLang.cpp); EngineConfig.cpp holds what they share (the
// nearest-configuration search and the file header).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_PLAN_ENGINECONFIGRULES_H
#define HELIX_LIB_PLAN_ENGINECONFIGRULES_H

#include "helix/Plan/EngineConfig.h"

#include <ostream>
#include <string>
#include <vector>

namespace helix {
namespace engine {

/// What the rules need to know about the model.
struct ModelFacts {
  std::string name;
  bool mla = false;    // every attention layer is MLA
  int64_t kvHeads = 1; // KV heads of the first layer (1 for MLA)
  bool moe = false;    // has MoE layers
  int64_t experts = 0; // routed experts of the first MoE layer
  int64_t denseLayers = 0;
  int64_t heads = 1;          // query heads of the first layer
  bool slidingWindow = false; // has sliding-window attention layers
  bool sinks = false;         // has attention sinks (gpt-oss)
  /// The longest context the model's config serves natively: YaRN's
  /// original_max_position_embeddings x factor, else max_position_embeddings
  /// (0: not stated), as vLLM and SGLang derive it.
  int64_t nativeContext = 0;
  // The long-context layers of 2026 (docs/long-context-architectures.md).
  std::string modelType; // the config's model_type
  bool sparse = false;   // DeepSeek Sparse Attention (an indexer)
  bool linearAttention = false;
  bool kda = false; // Kimi Delta Attention (else Gated DeltaNet)
  bool mamba = false;
  int64_t recurrentHeads = 0; // heads of the first recurrent layer
  /// "" or what the model mixes besides softmax attention, for messages:
  /// "Kimi Delta Attention", "Gated DeltaNet", "Mamba-2", "DeepSeek
  /// Sparse Attention".
  std::string newLayers() const;
  /// The engine version the file targets (data/engines/<engine>.json's
  /// names; set by the entry points, the data's default when not asked).
  std::string version;
};
ModelFacts modelFacts(const ModelSpec &model);

/// Helix, helix-no-hopb and kvp share the KVP x TPA attention layout.
inline bool kvSharded(Strategy s) {
  return s == Strategy::Helix || s == Strategy::HelixNoHopB ||
         s == Strategy::KVP;
}

/// "KVP x TPA = 4 x 8", "TP = 32", "TP = 16 in 2 pipeline stages",
/// "DP x TPA = 8 x 1".
std::string attentionDesc(const Config &c);
/// "TP = 64", "EP = 64", "TPF x EP = 8 x 8" (per KVP group for kvp).
std::string ffnDesc(const Config &c, const ModelFacts &m);
/// Shell scripts (vllm, sglang): `MODEL=${MODEL:?...}` naming the model,
/// then `exec COMMAND \` with one flag per line and `"$@"` last (extra
/// flags pass through).
void writeShellCommand(std::ostream &os, const ModelFacts &m,
                       const std::string &command,
                       const std::vector<std::string> &flags);
/// ceil(a / b).
inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// One engine's rules.
class Rules {
public:
  virtual ~Rules() = default;
  virtual Engine engine() const = 0;
  /// Why the engine cannot run `c` for workload `w` ("" when it can); HOP-B
  /// is not judged.
  virtual std::string cannotRun(const ModelFacts &m, const Hardware &hw,
                                const Workload &w, const Config &c) const = 0;
  /// The engine's name for KV cache format `kv` (--kv-cache-dtype,
  /// kv_cache_config.dtype); whether the engine stores it for the model's
  /// attention is data/engines' kv_cache_dtypes.
  virtual std::string kvDTypeName(DType kv) const = 0;
  /// The engine's context-length setting for `tokens` ("--max-model-len
  /// N"), and what it does past the model's native length (a clause after
  /// the engine's name: "refuses ... unless ...").
  virtual std::string contextSetting(int64_t tokens) const = 0;
  virtual std::string longContextOverride() const = 0;
  /// What the engine does not overlap when helix's plan used HOP-B, for the
  /// "HOP-B off" line ("does not overlap ..."): the KV-sharded attention's
  /// exchange (kvExchange()) or the attention output all-reduce.
  std::string noOverlap(const Config &c) const {
    return std::string("does not overlap ") +
           (kvSharded(c.strategy) ? kvExchange()
                                  : "the attention output all-reduce") +
           " with attention compute batch-wise";
  }
  /// The engine's name for the exchange of KV-sharded attention's partial
  /// outputs ("the decode-context-parallel attention all-to-all").
  virtual const char *kvExchange() const = 0;
  /// How the file is used (header lines, without the comment marker).
  virtual std::vector<std::string> usage(const ModelFacts &m) const = 0;
  /// Caveats for `c` (which the engine runs): how it differs from what
  /// helix prices.
  virtual void addNotes(const ModelFacts &m, const Workload &w, const Config &c,
                        std::vector<std::string> &notes) const = 0;
  /// The documentation the mapping follows ("URL (what, version)").
  virtual std::vector<std::string> sources() const = 0;
  /// The configuration itself, for `c` (which the engine runs).
  virtual void writeBody(std::ostream &os, const ModelFacts &m,
                         const Workload &w, const Config &c) const = 0;
  /// The deployment's other files for `c`, named after `mainPath` (a file
  /// path; "" when the main file goes to standard output: then a note says
  /// what -o FILE would add). None by default.
  virtual void addFiles(const ModelFacts &m, const Workload &w, const Config &c,
                        const std::string &mainPath,
                        std::vector<EngineFile> &files,
                        std::vector<std::string> &notes) const {
    (void)m, (void)w, (void)c, (void)mainPath, (void)files, (void)notes;
  }
  /// First line of the file, if any ("#!/bin/sh").
  virtual const char *firstLine() const { return nullptr; }
};

/// The flag or key data/engines/<engine>.json calls `var` in `m.version`
/// (`fallback` when that version has none: the file then fails the
/// engine's rules, which say why).
std::string fieldName(Engine engine, const ModelFacts &m,
                      const std::string &var, const std::string &fallback);

const Rules &trtllmRules();
const Rules &vllmRules();
const Rules &sglangRules();
const Rules &rulesFor(Engine engine);

} // namespace engine
} // namespace helix

#endif // HELIX_LIB_PLAN_ENGINECONFIGRULES_H
