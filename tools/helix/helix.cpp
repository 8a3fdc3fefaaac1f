//===- helix.cpp - the helix command-line driver --------------------------===//
//
// Thin: each subcommand parses its options and calls the helix libraries.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include <iostream>
#include <vector>

int main(int argc, char **argv) {
  CLI::App app{"helix: a sharding planner and compiler for LLM decoding "
               "(Helix parallelism: KVP x TPA attention, TPF x EP FFN)"};
  app.set_version_flag("--version", std::string("helix ") + HELIX_VERSION);
  app.require_subcommand(1);

  std::vector<std::pair<CLI::App *, helix::driver::Action>> commands;
  auto add = [&](helix::driver::Action (*make)(CLI::App &)) {
    size_t before = app.get_subcommands({}).size();
    helix::driver::Action action = make(app);
    commands.emplace_back(app.get_subcommands({})[before], action);
  };
  add(helix::driver::addImportCommand);
  add(helix::driver::addPlanCommand);
  add(helix::driver::addCostCommand);
  add(helix::driver::addCompileCommand);
  add(helix::driver::addCalibrateCommand);

  CLI11_PARSE(app, argc, argv);
  for (auto &[sub, action] : commands)
    if (sub->parsed())
      return action();
  return 1;
}
