//===- Main.cpp - helix-calibrate-gpu: the runtime timed on a GPU ---------===//
//
//   helix-calibrate-gpu [--device N] [-o FILE]
//
// Times helix's CUDA runtime on the GPU (CudaTiming.h) and writes the
// measurements file (helix/Calibrate/MeasurementsJSON.h) to FILE (default:
// standard output); progress lines go to standard error. Exit status: 0
// measured, 1 no GPU (one line on standard error, nothing written), 2 the
// timing failed, 3 bad arguments or an unwritable FILE.
//
// `helix calibrate` runs it and fits the hardware file from what it
// writes; on a machine without LLVM, MLIR or MPI (the device bundle,
// scripts/gpu-bundle.sh) it runs alone, and `helix calibrate
// --measurements FILE` fits its file elsewhere. It links the runtime's
// kernels, cuBLAS and NCCL, and of the compiler only the measurement
// records and their file format.
//
//===----------------------------------------------------------------------===//

#include "CudaTiming.h"

#include "helix/Calibrate/MeasurementsJSON.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

namespace {
const char *kCmd = "helix-calibrate-gpu";

int usage(const std::string &error) {
  std::cerr << kCmd << ": error: " << error << "\n"
            << "usage: " << kCmd << " [--device N] [-o FILE]\n";
  return 3;
}
} // namespace

int main(int argc, char **argv) {
  using namespace helix::calibrate;
  TimingOptions options;
  std::string out = "-";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << "usage: " << kCmd << " [--device N] [-o FILE]\n"
                << "Times helix's CUDA runtime on GPU N (default 0) and "
                   "writes the measurements file\n(helix calibrate "
                   "--measurements FILE fits it).\n";
      return 0;
    }
    if (i + 1 >= argc)
      return usage(a + ": missing value");
    std::string v = argv[++i];
    if (a == "--device") {
      char *end = nullptr;
      long d = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end || d < 0 || d > 1023)
        return usage("--device: expected a GPU index from 0 to 1023, got \"" +
                     v + "\"");
      options.device = static_cast<int>(d);
    } else if (a == "-o" || a == "--out") {
      out = v;
    } else {
      return usage("unknown option " + a);
    }
  }
  options.progress = [](const std::string &line) {
    std::cerr << kCmd << ": " << line << "\n";
  };
  MeasurementSet set;
  std::string reason;
  int status = timeRuntimeOnGPU(options, set, reason);
  if (status == static_cast<int>(TimingStatus::NoGPU)) {
    std::cerr << kCmd << ": no CUDA GPU: " << reason << "; nothing measured\n";
    return 1;
  }
  if (status != static_cast<int>(TimingStatus::Measured)) {
    std::cerr << kCmd << ": error: timing failed: " << reason << "\n";
    return 2;
  }
  std::string text = writeMeasurementsJSON(set);
  if (out == "-") {
    std::cout << text;
    return std::cout ? 0 : 3;
  }
  std::ofstream f(out);
  f << text;
  if (!f) {
    std::cerr << kCmd << ": error: cannot write " << out << "\n";
    return 3;
  }
  return 0;
}
