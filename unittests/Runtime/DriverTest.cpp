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

namespace {

/// The toy model of the speculative tests: the greedy token after `token`
/// at `position`.
int64_t toyNext(int64_t token, int64_t position) {
  return (token * 3 + position + 1) % 8;
}

/// [rows, 8] logits, one-hot at `best[r]`.
Tensor oneHot(Context &ctx, const std::vector<int64_t> &best) {
  std::vector<float> l(best.size() * 8, 0.0f);
  for (size_t r = 0; r < best.size(); ++r)
    l[r * 8 + best[r]] = 1.0f;
  return ctx.upload(l, {static_cast<int64_t>(best.size()), 8});
}

} // namespace

// The speculative driver (Speculative.h) with a toy verify step and a
// perfect drafter: the tokens and logits per position are the greedy ones,
// every draft is accepted, and each draft pass reads the hidden states of
// the rows the schedule names (the toy states carry their position).
TEST_F(Driver, SpeculativeScheduleGivesTheGreedyTokens) {
  prog.draftTokens = 2;
  prog.verify = [](Context &ctx, const StepInputs &in) {
    std::vector<int64_t> best;
    std::vector<float> hidden;
    for (size_t i = 0; i < in.tokens.size(); ++i) {
      best.push_back(toyNext(in.tokens[i], in.positions[i]));
      hidden.insert(hidden.end(),
                    {float(in.tokens[i]), float(in.positions[i])});
    }
    int64_t R = static_cast<int64_t>(best.size());
    return PassOutputs{oneHot(ctx, best), ctx.upload(hidden, {R, 2})};
  };
  prog.draft = [](Context &ctx, const StepInputs &in) {
    std::vector<float> h = ctx.download(in.hidden), out;
    std::vector<int64_t> best;
    for (size_t i = 0; i < in.tokens.size(); ++i) {
      // (Rows past the last position, 7, are clamped to it.)
      if (in.positions[i] < 7) {
        EXPECT_EQ(h[2 * i + 1], float(in.positions[i])) << "row " << i;
      }
      // The pair (state of t, token of t + 1) guesses the token of t + 2.
      best.push_back(toyNext(in.tokens[i], in.positions[i] + 1));
      out.insert(out.end(), {float(in.tokens[i]), float(in.positions[i] + 1)});
    }
    int64_t R = static_cast<int64_t>(best.size());
    return PassOutputs{oneHot(ctx, best), ctx.upload(out, {R, 2})};
  };
  std::string p = file("p", "1,2,3\n5\n"), err;
  ASSERT_EQ(
      run({"--weights", dir, "--prompts", p, "--steps", "6", "--dump-tokens",
           dir + "/t", "--dump-logits", dir + "/l", "--dump-acceptance",
           dir + "/a", "--dump-draft-logits", dir + "/d"},
          &err),
      0)
      << err;
  // Greedy: 8 positions (3 + 6 - 1); row 1 also decodes past its 6 tokens.
  std::vector<std::vector<int64_t>> want = {{1, 2, 3}, {5}};
  for (auto &x : want)
    while (x.size() < 9)
      x.push_back(toyNext(x.back(), static_cast<int64_t>(x.size()) - 1));
  std::string tokens = read(dir + "/t");
  EXPECT_EQ(tokens, joinIds({want[0].begin(), want[0].begin() + 9}) + "\n" +
                        joinIds({want[1].begin(), want[1].begin() + 7}) + "\n");
  std::string logits = read(dir + "/l");
  ASSERT_EQ(logits.size(), 8u * 2 * 8 * sizeof(float));
  const float *l = reinterpret_cast<const float *>(logits.data());
  // Position t's logits: the greedy guess after token t (the prompt's
  // own next token where the prompt goes on).
  for (int64_t t = 0; t < 8; ++t)
    for (int64_t r = 0; r < 2; ++r)
      EXPECT_EQ(l[(t * 2 + r) * 8 + toyNext(want[r][t], t)], 1.0f)
          << t << ", " << r;
  // Row 0: its prompt 3 at a time, then 2 drafts + 1, then the last
  // position; row 1 has no draft at its first step and none left at its
  // last.
  EXPECT_EQ(read(dir + "/a"), "2,2,1\n0,2,2,0\n");
  std::string drafts = read(dir + "/d");
  const float *d = reinterpret_cast<const float *>(drafts.data());
  for (int64_t t = 0; t < 8; ++t)
    for (int64_t r = 0; r < 2; ++r)
      EXPECT_EQ(d[(t * 2 + r) * 8 + toyNext(want[r][t + 1], t + 1)], 1.0f)
          << t << ", " << r;

  // A draft oracle with a wrong row count: one line, exit 1.
  std::string o = file("o", "1,2,3,4,5,6,7,0\n");
  EXPECT_EQ(run({"--weights", dir, "--prompts", p, "--steps", "6",
                 "--draft-oracle", o},
                &err),
            1);
  EXPECT_NE(err.find("1 draft rows, expected one per prompt row (2)"),
            std::string::npos)
      << err;
  // A greedy program refuses the speculative flags.
  prog.draftTokens = 0;
  EXPECT_EQ(run({"--weights", dir, "--prompts", p, "--steps", "6",
                 "--draft-oracle", o},
                &err),
            1);
  EXPECT_NE(err.find("--draft-oracle: this program decodes greedily"),
            std::string::npos)
      << err;
}
