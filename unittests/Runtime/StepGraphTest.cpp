//===- StepGraphTest.cpp - Decode steps as CUDA graphs --------------------===//
//
// The CUDA backend's Backend::runStep with --cuda-graphs on (StepGraph.h,
// docs/cuda-on-cpu.md "CUDA graphs"), on the emulation (and on a GPU,
// label gpu): a replayed step reads its new index uploads, a step that asks
// for other work is captured again, a host sync inside a step fails and
// the backend goes on, a replay counts what its capture issued.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "helix/Runtime/Backend.h"

using namespace helix::rt;
using namespace helix::rt::test;

namespace {

std::unique_ptr<Context> graphContext() {
  registerCudaBackend();
  if (cudaDeviceCount() == 0)
    return nullptr;
  ContextOptions o;
  o.backend = "cuda";
  o.cudaGraphs = "on";
  return Context::create(o);
}

#define HELIX_NEED_GRAPHS(ctx)                                                 \
  auto ctx = graphContext();                                                   \
  if (!ctx)                                                                    \
    GTEST_SKIP() << "no CUDA device";

// Each step looks up other tokens: the replays' index uploads go through
// the staging the captured copy reads, and the rows follow them.
TEST(StepGraph, ReplaysReadTheirOwnIndices) {
  HELIX_NEED_GRAPHS(ctx);
  int64_t V = 6, H = 5;
  std::vector<float> table = randomVector(V * H, 30);
  Tensor t = ctx->upload(table, {V, H});
  for (int64_t step = 0; step < 4; ++step) {
    std::vector<int64_t> tokens = {step % V, (step + 3) % V};
    Tensor out = ctx->backend().runStep([&] {
      Tensor e = embedding(*ctx, t, tokens);
      return add(*ctx, e, e);
    });
    std::vector<double> want;
    for (int64_t tok : tokens)
      for (int64_t i = 0; i < H; ++i)
        want.push_back(2.0 * table[tok * H + i]);
    expectNear(ctx->download(out), want, 0);
  }
}

// A step asking for other ops than the captured one is captured again;
// every step's result is right, and the counts of a replay are the
// capture's (one launch per add).
TEST(StepGraph, AnotherStepIsCapturedAgain) {
  HELIX_NEED_GRAPHS(ctx);
  std::vector<float> x = randomVector(8, 31);
  Tensor tx = ctx->upload(x, {2, 4});
  for (int step = 0; step < 6; ++step) {
    int adds = step < 2 ? 1 : step < 4 ? 2 : 1; // 1, 1, 2, 2, 1, 1
    ctx->backend().resetTraffic();
    Tensor out = ctx->backend().runStep([&] {
      Tensor y = add(*ctx, tx, tx);
      for (int i = 1; i < adds; ++i)
        y = add(*ctx, y, tx);
      return y;
    });
    std::vector<double> want;
    for (float v : x)
      want.push_back(double(v) * (adds + 1));
    expectNear(ctx->download(out), want, 1e-6);
    OpTraffic a = ctx->backend().traffic()["add"];
    EXPECT_EQ(a.calls, adds) << "step " << step;
    EXPECT_EQ(a.launches, adds) << "step " << step;
  }
}

// A host wait inside a step is illegal in a capture: the step fails with
// CUDA's error, and the next step runs.
TEST(StepGraph, AHostSyncInAStepFails) {
  HELIX_NEED_GRAPHS(ctx);
  Tensor x = ctx->upload({1.0f, 2.0f}, {2});
  try {
    ctx->backend().runStep([&] {
      Tensor y = add(*ctx, x, x);
      ctx->download(y); // a host round trip
      return y;
    });
    ADD_FAILURE() << "the step with a download ran";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("capturing"), std::string::npos)
        << e.what();
  }
  Tensor out = ctx->backend().runStep([&] { return add(*ctx, x, x); });
  expectNear(ctx->download(out), std::vector<double>{2.0, 4.0}, 0);
}

} // namespace
