//===- DriverTest.cpp - runDecode in-process (one rank) -------------------===//
//
// A toy program whose logits make token t generate (t + 1) % 8 runs through
// the real driver: schedule, dumps, and the errors every rank reports
// (wrong rank count, token out of range, prompt longer than the planned
// context, missing arguments, failing loads).
//
//===----------------------------------------------------------------------===//

#include "helix/Runtime/Runtime.h"

#include "gtest/gtest.h"

#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace helix::rt;

namespace {

class Driver : public ::testing::Test {
protected:
  std::string dir;
  DecodeProgram prog;
  void SetUp() override {
    char tmpl[] = "/tmp/helix-drv-XXXXXX";
    dir = ::mkdtemp(tmpl);
    HostTensor t;
    t.shape = {1};
    t.data = {0};
    writeSafetensors(dir + "/model.safetensors", {{"w", t}}, "F32");
    prog.name = "toy-decode";
    prog.worldSize = 1;
    prog.vocabSize = 8;
    prog.maxContext = 16;
    prog.load = [](Context &, const SafetensorsCheckpoint &c, int64_t) {
      c.load("w", {1});
    };
    prog.step = [](Context &ctx, const StepInputs &in) {
      int64_t B = static_cast<int64_t>(in.tokens.size());
      std::vector<float> l(B * 8, 0.0f);
      for (int64_t b = 0; b < B; ++b) {
        EXPECT_EQ(in.positions[b], in.step);
        EXPECT_EQ(in.contextLengths[b], in.step + 1);
        l[b * 8 + (in.tokens[b] + 1) % 8] = 1.0f;
      }
      return ctx.upload(l, {B, 8});
    };
  }
  void TearDown() override {
    std::string cmd = "rm -rf " + dir;
    (void)std::system(cmd.c_str());
  }
  std::string file(const std::string &name, const std::string &text) {
    std::ofstream(dir + "/" + name) << text;
    return dir + "/" + name;
  }
  /// Runs the driver; returns its exit status and stderr.
  int run(std::vector<std::string> args, std::string *err = nullptr) {
    args.insert(args.begin(), "toy-decode");
    std::vector<char *> argv;
    for (std::string &a : args)
      argv.push_back(&a[0]);
    ::testing::internal::CaptureStderr();
    ::testing::internal::CaptureStdout();
    int rc = runDecode(static_cast<int>(argv.size()), argv.data(), prog);
    std::string e = ::testing::internal::GetCapturedStderr();
    ::testing::internal::GetCapturedStdout();
    if (err)
      *err = e;
    return rc;
  }
  static std::string read(const std::string &p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
};

TEST_F(Driver, GreedyScheduleAndDumps) {
  std::string prompts = file("p.txt", "1,2,3\n6\n");
  ASSERT_EQ(
      run({"--weights", dir, "--prompts", prompts, "--steps", "3",
           "--dump-tokens", dir + "/t.txt", "--dump-logits", dir + "/l.bin"}),
      0);
  EXPECT_EQ(read(dir + "/t.txt"), "1,2,3,4,5,6\n6,7,0,1\n");
  // 3 + 3 - 1 = 5 steps of [2, 8] float32.
  EXPECT_EQ(read(dir + "/l.bin").size(), 5u * 2 * 8 * 4);
}

TEST_F(Driver, WrongRankCount) {
  prog.worldSize = 4;
  std::string err;
  EXPECT_EQ(
      run({"--weights", dir, "--prompts", file("p", "1\n"), "--steps", "1"},
          &err),
      1);
  EXPECT_NE(err.find("toy-decode [rank 0/1]: error: this program was planned "
                     "for 4 ranks but runs on 1 (use mpirun -np 4)"),
            std::string::npos)
      << err;
}

TEST_F(Driver, TokenOutOfRange) {
  std::string err;
  EXPECT_EQ(
      run({"--weights", dir, "--prompts", file("p", "1,8\n"), "--steps", "1"},
          &err),
      1);
  EXPECT_NE(err.find("row 1, token 2: id 8 is out of range (vocabulary size "
                     "8)"),
            std::string::npos)
      << err;
}

TEST_F(Driver, PromptLongerThanPlannedContext) {
  prog.maxContext = 4;
  std::string err;
  EXPECT_EQ(
      run({"--weights", dir, "--prompts", file("p", "1,2,3\n"), "--steps", "3"},
          &err),
      1);
  EXPECT_NE(err.find("longer than the planned context of 4"), std::string::npos)
      << err;
}

// Steps past the planned context are an error, not an overflowed schedule
// that exits 0 with no tokens.
TEST_F(Driver, StepsPastPlannedContext) {
  std::string err, p = file("p", "1,2\n");
  EXPECT_EQ(
      run({"--weights", dir, "--prompts", p, "--steps", "9223372036854775807"},
          &err),
      1);
  EXPECT_NE(err.find("--steps: expected at most the planned context of 16 "
                     "tokens, got 9223372036854775807"),
            std::string::npos)
      << err;
  // Without a planned context the step count still cannot overflow.
  prog.maxContext = 0;
  EXPECT_EQ(
      run({"--weights", dir, "--prompts", p, "--steps", "9223372036854775807"},
          &err),
      1);
  EXPECT_NE(err.find("--steps: 9223372036854775807 generated tokens after a "
                     "prompt of 2 is too many steps"),
            std::string::npos)
      << err;
  EXPECT_EQ(
      run({"--weights", dir, "--prompts", p, "--steps", "99999999999999999999"},
          &err),
      1);
  EXPECT_NE(err.find("--steps: expected an integer, got "
                     "\"99999999999999999999\""),
            std::string::npos)
      << err;
  EXPECT_EQ(run({"--weights", dir, "--prompts", p, "--steps", "1", "--device",
                 "4294967296"},
                &err),
            1);
  EXPECT_NE(err.find("--device: expected an integer from 0 to 2147483647"),
            std::string::npos)
      << err;
}

TEST_F(Driver, ArgumentsAndLoadErrors) {
  std::string err, p = file("p", "1\n");
  EXPECT_EQ(run({"--prompts", p, "--steps", "1"}, &err), 1);
  EXPECT_NE(err.find("--weights PATH is required"), std::string::npos);
  EXPECT_EQ(run({"--weights", dir, "--prompts", p, "--steps", "x"}, &err), 1);
  EXPECT_NE(err.find("--steps: expected an integer"), std::string::npos);
  EXPECT_EQ(
      run({"--weights", dir, "--prompts", p, "--steps", "1", "--bogus", "1"},
          &err),
      1);
  EXPECT_NE(err.find("unknown option --bogus"), std::string::npos);
  EXPECT_EQ(
      run({"--weights", dir, "--prompts", dir + "/none", "--steps", "1"}, &err),
      1);
  EXPECT_NE(err.find("cannot read"), std::string::npos);
  EXPECT_EQ(
      run({"--weights", dir + "/none", "--prompts", p, "--steps", "1"}, &err),
      1);
  EXPECT_NE(err.find("no such file"), std::string::npos);
  EXPECT_EQ(run({"--weights", dir, "--prompts", p, "--steps", "1", "--backend",
                 "tpu"},
                &err),
            1);
  EXPECT_NE(err.find("unknown backend \"tpu\""), std::string::npos);
  prog.load = [](Context &, const SafetensorsCheckpoint &c, int64_t) {
    c.load("missing.weight", {1});
  };
  EXPECT_EQ(run({"--weights", dir, "--prompts", p, "--steps", "1"}, &err), 1);
  EXPECT_NE(err.find("missing tensor missing.weight"), std::string::npos);
  prog.batch = 2;
  EXPECT_EQ(run({"--weights", dir, "--prompts", p, "--steps", "1"}, &err), 1);
  EXPECT_NE(err.find("planned for a batch of 2"), std::string::npos);
}

} // namespace
