//===- Workload.h - What a decode step serves -------------------*- C++ -*-===//

#ifndef HELIX_COST_WORKLOAD_H
#define HELIX_COST_WORKLOAD_H

#include "helix/Cost/Precision.h"

#include <cstdint>

namespace helix {

/// Every request in the batch has `context` tokens of KV history (the paper's
/// S) and decodes one token per step.
struct Workload {
  int64_t context = 1000000;
  Precision precision;
};

} // namespace helix

#endif // HELIX_COST_WORKLOAD_H
