//===- EngineConfig.h - Deployment configs for serving engines --*- C++ -*-===//
//
// Maps one helix configuration (strategy, layout, batch, HOP-B) of a model,
// hardware and workload to the configuration a serving engine takes:
//
//   trtllm   TensorRT-LLM LLM-API options (YAML, extra_llm_api_options)
//   vllm     a `vllm serve` command line
//   sglang   a `python -m sglang.launch_server` command line
//
// Engines cannot express every helix configuration: none overlaps the
// attention exchange batch-wise (HOP-B), none has Medha-style KVP, vLLM's
// MoE layers run TP or EP over all GPUs (no TPF x EP grid), decode context
// parallelism has per-engine limits. Then the file holds the NEAREST
// configuration the engine can run (nearestEngineConfig), both are priced
// with evaluate(), and the file's header says what changed. The field
// mapping, the documentation it follows and the nearest-configuration rule:
// docs/engine-configs.md.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_PLAN_ENGINECONFIG_H
#define HELIX_PLAN_ENGINECONFIG_H

#include "helix/Cost/Evaluate.h"

#include <string>
#include <vector>

namespace helix {

enum class Engine { TRTLLM, VLLM, SGLang };

/// "trtllm", "vllm", "sglang" (what --emit-config takes).
const char *engineName(Engine engine);
/// "TensorRT-LLM", "vLLM", "SGLang".
const char *engineDisplayName(Engine engine);
/// Parses an engine name; `error` lists the accepted names.
bool parseEngine(const std::string &text, Engine &engine, std::string &error);

/// Why `engine` cannot run `config` as it is ("" when it can). HOP-B is not
/// judged here (no engine overlaps batch-wise; nearestEngineConfig turns it
/// off where it was in use); everything else is: strategy, layout widths
/// against the model (MLA or GQA, KV heads, MoE) and the hardware.
/// The engine's rules are data (data/engines/<engine>.json: flags and keys,
/// allowed values, KV formats per attention kind, divisibility rules, each
/// with its source and the engine versions that have it); `version` picks
/// one of its versions ("" the default).
std::string engineCannotRun(Engine engine, const ModelSpec &model,
                            const Hardware &hw, const Workload &workload,
                            const Config &config,
                            const std::string &version = "");

/// The engine versions data/engines/<engine>.json knows, oldest first, and
/// the one a file targets when none is asked ("" gives the default).
std::vector<std::string> engineVersions(Engine engine);
std::string engineVersion(Engine engine, const std::string &asked);
/// False with a one-line `error` naming the known versions when `version`
/// is not "" nor one of them.
bool checkEngineVersion(Engine engine, const std::string &version,
                        std::string &error);

/// Checks `text`, a file --emit-config writes for `engine` (the server's
/// options or command line, or TensorRT-LLM's trtllm-serve disaggregated
/// file), against data/engines/<engine>.json at `version` ("" the default)
/// for `model`: every flag or key known in that version, of its type and
/// allowed values, the KV cache format stored for the model's attention,
/// and every rule. Returns the problems, one line each (empty: valid).
std::vector<std::string> validateEngineFile(Engine engine,
                                            const std::string &version,
                                            const ModelSpec &model,
                                            const std::string &text);

/// `workload` with the KV cache in a format `engine` stores for `model`'s
/// attention: unchanged (false) when it stores the planned one, else FP8
/// (true), with `change` saying why ("KV cache fp4 -> fp8 (...)").
bool engineKVCache(Engine engine, const ModelSpec &model,
                   const Workload &workload, Workload &engineWorkload,
                   std::string &change);

/// The configuration `engine` runs in place of `config`, on the same GPUs and
/// batch: `config` itself when the engine can run it; with HOP-B off when the
/// plan used it (more than one batch slice); otherwise, among the layouts of
/// the engine-runnable strategies (helix-no-hopb, tp, tp-pp, ep) on the same
/// GPU count, the one that fits in memory and is closest to `config`
/// (strategy family first, then log2 distance of each width), ties broken by
/// the lower TTL. `changes` gets one line per difference ("HOP-B off: ...",
/// "attention KVP x TPA = 4 x 8 -> TP = 32: ..."). With `ttlBudgetS` > 0 a
/// configuration that misses the budget is replaced too, and the search
/// prefers (after fitting) those within it, smaller batches included; a line
/// says so when none is. Returns false with `error` set when no layout on
/// that GPU count is runnable by the engine.
bool nearestEngineConfig(Engine engine, const ModelSpec &model,
                         const Hardware &hw, const Workload &workload,
                         const Config &config, Config &nearest,
                         std::vector<std::string> &changes, std::string &error,
                         double ttlBudgetS = 0,
                         const std::string &version = "");

/// helix's prediction for one configuration.
struct EnginePrediction {
  double ttlS = 0;
  double tokensPerSecPerUser = 0;
  double tokensPerSecPerGPU = 0;
  double memoryPerGPUBytes = 0;
  bool fits = false;
  int64_t hopbSlices = 1;
};

/// A file of a deployment besides the main one.
struct EngineFile {
  std::string path; ///< beside EngineConfigOptions::outputPath
  std::string text;
  bool executable = false;
};

/// One engine configuration and what helix predicts for it.
struct EngineConfig {
  Engine engine = Engine::TRTLLM;
  Config planned; // what helix chose
  Config emitted; // what the file configures (== planned when exact)
  EnginePrediction plannedPrediction, emittedPrediction;
  /// Differences between planned and emitted (empty when exact).
  std::vector<std::string> changes;
  /// Caveats that do not change the configuration (how the engine differs
  /// from what helix prices, what to serve).
  std::vector<std::string> notes;
  /// The file: a comment header (model, planned and emitted configuration
  /// with helix's predictions, changes, notes, the documentation followed)
  /// and then the engine's configuration.
  std::string text;
  /// The KV cache format the file configures (the planned one, or FP8 where
  /// the engine does not store it: engineKVCache).
  DType kvCache = DType::FP8;
  /// Whether the emitted configuration meets EngineConfigOptions'
  /// ttlBudgetMs (true without one).
  bool meetsBudget = true;
  /// The deployment's other files (TensorRT-LLM Helix: the context server's
  /// configuration, the `trtllm-serve disaggregated` configuration and the
  /// launch script); empty for a single-file configuration.
  std::vector<EngineFile> extraFiles;

  bool exact() const { return changes.empty(); }
};

struct EngineConfigOptions {
  /// The command that wrote the file, for the header ("helix plan").
  std::string command = "helix";
  /// The user's TTL budget (--ttl-ms; 0: none): a fallback configuration is
  /// searched among those that meet it, and the file says when none does.
  double ttlBudgetMs = 0;
  /// Where the main file goes (-o FILE; "" or "-": standard output). A
  /// deployment of several files (TensorRT-LLM's disaggregated Helix) names
  /// the others after it, FILE without its extension + ".context.yaml" and
  /// so on, and only when it is a file.
  std::string outputPath;
  /// The engine version the file targets (--engine-version; "" the
  /// default of data/engines/<engine>.json).
  std::string version;
};

/// Maps `config` to `engine`'s configuration (nearestEngineConfig, then the
/// engine's writer). `config` must be valid for `model` (validateConfig).
/// Returns false with `error` set when the engine runs nothing close (no
/// layout on that GPU count).
bool makeEngineConfig(Engine engine, const ModelSpec &model, const Hardware &hw,
                      const Workload &workload, const Config &config,
                      EngineConfig &out, std::string &error,
                      const EngineConfigOptions &options = {});

} // namespace helix

#endif // HELIX_PLAN_ENGINECONFIG_H
