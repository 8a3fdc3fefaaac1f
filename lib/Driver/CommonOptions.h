//===- CommonOptions.h - Options shared by helix subcommands ----*- C++ -*-===//

#ifndef HELIX_TOOLS_HELIX_COMMONOPTIONS_H
#define HELIX_TOOLS_HELIX_COMMONOPTIONS_H

#include "helix/Common/Numbers.h"
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
  /// --engine: price with that engine's kernel and all-reduce curves
  /// (helix/Cost/EngineProfile.h); empty: the presets' own.
  std::string engine;
  std::string context = "1048576"; // as typed: see readInteger
  /// Empty when not given: the hardware's native format (Hardware::
  /// nativeDType). Which of the four were typed (an empty value typed is
  /// an error, not the default).
  std::string dtype;
  std::string weightsDType, kvDType, computeDType;
  bool dtypeGiven[4] = {false, false, false, false};
  bool nvfp4Scales = false;
  bool noNvfp4Scales = false;
  std::string routingSkew; // as typed (addWorkloadOptions sets the default)
  bool balancedExperts = false;
  std::string mtp = "0";  // draft tokens per step, as typed
  std::string acceptance; // as typed (addWorkloadOptions sets the default)
};

/// Number flags are taken as text (CLI11 would clamp integers past int64
/// without a word) and read when the command runs: parseInteger or
/// parseReal (helix/Common/Numbers.h); on failure prints
/// "COMMAND: error: FLAG: expected ..., got 'TEXT'" and returns false.
bool readInteger(const std::string &command, const std::string &flag,
                 const std::string &text, int64_t min, int64_t max,
                 int64_t &out);
bool readReal(const std::string &command, const std::string &flag,
              const std::string &text, double min, double max, double &out);

/// Flushes stdout and reports "COMMAND: error: writing <stdout>: ..." when
/// anything written to it was lost (a full disk, a closed pipe); false then.
bool finishStdout(const std::string &command);

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

/// The hardware as loadHardware reads it and plans record it: --hardware,
/// or "HARDWARE+ENGINE" with --engine.
std::string hardwareSpec(const WorkloadArgs &args);

} // namespace helix::driver

#endif // HELIX_TOOLS_HELIX_COMMONOPTIONS_H
