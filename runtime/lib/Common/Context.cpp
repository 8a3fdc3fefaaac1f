//===- Context.cpp - Context, backend registry, communicator base ---------===//

#include "helix/Runtime/Context.h"
#include "helix/Runtime/Backend.h"
#include "helix/Runtime/Error.h"
#include "helix/Runtime/Ops.h"
#include "helix/Runtime/Quant.h"

#include "MpiGroup.h"

#include <algorithm>
#include <mutex>
#include <set>

namespace helix {
namespace rt {

bool mpiActive() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

Backend::~Backend() = default;

//===----------------------------------------------------------------------===//
// Backend registry
//===----------------------------------------------------------------------===//

static std::map<std::string, BackendFactory> &registry() {
  static std::map<std::string, BackendFactory> r = {
      {"cpu", [](Context &ctx, const ContextOptions &o) {
         return createCpuBackend(ctx, o);
       }}};
  return r;
}
static std::mutex registryMutex;

void registerBackend(const std::string &name, BackendFactory factory) {
  std::lock_guard<std::mutex> lock(registryMutex);
  registry()[name] = std::move(factory);
}

std::vector<std::string> registeredBackends() {
  std::lock_guard<std::mutex> lock(registryMutex);
  std::vector<std::string> names;
  for (const auto &kv : registry())
    names.push_back(kv.first);
  return names;
}

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

std::unique_ptr<Context> Context::create(const ContextOptions &options) {
  std::unique_ptr<Context> ctx(new Context());
  ctx->options_ = options;
  ctx->mpi_ = mpiActive();
  if (ctx->mpi_) {
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx->world_);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ctx->rank_,
                        MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &ctx->localRank_);
    MPI_Comm_size(node, &ctx->localSize_);
    MPI_Comm_free(&node);
  }
  BackendFactory factory;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    auto it = registry().find(options.backend);
    if (it == registry().end()) {
      std::string known;
      for (const auto &kv : registry())
        known += (known.empty() ? "" : ", ") + kv.first;
      std::string hint = options.backend == "cuda"
                             ? " (this program was built without the CUDA "
                               "backend, or did not register it)"
                             : "";
      throw Error("unknown backend \"" + options.backend + "\"" + hint +
                  "; available: " + known);
    }
    factory = it->second;
  }
  ctx->backend_ = factory(*ctx, options);
  return ctx;
}

Context::~Context() {
  // Communicators use the backend (streams, NCCL); drop them first.
  groups_.clear();
  backend_.reset();
}

const char *memoryKindName(MemoryKind kind) {
  switch (kind) {
  case MemoryKind::Workspace:
    return "workspace";
  case MemoryKind::Weights:
    return "weights";
  case MemoryKind::Scales:
    return "scales";
  case MemoryKind::KVCache:
    return "kv cache";
  }
  return "?";
}

std::shared_ptr<Storage> Context::allocate(size_t bytes) {
  std::shared_ptr<Storage> s = backend_->allocate(bytes);
  int k = static_cast<int>(kind_);
  std::shared_ptr<MemoryUse> use = memory_;
  int64_t n = static_cast<int64_t>(bytes);
  use->live[k] += n;
  use->peak[k] = std::max(use->peak[k], use->live[k]);
  std::function<void(void *)> release = std::move(s->release);
  s->release = [use, k, n, release](void *p) {
    use->live[k] -= n;
    if (release)
      release(p);
  };
  if (!s->data) // release runs only for non-null data
    use->live[k] -= n;
  return s;
}

Tensor Context::empty(const std::vector<int64_t> &shape, DType dtype) {
  for (int64_t d : shape)
    check(d >= 0, "empty: negative dimension in " + shapeString(shape));
  size_t bytes = dtypeBytes(dtype, shapeNumel(shape));
  return Tensor(allocate(bytes), shape, dtype);
}

Tensor Context::uploadResident(const QuantHost &q) {
  Tensor t;
  {
    MemoryScope s = memoryScope(MemoryKind::Weights);
    t = empty(q.shape, q.dtype);
    if (!q.data.empty())
      backend_->upload(t.raw(), q.data.data(), q.data.size());
  }
  if (!q.scaled)
    return t;
  MemoryScope s = memoryScope(MemoryKind::Scales);
  auto bs = std::make_shared<BlockScales>();
  bs->scales = empty({static_cast<int64_t>(q.scales.size())}, DType::U8);
  if (!q.scales.empty())
    backend_->upload(bs->scales.raw(), q.scales.data(), q.scales.size());
  bs->desc = q.desc;
  bs->desc.scales = static_cast<const uint8_t *>(bs->scales.raw());
  bs->desc.globals = nullptr;
  if (!q.globals.empty()) {
    bs->globals = empty({static_cast<int64_t>(q.globals.size())});
    backend_->upload(bs->globals.raw(), q.globals.data(),
                     q.globals.size() * sizeof(float));
    bs->desc.globals = static_cast<const float *>(bs->globals.raw());
  }
  return t.withScales(std::move(bs));
}

Tensor Context::zeros(const std::vector<int64_t> &shape, DType dtype) {
  Tensor t = empty(shape, dtype);
  if (t.bytes())
    backend_->zero(t.raw(), t.bytes());
  return t;
}

Tensor Context::upload(const std::vector<float> &data,
                       const std::vector<int64_t> &shape) {
  check(static_cast<int64_t>(data.size()) == shapeNumel(shape),
        "upload: " + std::to_string(data.size()) + " values for shape " +
            shapeString(shape));
  Tensor t = empty(shape);
  if (t.bytes())
    backend_->upload(t.raw(), data.data(), t.bytes());
  return t;
}

Tensor Context::uploadInt(const std::vector<int32_t> &data,
                          const std::vector<int64_t> &shape) {
  check(static_cast<int64_t>(data.size()) == shapeNumel(shape),
        "upload: " + std::to_string(data.size()) + " values for shape " +
            shapeString(shape));
  Tensor t = empty(shape, DType::I32);
  if (t.bytes())
    backend_->upload(t.raw(), data.data(), t.bytes());
  return t;
}

std::vector<float> Context::download(const Tensor &t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  if (t.bytes())
    backend_->download(out.data(), t.f32(), t.bytes());
  return out;
}

std::vector<int32_t> Context::downloadInt(const Tensor &t) {
  std::vector<int32_t> out(static_cast<size_t>(t.numel()));
  if (t.bytes())
    backend_->download(out.data(), t.i32(), t.bytes());
  return out;
}

void Context::synchronize() { backend_->synchronize(); }

Communicator &Context::group(const std::vector<int> &worldRanks) {
  auto it = groups_.find(worldRanks);
  if (it != groups_.end())
    return *it->second;
  check(!worldRanks.empty(), "group: no member ranks");
  std::set<int> seen;
  int index = -1;
  for (size_t i = 0; i < worldRanks.size(); ++i) {
    int r = worldRanks[i];
    check(r >= 0 && r < world_, "group: rank " + std::to_string(r) +
                                    " outside the world of " +
                                    std::to_string(world_) + " ranks");
    check(seen.insert(r).second,
          "group: rank " + std::to_string(r) + " listed twice");
    if (r == rank_)
      index = static_cast<int>(i);
  }
  std::string list;
  for (int r : worldRanks)
    list += (list.empty() ? "" : ",") + std::to_string(r);
  check(index >= 0, "group {" + list + "}: rank " + std::to_string(rank_) +
                        " is not a member");
  GroupHandle handle;
  if (mpi_) {
    MPI_Group worldGroup, g;
    MPI_Comm_group(MPI_COMM_WORLD, &worldGroup);
    MPI_Group_incl(worldGroup, static_cast<int>(worldRanks.size()),
                   worldRanks.data(), &g);
    // Groups created at the same time by other ranks are told apart by tag.
    unsigned tag = 17;
    for (int r : worldRanks)
      tag = tag * 31 + static_cast<unsigned>(r);
    int rc = MPI_Comm_create_group(MPI_COMM_WORLD, g,
                                   static_cast<int>(tag % 30000), &handle.comm);
    MPI_Group_free(&g);
    MPI_Group_free(&worldGroup);
    check(rc == MPI_SUCCESS, "group {" + list +
                                 "}: MPI_Comm_create_group "
                                 "failed");
  } else {
    check(worldRanks.size() == 1,
          "group {" + list + "}: needs MPI (run under mpirun)");
  }
  auto comm = backend_->createCommunicator(*this, worldRanks, index, handle);
  Communicator &ref = *comm;
  groups_[worldRanks] = std::move(comm);
  return ref;
}

Communicator &Context::world() {
  std::vector<int> all(world_);
  for (int i = 0; i < world_; ++i)
    all[i] = i;
  return group(all);
}

//===----------------------------------------------------------------------===//
// Errors agreed on by every rank
//===----------------------------------------------------------------------===//

std::string agreeOnError(const std::string &localError) {
  if (!mpiActive())
    return localError;
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int mine = localError.empty() ? world : rank, first = world;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (first == world)
    return "";
  int failed = localError.empty() ? 0 : 1, count = 0;
  MPI_Allreduce(&failed, &count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int len = rank == first ? static_cast<int>(localError.size()) : 0;
  MPI_Bcast(&len, 1, MPI_INT, first, MPI_COMM_WORLD);
  std::string msg = rank == first ? localError : std::string(len, ' ');
  MPI_Bcast(&msg[0], len, MPI_CHAR, first, MPI_COMM_WORLD);
  if (count < world)
    msg = "rank " + std::to_string(first) + ": " + msg;
  return msg;
}

//===----------------------------------------------------------------------===//
// CommRequest and the Communicator base (layout handling)
//===----------------------------------------------------------------------===//

CommRequest::Pending::~Pending() = default;

CommRequest::CommRequest(std::unique_ptr<Pending> pending, Tensor result,
                         std::function<void()> finish)
    : pending_(std::move(pending)), result_(std::move(result)),
      finish_(std::move(finish)) {}
CommRequest::CommRequest(CommRequest &&) noexcept = default;
CommRequest &CommRequest::operator=(CommRequest &&other) noexcept {
  if (this != &other) {
    try {
      wait();
    } catch (...) {
    }
    pending_ = std::move(other.pending_);
    result_ = std::move(other.result_);
    finish_ = std::move(other.finish_);
  }
  return *this;
}

CommRequest::~CommRequest() {
  try {
    wait();
  } catch (...) {
  }
}

void CommRequest::wait() {
  if (pending_) {
    pending_->wait();
    pending_.reset();
  }
  if (finish_) {
    auto f = std::move(finish_);
    finish_ = nullptr;
    f();
  }
}

Communicator::Communicator(Context &ctx, std::vector<int> members, int index)
    : ctx_(ctx), members_(std::move(members)), index_(index) {}
Communicator::~Communicator() = default;

void Communicator::allReduceSum(Tensor &x) { allReduceSumStart(x).wait(); }

CommRequest Communicator::allReduceSumStart(Tensor &x) {
  check(x.defined() && x.dtype() == DType::F32,
        "allReduceSum: expected a defined f32 tensor");
  return CommRequest(startAllReduce(x), x);
}

Tensor Communicator::allGather(const Tensor &x) {
  check(x.defined(), "allGather: undefined tensor");
  std::vector<int64_t> shape = x.shape();
  shape.insert(shape.begin(), size());
  Tensor out = ctx_.empty(shape, x.dtype());
  allGatherInto(x, out);
  return out;
}

Tensor Communicator::reduceScatterSum(const Tensor &x) {
  check(x.defined() && x.rank() >= 1 && x.dim(0) % size() == 0,
        "reduceScatterSum: leading dimension of " + x.str() +
            " is not divisible by the group size " + std::to_string(size()));
  Tensor sum = clone(ctx_, x);
  allReduceSum(sum);
  int64_t c = x.dim(0) / size();
  return clone(ctx_, sum.rows(index_ * c, (index_ + 1) * c));
}

Tensor Communicator::allToAll(const Tensor &send, int axis) {
  CommRequest r = allToAllStart(send, axis);
  r.wait();
  return r.result();
}

CommRequest Communicator::allToAllStart(const Tensor &send, int axis) {
  check(send.defined() && send.dtype() == DType::F32,
        "allToAll: expected a defined f32 tensor");
  int r = send.rank();
  check(axis >= 0 && axis < r,
        "allToAll: axis " + std::to_string(axis) + " outside " + send.str());
  int64_t G = size();
  check(send.dim(axis) % G == 0,
        "allToAll: dimension " + std::to_string(axis) + " of " + send.str() +
            " is not divisible by the group size " + std::to_string(G));
  int64_t outer = 1, inner = 1, c = send.dim(axis) / G;
  for (int i = 0; i < axis; ++i)
    outer *= send.dim(i);
  for (int i = axis + 1; i < r; ++i)
    inner *= send.dim(i);
  int64_t chunk = outer * c * inner;
  Tensor packed = send;
  if (outer > 1) {
    packed = ctx_.empty({G, outer, c * inner});
    ctx_.backend().swapAxes01(send, outer, G, c * inner, packed);
  }
  Tensor recvPacked = ctx_.empty({G, chunk});
  Tensor sendChunks = packed.view({G, chunk});
  auto pending = startAllToAllChunks(sendChunks, recvPacked);
  if (outer == 1)
    return CommRequest(std::move(pending), recvPacked.view(send.shape()),
                       [packed]() {});
  Tensor result = ctx_.empty(send.shape());
  Context *ctx = &ctx_;
  return CommRequest(
      std::move(pending), result,
      [ctx, packed, recvPacked, result, G, outer, c, inner]() mutable {
        ctx->backend().swapAxes01(recvPacked, G, outer, c * inner, result);
      });
}

void Communicator::broadcast(Tensor &x, int rootIndex) {
  check(rootIndex >= 0 && rootIndex < size(),
        "broadcast: root " + std::to_string(rootIndex) + " outside the group");
  broadcastImpl(x, rootIndex);
}

void Communicator::send(const Tensor &x, int peerIndex) {
  check(peerIndex >= 0 && peerIndex < size() && peerIndex != index_,
        "send: bad peer " + std::to_string(peerIndex));
  sendImpl(x, peerIndex);
}

void Communicator::recv(Tensor &x, int peerIndex) {
  check(peerIndex >= 0 && peerIndex < size() && peerIndex != index_,
        "recv: bad peer " + std::to_string(peerIndex));
  recvImpl(x, peerIndex);
}

void Communicator::barrier() { barrierImpl(); }

} // namespace rt
} // namespace helix
