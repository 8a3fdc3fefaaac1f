//===- CommTest.cpp - Collectives under mpirun -np 4 ----------------------===//

#include "helix/Runtime/Runtime.h"

#include "gtest/gtest.h"

using namespace helix::rt;

namespace {

std::unique_ptr<Context> ctx4() {
  auto ctx = Context::create({"cpu"});
  if (ctx->worldSize() != 4)
    return nullptr;
  return ctx;
}

#define NEED4(ctx)                                                             \
  auto ctx = ctx4();                                                           \
  if (!ctx)                                                                    \
    GTEST_SKIP() << "run under mpirun -np 4";

TEST(Collectives, AllReduceIdenticalOnEveryRank) {
  NEED4(ctx);
  int r = ctx->rank();
  std::vector<float> x = {0.1f * (r + 1), 1e8f * (r % 2 ? 1 : -1), 3.0f};
  Tensor t = ctx->upload(x, {3});
  ctx->world().allReduceSum(t);
  auto v = ctx->download(t);
  EXPECT_FLOAT_EQ(v[0], 1.0f);
  EXPECT_FLOAT_EQ(v[2], 12.0f);
  // Bitwise identical across ranks.
  std::vector<float> all(12);
  Tensor g = ctx->world().allGather(t);
  all = ctx->download(g);
  for (int j = 1; j < 4; ++j)
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(all[j * 3 + i], all[i]);
  Tensor a = ctx->upload({static_cast<float>(r)}, {1});
  CommRequest req = ctx->world().allReduceSumStart(a);
  req.wait();
  EXPECT_EQ(ctx->download(req.result())[0], 6.0f);
}

TEST(Collectives, AllGatherReduceScatterBroadcast) {
  NEED4(ctx);
  int r = ctx->rank();
  Tensor t = ctx->upload({static_cast<float>(r), 10.0f + r}, {2});
  auto g = ctx->download(ctx->world().allGather(t));
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(g[2 * j], j);
    EXPECT_EQ(g[2 * j + 1], 10 + j);
  }
  std::vector<float> x(8);
  for (int i = 0; i < 8; ++i)
    x[i] = static_cast<float>(i * (r + 1));
  auto rs = ctx->download(ctx->world().reduceScatterSum(ctx->upload(x, {8})));
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0], 2 * r * 10.0f);
  EXPECT_EQ(rs[1], (2 * r + 1) * 10.0f);
  Tensor b = ctx->upload({static_cast<float>(r)}, {1});
  ctx->world().broadcast(b, 2);
  EXPECT_EQ(ctx->download(b)[0], 2.0f);
}

float code(int rank, int b, int head, int d) {
  return rank * 1000.0f + b * 100.0f + head * 10.0f + d;
}

TEST(Collectives, AllToAllAlongHeadsSyncAndAsync) {
  NEED4(ctx);
  // send [B=2, 4 ranks x 2 heads, d=3]: heads [2j, 2j+2) go to rank j.
  int r = ctx->rank(), B = 2, c = 2, D = 3;
  std::vector<float> s(B * 4 * c * D);
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < 4 * c; ++h)
      for (int d = 0; d < D; ++d)
        s[(b * 4 * c + h) * D + d] = code(r, b, h, d);
  Tensor send = ctx->upload(s, {B, 4 * c, D});
  CommRequest async = ctx->world().allToAllStart(send, 1);
  Tensor recv = ctx->world().allToAll(send, 1);
  async.wait();
  for (Tensor t : {recv, async.result()}) {
    auto v = ctx->download(t);
    ASSERT_EQ(t.shape(), send.shape());
    // Block j came from rank j: its heads [2r, 2r+2).
    for (int b = 0; b < B; ++b)
      for (int j = 0; j < 4; ++j)
        for (int i = 0; i < c; ++i)
          for (int d = 0; d < D; ++d)
            EXPECT_EQ(v[(b * 4 * c + j * c + i) * D + d],
                      code(j, b, r * c + i, d));
  }
  // Axis 0 needs no packing.
  Tensor rows =
      ctx->world().allToAll(ctx->upload(s, {4 * B * c * D / 4, 4}), 0);
  EXPECT_EQ(rows.dim(0), 12);
}

TEST(Collectives, GroupsOfExplicitRanks) {
  NEED4(ctx);
  int r = ctx->rank();
  // KVP-style groups {0, 2} and {1, 3}; members listed in reverse order.
  std::vector<int> members =
      r % 2 ? std::vector<int>{3, 1} : std::vector<int>{2, 0};
  Communicator &g = ctx->group(members);
  EXPECT_EQ(g.size(), 2);
  EXPECT_EQ(g.index(), r < 2 ? 1 : 0);
  Tensor t = ctx->upload({static_cast<float>(r)}, {1});
  g.allReduceSum(t);
  EXPECT_EQ(ctx->download(t)[0], r % 2 ? 4.0f : 2.0f);
  EXPECT_EQ(&ctx->group(members), &g); // cached
  // Point to point inside the group.
  Tensor m = ctx->upload({static_cast<float>(r * 7)}, {1});
  if (g.index() == 0) {
    g.send(m, 1);
  } else {
    Tensor in = ctx->zeros({1});
    g.recv(in, 0);
    EXPECT_EQ(ctx->download(in)[0], (r + 2) * 7.0f);
  }
  g.barrier();
  EXPECT_THROW(ctx->group({(r + 1) % 4}), Error); // not a member
  EXPECT_THROW(ctx->group({0, 0}), Error);
  EXPECT_THROW(ctx->group({0, 9}), Error);
}

} // namespace
