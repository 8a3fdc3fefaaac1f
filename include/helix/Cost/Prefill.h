//===- Prefill.h - First-order time of a prompt's prefill -------*- C++ -*-===//
//
// helix plans decode steps. A served decode step also waits for the prefill
// of arriving requests (engines run it between or inside decode steps), so a
// measured time per output token at concurrency B includes, per step, the
// prefills of B/OSL new requests. prefillSeconds() is the first-order
// estimate the fidelity benchmark adds for that (docs/fidelity.md): a prompt
// of T tokens is compute-bound,
//
//   FLOPs = 2 T (active parameters, without the embedding)
//         + per layer, causal attention: 2 T min(T, window) / 2 x heads x
//           (q.k dim + v dim)      (MLA prefill runs un-absorbed heads)
//   time  = FLOPs / (GPUs x peak[compute format] x math efficiency at M = T)
//
// with the math efficiency from the hardware file's gemm_math curve of the
// arithmetic format (compute.gemm_efficiency without one), split evenly over
// the configuration's GPUs. Memory traffic, collectives and fixed kernel
// costs are left out (small next to the math at prompt lengths of
// thousands of tokens).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_PREFILL_H
#define HELIX_COST_PREFILL_H

#include "helix/Cost/Hardware.h"
#include "helix/Cost/Precision.h"
#include "helix/Model/ModelSpec.h"

#include <cstdint>

namespace helix {

/// Floating-point operations of prefilling one prompt of `tokens` tokens.
double prefillFlops(const ModelSpec &model, int64_t tokens);

/// Seconds to prefill one prompt of `tokens` tokens on `gpus` GPUs.
double prefillSeconds(const ModelSpec &model, const Hardware &hw,
                      const Precision &precision, int64_t gpus, int64_t tokens);

/// The prefill time one decode step absorbs, on average, when `batch`
/// requests of `outputTokens` tokens each are served continuously: each
/// request's prefill stalls the others once per its lifetime, so a step
/// carries (batch - 1) / outputTokens prefills (0 for batch 1).
double prefillPerStepSeconds(const ModelSpec &model, const Hardware &hw,
                             const Precision &precision, int64_t gpus,
                             int64_t batch, int64_t inputTokens,
                             int64_t outputTokens);

} // namespace helix

#endif // HELIX_COST_PREFILL_H
