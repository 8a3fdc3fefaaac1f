//===- Driver.cpp - The helix command line, callable in process -----------===//

#include "helix/Driver/Driver.h"

#include "Commands.h"
#include "Streams.h"

#include <exception>
#include <iostream>
#include <iterator>
#include <sstream>

namespace helix::driver {

namespace {
/// The streams of the run in progress on this thread; null: the process's.
struct RunState {
  std::ostream *out = nullptr;
  std::ostream *err = nullptr;
  Invocation *invocation = nullptr;
};
thread_local RunState current;

/// Installs a run's streams for its duration.
class ScopedRun {
public:
  ScopedRun(std::ostream &out, std::ostream &err, Invocation *invocation)
      : saved(current) {
    current = RunState{&out, &err, invocation};
  }
  ~ScopedRun() { current = saved; }
  ScopedRun(const ScopedRun &) = delete;
  ScopedRun &operator=(const ScopedRun &) = delete;

private:
  RunState saved;
};

/// Builds the command line, parses `args` (the subcommand first) and runs
/// the chosen command; CLI11's own messages (--help, a bad option) go to
/// the run's streams.
int parseAndRun(const std::string &programName, std::vector<std::string> args) {
  CLI::App app{"helix: a sharding planner and compiler for LLM decoding "
               "(Helix parallelism: KVP x TPA attention, TPF x EP FFN)",
               programName};
  app.set_version_flag("--version", std::string("helix ") + HELIX_VERSION);
  app.require_subcommand(1);

  std::vector<std::pair<CLI::App *, Action>> commands;
  auto add = [&](Action (*make)(CLI::App &)) {
    size_t before = app.get_subcommands({}).size();
    Action action = make(app);
    commands.emplace_back(app.get_subcommands({})[before], action);
  };
  add(addImportCommand);
  add(addPlanCommand);
  add(addCostCommand);
  add(addCompileCommand);
  add(addCalibrateCommand);
  add(addValidateConfigCommand);

  // CLI11 takes the arguments last first.
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError &e) {
    return app.exit(e, cliOut(), cliErr());
  }
  for (auto &[sub, action] : commands)
    if (sub->parsed())
      return action();
  return 1;
}
} // namespace

std::ostream &cliOut() { return current.out ? *current.out : std::cout; }
std::ostream &cliErr() { return current.err ? *current.err : std::cerr; }
bool cliOutIsProcessStdout() { return !current.out; }

bool readCliInput(std::string &text, std::string &error) {
  if (current.invocation && current.invocation->hasInput) {
    text = current.invocation->input;
    return true;
  }
  text.assign(std::istreambuf_iterator<char>(std::cin),
              std::istreambuf_iterator<char>());
  if (std::cin.bad()) {
    error = "<stdin>: cannot read standard input";
    return false;
  }
  return true;
}

std::string cliInputName() {
  if (current.invocation && current.invocation->hasInput)
    return current.invocation->inputName;
  return "<stdin>";
}

std::string *cliMemoryFile(const std::string &path) {
  if (!current.invocation)
    return nullptr;
  auto it = current.invocation->memoryFiles.find(path);
  return it == current.invocation->memoryFiles.end() ? nullptr : &it->second;
}

Outcome runHelix(Invocation &invocation) {
  Outcome outcome;
  std::ostringstream out, err;
  {
    ScopedRun run(out, err, &invocation);
    try {
      outcome.exitCode = parseAndRun("helix", invocation.args);
    } catch (const std::exception &e) {
      err << "helix: error: " << e.what() << "\n";
      outcome.exitCode = 1;
    } catch (...) {
      err << "helix: error: unexpected failure\n";
      outcome.exitCode = 1;
    }
  }
  outcome.out = out.str();
  outcome.err = err.str();
  return outcome;
}

int helixMain(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return parseAndRun(argc > 0 ? argv[0] : "helix", std::move(args));
}

} // namespace helix::driver
