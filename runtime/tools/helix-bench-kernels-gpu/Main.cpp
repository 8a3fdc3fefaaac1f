//===- Main.cpp - helix-bench-kernels-gpu: the GPU half -------------------===//
//
//   helix-bench-kernels-gpu --measure [--device N] [--lengths 131072,...]
//                           [--json FILE] [--check]
//   helix-bench-kernels-gpu --devices
//
// The half of helix-bench-kernels that runs on a GPU (docs/gpu.md,
// "Measured on a GPU"): achieved bandwidth of the CUDA backend's streaming
// kernels against a device-to-device copy (Measure.h), and the count of
// CUDA devices in view. It links the runtime's kernels and the CUDA
// runtime only: no LLVM, MLIR or MPI, so that it runs from the device
// bundle (scripts/gpu-bundle.sh) on a machine that has none of them.
// `helix-bench-kernels --measure` and `--devices` run it.
//
//===----------------------------------------------------------------------===//

#include "Measure.h"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char **argv) {
  using namespace helix::benchkernels;
  CLI::App app{"helix-bench-kernels-gpu: achieved bandwidth of the CUDA "
               "backend's streaming kernels on the GPU"};
  MeasureOptions mo;
  bool measured = false, devices = false;
  app.add_flag("--measure", measured,
               "time the streaming kernels on the GPU: achieved bandwidth "
               "against a device-to-device copy");
  app.add_option("--device", mo.device, "the GPU")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  app.add_option("--lengths", mo.lengths,
                 "tokens of a rank's KV shard for attention")
      ->delimiter(',')
      ->check(CLI::Range(int64_t(1), int64_t(1) << 26));
  app.add_option("--json", mo.json, "also write the figures as JSON");
  app.add_flag("--check", mo.check,
               "exit 1 when decode attention misses its target");
  app.add_flag("--devices", devices,
               "print how many CUDA devices are in view and exit");
  CLI11_PARSE(app, argc, argv);
  if (devices) {
    std::string why;
    int n = cudaDevices(why);
    std::cout << n << "\n";
    if (!n)
      std::cerr << "helix-bench-kernels-gpu: " << why << "\n";
    return 0;
  }
  if (!measured) {
    std::cerr << "helix-bench-kernels-gpu: error: give --measure or "
                 "--devices\n";
    return 1;
  }
  return measure(mo, std::cout);
}
