//===- Prefill.h - The prefill a served decode step absorbs -----*- C++ -*-===//
//
// helix plans decode steps. A served decode step at concurrency B also
// carries the prefill of arriving requests, and how much it costs depends on
// how the engine schedules prompts (docs/cost-model.md, "Prefill in a served
// step"; the engines' profiles, with sources, are data/engines/engines.json):
//
//  * Mixed (vLLM V1's chunked prefill, TensorRT-LLM's in-flight batching):
//    a step that takes a prompt runs its tokens in the same forward as the
//    decode batch and costs what they add to it:
//      F(decode batch + prompt tokens) - F(decode batch);
//  * Separate (SGLang's default, mixed chunks off): prompts run as forward
//    passes of their own between decode steps, and every running request
//    waits for the whole pass: F(prompt tokens).
//
// F(tokens) is the cost model's own forward over that many new tokens
// (evaluate() at a KV context of one token: every GEMM at M = tokens, its
// weights including every expert the tokens route to, the collectives of
// tokens x hidden, every kernel's fixed cost) plus the prompts' causal
// attention math. With DP attention (ep) a prompt's attention runs on one
// DP rank, which the step waits for; its FFN tokens are spread as usual.
//
// How many prompts a step carries: with B requests of OSL output tokens
// served continuously (closed loop: a new request replaces each finished
// one), a request sees a = (B - 1) / OSL arrivals per step (0 at B = 1: a
// request's own prefill is not in its time per output token). Arrivals are
// taken as Poisson: a fraction 1 - e^-a of the steps takes prompts, a / (1 -
// e^-a) of them each, so the average step carries
//   prefill = (1 - e^-a) x cost of one step's prompts.
//
// Not modelled: the host time of a forward that runs outside CUDA graphs
// (prefill batches and mixed steps usually do), chunk budgets
// (max_num_tokens) that split a prompt over steps, and scheduling and
// detokenisation. docs/fidelity.md says how much of the measured time that
// leaves out.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_PREFILL_H
#define HELIX_COST_PREFILL_H

#include "helix/Cost/Hardware.h"
#include "helix/Cost/Layout.h"
#include "helix/Cost/Precision.h"
#include "helix/Cost/Workload.h"
#include "helix/Model/ModelSpec.h"

#include <cstdint>
#include <string>

namespace helix {

/// Causal-attention FLOPs of prefilling one prompt of `tokens` tokens: per
/// layer 2 x T min(T, window) / 2 x heads x (q.k dim + v dim) (MLA prefill
/// runs un-absorbed heads). They run at the gemm_math efficiency of the
/// arithmetic format at M = tokens (compute.gemm_efficiency without a
/// curve) on the GPUs of the prompt's attention (tpa x kvp of one DP rank).
double prefillAttentionFlops(const ModelSpec &model, int64_t tokens);

/// How an engine runs the prompts of arriving requests (see above).
enum class PrefillScheduling { Mixed, Separate };

/// "mixed" | "separate"; false otherwise.
bool parsePrefillScheduling(const std::string &text, PrefillScheduling &out);
const char *stringifyPrefillScheduling(PrefillScheduling s);

/// The average prefill time one decode step of `config` (config.batch
/// requests, their KV context as `workload` gives it) absorbs when prompts
/// of `inputTokens` arrive for requests of `outputTokens` output tokens.
/// 0 at batch 1. `config` must be valid for evaluate().
struct ServedPrefill {
  double arrivalsPerStep = 0;  // a = (B - 1) / OSL
  double stepsWithPrompts = 0; // 1 - e^-a
  double promptsPerStep = 0;   // a / (1 - e^-a), in a step that takes any
  double promptStepS = 0;      // what such a step's prompts cost
  double perStepS = 0;         // stepsWithPrompts x promptStepS
  std::string error;           // evaluate() rejected a forward's batch
};
ServedPrefill servedPrefill(const ModelSpec &model, const Hardware &hw,
                            const Workload &workload, const Config &config,
                            int64_t inputTokens, int64_t outputTokens,
                            PrefillScheduling scheduling);

} // namespace helix

#endif // HELIX_COST_PREFILL_H
