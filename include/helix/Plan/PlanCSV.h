//===- PlanCSV.h - CSV of the Pareto points of a plan -----------*- C++ -*-===//

#ifndef HELIX_PLAN_PLANCSV_H
#define HELIX_PLAN_PLANCSV_H

#include "helix/Cost/Search.h"

#include <ostream>

namespace helix {

/// Writes one row per Pareto point, frontier by frontier, under the header
///   frontier,strategy,gpus,batch,kvp,tpa,tpf,ep,pp,dp,hopb,ttl_s,
///   tokens_per_sec_per_user,tokens_per_sec_per_gpu,memory_per_gpu_bytes
void writePlanCSV(std::ostream &os, const PlanResult &result);

} // namespace helix

#endif // HELIX_PLAN_PLANCSV_H
