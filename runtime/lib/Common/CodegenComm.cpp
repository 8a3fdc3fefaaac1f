//===- CodegenComm.cpp - The shard collectives of rank IR -----------------===//
//
// Upstream shard collectives on local tensors, over groups given as world
// ranks in the group's order (the generated code computes them from the
// grid and the rank's coordinates). The runtime's communicators exchange
// blocks of the leading dimension; an op's split / gather / concat axis is
// brought there and back with views and at most one transposition each way.
//
//===----------------------------------------------------------------------===//

#include "CodegenDetail.h"

namespace helix {
namespace rt {
namespace cg {

namespace {

int64_t product(const std::vector<int64_t> &shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i)
    n *= shape[i];
  return n;
}

/// x with dimension `axis` = G * m -> [G, ...x with m at axis]: block j of
/// the axis becomes row j.
Tensor axisToStack(Context &ctx, const Tensor &x, size_t axis, int64_t G) {
  std::vector<int64_t> s = x.shape();
  check(axis < s.size() && s[axis] % G == 0,
        "collective: dimension " + std::to_string(axis) + " of " + x.str() +
            " does not split over " + std::to_string(G) + " ranks");
  int64_t A = product(s, 0, axis), M = x.numel() / (A * G);
  Tensor t = x.view({A, G, M});
  if (A > 1)
    t = swapAxes01(ctx, t);
  s[axis] /= G;
  s.insert(s.begin(), G);
  return t.view(s);
}

/// [G, ...s] -> s with dimension `axis` G times larger, row j as block j.
Tensor stackToAxis(Context &ctx, const Tensor &stacked, size_t axis) {
  std::vector<int64_t> s(stacked.shape().begin() + 1, stacked.shape().end());
  int64_t G = stacked.dim(0), A = product(s, 0, axis);
  Tensor t = stacked.view({G, A, stacked.numel() / (G * A)});
  if (A > 1 && G > 1)
    t = swapAxes01(ctx, t);
  s[axis] *= G;
  return t.view(s);
}

std::vector<int64_t> dropLeading(const std::vector<int64_t> &s) {
  return std::vector<int64_t>(s.begin() + 1, s.end());
}

Communicator &groupOf(Context &ctx, const Members &members) {
  return ctx.group(members);
}

int64_t indexIn(Context &ctx, const Members &members) {
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] == ctx.rank())
      return static_cast<int64_t>(i);
  throw Error("all_slice: rank " + std::to_string(ctx.rank()) +
              " is not in its group");
}

} // namespace

Tensor allReduce(Context &ctx, const Tensor &x, const Members &members,
                 bool inPlace) {
  Tensor y = inPlace ? x : clone(ctx, x);
  groupOf(ctx, members).allReduceSum(y);
  return y;
}

Tensor allGather(Context &ctx, const Tensor &x, const Members &members,
                 int64_t axis) {
  return stackToAxis(ctx, groupOf(ctx, members).allGather(x),
                     static_cast<size_t>(axis));
}

Tensor allToAll(Context &ctx, const Tensor &x, const Members &members,
                int64_t splitAxis, int64_t concatAxis) {
  Async a = allToAllStart(ctx, x, members, splitAxis, concatAxis);
  return wait(ctx, a);
}

Tensor reduceScatter(Context &ctx, const Tensor &x, const Members &members,
                     int64_t axis) {
  Communicator &comm = groupOf(ctx, members);
  int64_t G = comm.size();
  Tensor stacked = axisToStack(ctx, x, static_cast<size_t>(axis), G);
  std::vector<int64_t> local = dropLeading(stacked.shape());
  return comm.reduceScatterSum(stacked.view({G, x.numel() / G})).view(local);
}

Tensor allSlice(Context &ctx, const Tensor &x, const Members &members,
                int64_t axis) {
  int64_t index = indexIn(ctx, members);
  int64_t count = static_cast<int64_t>(members.size());
  int64_t n = x.dim(static_cast<int>(axis));
  check(n % count == 0, "all_slice: dimension " + std::to_string(axis) +
                            " of " + x.str() + " does not split over " +
                            std::to_string(count) + " ranks");
  return sliceAxisOf(ctx, x, axis, index * (n / count), n / count);
}

Ints allSlice(Context &ctx, const Ints &x, const Members &members,
              int64_t axis) {
  int64_t index = indexIn(ctx, members);
  int64_t count = static_cast<int64_t>(members.size());
  int64_t n = x.shape[axis];
  check(n % count == 0, "all_slice: dimension " + std::to_string(axis) +
                            " does not split over " + std::to_string(count) +
                            " ranks");
  return sliceAxisOf(x, axis, index * (n / count), n / count);
}

Tensor send(Context &ctx, const Tensor &x, const Members &members,
            int64_t peer) {
  groupOf(ctx, members).send(x, static_cast<int>(peer));
  return x;
}

Tensor recv(Context &ctx, const Tensor &buffer, const Members &members,
            int64_t peer) {
  Tensor y = clone(ctx, buffer);
  groupOf(ctx, members).recv(y, static_cast<int>(peer));
  return y;
}

Async allToAllStart(Context &ctx, const Tensor &x, const Members &members,
                    int64_t splitAxis, int64_t concatAxis) {
  Communicator &comm = groupOf(ctx, members);
  int64_t G = comm.size();
  Tensor stacked = axisToStack(ctx, x, static_cast<size_t>(splitAxis), G);
  std::vector<int64_t> shape = stacked.shape();
  Async a;
  a.request = comm.allToAllStart(stacked.view({G, x.numel() / G}), 0);
  Context *c = &ctx;
  size_t axis = static_cast<size_t>(concatAxis);
  a.finish = [c, shape, axis](const Tensor &r) {
    return stackToAxis(*c, r.view(shape), axis);
  };
  return a;
}

Async allReduceStart(Context &ctx, const Tensor &x, const Members &members,
                     bool inPlace) {
  Tensor y = inPlace ? x : clone(ctx, x);
  Async a;
  a.request = groupOf(ctx, members).allReduceSumStart(y);
  return a;
}

Async ready(const Tensor &x) {
  Async a;
  a.done = x;
  return a;
}

Tensor wait(Context &, Async &pending) {
  if (pending.done.defined())
    return pending.done;
  pending.request.wait();
  Tensor r = pending.request.result();
  pending.done = pending.finish ? pending.finish(r) : r;
  return pending.done;
}

} // namespace cg
} // namespace rt
} // namespace helix
