//===- CodegenProgram.cpp - Loading, state and the generated driver -------===//
//
// The load side of generated programs (weight slices in the layout their
// consumers take, KV shards, communicators), the step inputs, the grids
// and the rank's coordinates on them, and the registry of stage programs
// that runRankPrograms hands to runDecode.
//
//===----------------------------------------------------------------------===//

#include "helix/Runtime/Codegen.h"

#include <algorithm>

namespace helix {
namespace rt {
namespace cg {

namespace {

std::string list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// [..., a, b] -> [..., b, a].
HostTensor transposeLast2(const HostTensor &t) {
  size_t r = t.shape.size();
  check(r >= 2, "transposeLast2: rank " + std::to_string(r));
  int64_t a = t.shape[r - 2], b = t.shape[r - 1];
  int64_t outer = a != 0 && b != 0 ? t.numel() / (a * b) : 0;
  HostTensor o;
  o.shape = t.shape;
  std::swap(o.shape[r - 2], o.shape[r - 1]);
  o.data.resize(t.data.size());
  for (int64_t n = 0; n < outer; ++n)
    for (int64_t i = 0; i < a; ++i)
      for (int64_t j = 0; j < b; ++j)
        o.data[(n * b + j) * a + i] = t.data[(n * a + i) * b + j];
  return o;
}

/// [..., 2n] interleaved (gate at even, up at odd) -> [2, ..., n].
HostTensor splitInterleaved(const HostTensor &t) {
  int64_t last = t.shape.back();
  check(last % 2 == 0, "gate/up weight: odd last dimension " + list(t.shape));
  int64_t n = last / 2, outer = last ? t.numel() / last : 0;
  HostTensor o;
  o.shape = t.shape;
  o.shape.back() = n;
  o.shape.insert(o.shape.begin(), 2);
  o.data.resize(t.data.size());
  for (int64_t g = 0; g < 2; ++g)
    for (int64_t r = 0; r < outer; ++r)
      for (int64_t i = 0; i < n; ++i)
        o.data[(g * outer + r) * n + i] = t.data[r * last + 2 * i + g];
  return o;
}

HostTensor loadBox(const SafetensorsCheckpoint &ckpt, const std::string &name,
                   const std::vector<int64_t> &shape,
                   const std::vector<int64_t> &view,
                   const std::vector<int64_t> &offsets,
                   const std::vector<int64_t> &sizes) {
  check(view.size() == offsets.size() && view.size() == sizes.size(),
        "weight " + name + ": view " + list(view) + ", offsets " +
            list(offsets) + " and sizes " + list(sizes) + " differ in rank");
  size_t at = name.find("{expert}");
  if (at == std::string::npos) {
    std::vector<Range> box;
    for (size_t i = 0; i < view.size(); ++i)
      box.push_back({offsets[i], sizes[i]});
    HostTensor t = ckpt.loadSlice(name, shape, box, view);
    t.shape = sizes;
    return t;
  }
  // One tensor per expert: the view's first dimension enumerates experts.
  std::vector<int64_t> inner(view.begin() + 1, view.end());
  std::vector<Range> box;
  for (size_t i = 1; i < view.size(); ++i)
    box.push_back({offsets[i], sizes[i]});
  HostTensor all;
  all.shape = sizes;
  for (int64_t e = offsets[0]; e < offsets[0] + sizes[0]; ++e) {
    std::string n = name.substr(0, at) + std::to_string(e) +
                    name.substr(at + std::string("{expert}").size());
    HostTensor t = ckpt.loadSlice(n, shape, box, inner);
    all.data.insert(all.data.end(), t.data.begin(), t.data.end());
  }
  return all;
}

std::vector<const StageProgram *> &registry() {
  static std::vector<const StageProgram *> programs;
  return programs;
}

struct GridShape {
  std::string name;
  std::vector<int64_t> shape;
};

std::vector<GridShape> &grids() {
  static std::vector<GridShape> all;
  return all;
}

const GridShape &gridNamed(const char *name) {
  for (const GridShape &g : grids())
    if (g.name == name)
      return g;
  throw Error(std::string("the program has no grid @") + name);
}

/// Row-major coordinates of `rank` on `g`.
std::vector<int64_t> coordsOf(const GridShape &g, int64_t rank) {
  std::vector<int64_t> c(g.shape.size());
  for (size_t i = g.shape.size(); i-- > 0;) {
    c[i] = rank % g.shape[i];
    rank /= g.shape[i];
  }
  return c;
}

void checkWorld(Context &ctx, const GridShape &g) {
  int64_t n = 1;
  for (int64_t d : g.shape)
    n *= d;
  check(n == ctx.worldSize(), "grid @" + g.name + " covers " +
                                  std::to_string(n) + " ranks, the run has " +
                                  std::to_string(ctx.worldSize()));
}

} // namespace

GridDecl::GridDecl(const char *name, Dims shape) {
  grids().push_back({name, std::vector<int64_t>(shape)});
}

int64_t coord(Context &ctx, const char *grid, int64_t axis) {
  const GridShape &g = gridNamed(grid);
  checkWorld(ctx, g);
  check(axis >= 0 && axis < static_cast<int64_t>(g.shape.size()),
        "axis " + std::to_string(axis) + " of grid @" + g.name);
  return coordsOf(g, ctx.rank())[axis];
}

Members members(Context &ctx, const char *grid, Dims axes) {
  const GridShape &g = gridNamed(grid);
  checkWorld(ctx, g);
  std::vector<int64_t> mine = coordsOf(g, ctx.rank());
  int64_t n = 1;
  for (int64_t a : axes)
    n *= g.shape[a];
  Members out;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<int64_t> c = mine;
    int64_t rest = i;
    for (auto a = axes.end(); a-- != axes.begin();) {
      c[*a] = rest % g.shape[*a];
      rest /= g.shape[*a];
    }
    int64_t r = 0;
    for (size_t d = 0; d < c.size(); ++d)
      r = r * g.shape[d] + c[d];
    out.push_back(static_cast<int>(r));
  }
  return out;
}

void gridGroup(Context &ctx, const char *grid, Dims axes) {
  ctx.group(members(ctx, grid, axes));
}

void loadWeight(Context &ctx, const SafetensorsCheckpoint &ckpt,
                RankState &state, const char *name, Dims shape, Dims view,
                const Offsets &offsets, Dims sizes, int layout) {
  HostTensor t =
      loadBox(ckpt, name, shape, view.size() ? view : shape, offsets, sizes);
  switch (static_cast<WeightLayout>(layout)) {
  case WeightLayout::Plain:
    break;
  case WeightLayout::TransposeLast2:
    t = transposeLast2(t);
    break;
  case WeightLayout::SplitGateUpTransposed: {
    // [E, H, 2I] -> [2, E, I, H]
    HostTensor s = splitInterleaved(t);
    t = transposeLast2(s);
    break;
  }
  case WeightLayout::SplitGateUp:
    t = splitInterleaved(t);
    break;
  default:
    throw Error("weight " + std::string(name) + ": unknown layout " +
                std::to_string(layout));
  }
  state.weights.push_back(ctx.upload(t.data, t.shape));
}

std::string layerName(const char *name, int64_t layer) {
  std::string n = name;
  size_t at = n.find("{layer}");
  check(at != std::string::npos,
        "weight " + n + ": a layer function's weight names {layer}");
  return n.replace(at, std::string("{layer}").size(), std::to_string(layer));
}

void allocKV(Context &ctx, RankState &state, int64_t rows, int64_t tokens,
             int64_t heads, int64_t keyDim, int64_t valueDim, bool latent) {
  KVCacheConfig c;
  c.batch = rows;
  c.capacity = tokens;
  c.heads = heads;
  c.keyDim = keyDim;
  c.valueDim = valueDim;
  c.valueInKey = latent;
  state.caches.push_back(makeKVCache(ctx, c));
}

void group(Context &ctx, Ranks members) {
  std::vector<int> m(members);
  if (std::find(m.begin(), m.end(), ctx.rank()) != m.end())
    ctx.group(m);
}

static Ints hostInts(const std::vector<int64_t> &v, int64_t batch,
                     const char *what) {
  check(static_cast<int64_t>(v.size()) == batch,
        std::string("step ") + what + ": " + std::to_string(v.size()) +
            " rows, the program runs " + std::to_string(batch));
  return Ints{{batch}, v};
}

Ints tokens(const StepInputs &in, int64_t batch) {
  return hostInts(in.tokens, batch, "tokens");
}

Ints positions(const StepInputs &in, int64_t batch) {
  return hostInts(in.positions, batch, "positions");
}

Tensor weight(RankState &state, int64_t slot) {
  check(slot >= 0 && slot < static_cast<int64_t>(state.weights.size()),
        "weight slot " + std::to_string(slot) + " was not loaded");
  return state.weights[slot];
}

KVCache kvShard(RankState &state, int64_t slot) {
  check(slot >= 0 && slot < static_cast<int64_t>(state.caches.size()),
        "KV shard " + std::to_string(slot) + " was not allocated");
  return state.caches[slot];
}

StageProgram::StageProgram(int stage, LoadFn load, PrepareFn prepare,
                           StepFn step)
    : stage(stage), load(load), prepare(prepare), step(step) {
  registry().push_back(this);
}

/// Rows [begin, end) of the step's inputs.
static StepInputs rowsOf(const StepInputs &in, int64_t begin, int64_t end) {
  StepInputs sub;
  sub.step = in.step;
  auto cut = [&](const std::vector<int64_t> &v) {
    return std::vector<int64_t>(v.begin() + begin, v.begin() + end);
  };
  sub.tokens = cut(in.tokens);
  sub.positions = cut(in.positions);
  sub.contextLengths = cut(in.contextLengths);
  return sub;
}

int runRankPrograms(int argc, char **argv, const std::string &name,
                    int worldSize, int64_t vocab, int64_t maxContext,
                    int64_t batch, int64_t microBatch, int logitsRank,
                    const std::string &defaultBackend) {
  DecodeProgram prog;
  prog.name = name;
  prog.worldSize = worldSize;
  prog.vocabSize = vocab;
  prog.maxContext = maxContext;
  prog.defaultBackend = defaultBackend;
  RankState state;
  const StageProgram *mine = nullptr;
  int64_t rows = 0;
  prog.load = [&](Context &ctx, const SafetensorsCheckpoint &ckpt,
                  int64_t promptRows) {
    check(promptRows <= batch,
          std::to_string(promptRows) +
              " prompt rows, but the program was planned for a batch of " +
              std::to_string(batch));
    check(microBatch >= 1 && batch % microBatch == 0,
          "micro-batches of " + std::to_string(microBatch) +
              " rows do not divide the batch of " + std::to_string(batch));
    check(!grids().empty(), "the program registers no grid");
    int64_t stage = coord(ctx, grids().front().name.c_str(), 0);
    for (const StageProgram *p : registry())
      if (p->stage == stage)
        mine = p;
    check(mine != nullptr, "no generated program for pipeline stage " +
                               std::to_string(stage) + " (rank " +
                               std::to_string(ctx.rank()) + ")");
    rows = promptRows;
    mine->load(ctx, ckpt, state);
  };
  prog.prepare = [&](Context &ctx) { mine->prepare(ctx); };
  prog.step = [&](Context &ctx, const StepInputs &in) {
    // Rows past the prompts run as padding (their own cache rows).
    StepInputs padded = in;
    int64_t fill = in.positions.empty() ? 0 : in.positions.front();
    padded.tokens.resize(batch, 0);
    padded.positions.resize(batch, fill);
    padded.contextLengths.resize(batch, fill + 1);
    // Micro-batches in order: a pipeline stage sends each one on as soon
    // as it is done; the last stage returns their logits.
    std::vector<Tensor> parts;
    for (int64_t m = 0; m < batch; m += microBatch) {
      Tensor t = mine->step(ctx, state, rowsOf(padded, m, m + microBatch),
                            static_cast<size_t>(m));
      if (t.defined())
        parts.push_back(t);
    }
    Tensor out;
    if (parts.size() == 1)
      out = parts.front();
    else if (!parts.empty())
      out = concat(ctx, 0, parts);
    if (logitsRank != 0 && (ctx.rank() == 0 || ctx.rank() == logitsRank)) {
      Communicator &pair = ctx.group({0, logitsRank});
      if (ctx.rank() == logitsRank) {
        pair.send(out, 0);
      } else {
        out = ctx.empty({batch, vocab});
        pair.recv(out, 1);
      }
    }
    if (out.defined() && out.rank() == 2 && out.dim(0) > rows)
      out = out.rows(0, rows);
    return out;
  };
  return runDecode(argc, argv, prog);
}

} // namespace cg
} // namespace rt
} // namespace helix
