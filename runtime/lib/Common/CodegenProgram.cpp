//===- CodegenProgram.cpp - Loading, state and the generated driver -------===//
//
// The load side of generated programs (weight slices in the layout their
// consumers take, KV shards, communicators), the step inputs, the grids
// and the rank's coordinates on them, and the registry of stage programs
// that runRankPrograms hands to runDecode.
//
//===----------------------------------------------------------------------===//

#include "CodegenDetail.h"

#include "helix/Runtime/Codegen.h"
#include "helix/Runtime/Quant.h"

#include <algorithm>
#include <cstdio>

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

/// [..., 2n] interleaved (gate at even, up at odd) -> [2, ..., n].
std::vector<int64_t> splitInterleaved(std::vector<int64_t> &shape) {
  int64_t last = shape.back();
  check(last % 2 == 0, "gate/up weight: odd last dimension " + list(shape));
  int64_t n = last / 2, outer = last ? shapeNumel(shape) / last : 0;
  shape.back() = n;
  shape.insert(shape.begin(), 2);
  std::vector<int64_t> perm(static_cast<size_t>(outer * last));
  for (int64_t g = 0; g < 2; ++g)
    for (int64_t r = 0; r < outer; ++r)
      for (int64_t i = 0; i < n; ++i)
        perm[(g * outer + r) * n + i] = r * last + 2 * i + g;
  return perm;
}

/// The permutations a layout applies, in order (shape updated).
std::vector<std::vector<int64_t>> layoutPerms(WeightLayout layout,
                                              std::vector<int64_t> &shape,
                                              const char *name) {
  switch (layout) {
  case WeightLayout::Plain:
    return {};
  case WeightLayout::TransposeLast2:
    return {transposeLast2Perm(shape)};
  case WeightLayout::SplitGateUpTransposed: {
    // [E, H, 2I] -> [2, E, I, H]
    std::vector<int64_t> split = splitInterleaved(shape);
    return {split, transposeLast2Perm(shape)};
  }
  case WeightLayout::SplitGateUp:
    return {splitInterleaved(shape)};
  case WeightLayout::PlusOne: // values, not positions: loadWeight adds it
    return {};
  }
  throw Error("weight " + std::string(name) + ": unknown layout " +
              std::to_string(static_cast<int>(layout)));
}

std::vector<float> permuted(const std::vector<float> &v,
                            const std::vector<int64_t> &perm) {
  std::vector<float> o(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    o[i] = v[perm[i]];
  return o;
}

/// The checkpoint tensor that holds box row `e` of a weight (its expert).
std::string tensorName(const std::string &name, int64_t expert) {
  size_t at = name.find("{expert}");
  if (at == std::string::npos)
    return name;
  return name.substr(0, at) + std::to_string(expert) +
         name.substr(at + std::string("{expert}").size());
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

/// loadBox's box as the stored bytes of a BF16 tensor (no decoding): what
/// a BF16 plan keeps of a BF16 checkpoint, bit for bit.
std::vector<uint8_t> loadBF16Box(const SafetensorsCheckpoint &ckpt,
                                 const std::string &name,
                                 const std::vector<int64_t> &shape,
                                 const std::vector<int64_t> &view,
                                 const std::vector<int64_t> &offsets,
                                 const std::vector<int64_t> &sizes) {
  size_t at = name.find("{expert}");
  size_t from = at == std::string::npos ? 0 : 1;
  std::vector<int64_t> inner(view.begin() + from, view.end());
  std::vector<Range> box;
  for (size_t i = from; i < view.size(); ++i)
    box.push_back({offsets[i], sizes[i]});
  if (at == std::string::npos)
    return ckpt.loadRaw(name, "BF16", shape, box, inner).bytes;
  std::vector<uint8_t> all;
  for (int64_t e = offsets[0]; e < offsets[0] + sizes[0]; ++e) {
    std::vector<uint8_t> b =
        ckpt.loadRaw(tensorName(name, e), "BF16", shape, box, inner).bytes;
    all.insert(all.end(), b.begin(), b.end());
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

static bool &hostSyncStep() {
  static bool syncs = false;
  return syncs;
}

HostSyncStep::HostSyncStep() { hostSyncStep() = true; }

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

/// `t` in the resident format `f` by the conversion rules
/// (docs/quantization.md); `note` names a conversion that loses or adds
/// precision.
static QuantHost toResident(const HostTensor &t, ElementType f,
                            const std::string &what) {
  switch (f) {
  case ElementType::F32:
    return toF32(t);
  case ElementType::BF16:
    return toBF16(t);
  case ElementType::F8E4M3:
    return quantizeFP8Block(t, what);
  case ElementType::F4E2M1:
    return quantizeNVFP4(t, what);
  case ElementType::I32:
  case ElementType::U8:
    break;
  }
  throw Error(what + ": " + dtypeName(f) + " is not a resident format");
}

static bool keepsStored(ElementType r, CheckpointFormat s) {
  return (r == ElementType::F8E4M3 && (s == CheckpointFormat::FP8Block ||
                                       s == CheckpointFormat::FP8Tensor)) ||
         (r == ElementType::F4E2M1 &&
          (s == CheckpointFormat::NVFP4 || s == CheckpointFormat::MXFP4));
}

void loadWeight(Context &ctx, const SafetensorsCheckpoint &ckpt,
                RankState &state, const char *name, Dims shape, Dims view,
                const Offsets &offsets, Dims sizes, WeightLayout layout,
                ElementType R, CheckpointFormat S) {
  std::vector<int64_t> shapeV(shape), viewV(view.size() ? view : shape),
      sizesV(sizes);
  check(isResidentFormat(R) && static_cast<int>(S) >= 0 &&
            S <= CheckpointFormat::MXFP4,
        std::string("weight ") + name + ": unknown formats " + dtypeName(R) +
            "/" + std::to_string(static_cast<int>(S)));
  bool experts = std::string(name).find("{expert}") != std::string::npos;
  check(!experts || !offsets.empty(),
        std::string("weight ") + name + ": no expert offset");
  std::string first = tensorName(name, experts ? offsets[0] : 0);
  CheckpointFormat actual = storedFormatOf(ckpt, first);
  if (actual != S)
    throw Error("checkpoint " + ckpt.path() + ": tensor " + first +
                " is stored as " + checkpointFormatName(actual) +
                ", but config.json's quantization_config says " +
                checkpointFormatName(S) + " for it");
  std::vector<int64_t> out = sizesV;
  std::vector<std::vector<int64_t>> perms = layoutPerms(layout, out, name);
  QuantHost q;
  std::string from = checkpointFormatName(actual);
  bool plusOne = layout == WeightLayout::PlusOne;
  check(!plusOne || actual == CheckpointFormat::BF16,
        std::string("weight ") + name +
            ": a zero-centred norm weight must be stored unquantized, "
            "config.json says " +
            checkpointFormatName(actual));
  if (actual == CheckpointFormat::BF16 && R == ElementType::BF16 &&
      perms.empty() && !plusOne && ckpt.info(first).dtype == "BF16") {
    // Kept as stored: the bytes, no f32 round trip (a BF16 value is the
    // same BF16 value after bf16 -> f32 -> bf16).
    check(viewV.size() == offsets.size() && viewV.size() == sizesV.size(),
          std::string("weight ") + name +
              ": view, offsets and sizes differ in rank");
    q.dtype = DType::BF16;
    q.shape = out;
    q.data = loadBF16Box(ckpt, name, shapeV, viewV, offsets, sizesV);
  } else if (actual == CheckpointFormat::BF16) {
    HostTensor t = loadBox(ckpt, name, shapeV, viewV, offsets, sizesV);
    for (const std::vector<int64_t> &p : perms)
      t.data = permuted(t.data, p);
    if (plusOne)
      for (float &v : t.data)
        v += 1.0f;
    t.shape = out;
    q = toResident(t, R, first);
  } else {
    check(viewV.size() == offsets.size() && viewV.size() == sizesV.size(),
          std::string("weight ") + name +
              ": view, offsets and sizes differ "
              "in rank");
    ElementBox b;
    if (experts) {
      std::vector<int64_t> inner(viewV.begin() + 1, viewV.end());
      std::vector<Range> box;
      for (size_t i = 1; i < viewV.size(); ++i)
        box.push_back({offsets[i], sizesV[i]});
      std::vector<ElementBox> parts;
      for (int64_t e = offsets[0]; e < offsets[0] + sizesV[0]; ++e)
        parts.push_back(loadStoredBox(ckpt, actual, tensorName(name, e), shapeV,
                                      box, inner));
      b = stack(parts);
    } else {
      std::vector<Range> box;
      for (size_t i = 0; i < viewV.size(); ++i)
        box.push_back({offsets[i], sizesV[i]});
      b = loadStoredBox(ckpt, actual, name, shapeV, box, viewV);
    }
    for (const std::vector<int64_t> &p : perms)
      b = permute(b, p, out);
    b.shape = out;
    if (keepsStored(R, actual)) {
      q = pack(b);
    } else {
      HostTensor t = dequantize(b);
      q = toResident(t, R, first);
    }
  }
  std::string kept = q.describe();
  bool converted = !(actual == CheckpointFormat::BF16
                         ? (R == ElementType::BF16 || R == ElementType::F32)
                         : keepsStored(R, actual));
  std::string key = converted ? "converted " + from + " -> " + kept
                              : "as stored (" + from + ") in " + kept;
  ++state.formats[key];
  state.weights.push_back(ctx.uploadResident(q));
}

std::string layerName(const char *name, int64_t layer) {
  std::string n = name;
  size_t at = n.find("{layer}");
  check(at != std::string::npos,
        "weight " + n + ": a layer function's weight names {layer}");
  return n.replace(at, std::string("{layer}").size(), std::to_string(layer));
}

void allocKV(Context &ctx, RankState &state, int64_t rows, int64_t tokens,
             int64_t heads, int64_t keyDim, int64_t valueDim, bool latent,
             ElementType format) {
  check(isResidentFormat(format), std::string("KV cache: ") +
                                      dtypeName(format) +
                                      " is not a resident format");
  KVCacheConfig c;
  c.dtype = format;
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

Tensor hidden(const StepInputs &in, int64_t rows, int64_t width) {
  check(in.hidden.defined() && in.hidden.rank() == 2 &&
            in.hidden.dim(0) == rows && in.hidden.dim(1) == width,
        "step hidden states: " + in.hidden.str() + ", the program reads [" +
            std::to_string(rows) + ", " + std::to_string(width) + "]");
  return in.hidden;
}

void output(RankState &state, const char *name, const Tensor &value) {
  state.outputs[name] = value;
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
                           StepFn step, LoadFn draftLoad, StepFn draftStep)
    : stage(stage), load(load), prepare(prepare), step(step),
      draftLoad(draftLoad), draftStep(draftStep) {
  registry().push_back(this);
}

DecodeProgram generatedProgram(const std::string &name, int worldSize,
                               int64_t vocab, int64_t maxContext,
                               const std::string &defaultBackend) {
  DecodeProgram prog;
  prog.name = name;
  prog.worldSize = worldSize;
  prog.vocabSize = vocab;
  prog.maxContext = maxContext;
  prog.defaultBackend = defaultBackend;
  prog.capturable = !hostSyncStep();
  return prog;
}

void checkPromptRows(int64_t rows, int64_t planned) {
  check(rows <= planned,
        std::to_string(rows) +
            " prompt rows, but the program was planned for a batch of " +
            std::to_string(planned));
}

const StageProgram &stageProgramOf(Context &ctx) {
  check(!grids().empty(), "the program registers no grid");
  int64_t stage = coord(ctx, grids().front().name.c_str(), 0);
  for (const StageProgram *p : registry())
    if (p->stage == stage)
      return *p;
  throw Error("no generated program for pipeline stage " +
              std::to_string(stage) + " (rank " + std::to_string(ctx.rank()) +
              ")");
}

void logWeightFormats(Context &ctx, const std::string &name,
                      const RankState &state) {
  if (ctx.rank() == 0)
    for (const auto &kv : state.formats)
      std::fprintf(stderr, "%s: weights: %d tensor%s %s\n", name.c_str(),
                   kv.second, kv.second == 1 ? "" : "s", kv.first.c_str());
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
  DecodeProgram prog =
      generatedProgram(name, worldSize, vocab, maxContext, defaultBackend);
  RankState state;
  const StageProgram *mine = nullptr;
  int64_t rows = 0;
  prog.load = [&](Context &ctx, const SafetensorsCheckpoint &ckpt,
                  int64_t promptRows) {
    checkPromptRows(promptRows, batch);
    check(microBatch >= 1 && batch % microBatch == 0,
          "micro-batches of " + std::to_string(microBatch) +
              " rows do not divide the batch of " + std::to_string(batch));
    mine = &stageProgramOf(ctx);
    rows = promptRows;
    mine->load(ctx, ckpt, state);
    // The start-up log: how the weights are kept (rank 0's share).
    logWeightFormats(ctx, name, state);
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
