//===- TestHardware.h - Hardware and models for the cost tests --*- C++ -*-===//

#ifndef HELIX_UNITTESTS_COST_TESTHARDWARE_H
#define HELIX_UNITTESTS_COST_TESTHARDWARE_H

#include "helix/Cost/Hardware.h"
#include "helix/Import/HFConfig.h"

#include "gtest/gtest.h"

#include <string>

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

/// A preset hardware file (data/hardware), by name.
inline Hardware presetHardware(const std::string &name = "gb200-nvl72") {
  Hardware hw;
  std::string error;
  EXPECT_TRUE(loadHardware(name, hw, error)) << error;
  return hw;
}

/// A config.json of test/Inputs/models, imported.
inline ModelSpec importTestModel(const std::string &file) {
  ModelSpec m;
  std::string error;
  EXPECT_TRUE(importHFConfigFile(std::string(HELIX_SOURCE_DIR) +
                                     "/test/Inputs/models/" + file,
                                 ImportOptions{}, m, error))
      << error;
  return m;
}

} // namespace test
} // namespace helix

#endif // HELIX_UNITTESTS_COST_TESTHARDWARE_H
