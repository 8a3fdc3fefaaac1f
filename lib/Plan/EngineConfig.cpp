//===- EngineConfig.cpp - Deployment configs for serving engines ----------===//
//
// What the engines share: names, the nearest-configuration search and the
// file header. The per-engine rules are in EngineConfig{TRTLLM,VLLM,SGLang}.
//
//===----------------------------------------------------------------------===//

#include "helix/Plan/EngineConfig.h"

#include "EngineConfigRules.h"
#include "EngineData.h"
#include "Format.h"
#include "helix/Cost/Search.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

namespace helix {

namespace engine {

std::string ModelFacts::newLayers() const {
  std::string s;
  auto add = [&](bool has, const char *what) {
    if (has)
      s += (s.empty() ? "" : " and ") + std::string(what);
  };
  add(linearAttention && kda, "Kimi Delta Attention");
  add(linearAttention && !kda, "Gated DeltaNet");
  add(mamba, "Mamba-2");
  add(sparse, "DeepSeek Sparse Attention");
  return s;
}

ModelFacts modelFacts(const ModelSpec &model) {
  ModelFacts f;
  f.name = model.name;
  f.modelType = model.modelType;
  f.mla = !model.layers.empty();
  const LayerSpec *firstAttention = nullptr;
  for (const LayerSpec &l : model.layers) {
    if (l.isRecurrent() && f.recurrentHeads == 0)
      f.recurrentHeads = l.mixer == MixerKind::Mamba ? l.mamba.numHeads
                                                     : l.linear.numValueHeads;
    f.linearAttention |= l.mixer == MixerKind::LinearAttention;
    f.kda |= l.mixer == MixerKind::LinearAttention &&
             l.linear.variant == LinearAttentionSpec::Variant::KDA;
    f.mamba |= l.mixer == MixerKind::Mamba;
    if (!l.hasAttention())
      continue;
    if (!firstAttention)
      firstAttention = &l;
    f.sparse |= l.attention.indexer.sparse();
    if (l.attention.kind != AttentionKind::MLA)
      f.mla = false;
  }
  for (const LayerSpec &l : model.layers) {
    if (!l.hasFFN)
      continue;
    if (l.isMoE) {
      if (!f.moe)
        f.experts = l.moe.numExperts;
      f.moe = true;
    } else {
      ++f.denseLayers;
    }
  }
  for (const LayerSpec &l : model.layers) {
    if (!l.hasAttention())
      continue;
    if (l.attention.slidingWindow > 0)
      f.slidingWindow = true;
    if (l.attention.sinks)
      f.sinks = true;
  }
  if (!firstAttention)
    f.mla = false;
  if (firstAttention) {
    const AttentionSpec &a = firstAttention->attention;
    f.kvHeads = std::max<int64_t>(1, a.numKVHeads);
    f.heads = std::max<int64_t>(1, a.numHeads);
    f.nativeContext =
        a.rope.scaling == "yarn"
            ? static_cast<int64_t>(double(a.rope.originalMaxPosition) *
                                   a.rope.factor)
            : model.maxPositionEmbeddings;
  }
  return f;
}

std::string attentionDesc(const Config &c) {
  const Layout &l = c.layout;
  auto s = [](int64_t v) { return std::to_string(v); };
  switch (c.strategy) {
  case Strategy::Helix:
  case Strategy::HelixNoHopB:
  case Strategy::KVP:
    return l.kvp > 1 ? "KVP x TPA = " + s(l.kvp) + " x " + s(l.tpa)
                     : "TP = " + s(l.tpa);
  case Strategy::TP:
    return "TP = " + s(l.tpa);
  case Strategy::TPPP:
    return "TP = " + s(l.tpa) + " in " + s(l.pp) + " pipeline stages";
  case Strategy::EP:
    return "DP x TPA = " + s(l.dp) + " x " + s(l.tpa);
  }
  return "";
}

std::string ffnDesc(const Config &c, const ModelFacts &m) {
  const Layout &l = c.layout;
  auto s = [](int64_t v) { return std::to_string(v); };
  std::string grid;
  if (!m.moe || l.ep == 1)
    grid = "TP = " + s(l.tpf);
  else if (l.tpf == 1)
    grid = "EP = " + s(l.ep);
  else
    grid = "TPF x EP = " + s(l.tpf) + " x " + s(l.ep);
  if (c.strategy == Strategy::KVP && l.kvp > 1)
    grid += " in each of " + s(l.kvp) + " KVP groups";
  return grid;
}

void writeShellCommand(std::ostream &os, const ModelFacts &m,
                       const std::string &command,
                       const std::vector<std::string> &flags) {
  // Only plain characters go into the shell word.
  bool plain = std::all_of(m.name.begin(), m.name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' ||
           ch == '-' || ch == '_';
  });
  std::string name = plain && !m.name.empty() ? m.name : "model";
  os << "MODEL=${MODEL:?set MODEL to the " << name
     << " checkpoint, a path or a Hugging Face id}\n";
  os << "exec " << command << " \\\n";
  for (const std::string &f : flags)
    os << "  " << f << " \\\n";
  os << "  \"$@\"\n";
}

const Rules &rulesFor(Engine engine) {
  switch (engine) {
  case Engine::TRTLLM:
    return trtllmRules();
  case Engine::VLLM:
    return vllmRules();
  case Engine::SGLang:
    return sglangRules();
  }
  return trtllmRules();
}

} // namespace engine

using namespace engine;

const char *engineName(Engine engine) {
  switch (engine) {
  case Engine::TRTLLM:
    return "trtllm";
  case Engine::VLLM:
    return "vllm";
  case Engine::SGLang:
    return "sglang";
  }
  return "";
}

const char *engineDisplayName(Engine engine) {
  switch (engine) {
  case Engine::TRTLLM:
    return "TensorRT-LLM";
  case Engine::VLLM:
    return "vLLM";
  case Engine::SGLang:
    return "SGLang";
  }
  return "";
}

bool parseEngine(const std::string &text, Engine &engine, std::string &error) {
  for (Engine e : {Engine::TRTLLM, Engine::VLLM, Engine::SGLang})
    if (text == engineName(e)) {
      engine = e;
      return true;
    }
  error = "unknown engine '" + text + "' (expected trtllm, vllm or sglang)";
  return false;
}

std::string engineVersion(Engine engine, const std::string &asked) {
  return asked.empty() ? engine::engineData(engine).defaultVersion : asked;
}

std::vector<std::string> engineVersions(Engine engine) {
  std::vector<std::string> out;
  for (const auto &v : engine::engineData(engine).versions)
    out.push_back(v.first);
  return out;
}

bool checkEngineVersion(Engine engine, const std::string &version,
                        std::string &error) {
  if (version.empty() || engine::engineData(engine).versionIndex(version) >= 0)
    return true;
  std::string known;
  for (const std::string &v : engineVersions(engine))
    known += (known.empty() ? "" : ", ") + v;
  error = "unknown " + std::string(engineDisplayName(engine)) + " version '" +
          version + "' (data/engines/" + engineName(engine) + ".json knows " +
          known + ")";
  return false;
}

namespace engine {

std::string fieldName(Engine engine, const ModelFacts &m,
                      const std::string &var, const std::string &fallback) {
  const FieldSpec *f = engineData(engine).fieldFor(var, m.version);
  return f ? f->name : fallback;
}

/// Why the engine's KV cache cannot hold `kv` for the model's attention
/// ("" when it can): data/engines' kv_cache_dtypes.
static std::string kvUnsupported(Engine engine, const ModelFacts &m, DType kv) {
  const EngineData &d = engineData(engine);
  auto it = d.kvDTypes.find(m.mla ? "mla" : "gqa");
  if (it == d.kvDTypes.end())
    return "";
  std::string name = rulesFor(engine).kvDTypeName(kv);
  for (const std::string &v : it->second.values)
    if (v == name)
      return "";
  return it->second.why.empty()
             ? std::string(engineDisplayName(engine)) + " does not store a " +
                   name + " KV cache for this attention"
             : it->second.why;
}

/// Why the engine cannot run `c` ("" when it can): the strategy-level
/// rules (Rules::cannotRun), then data/engines' rules on the file `c`
/// writes (the KV format aside: engineKVCache substitutes it).
static std::string cannotRun(Engine engine, const ModelFacts &m,
                             const Hardware &hw, const Workload &w,
                             const Config &c) {
  const Rules &rules = rulesFor(engine);
  std::string why = rules.cannotRun(m, hw, w, c);
  if (!why.empty())
    return why;
  std::ostringstream os;
  rules.writeBody(os, m, w, c);
  const EngineData &d = engineData(engine);
  std::vector<std::string> problems = checkEngineFile(
      d, m.version, m, parseEngineFile(d, os.str()), /*checkKV=*/false);
  if (problems.empty())
    return "";
  // "line 4: --dcp-size: ..." names a line of the file not written.
  std::string p = problems.front();
  if (p.rfind("line ", 0) == 0 && p.find(": ") != std::string::npos)
    p = p.substr(p.find(": ") + 2);
  return p;
}

} // namespace engine

std::string engineCannotRun(Engine engine, const ModelSpec &model,
                            const Hardware &hw, const Workload &workload,
                            const Config &config, const std::string &version) {
  ModelFacts m = modelFacts(model);
  m.version = engineVersion(engine, version);
  return engine::cannotRun(engine, m, hw, workload, config);
}

bool engineKVCache(Engine engine, const ModelSpec &model,
                   const Workload &workload, Workload &engineWorkload,
                   std::string &change) {
  engineWorkload = workload;
  change.clear();
  DType kv = workload.precision.kvCache;
  std::string why = engine::kvUnsupported(engine, modelFacts(model), kv);
  if (why.empty())
    return false;
  engineWorkload.precision.kvCache = DType::FP8;
  change = "KV cache " + stringifyDType(kv).str() + " -> fp8 (" + why + ")";
  return true;
}

std::vector<std::string> validateEngineFile(Engine engine,
                                            const std::string &version,
                                            const ModelSpec &model,
                                            const std::string &text) {
  ModelFacts m = modelFacts(model);
  m.version = engineVersion(engine, version);
  const engine::EngineData &d = engine::engineData(engine);
  return engine::checkEngineFile(d, m.version, m,
                                 engine::parseEngineFile(d, text));
}

namespace {

/// Helix with HOP-B off is helix-no-hopb.
Strategy withoutHopB(Strategy s) {
  return s == Strategy::Helix ? Strategy::HelixNoHopB : s;
}

/// 0: KVP x TPA attention, 1: TP attention, 2: data-parallel attention.
int family(Strategy s) {
  if (kvSharded(s))
    return 0;
  return s == Strategy::EP ? 2 : 1;
}

/// How far `b` is from `a`: a different strategy in the same family counts
/// 1, another family 4, and each width |log2(b / a)|.
double distance(const Config &a, const Config &b) {
  double d = 0;
  Strategy sa = withoutHopB(a.strategy), sb = withoutHopB(b.strategy);
  if (sa != sb)
    d += family(sa) == family(sb) ? 1 : 4;
  auto lg = [](int64_t x, int64_t y) {
    return std::fabs(std::log2(double(y) / double(x)));
  };
  const Layout &x = a.layout, &y = b.layout;
  return d + lg(x.kvp, y.kvp) + lg(x.tpa, y.tpa) + lg(x.tpf, y.tpf) +
         lg(x.ep, y.ep) + lg(x.pp, y.pp) + lg(x.dp, y.dp);
}

std::string describe(const Config &c, const Evaluation &ev) {
  return stringifyStrategy(c.strategy).str() + " " + c.layout.str() + " (" +
         std::to_string(c.layout.gpus()) + " GPUs), batch " +
         std::to_string(c.batch) + ", HOP-B " +
         (ev.hopbUsed() ? "on (" + std::to_string(ev.hopbSlices) + " slices)"
                        : std::string("off"));
}

std::string predictionLine(const EnginePrediction &p) {
  return "TTL " + fmt::duration(p.ttlS) + ", " +
         fmt::number(p.tokensPerSecPerUser) + " tokens/s/user, " +
         fmt::number(p.tokensPerSecPerGPU) + " tokens/s/GPU, " +
         fmt::bytes(p.memoryPerGPUBytes) + "/GPU" +
         (p.fits ? "" : " (DOES NOT FIT)");
}

EnginePrediction predict(const Evaluation &ev) {
  EnginePrediction p;
  p.ttlS = ev.ttlS;
  p.tokensPerSecPerUser = ev.tokensPerSecPerUser;
  p.tokensPerSecPerGPU = ev.tokensPerSecPerGPU;
  p.memoryPerGPUBytes = ev.memoryPerGPUBytes;
  p.fits = ev.fits;
  p.hopbSlices = ev.hopbSlices;
  return p;
}

/// "an NVFP4", "an FP8", "a BF16".
std::string checkpointKind(DType d) {
  switch (d) {
  case DType::FP4:
    return "an NVFP4";
  case DType::FP8:
    return "an FP8";
  case DType::BF16:
    return "a BF16";
  }
  return "a";
}

} // namespace

bool nearestEngineConfig(Engine engine, const ModelSpec &model,
                         const Hardware &hw, const Workload &workload,
                         const Config &config, Config &nearest,
                         std::vector<std::string> &changes, std::string &error,
                         double ttlBudgetS, const std::string &version) {
  const Rules &rules = rulesFor(engine);
  ModelFacts m = modelFacts(model);
  m.version = engineVersion(engine, version);
  const std::string engineText = engineDisplayName(engine);
  changes.clear();
  std::string invalid = validateConfig(model, hw, workload, config);
  if (!invalid.empty()) {
    error = invalid;
    return false;
  }
  // No engine slices the batch to overlap the attention-side collective:
  // where the plan did (more than one slice), the engine runs it exposed.
  Evaluation planned = evaluate(model, hw, workload, config);
  Config base = config;
  if (planned.hopbUsed()) {
    base.hopb = false;
    base.hopbSlices = 0;
    base.strategy = withoutHopB(base.strategy);
    changes.push_back("HOP-B off: " + engineText + " " +
                      rules.noOverlap(config));
  }
  auto meets = [&](double ttlS) {
    return ttlBudgetS <= 0 || ttlS <= ttlBudgetS * (1 + 1e-9);
  };
  std::string why = engine::cannotRun(engine, m, hw, workload, base);
  if (why.empty()) {
    Evaluation be = evaluate(model, hw, workload, base);
    if (meets(be.ttlS)) {
      nearest = base;
      return true;
    }
    why = "at TTL " + fmt::duration(be.ttlS) + " it misses the " +
          fmt::duration(ttlBudgetS) + " budget";
  }
  // The closest configuration the engine runs on the same GPUs: fitting
  // first, then within the budget, then nearest. Under a budget smaller
  // batches are candidates too (halving down to 1).
  struct Candidate {
    Config config;
    bool fits = false;
    bool meets = false;
    double distance = 0;
    double ttlS = 0;
  };
  auto better = [](const Candidate &a, const Candidate &b) {
    if (a.fits != b.fits)
      return a.fits;
    if (a.meets != b.meets)
      return a.meets;
    if (std::fabs(a.distance - b.distance) > 1e-9)
      return a.distance < b.distance;
    return a.ttlS < b.ttlS;
  };
  std::vector<int64_t> batches{config.batch};
  if (ttlBudgetS > 0)
    for (int64_t b = config.batch / 2; b >= 1; b /= 2)
      batches.push_back(b);
  const int64_t gpus = config.layout.gpus();
  bool found = false;
  Candidate best;
  for (Strategy s :
       {Strategy::HelixNoHopB, Strategy::TP, Strategy::TPPP, Strategy::EP})
    for (const Layout &l : enumerateLayouts(model, hw, workload, s, gpus))
      for (int64_t batch : batches) {
        Candidate c;
        c.config.strategy = s;
        c.config.layout = l;
        c.config.batch = batch;
        c.config.hopb = false;
        if (!engine::cannotRun(engine, m, hw, workload, c.config).empty())
          continue;
        Evaluation ev = evaluate(model, hw, workload, c.config);
        if (!ev.valid())
          continue;
        c.fits = ev.fits;
        c.meets = meets(ev.ttlS);
        c.distance = distance(base, c.config) +
                     std::fabs(std::log2(double(batch) / double(config.batch)));
        c.ttlS = ev.ttlS;
        if (!found || better(c, best)) {
          best = c;
          found = true;
        }
      }
  if (!found) {
    error = engineText + " cannot run " +
            stringifyStrategy(base.strategy).str() + " " + base.layout.str() +
            " (" + why + ") and runs no layout of " + model.name + " on " +
            std::to_string(gpus) + " GPUs";
    return false;
  }
  nearest = best.config;

  std::vector<std::string> diffs;
  if (withoutHopB(base.strategy) != nearest.strategy)
    diffs.push_back("strategy " + stringifyStrategy(base.strategy).str() +
                    " -> " + stringifyStrategy(nearest.strategy).str());
  std::string a0 = attentionDesc(base), a1 = attentionDesc(nearest);
  if (a0 != a1)
    diffs.push_back("attention " + a0 + " -> " + a1);
  std::string f0 = ffnDesc(base, m), f1 = ffnDesc(nearest, m);
  if (f0 != f1)
    diffs.push_back("FFN " + f0 + " -> " + f1);
  if (nearest.batch != base.batch)
    diffs.push_back("batch " + std::to_string(base.batch) + " -> " +
                    std::to_string(nearest.batch));
  std::string line;
  for (const std::string &d : diffs)
    line += (line.empty() ? "" : ", ") + d;
  changes.push_back((line.empty() ? std::string("no change") : line) + " (" +
                    why + ")");
  if (!best.meets)
    changes.push_back("no configuration " + engineText + " runs on " +
                      std::to_string(gpus) + " GPUs meets the " +
                      fmt::duration(ttlBudgetS) +
                      " budget; this is the "
                      "nearest, at TTL " +
                      fmt::duration(best.ttlS));
  return true;
}

bool makeEngineConfig(Engine engine, const ModelSpec &model, const Hardware &hw,
                      const Workload &workload, const Config &config,
                      EngineConfig &out, std::string &error,
                      const EngineConfigOptions &options) {
  const Rules &rules = rulesFor(engine);
  ModelFacts m = modelFacts(model);
  m.version = engineVersion(engine, options.version);
  if (!checkEngineVersion(engine, options.version, error))
    return false;
  const std::string engineText = engineDisplayName(engine);
  out = EngineConfig();
  out.engine = engine;
  out.planned = config;
  // The KV cache in a format the engine stores for this attention kind;
  // the emitted configuration is searched and priced in it.
  Workload emittedWorkload;
  std::string kvChange;
  engineKVCache(engine, model, workload, emittedWorkload, kvChange);
  const double budgetS = options.ttlBudgetMs / 1e3;
  if (!nearestEngineConfig(engine, model, hw, emittedWorkload, config,
                           out.emitted, out.changes, error, budgetS, m.version))
    return false;
  if (!kvChange.empty())
    out.changes.insert(out.changes.begin(), kvChange);
  out.kvCache = emittedWorkload.precision.kvCache;
  Evaluation pe = evaluate(model, hw, workload, out.planned);
  Evaluation ee = evaluate(model, hw, emittedWorkload, out.emitted);
  out.meetsBudget = budgetS <= 0 || ee.ttlS <= budgetS * (1 + 1e-9);
  out.plannedPrediction = predict(pe);
  out.emittedPrediction = predict(ee);

  const Precision &p = workload.precision;
  out.notes.push_back(
      "weights: helix priced " + stringifyDType(p.weights).str() +
      " weights; " + engineText +
      " takes the weight format from the checkpoint: serve " +
      checkpointKind(p.weights) + " checkpoint of " + model.name);
  if (workload.mtpTokens > 0)
    out.notes.push_back(
        "speculative decoding with the model's MTP layer, " +
        std::to_string(workload.mtpTokens) +
        " draft tokens per step: helix priced each draft accepted with "
        "probability " +
        fmt::number(workload.mtpAcceptance) +
        " (the predictions are per accepted token); the engine's own "
        "acceptance decides the speed");
  out.notes.push_back("context: " + rules.contextSetting(workload.context) +
                      " configures the planned " +
                      fmt::count(workload.context) + "-token context");
  if (m.nativeContext > 0 && workload.context > m.nativeContext)
    out.notes.push_back(
        "the model's config serves at most " + fmt::count(m.nativeContext) +
        " positions (max_position_embeddings, or YaRN's original length x "
        "factor): " +
        engineText + " " + rules.longContextOverride() +
        ". helix does not extend RoPE for you: positions past " +
        fmt::count(m.nativeContext) +
        " are outside what the model was trained on, so serving this "
        "context needs a checkpoint trained or RoPE-scaled for it");
  rules.addNotes(m, emittedWorkload, out.emitted, out.notes);
  const std::string mainPath =
      options.outputPath == "-" ? std::string() : options.outputPath;
  rules.addFiles(m, emittedWorkload, out.emitted, mainPath, out.extraFiles,
                 out.notes);
  if (!ee.fits)
    out.notes.push_back("the emitted configuration does not fit in HBM at "
                        "batch " +
                        std::to_string(out.emitted.batch) +
                        " by helix's memory model");

  std::ostringstream os;
  if (const char *first = rules.firstLine())
    os << first << "\n";
  os << "# " << engineText << " configuration for " << model.name
     << ", written by " << options.command << " --emit-config "
     << engineName(engine) << "\n";
  os << "# " << model.name << " on " << hw.name << ", "
     << fmt::count(workload.context) << "-token context, " << p.describe()
     << "\n";
  os << "# Targets " << engineText << " " << m.version << " (data/engines/"
     << engineName(engine)
     << ".json; helix validate-config checks the file)\n#\n";
  if (out.exact()) {
    os << "# Planned by helix and configured here: "
       << describe(out.planned, pe) << "\n";
    os << "#   helix predicts: " << predictionLine(out.plannedPrediction)
       << "\n";
  } else {
    os << "# Planned by helix: " << describe(out.planned, pe) << "\n";
    os << "#   helix predicts: " << predictionLine(out.plannedPrediction)
       << "\n";
    os << "# " << engineText
       << " cannot run it as planned; this file configures the nearest "
          "configuration it can run:\n";
    for (const std::string &c : out.changes)
      os << "#   - " << c << "\n";
    os << "# Configured here: " << describe(out.emitted, ee) << "\n";
    os << "#   helix predicts: " << predictionLine(out.emittedPrediction)
       << "\n";
  }
  if (options.ttlBudgetMs > 0 && !out.meetsBudget)
    os << "# WARNING: the configuration here misses the "
       << fmt::duration(budgetS) << " TTL budget (" << engineText
       << " runs nothing on these GPUs within it)\n";
  os << "#\n# Use:\n";
  for (const std::string &u : rules.usage(m))
    os << "#   " << u << "\n";
  os << "# Notes:\n";
  for (const std::string &n : out.notes)
    os << "#   - " << n << "\n";
  os << "# Follows (docs/engine-configs.md):\n";
  for (const std::string &s : rules.sources())
    os << "#   - " << s << "\n";
  os << "\n";
  rules.writeBody(os, m, emittedWorkload, out.emitted);
  out.text = os.str();
  return true;
}

} // namespace helix
