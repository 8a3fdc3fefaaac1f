//===- CalibrateCommand.cpp - helix calibrate -----------------------------===//
//
// Times helix's own CUDA runtime on the GPU in view (helix-calibrate-gpu,
// helix/Calibrate/Timing.h), fits kernel curves to the times and writes a
// hardware file on a preset that `helix plan/cost --hardware FILE` read
// (docs/gpu.md, "helix calibrate"). Without a GPU: one line on stderr, exit
// 1. --measurements fits a file that --save-measurements kept, no GPU needed.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CommonOptions.h"
#include "OutputFile.h"
#include "Streams.h"

#include "helix/Calibrate/Fit.h"
#include "helix/Calibrate/MeasurementsJSON.h"
#include "helix/Calibrate/Timing.h"
#include "helix/Calibrate/Writer.h"
#include "helix/Cost/Hardware.h"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

namespace helix::driver {

namespace {
struct CalibrateArgs {
  std::string out = "-";
  std::string base;
  std::string name;
  std::string device = "0"; // as typed (readInteger)
  std::string measurements;
  std::string saveMeasurements;
};

const char *kCmd = "helix calibrate";

int fail(const std::string &message) {
  cliErr() << kCmd << ": error: " << message << "\n";
  return 1;
}

/// helix-calibrate-gpu beside this executable (the build tree's bin/ and
/// an installed bin/ alike).
std::vector<std::string> timerCandidates() {
  std::vector<std::string> c;
#ifdef HELIX_HAVE_CALIBRATE_GPU
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) {
    std::string path(exe, static_cast<size_t>(n));
    size_t slash = path.rfind('/');
    if (slash != std::string::npos)
      c.push_back(path.substr(0, slash) + "/helix-calibrate-gpu");
  }
#endif
  return c;
}

/// The one line of the no-GPU path (it runs in CI).
int noGPU(const std::string &reason) {
  cliErr() << kCmd << ": no CUDA GPU: " << reason << "; nothing measured\n";
  return 1;
}
} // namespace

static int runCalibrate(const CalibrateArgs &args) {
  if (!args.base.empty() && !hardwarePresetJSON(args.base)) {
    std::string names;
    for (const std::string &n : listHardwarePresets())
      names += (names.empty() ? "" : ", ") + n;
    return fail("--base: '" + args.base + "' is not a preset (" + names + ")");
  }
  int64_t device = 0;
  if (!readInteger(kCmd, "--device", args.device, 0, 1023, device))
    return 1;

  calibrate::MeasurementSet set;
  std::string error;
  if (!args.measurements.empty()) {
    std::ifstream in(args.measurements);
    if (!in)
      return fail("cannot read " + args.measurements);
    std::stringstream text;
    text << in.rdbuf();
    if (!calibrate::parseMeasurementsJSON(text.str(), args.measurements, set,
                                          error))
      return fail(error);
  } else {
    std::vector<std::string> timers = timerCandidates();
    if (timers.empty())
      return noGPU("helix was built without the CUDA backend "
                   "(HELIX_ENABLE_CUDA=OFF)");
    calibrate::TimingOptions options;
    options.device = static_cast<int>(device);
    options.progress = [](const std::string &line) {
      cliErr() << kCmd << ": " << line << "\n";
    };
    calibrate::TimingStatus status =
        calibrate::timeOnGPU(timers, options, set, error);
    if (status == calibrate::TimingStatus::NoGPU)
      return noGPU(error);
    if (status != calibrate::TimingStatus::Measured)
      return fail("timing failed: " + error);
  }
  if (!args.saveMeasurements.empty() &&
      !writeOutputFile(kCmd, args.saveMeasurements, [&](std::ostream &os) {
        os << calibrate::writeMeasurementsJSON(set);
      }))
    return 1;

  std::string base = args.base;
  if (base.empty()) {
    base = calibrate::presetForGPU(set.gpu);
    if (base.empty())
      return fail("no preset matches the GPU '" + set.gpu +
                  "': name the one to build on with --base");
  }
  Hardware hw;
  if (!loadHardware(base, hw, error))
    return fail(error);
  calibrate::Calibration calibration;
  if (!calibrate::fitCalibration(set, hw, calibration, error))
    return fail(error);
  std::string text = calibrate::writeHardwareJSON(calibration, base, args.name);
  // What is written must load as the cost model reads it.
  Hardware check;
  if (!parseHardwareJSON(text, args.out, check, error))
    return fail("internal: the calibrated file does not load: " + error);
  if (!writeOutputFile(kCmd, args.out, [&](std::ostream &os) { os << text; }))
    return 1;
  if (args.out != "-")
    cliErr() << kCmd << ": wrote " << args.out << " ('" << check.name
             << "', on " << base << ")\n";
  return 0;
}

Action addCalibrateCommand(CLI::App &app) {
  auto args = std::make_shared<CalibrateArgs>();
  CLI::App *cmd = app.add_subcommand(
      "calibrate",
      "Time helix's CUDA runtime on this GPU and write a hardware file of "
      "measured kernel curves (on a preset) for --hardware");
  cmd->add_option("--out,-o", args->out, "output hardware file (- = stdout)")
      ->capture_default_str();
  cmd->add_option("--base", args->base,
                  "the preset the file builds on (default: the one the GPU's "
                  "name matches)");
  cmd->add_option("--name", args->name,
                  "the file's \"name\" (default: <base>-calibrated)");
  cmd->add_option("--device", args->device,
                  "the GPU whose kernels are timed (collectives use every GPU "
                  "in view)")
      ->capture_default_str();
  cmd->add_option("--measurements", args->measurements,
                  "fit the measurements of this file (--save-measurements) "
                  "instead of timing a GPU");
  cmd->add_option("--save-measurements", args->saveMeasurements,
                  "also write what was timed to this file");
  return [args] { return runCalibrate(*args); };
}

} // namespace helix::driver
