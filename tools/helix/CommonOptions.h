//===- CommonOptions.h - Options shared by helix subcommands ----*- C++ -*-===//

#ifndef HELIX_TOOLS_HELIX_COMMONOPTIONS_H
#define HELIX_TOOLS_HELIX_COMMONOPTIONS_H

#include "helix/Cost/Hardware.h"
#include "helix/Cost/Workload.h"
#include "helix/Model/ModelSpec.h"

#include <CLI/CLI.hpp>

#include <string>

namespace helix::driver {

/// --model, --hardware, --context and the precision flags.
struct WorkloadArgs {
  std::string model;
  std::string hardware = "gb200-nvl72";
  int64_t context = 1048576;
  std::string dtype = "fp4";
  std::string weightsDType, kvDType, computeDType;
  bool nvfp4Scales = false;
};

/// Adds the shared options to `cmd`; `contextRequired` makes --context
/// mandatory.
void addWorkloadOptions(CLI::App *cmd, WorkloadArgs &args);

/// The loaded inputs of a planning command.
struct LoadedWorkload {
  ModelSpec model;
  Hardware hardware;
  Workload workload;
};

/// Loads the model (a config.json, or helix model IR in a .mlir file), the
/// hardware and the precision. On failure prints one line prefixed with
/// `command` to stderr and returns false.
bool loadWorkload(const WorkloadArgs &args, const std::string &command,
                  LoadedWorkload &out);

} // namespace helix::driver

#endif // HELIX_TOOLS_HELIX_COMMONOPTIONS_H
