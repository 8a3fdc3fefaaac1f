//===- MoeRouting.h - The router's configuration for the device -*- C++ -*-===//
//
// RouterConfig (Ops.h) as cuda::RouterParams, the plain data moeRoute's
// kernel takes: one conversion for the backend and the kernel tests.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_LIB_MOEROUTING_H
#define HELIX_RUNTIME_LIB_MOEROUTING_H

#include "CudaKernels.h"

#include "helix/Runtime/Ops.h"

namespace helix {
namespace rt {
namespace cuda {

inline RouterParams routerParams(const RouterConfig &c, int64_t experts) {
  RouterParams p;
  p.experts = experts;
  p.topK = c.topK;
  p.groups = c.numGroups;
  p.topkGroups = c.topkGroups;
  p.sigmoid = c.scoring == RouterConfig::Sigmoid;
  p.groupMax = c.groupScore == RouterConfig::GroupMax;
  p.normTopkProb = c.normTopkProb;
  p.scaling = c.routedScalingFactor;
  return p;
}

} // namespace cuda
} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_LIB_MOEROUTING_H
