//===- Driver.cpp - plan, cost and compile for the C API ------------------===//

#include "helix-c/Driver.h"

#include "helix/Driver/Driver.h"

#include <new>
#include <string>
#include <vector>

namespace {
struct Result {
  helix::driver::Outcome outcome;
  std::string product;
};

Result *unwrap(HelixResult r) { return static_cast<Result *>(r.ptr); }

MlirStringRef ref(const std::string &s) {
  return mlirStringRefCreate(s.data(), s.size());
}

/// Runs `helix COMMAND --model - ARGS... [OUTFLAG <product>]` on `model`;
/// the product is the memory file OUTFLAG names, else standard output.
HelixResult run(const char *command, MlirStringRef model, intptr_t nargs,
                const char *const *args, const char *outFlag) {
  Result *result = new (std::nothrow) Result;
  if (!result)
    return HelixResult{nullptr};
  helix::driver::Invocation inv;
  inv.args = {command, "--model", "-"};
  for (intptr_t i = 0; i < nargs; ++i)
    inv.args.emplace_back(args[i] ? args[i] : "");
  const std::string product = "<product>";
  if (outFlag) {
    inv.args.push_back(outFlag);
    inv.args.push_back(product);
    inv.memoryFiles[product];
  }
  inv.input.assign(model.data, model.length);
  inv.hasInput = true;
  result->outcome = helix::driver::runHelix(inv);
  result->product = outFlag ? inv.memoryFiles[product] : result->outcome.out;
  return HelixResult{result};
}
} // namespace

HelixResult helixPlan(MlirStringRef model, intptr_t nargs,
                      const char *const *args) {
  return run("plan", model, nargs, args, "--json");
}

HelixResult helixCost(MlirStringRef model, intptr_t nargs,
                      const char *const *args) {
  return run("cost", model, nargs, args, "--json");
}

HelixResult helixCompile(MlirStringRef model, intptr_t nargs,
                         const char *const *args) {
  return run("compile", model, nargs, args, nullptr);
}

HelixResult helixRun(intptr_t nargs, const char *const *args,
                     MlirStringRef input) {
  Result *result = new (std::nothrow) Result;
  if (!result)
    return HelixResult{nullptr};
  helix::driver::Invocation inv;
  for (intptr_t i = 0; i < nargs; ++i)
    inv.args.emplace_back(args[i] ? args[i] : "");
  inv.input.assign(input.data, input.length);
  inv.hasInput = true;
  result->outcome = helix::driver::runHelix(inv);
  result->product = result->outcome.out;
  return HelixResult{result};
}

int helixResultGetExitCode(HelixResult result) {
  return unwrap(result) ? unwrap(result)->outcome.exitCode : 1;
}

MlirStringRef helixResultGetProduct(HelixResult result) {
  static const std::string empty;
  return ref(unwrap(result) ? unwrap(result)->product : empty);
}

MlirStringRef helixResultGetOutput(HelixResult result) {
  static const std::string empty;
  return ref(unwrap(result) ? unwrap(result)->outcome.out : empty);
}

MlirStringRef helixResultGetError(HelixResult result) {
  static const std::string outOfMemory = "helix: error: out of memory\n";
  return ref(unwrap(result) ? unwrap(result)->outcome.err : outOfMemory);
}

void helixResultDestroy(HelixResult result) { delete unwrap(result); }
