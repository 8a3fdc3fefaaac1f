//===- TestHardware.h - Idealised hardware for hand-checked tests -*- C++ -*-//

#ifndef HELIX_UNITTESTS_COST_TESTHARDWARE_H
#define HELIX_UNITTESTS_COST_TESTHARDWARE_H

#include "helix/Cost/Hardware.h"

namespace helix {
namespace test {

/// The paper's Appendix A machine: 8000 GB/s of HBM at full efficiency, no
/// kernel overhead, effectively unlimited FLOP/s and memory.
inline Hardware appendixAHardware() {
  Hardware hw;
  hw.name = "appendix-a";
  for (double &p : hw.peakFlops)
    p = 1e30;
  hw.hbmBandwidth = 8000e9;
  hw.hbmCapacityBytes = 1e30;
  hw.nvlinkBandwidth = 900e9;
  hw.nvlinkDomain = 72;
  hw.scaleOutBandwidth = 50e9;
  for (CollectiveParams &c : hw.collectives) {
    c.alphaS = {{2, 0.0}};
    c.busEfficiency = 1.0;
  }
  return hw;
}

} // namespace test
} // namespace helix

#endif // HELIX_UNITTESTS_COST_TESTHARDWARE_H
