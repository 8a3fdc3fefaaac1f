//===- MeasurementsJSONTest.cpp - Measurement files and preset names -----===//

#include "helix/Calibrate/MeasurementsJSON.h"
#include "helix/Calibrate/Timing.h"

#include "Synthetic.h"

#include "gtest/gtest.h"

#include <sys/stat.h>

#include <fstream>

using namespace helix;
using namespace helix::calibrate;

namespace {

MeasurementSet sample() {
  MeasurementSet set = test::namedSet();
  set.notMeasured = {"grouped_gemm (not timed)"};
  set.smCount = 132;
  set.methods["gemm"] = "dequantize + SGEMM";
  set.gemm.push_back({DType::FP8, 4, 4096, 14336, 3.25e-5, 9});
  set.attention.push_back(
      {AttentionKind::MLA, DType::BF16, 8, 1, 16, 576, 8192, 1.5e-3, 5});
  set.elementwise.push_back({"rope 64x128 b=8", 2.5e-6, 9});
  set.collectives.push_back({CollectiveKind::AllToAll, 4, 65536, 1.9e-5, 5});
  return set;
}

TEST(CalibrateMeasurementsJSON, RoundTrip) {
  MeasurementSet in = sample();
  MeasurementSet out;
  std::string error;
  ASSERT_TRUE(
      parseMeasurementsJSON(writeMeasurementsJSON(in), "m.json", out, error))
      << error;
  EXPECT_EQ(out.gpu, in.gpu);
  EXPECT_EQ(out.driver, in.driver);
  EXPECT_EQ(out.date, in.date);
  EXPECT_EQ(out.environment, in.environment);
  EXPECT_EQ(out.smCount, 132);
  EXPECT_EQ(out.subject, in.subject);
  EXPECT_EQ(out.methods, in.methods);
  EXPECT_EQ(out.notMeasured, in.notMeasured);
  ASSERT_EQ(out.gemm.size(), 1u);
  EXPECT_EQ(out.gemm[0].format, DType::FP8);
  EXPECT_EQ(out.gemm[0].k, 14336);
  EXPECT_EQ(out.gemm[0].seconds, 3.25e-5);
  EXPECT_EQ(out.gemm[0].runs, 9);
  ASSERT_EQ(out.attention.size(), 1u);
  EXPECT_EQ(out.attention[0].kind, AttentionKind::MLA);
  EXPECT_EQ(out.attention[0].qHeads, 16);
  EXPECT_EQ(out.attention[0].kvLength, 8192);
  EXPECT_EQ(attentionCurveName(out.attention[0]), std::string("mla_few_heads"));
  ASSERT_EQ(out.elementwise.size(), 1u);
  EXPECT_EQ(out.elementwise[0].kernel, "rope 64x128 b=8");
  ASSERT_EQ(out.collectives.size(), 1u);
  EXPECT_EQ(out.collectives[0].op, CollectiveKind::AllToAll);
  EXPECT_EQ(out.collectives[0].bytes, 65536);
}

TEST(CalibrateMeasurementsJSON, BadFilesAreOneLineErrors) {
  MeasurementSet out;
  std::string error;
  EXPECT_FALSE(parseMeasurementsJSON("{", "m.json", out, error));
  EXPECT_EQ(error, "m.json: not valid JSON (byte 2)");
  EXPECT_FALSE(parseMeasurementsJSON("{}", "m.json", out, error));
  EXPECT_EQ(error, "m.json: field 'format' must be "
                   "\"helix-calibrate-measurements\" (a file written by "
                   "helix calibrate --save-measurements)");
  const std::string head =
      R"({"format": "helix-calibrate-measurements", "version": 1, )";
  EXPECT_FALSE(parseMeasurementsJSON(
      head + R"("gemm": [{"format": "bf16", "m": 1, "n": 8, "k": 8}]})",
      "m.json", out, error));
  EXPECT_EQ(error, "m.json: field 'gemm[0].seconds' is missing");
  EXPECT_FALSE(parseMeasurementsJSON(
      head + R"("gemm": [{"format": "fp6", "m": 1, "n": 8, "k": 8,
                          "seconds": 1}]})",
      "m.json", out, error));
  EXPECT_EQ(error, "m.json: field 'gemm[0].format' must be fp4, fp8 or bf16, "
                   "got 'fp6'");
  EXPECT_FALSE(parseMeasurementsJSON(
      head + R"("gemm": [{"format": "bf16", "m": 1.5, "n": 8, "k": 8,
                          "seconds": 1}]})",
      "m.json", out, error));
  EXPECT_EQ(error, "m.json: field 'gemm[0].m' must be an integer, got 1.5");
  EXPECT_FALSE(parseMeasurementsJSON(
      head + R"("gemm": [{"format": "bf16", "m": 1, "n": 8, "k": 8,
                          "seconds": -2e-6}]})",
      "m.json", out, error));
  EXPECT_EQ(error, "m.json: gemm[0] (bf16 m=1 n=8 k=8): seconds must be a "
                   "positive finite number (below 1e6), got -2e-06");
  EXPECT_FALSE(parseMeasurementsJSON(
      head + R"("attention": [{"kind": "mha", "kv_format": "bf16"}]})",
      "m.json", out, error));
  EXPECT_EQ(error, "m.json: field 'attention[0].kind' must be gqa or mla, "
                   "got 'mha'");
  EXPECT_FALSE(parseMeasurementsJSON(
      head + R"("collectives": [{"op": "all_sum", "gpus": 2, "bytes": 8,
                                 "seconds": 1e-5}]})",
      "m.json", out, error));
  EXPECT_EQ(error, "m.json: field 'collectives[0].op' must be a collective "
                   "kind (all_reduce, all_gather, reduce_scatter, "
                   "all_to_all, ...), got 'all_sum'");
  EXPECT_FALSE(
      parseMeasurementsJSON(head + R"("gemm": {}})", "m.json", out, error));
  EXPECT_EQ(error, "m.json: field 'gemm' must be an array");
  // The GPU's SM count, where recorded, is a whole number of SMs.
  for (const char *bad :
       {"0", "-1", "1025", "1.5", "9223372036854775808", "\"132\"", "null"}) {
    EXPECT_FALSE(parseMeasurementsJSON(head + R"("sm_count": )" + bad + "}",
                                       "m.json", out, error))
        << bad;
    EXPECT_NE(error.find("m.json: field 'sm_count' must be an integer"),
              std::string::npos)
        << error;
  }
  // Nothing measured parses (the fit refuses it).
  EXPECT_TRUE(
      parseMeasurementsJSON(head + R"("gpu": "X"})", "m.json", out, error))
      << error;
  EXPECT_TRUE(out.empty());
}

TEST(CalibrateTiming, PresetForGPUName) {
  EXPECT_EQ(presetForGPU("NVIDIA H100 80GB HBM3"), "h100");
  EXPECT_EQ(presetForGPU("NVIDIA H100 NVL"), "h100");
  EXPECT_EQ(presetForGPU("NVIDIA H200"), "h200");
  EXPECT_EQ(presetForGPU("NVIDIA B200"), "b200");
  EXPECT_EQ(presetForGPU("NVIDIA GB200"), "gb200-nvl72");
  EXPECT_EQ(presetForGPU("NVIDIA GB300"), "gb300-nvl72");
  EXPECT_EQ(presetForGPU("NVIDIA A100-SXM4-80GB"), "");
}

/// An executable script standing in for helix-calibrate-gpu.
std::string fakeTimer(const std::string &name, const std::string &body) {
  std::string path = ::testing::TempDir() + "/" + name;
  {
    std::ofstream f(path);
    f << "#!/bin/sh\n" << body;
  }
  chmod(path.c_str(), 0755);
  return path;
}

TEST(CalibrateTiming, MissingTimerIsNoGPU) {
  MeasurementSet set;
  std::string reason;
  EXPECT_EQ(timeOnGPU({"/nonexistent/helix-calibrate-gpu"}, TimingOptions(),
                      set, reason),
            TimingStatus::NoGPU);
  EXPECT_EQ(reason, "helix-calibrate-gpu is not installed (looked for "
                    "/nonexistent/helix-calibrate-gpu)");
  // A file that is not executable.
  EXPECT_EQ(
      timeOnGPU({HELIX_SOURCE_DIR "/README.md"}, TimingOptions(), set, reason),
      TimingStatus::NoGPU);
  EXPECT_EQ(reason, "cannot run " HELIX_SOURCE_DIR "/README.md (not "
                    "executable)");
}

// The protocol with helix-calibrate-gpu: its arguments, its progress lines,
// its exit status and the file it writes.
TEST(CalibrateTiming, TimerProtocol) {
  MeasurementSet set;
  std::string reason;
  std::vector<std::string> progress;
  TimingOptions options;
  options.device = 3;
  options.progress = [&](const std::string &l) { progress.push_back(l); };

  // No GPU: exit 1 with its one line; the reason is CUDA's.
  std::string none = fakeTimer(
      "timer-nogpu", "echo 'helix-calibrate-gpu: no CUDA GPU: "
                     "cudaGetDeviceCount: no CUDA-capable device is detected; "
                     "nothing measured' >&2; exit 1\n");
  EXPECT_EQ(timeOnGPU({none}, options, set, reason), TimingStatus::NoGPU);
  EXPECT_EQ(reason, "cudaGetDeviceCount: no CUDA-capable device is detected");

  // A failure: exit 2 with its error line.
  std::string bad = fakeTimer(
      "timer-fails", "echo 'helix-calibrate-gpu: timing the GEMM path' >&2\n"
                     "echo 'helix-calibrate-gpu: error: timing failed: "
                     "cudaMalloc: out of memory' >&2; exit 2\n");
  EXPECT_EQ(timeOnGPU({bad}, options, set, reason), TimingStatus::Failed);
  EXPECT_EQ(reason, "cudaMalloc: out of memory");
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_EQ(progress[0], "timing the GEMM path");

  // Measured: the arguments are --device N -o FILE, and FILE is read.
  std::string text = writeMeasurementsJSON(sample());
  std::string data = ::testing::TempDir() + "/timer-sample.json";
  {
    std::ofstream f(data);
    f << text;
  }
  std::string good = fakeTimer(
      "timer-ok", "[ \"$1\" = --device ] && [ \"$2\" = 3 ] && [ \"$3\" = -o ] "
                  "|| exit 9\ncp '" +
                      data + "' \"$4\"\n");
  ASSERT_EQ(timeOnGPU({good}, options, set, reason), TimingStatus::Measured)
      << reason;
  EXPECT_EQ(set.gpu, sample().gpu);
  ASSERT_EQ(set.gemm.size(), 1u);
  EXPECT_EQ(set.gemm[0].k, 14336);

  // Any other exit status, or a file that does not parse: Failed.
  std::string odd = fakeTimer("timer-odd", "exit 9\n");
  EXPECT_EQ(timeOnGPU({odd}, options, set, reason), TimingStatus::Failed);
  EXPECT_EQ(reason, odd + " exited with status 9");
  std::string junk = fakeTimer("timer-junk", "echo '{' > \"$4\"\n");
  EXPECT_EQ(timeOnGPU({junk}, options, set, reason), TimingStatus::Failed);
  EXPECT_EQ(reason.rfind(junk + ":", 0), 0u) << reason;
}

} // namespace
