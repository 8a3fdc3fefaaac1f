//===- CodegenProgram.cpp - Loading, state and the generated driver -------===//
//
// The load side of generated programs (weight slices in the layout their
// consumers take, KV shards, communicators), the step inputs, and the
// registry of rank programs that runRankPrograms hands to runDecode.
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

std::vector<const RankProgram *> &registry() {
  static std::vector<const RankProgram *> programs;
  return programs;
}

} // namespace

void loadWeight(Context &ctx, const SafetensorsCheckpoint &ckpt,
                RankState &state, const char *name, Dims shape, Dims view,
                Dims offsets, Dims sizes, int layout) {
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
  ctx.group(std::vector<int>(members));
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

RankProgram::RankProgram(int rank, LoadFn load, PrepareFn prepare, StepFn step)
    : rank(rank), load(load), prepare(prepare), step(step) {
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
  const RankProgram *mine = nullptr;
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
    for (const RankProgram *p : registry())
      if (p->rank == ctx.rank())
        mine = p;
    check(mine != nullptr,
          "no generated program for rank " + std::to_string(ctx.rank()));
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
