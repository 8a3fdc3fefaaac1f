//===- Driver.h - The helix command line, callable in process ---*- C++ -*-===//
//
// `helix import|plan|cost|compile|calibrate` as a function: the C API
// (helix-c/Driver.h) and the Python package call it, the helix executable
// is its main(). One implementation of the options, their checks and their
// one-line errors, whichever way in.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_DRIVER_DRIVER_H
#define HELIX_DRIVER_DRIVER_H

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace helix::driver {

/// Where one run reads and writes.
struct Invocation {
  /// `args[0]` is the subcommand ("plan"); no program name.
  std::vector<std::string> args;
  /// What `--model -` (and `helix import -`) reads: config.json text or
  /// helix model IR. Empty: the process's standard input.
  std::string input;
  bool hasInput = false;
  /// What messages and the default model name call the input, e.g.
  /// "Llama-3.1-8B.json" (empty: "<input>" in messages, and the model is
  /// named by its model_type).
  std::string inputName;
  /// Files to keep in memory instead of writing: an output path equal to a
  /// key (e.g. `--json <plan.json>`) fills its value. Other paths are
  /// written to the file system as usual.
  std::map<std::string, std::string> memoryFiles;
};

/// What a run printed and returned.
struct Outcome {
  int exitCode = 1;
  std::string out; ///< standard output
  std::string err; ///< standard error: the one-line errors and warnings
};

/// Runs the command line in process. Never throws and never exits the
/// process: a bad option, a bad file or a failed pass is a non-zero
/// exitCode with the CLI's message in `err`.
Outcome runHelix(Invocation &invocation);

/// The executable: `helix ARGS...` on the process's streams.
int helixMain(int argc, char **argv);

} // namespace helix::driver

#endif // HELIX_DRIVER_DRIVER_H
