//===- FidelityTable.h - Published decode latencies -------------*- C++ -*-===//
//
// Reads data/fidelity/measurements.json (docs/fidelity.md): one row per
// published, measured decode latency of a serving engine, with the
// configuration helix needs to price it. Every field is checked; the first
// problem comes back as one line naming the file, the row and the field.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_BENCH_FIDELITYTABLE_H
#define HELIX_BENCH_FIDELITYTABLE_H

#include "helix/Common/Speculative.h"
#include "helix/Cost/Layout.h"
#include "helix/Cost/Precision.h"
#include "helix/Cost/Prefill.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace helix::fidelity {

/// What the published number measures.
enum class Metric {
  TPOTMs,   // "tpot_ms": mean time per output token, first token excluded
  ITLMs,    // "itl_ms": inter-token latency
  StepMs,   // "step_ms": engine step time
  TokSUser, // "tok_s_user": output tokens/s per user; step = 1000 / value ms
};

const char *stringifyMetric(Metric metric);

struct Measurement {
  std::string id;
  /// "held-out": never used to choose a constant of the cost model;
  /// "fitted": in view when constants were chosen (the table's note).
  bool heldOut = false;
  std::string engine;
  std::string engineVersion;
  std::string gpu; // a helix hardware preset
  int64_t gpus = 0;
  std::string model; // config file name, resolved in the models directory
  Precision precision;
  Config config; // strategy, layout, batch and gpus
  int64_t inputLen = 0;
  int64_t outputLen = 0;
  Metric metric = Metric::TPOTMs;
  double value = 0;
  std::string speculative; // "off", or what ran
  /// Speculative decoding with the model's own MTP layer ("mtp_tokens"):
  /// draft tokens per step, 0 for none. Such a row is priced with MTP
  /// (Workload::mtpTokens) and may be scored although `speculative` is not
  /// "off"; any other speculative row must be excluded.
  int64_t mtpTokens = 0;
  /// Where the per-draft-token acceptance comes from.
  enum class AcceptanceFrom {
    Default,      // neither given: kDefaultMTPAcceptance
    AcceptLength, // "mtp_accept_length": the source's accept length
    Given,        // "mtp_acceptance": the source's per-token acceptance
  } acceptanceFrom = AcceptanceFrom::Default;
  /// The source's accept length ("mtp_accept_length"): mean tokens a step
  /// emits per request, the verified token included; 0 when not given.
  double mtpAcceptLength = 0;
  /// The per-draft-token acceptance the row is priced with
  /// (Workload::mtpAcceptance).
  double mtpAcceptance = kDefaultMTPAcceptance;
  /// "serving": false for an aggregated server (the default: decode steps
  /// absorb the prefills of arriving requests, as the engine schedules
  /// them), true for one decode instance of a disaggregated deployment
  /// ("disaggregated-decode": its prefills run on other GPUs).
  bool decodeOnly = false;
  bool derived = false;
  std::string formula;
  bool excluded = false;
  std::string excludeReason;
  std::string source;
  std::string locator;

  /// The measured time per decode step in milliseconds.
  double measuredMs() const;
  /// KV context per request the row is priced at: input + output / 2 (the
  /// average over the decode of one request).
  int64_t context() const { return inputLen + outputLen / 2; }
};

/// The per-draft-token acceptance `a` under which a step with `drafts` draft
/// tokens yields `acceptLength` tokens per request on average, by the cost
/// model's own chain model: expectedAcceptedTokens(drafts, a) = 1 + a + ...
/// + a^drafts = acceptLength (helix/Common/Speculative.h), solved by
/// bisection. Requires drafts >= 1 and 1 < acceptLength <= drafts + 1.
double acceptanceForAcceptLength(int64_t drafts, double acceptLength);

/// What the bench needs to know about a serving engine (the table's
/// "engines" object, one entry per engine the rows name, each with its
/// source): how it runs the prefill of arriving requests.
struct EngineProfile {
  PrefillScheduling prefill = PrefillScheduling::Mixed;
  std::string source;
};

/// Parses the table at `path`. On failure returns false with `error` set to
/// "PATH: row 'ID' (#N): field 'F': what is wrong" (or "PATH: ..." for the
/// file as a whole). Checks value types and ranges, dtypes, strategy and
/// layout syntax, the preset name, the GPU count against the layout, unique
/// ids, that speculative rows are excluded unless they draft with the
/// model's MTP layer (mtp_tokens), and the MTP fields; the model file's
/// existence and its MTP layer are left to the caller.
/// Every row's engine must have a profile in `engines`.
bool parseFidelityTable(const std::string &path, std::vector<Measurement> &rows,
                        std::map<std::string, EngineProfile> &engines,
                        std::string &error);

} // namespace helix::fidelity

#endif // HELIX_BENCH_FIDELITYTABLE_H
