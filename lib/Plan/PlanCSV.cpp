//===- PlanCSV.cpp - CSV of the Pareto points of a plan -------------------===//

#include "helix/Plan/PlanCSV.h"

#include <cstdio>

namespace helix {

void writePlanCSV(std::ostream &os, const PlanResult &r) {
  os << "frontier,strategy,gpus,batch,kvp,tpa,tpf,ep,pp,dp,hopb,hopb_slices,"
        "ttl_s,"
        "tokens_per_sec_per_user,tokens_per_sec_per_gpu,"
        "memory_per_gpu_bytes\n";
  char buf[160];
  for (const std::string &name : r.order)
    for (const PlanPoint &p : r.frontiers.at(name).points) {
      const Layout &l = p.config.layout;
      os << name << ',' << stringifyStrategy(p.strategy).str() << ',' << p.gpus
         << ',' << p.config.batch << ',' << l.kvp << ',' << l.tpa << ','
         << l.tpf << ',' << l.ep << ',' << l.pp << ',' << l.dp << ','
         << (p.hopbUsed() ? 1 : 0) << ',' << p.hopbSlices;
      std::snprintf(buf, sizeof(buf), ",%.9g,%.9g,%.9g,%.0f\n", p.ttlS,
                    p.tokensPerSecPerUser, p.tokensPerSecPerGPU,
                    p.memoryPerGPUBytes);
      os << buf;
    }
}

} // namespace helix
