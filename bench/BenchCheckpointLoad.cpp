//===- BenchCheckpointLoad.cpp - How fast quantized weights load ----------===//
//
// helix-bench-checkpoint-load [--rows N] [--cols K] [--dir DIR]
//
// Writes one quantized linear weight per stored format (FP8 per tensor,
// FP8 128x128 blocks, NVFP4) into a safetensors file, then times what a
// generated program does per weight at start-up: loadStoredBox (the codes
// and the scales of the blocks the box touches) and pack (the resident
// block grid), for the whole matrix and for a half of its rows (a TP
// shard). Prints seconds and nanoseconds per element. A program loads
// every linear weight this way, so ns/element x parameters is its load
// time on this host (Llama-3.1-8B in FP8: 7e9 elements; docs/gpu.md,
// "Measured on a GPU").
//
//===----------------------------------------------------------------------===//

#include "helix/Runtime/Quant.h"
#include "helix/Runtime/Safetensors.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

using namespace helix::rt;
using helix::CheckpointFormat;

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

RawTensor raw(const std::string &name, const std::string &dtype,
              std::vector<int64_t> shape, size_t bytes) {
  return {name, dtype, std::move(shape), std::vector<uint8_t>(bytes)};
}

RawTensor f32(const std::string &name, std::vector<int64_t> shape, size_t count,
              std::mt19937 &g) {
  RawTensor t = raw(name, "F32", std::move(shape), count * 4);
  for (size_t i = 0; i < count; ++i) {
    float v = 0.001f * static_cast<float>(1 + g() % 100);
    std::memcpy(&t.bytes[i * 4], &v, 4);
  }
  return t;
}

int64_t argValue(int argc, char **argv, int &i) {
  if (i + 1 >= argc) {
    std::fprintf(stderr,
                 "helix-bench-checkpoint-load: error: %s needs a value\n",
                 argv[i]);
    std::exit(1);
  }
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(argv[++i], &end, 10);
  // At most 65536: a weight of 2^32 elements (4 GiB of FP8 codes, with the
  // loader's own copies several times that) is already larger than any
  // model's.
  if (!end || *end || errno || v <= 0 || v % 128 || v > 65536) {
    std::fprintf(stderr,
                 "helix-bench-checkpoint-load: error: %s %s: expected a "
                 "positive multiple of 128, at most 65536\n",
                 argv[i - 1], argv[i]);
    std::exit(1);
  }
  return v;
}

} // namespace

static int run(int argc, char **argv);

int main(int argc, char **argv) {
  // A file that cannot be written or read back: one line, exit 1.
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "helix-bench-checkpoint-load: error: %s\n", e.what());
    return 1;
  }
}

static int run(int argc, char **argv) {
  int64_t N = 14336, K = 4096; // Llama-3.1-8B's up projection
  std::string dir = "/tmp";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--rows")
      N = argValue(argc, argv, i);
    else if (a == "--cols")
      K = argValue(argc, argv, i);
    else if (a == "--dir" && i + 1 < argc)
      dir = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: helix-bench-checkpoint-load [--rows N] [--cols K] "
                   "[--dir DIR]\n");
      return 1;
    }
  }
  std::mt19937 g(7);
  size_t n = static_cast<size_t>(N * K);
  std::vector<RawTensor> ts;
  // Codes: any byte but the E4M3 NaNs (0x7f, 0xff).
  RawTensor codes = raw("t.weight", "F8_E4M3", {N, K}, n);
  for (uint8_t &b : codes.bytes)
    b = static_cast<uint8_t>(g() % 0x7f);
  ts.push_back(codes);
  ts.push_back(f32("t.weight_scale", {}, 1, g));
  ts.push_back(f32("t.input_scale", {}, 1, g));
  codes.name = "b.weight";
  ts.push_back(codes);
  ts.push_back(f32("b.weight_scale_inv", {N / 128, K / 128},
                   static_cast<size_t>(N / 128 * K / 128), g));
  RawTensor fp4 = raw("f.weight", "U8", {N, K / 2}, n / 2);
  for (uint8_t &b : fp4.bytes)
    b = static_cast<uint8_t>(g());
  ts.push_back(fp4);
  RawTensor s4 = raw("f.weight_scale", "F8_E4M3", {N, K / 16}, n / 16);
  for (uint8_t &b : s4.bytes)
    b = static_cast<uint8_t>(0x30 + g() % 0x20);
  ts.push_back(s4);
  ts.push_back(f32("f.weight_scale_2", {}, 1, g));
  ts.push_back(f32("f.input_scale", {}, 1, g));
  std::string path = dir + "/helix-bench-checkpoint-load.safetensors";
  writeSafetensorsRaw(path, ts);
  SafetensorsCheckpoint ckpt = SafetensorsCheckpoint::open(path);

  std::printf("helix-bench-checkpoint-load: a %lld x %lld weight, loaded and "
              "packed as a generated program does\n",
              static_cast<long long>(N), static_cast<long long>(K));
  std::printf("%-12s %-14s %10s %10s %12s\n", "format", "box", "load s",
              "pack s", "ns/element");
  struct Case {
    const char *format;
    CheckpointFormat f;
    const char *name;
  } cases[] = {{"fp8-tensor", CheckpointFormat::FP8Tensor, "t.weight"},
               {"fp8-block", CheckpointFormat::FP8Block, "b.weight"},
               {"nvfp4", CheckpointFormat::NVFP4, "f.weight"}};
  for (const Case &c : cases) {
    for (int half = 0; half < 2; ++half) {
      int64_t rows = half ? N / 2 : N;
      double t0 = now();
      ElementBox b =
          loadStoredBox(ckpt, c.f, c.name, {N, K}, {{0, rows}, {0, K}}, {N, K});
      double t1 = now();
      QuantHost q = pack(b);
      double t2 = now();
      if (q.numel() != rows * K) {
        std::fprintf(stderr,
                     "helix-bench-checkpoint-load: error: %s packed "
                     "%lld elements, expected %lld\n",
                     c.format, static_cast<long long>(q.numel()),
                     static_cast<long long>(rows * K));
        return 1;
      }
      std::printf("%-12s %-14s %10.3f %10.3f %12.2f\n", c.format,
                  half ? "rows 0..N/2" : "whole", t1 - t0, t2 - t1,
                  (t2 - t0) / static_cast<double>(rows * K) * 1e9);
    }
  }
  std::remove(path.c_str());
  return 0;
}
