//===- Commands.h - helix driver subcommands --------------------*- C++ -*-===//

#ifndef HELIX_TOOLS_HELIX_COMMANDS_H
#define HELIX_TOOLS_HELIX_COMMANDS_H

#include <CLI/CLI.hpp>

#include <functional>

namespace helix::driver {

/// A subcommand adds itself to `app` and returns the action to run when it
/// was selected; the action returns the process exit code.
using Action = std::function<int()>;

Action addImportCommand(CLI::App &app);
Action addPlanCommand(CLI::App &app);
Action addCostCommand(CLI::App &app);
Action addCompileCommand(CLI::App &app);
Action addCalibrateCommand(CLI::App &app);
Action addValidateConfigCommand(CLI::App &app);

} // namespace helix::driver

#endif // HELIX_TOOLS_HELIX_COMMANDS_H
