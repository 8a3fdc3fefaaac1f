//===- Codegen.h - What generated host code calls ---------------*- C++ -*-===//
//
// The adapters between rank IR and the op-level runtime API: one function
// per rank-IR op (`convert-helix-to-emitc` lowers each op to one call), so
// the generated code is a flat list of calls with the op's attributes as
// constant arguments. They take the op's operands in its own layout (the
// packed attention partials, the #helix.kv_placement arithmetic, grid
// groups as explicit member ranks) and call the runtime ops; no model logic
// is generated.
//
// A generated program is SPMD: one StageProgram per pipeline stage (load /
// prepare / step functions), run by every rank of the stage, and the
// device grids (GridDecl), both registered at static initialization, and a
// main calling runRankPrograms, which runs the helix-decode driver
// (Decode.h). What differs between ranks (the slices they load, their
// KVP, vocabulary and expert offsets, their groups) is computed by the
// program from the rank's coordinates on the grids (coord, members).
//
// Value types of rank IR:
//   float and i32 tensors   helix::rt::Tensor (backend memory)
//   i64 tensors             helix::rt::cg::Ints (host: tokens, positions,
//                           KV slots and spans)
//   !helix.kv_shard         helix::rt::KVCache (a shared handle)
//   !helix.async<T>         helix::rt::cg::Async (a collective in flight)
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_CODEGEN_H
#define HELIX_RUNTIME_CODEGEN_H

#include "helix/Common/WeightFormat.h"
#include "helix/Common/WeightLayout.h"
#include "helix/Runtime/Context.h"
#include "helix/Runtime/Decode.h"
#include "helix/Runtime/Error.h"
#include "helix/Runtime/KVCache.h"
#include "helix/Runtime/Ops.h"
#include "helix/Runtime/Rope.h"
#include "helix/Runtime/Safetensors.h"
#include "helix/Runtime/Tensor.h"

#ifdef HELIX_RUNTIME_CUDA
#include "helix/Runtime/CudaBackend.h"
#endif

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace helix {
namespace rt {
namespace cg {

//===----------------------------------------------------------------------===//
// Values and state
//===----------------------------------------------------------------------===//

/// Constant lists in generated calls (braced lists of literals: no heap
/// temporaries, which keeps huge generated functions cheap to compile).
using Dims = std::initializer_list<int64_t>;
using Ranks = std::initializer_list<int>;
/// The world ranks of a group, in the group's order.
using Members = std::vector<int>;
/// Offsets of a weight slice, computed from the rank's coordinates.
using Offsets = std::vector<int64_t>;
template <typename... T> Offsets offsets(T... v) {
  return Offsets{static_cast<int64_t>(v)...};
}

/// A host tensor of 64-bit integers, row-major.
struct Ints {
  std::vector<int64_t> shape;
  std::vector<int64_t> data;
};

/// A collective in flight and what turns its raw result into the value
/// the op yields.
struct Async {
  CommRequest request;
  std::function<Tensor(const Tensor &)> finish;
  Tensor done; // a collective that completed at once
};

/// What one rank holds across steps: its weight slices (in the order its
/// load function loads them) and its KV shards.
struct RankState {
  std::vector<Tensor> weights;
  std::vector<KVCache> caches;
  /// Recurrent-state shards (Gated DeltaNet's states, DSA's index caches):
  /// [rows, values] f32, in the order allocState allocated them.
  std::vector<Tensor> states;
  /// How the weights are kept ("as stored (fp8-block) in f8E4M3, ..." ->
  /// tensors), for the start-up log.
  std::map<std::string, int> formats;
  /// The step's named results beyond its logits (the verify step's and a
  /// draft pass's "hidden" states), set by output().
  std::map<std::string, Tensor> outputs;
};

/// How a weight slice is stored after loading (helix/Common/WeightLayout.h,
/// shared with the EmitC lowering), the format it is kept in and the
/// format the checkpoint stores it in (helix/Common/WeightFormat.h).
using ::helix::CheckpointFormat;
using ::helix::ElementType;
using ::helix::WeightLayout;

//===----------------------------------------------------------------------===//
// Load and prepare
//===----------------------------------------------------------------------===//

/// Loads the box [offsets, offsets + sizes) of checkpoint tensor `name`
/// (logical shape `shape`, seen as `view`) into the next weight slot, in
/// layout `layout` and resident format `resident` (F32, BF16, F8E4M3 or
/// F4E2M1). `stored` is how config.json says
/// the checkpoint stores it: a tensor stored otherwise is an Error. A name
/// containing "{expert}" names one tensor per expert: the view's first
/// dimension enumerates experts and `shape` is one expert's tensor.
void loadWeight(Context &ctx, const SafetensorsCheckpoint &ckpt,
                RankState &state, const char *name, Dims shape, Dims view,
                const Offsets &offsets, Dims sizes, WeightLayout layout,
                ElementType resident, CheckpointFormat stored);
inline void loadWeight(Context &ctx, const SafetensorsCheckpoint &ckpt,
                       RankState &state, const std::string &name, Dims shape,
                       Dims view, const Offsets &offsets, Dims sizes,
                       WeightLayout layout, ElementType resident,
                       CheckpointFormat stored) {
  loadWeight(ctx, ckpt, state, name.c_str(), shape, view, offsets, sizes,
             layout, resident, stored);
}
/// A layer function's weight name: `{layer}` in `name` replaced by `layer`.
std::string layerName(const char *name, int64_t layer);
/// Allocates the next KV shard (zeroed) in `format` (F32, BF16, F8E4M3 or
/// F4E2M1).
void allocKV(Context &ctx, RankState &state, int64_t rows, int64_t tokens,
             int64_t heads, int64_t keyDim, int64_t valueDim, bool latent,
             ElementType format);
/// Allocates the rank's next recurrent-state shard: [rows, values] f32,
/// zeroed (counted as KV cache memory).
void allocState(Context &ctx, RankState &state, int64_t rows, int64_t values);
/// Creates (collectively over the members) the communicator of a group;
/// nothing on ranks outside it.
void group(Context &ctx, Ranks members);
/// Creates the communicator of the rank's group over `axes` of `grid`.
void gridGroup(Context &ctx, const char *grid, Dims axes);

//===----------------------------------------------------------------------===//
// Grids and the rank's coordinates
//===----------------------------------------------------------------------===//

/// A device grid of the program (shard.grid); constructing one registers
/// it. Ranks are row-major on every grid.
struct GridDecl {
  GridDecl(const char *name, Dims shape);
};
/// Declared by a program whose step reads device results on the host
/// (DeepSeek Sparse Attention's top-k merge): its steps cannot be captured
/// as CUDA graphs, so --cuda-graphs auto runs them uncaptured and
/// --cuda-graphs on is refused.
struct HostSyncStep {
  HostSyncStep();
};
/// The rank's coordinate on `axis` of `grid` (shard.process_multi_index).
int64_t coord(Context &ctx, const char *grid, int64_t axis);
/// The rank's group over `axes` of `grid` (first axis major): the world
/// ranks sharing its other coordinates.
Members members(Context &ctx, const char *grid, Dims axes);

//===----------------------------------------------------------------------===//
// Step inputs and state
//===----------------------------------------------------------------------===//

/// The step's token ids / positions as a [batch] host tensor.
Ints tokens(const StepInputs &in, int64_t batch);
Ints positions(const StepInputs &in, int64_t batch);
/// The hidden states [rows, width] a draft pass reads (StepInputs::hidden).
Tensor hidden(const StepInputs &in, int64_t rows, int64_t width);
/// A named result of the step beyond its logits (RankState::outputs).
void output(RankState &state, const char *name, const Tensor &value);
Tensor weight(RankState &state, int64_t slot);
/// Weight `k` of a layer function called with its slots from `base`.
inline Tensor layerWeight(RankState &state, int64_t base, int64_t k) {
  return weight(state, base + k);
}
KVCache kvShard(RankState &state, int64_t slot);
/// The shard allocated `slot`-th (a handle sharing its memory).
Tensor stateShard(RankState &state, int64_t slot);
/// An absent optional operand.
inline Tensor none() { return Tensor(); }
/// helix.keep_if: `t` where `keep`, else absent (a bias another rank adds).
inline Tensor keepIf(bool keep, const Tensor &t) { return keep ? t : Tensor(); }

//===----------------------------------------------------------------------===//
// Compute ops
//===----------------------------------------------------------------------===//

/// RoPE of a layer (#helix.rope plus what the op knows), named field by
/// field: the shared RopeParams (helix/Common/Rope.h) with their defaults,
/// and the attention op's maxPosition / rotaryDim / interleaved. Generated
/// code sets only what differs from the defaults, e.g.
///   helix::rt::cg::rope(helix::rt::cg::RopeSpec().theta(500000)
///                           .rotaryDim(128))
/// (the setters hide RopeConfig's fields of the same names: read those
/// through the RopeConfig that rope() returns).
struct RopeSpec : RopeConfig {
  RopeSpec &theta(double v) { return set(&RopeConfig::theta, v); }
  RopeSpec &scaling(const char *v) {
    RopeConfig::scaling = v;
    return *this;
  }
  RopeSpec &factor(double v) { return set(&RopeConfig::factor, v); }
  RopeSpec &originalMaxPosition(int64_t v) {
    return set(&RopeConfig::originalMaxPosition, v);
  }
  RopeSpec &lowFreqFactor(double v) {
    return set(&RopeConfig::lowFreqFactor, v);
  }
  RopeSpec &highFreqFactor(double v) {
    return set(&RopeConfig::highFreqFactor, v);
  }
  RopeSpec &betaFast(double v) { return set(&RopeConfig::betaFast, v); }
  RopeSpec &betaSlow(double v) { return set(&RopeConfig::betaSlow, v); }
  RopeSpec &mscale(double v) { return set(&RopeConfig::mscale, v); }
  RopeSpec &mscaleAllDim(double v) { return set(&RopeConfig::mscaleAllDim, v); }
  RopeSpec &maxPosition(int64_t v) { return set(&RopeConfig::maxPosition, v); }
  RopeSpec &rotaryDim(int64_t v) { return set(&RopeConfig::rotaryDim, v); }
  RopeSpec &interleaved(bool v) { return set(&RopeConfig::interleaved, v); }

private:
  template <typename Field, typename V> RopeSpec &set(Field field, V v) {
    using T = std::remove_reference_t<decltype(this->*field)>;
    this->*field = static_cast<T>(v);
    return *this;
  }
};
/// The RopeConfig a RopeSpec names.
RopeConfig rope(const RopeSpec &spec);
/// Softmax scale of attention: 1 / sqrt(headDim), times DeepSeek's yarn
/// mscale^2 for MLA.
float softmaxScale(const RopeConfig &rope, int64_t headDim, bool mla);

/// helix.embed_rows.
Tensor embedRows(Context &ctx, const Ints &tokens, const Tensor &table,
                 int64_t vocabOffset);
/// helix.norm_rows.
Tensor norm(Context &ctx, const Tensor &x, const Tensor &weight, double eps);
/// helix.matmul (bias may be none()).
Tensor matmul(Context &ctx, const Tensor &x, const Tensor &weight,
              const Tensor &bias);
/// helix.add.
Tensor add(Context &ctx, const Tensor &a, const Tensor &b);
/// helix.add and the helix.norm_rows of its sum, one kernel: (sum, normed).
std::tuple<Tensor, Tensor> addNorm(Context &ctx, const Tensor &a,
                                   const Tensor &b, const Tensor &weight,
                                   double eps);
/// helix.group_sum.
Tensor groupSum(Context &ctx, const Tensor &x);
/// helix.gated_mlp (biases may be none()); `activation`: the op's name.
Tensor gatedMlp(Context &ctx, const Tensor &x, const Tensor &wGate,
                const Tensor &wUp, const Tensor &wDown, const Tensor &bGate,
                const Tensor &bUp, const Tensor &bDown, const char *activation);

/// helix.qkv: q [B, Hq, D], k [B, K, D], v [B, K, Dv].
std::tuple<Tensor, Tensor, Tensor>
qkv(Context &ctx, const Tensor &x, const Ints &positions, const Tensor &wq,
    const Tensor &wk, const Tensor &wv, const Tensor &bq, const Tensor &bk,
    const Tensor &bv, const Tensor &qNorm, const Tensor &kNorm, double normEps,
    const RopeConfig &rope);
/// helix.mla_qkv with W_UK loaded as [Hq, qk_nope, kv_lora] (the first
/// qk_nope rows of each head of kv_b_proj): q [B, Hq, R + rd],
/// latent [B, 1, R + rd].
std::tuple<Tensor, Tensor> mlaQkv(Context &ctx, const Tensor &x,
                                  const Ints &positions, const Tensor &wqA,
                                  const Tensor &qNorm, const Tensor &wqB,
                                  const Tensor &wkvA, const Tensor &kvNorm,
                                  const Tensor &wUK, int64_t ropeDim,
                                  const RopeConfig &rope);
/// helix.kv_slots: slots [P, B] and spans [P, B, 2] of KVP ranks
/// [rankOffset, rankOffset + P).
std::tuple<Ints, Ints> kvSlots(const Ints &positions, int64_t block,
                               int64_t kvp, int64_t capacity, int64_t window,
                               int64_t rankOffset, int64_t ranks);
/// helix.attention_partial: appends k (and v) at `slots`, attends q over
/// `spans` (a ring of cache.capacity slots) of cache rows
/// [rowBase + batchOffset, + B), applies W_UV ([Hq, Dv, kv_lora]) for MLA,
/// and packs [1, B, Hq * headSplit, Dv / headSplit + 1] (outputs, then
/// LSE). `rowBase`: the micro-batch's first row (pipeline stages), else 0.
/// A verify step has `queries` rows per request (request-major; cache row
/// rowBase + (batchOffset + i) / queries): each row sees the entries of
/// its request's earlier rows, none of its later ones.
Tensor attentionPartial(Context &ctx, const Tensor &q, const Tensor &k,
                        const Tensor &v, KVCache cache, const Tensor &wUV,
                        const Ints &slots, const Ints &spans, int64_t rowBase,
                        int64_t batchOffset, int64_t headSplit, float scale,
                        int64_t queries = 1);
/// helix.output_gate: attention [B, h * d] times sigmoid(x wGate^T), wGate
/// [h, d, H] the heads' gate rows of q_proj (Qwen3-Next, Qwen3.5).
Tensor outputGate(Context &ctx, const Tensor &attention, const Tensor &x,
                  const Tensor &wGate);
/// helix.lse_combine: [P, B, Hs, d + 1] (+ sinks [Hs]) -> [B, Hs * d].
Tensor lseCombine(Context &ctx, const Tensor &packed, const Tensor &sinks);

//===----------------------------------------------------------------------===//
// Long-context layers (CodegenLongContext.cpp)
//===----------------------------------------------------------------------===//

/// helix.gdn_step: one decode step of a Gated DeltaNet layer (Hugging
/// Face's Qwen3NextGatedDeltaNet) for the rank's keyHeads key heads and
/// valueHeads value heads (r = valueHeads / keyHeads per key head):
/// x [B, H]; wQKVZ [keyHeads, 2 keyDim + 2 r valueDim, H] (per key head
/// q, k, v, z), wBA [keyHeads, 2 r, H] (per key head b, a; either also as
/// its 2-D matrix [keyHeads rows, H]); the depthwise convolution convQ /
/// convK [keyHeads keyDim, K], convV [valueHeads valueDim, K]; aLog /
/// dtBias [valueHeads]; normWeight [valueDim]. Request b uses row rowBase
/// + b of `state` [rows, GatedDeltaNetDims::stateValues()] (a request at
/// position 0 starts from zeros). -> [B, valueHeads valueDim]. Two GEMMs,
/// one kernel.
Tensor gdnStep(Context &ctx, const Tensor &x, const Ints &positions,
               const Tensor &wQKVZ, const Tensor &wBA, const Tensor &convQ,
               const Tensor &convK, const Tensor &convV, const Tensor &aLog,
               const Tensor &dtBias, const Tensor &normWeight,
               const Tensor &state, int64_t rowBase, int64_t keyHeads,
               int64_t valueHeads, int64_t keyDim, int64_t valueDim,
               int64_t convKernel, double eps);

/// helix.index_candidates (DeepSeek Sparse Attention's lightning indexer on
/// one KVP rank): computes the new token's index query and key, appends the
/// key at `slots` (its index-cache slot on this rank, -1: another rank's),
/// scores the rank's cached index keys of `spans`, and returns its local
/// top-k candidates [1, B, topK, 2] f32: (score, position) best first,
/// padded with (-inf, -1). q = rmsNorm(x wqA^T, qNorm, qNormEps) wqB^T
/// [B, heads, headDim] (wqB [heads, headDim, qLora] or its 2-D matrix;
/// wqA undefined: q = x wqB^T); key = LayerNorm(x wk^T) (kNormWeight,
/// kNormBias, eps 1e-6); RoPE (`rope`, rotaryDim = ropeDim) on the first
/// ropeDim values of both; head weights x wProj^T (heads headDim)^-1/2; score
/// sum_h w_h relu(q_h . key). `cache`: [rows, capacity (headDim + 1)]
/// (allocState), row rowBase + batchOffset + b, each slot a key and its
/// position; slots [1, B] or [B] and spans [1, B, 2] as attentionPartial
/// takes them (a ring of capacity slots).
Tensor indexCandidates(Context &ctx, const Tensor &x, const Ints &positions,
                       const Tensor &wqA, const Tensor &qNorm,
                       const Tensor &wqB, const Tensor &wk,
                       const Tensor &kNormWeight, const Tensor &kNormBias,
                       const Tensor &wProj, const Tensor &cache,
                       const Ints &slots, const Ints &spans, int64_t rowBase,
                       int64_t batchOffset, int64_t heads, int64_t headDim,
                       int64_t ropeDim, int64_t topK, double qNormEps,
                       const RopeConfig &rope);
/// helix.topk_merge: the candidates of every KVP rank [P, B, k, 2] -> the
/// selected positions [B, topK] (best first by score, then lower position;
/// -1 padding), identical on every rank. The candidates go to the host.
Ints topkMerge(Context &ctx, const Tensor &candidates, int64_t topK);
/// helix.attention_partial over the selected tokens only (sparse MLA): as
/// attentionPartial (the same packing of the result, the same append of k
/// at slots; no v: a latent cache), but row b attends only to the
/// positions of `selected` (row b: selected.data[b k ..], -1: none) that
/// KVP rank kvpRank holds: position p is on rank (p / block) % kvp at local
/// entry ownedBelow(p + 1, rank, block, kvp) - 1, slot that % capacity.
/// The entries are gathered (as stored) into a scratch cache of k slots
/// per row and attended there; a row with none yields the empty partial
/// (zeros, LSE -inf).
Tensor sparseAttentionPartial(Context &ctx, const Tensor &q, const Tensor &k,
                              KVCache cache, const Tensor &wUV,
                              const Ints &slots, const Ints &selected,
                              int64_t block, int64_t kvp, int64_t kvpRank,
                              int64_t rowBase, int64_t batchOffset,
                              int64_t headSplit, float scale);

/// helix.moe_router -> (weights [B, k] f32, ids [B, k] i32). `bias` is the
/// router's logit bias when `logitBias`, else the selection-only score
/// correction. `groupScore`: "" (no grouped routing), "max" or "top2sum".
std::tuple<Tensor, Tensor> moeRouter(Context &ctx, const Tensor &x,
                                     const Tensor &weight, const Tensor &bias,
                                     bool logitBias, bool sigmoid, int64_t topK,
                                     int64_t groups, int64_t topkGroups,
                                     const char *groupScore, bool normTopkProb,
                                     double routedScaling);
/// helix.moe_experts. `gate`, `up` [E, I, H] and `down` [E, H, I]; when
/// `fused` (gpt-oss) `gate` holds both as [2, E, I, H] (SplitGateUpTransposed)
/// and `up` is none(). Biases: gate/up [E, I] (fused: [2, E, I] in
/// `gateBias`), down [E, H], each may be none(). Shared experts gate/up
/// [S, H], down [H, S] or none(); `sharedExpertGate` [1, H] (or none())
/// scales their output by sigmoid(x . gate) (Qwen3-Next). The result is
/// [1, B, H] when `groupDim`, else [B, H].
Tensor moeExperts(Context &ctx, const Tensor &x, const Tensor &weights,
                  const Tensor &ids, const Tensor &gate, const Tensor &up,
                  const Tensor &down, const Tensor &gateBias,
                  const Tensor &upBias, const Tensor &downBias,
                  const Tensor &sharedGate, const Tensor &sharedUp,
                  const Tensor &sharedDown, const Tensor &sharedExpertGate,
                  int64_t expertOffset, const char *activation, bool fused,
                  bool groupDim);

//===----------------------------------------------------------------------===//
// Layout (tensor dialect)
//===----------------------------------------------------------------------===//

/// tensor.extract_slice with unit strides.
Tensor slice(Context &ctx, const Tensor &x, Dims offsets, Dims sizes);
Ints slice(Context &ctx, const Ints &x, Dims offsets, Dims sizes);
/// tensor.concat.
Tensor concat(Context &ctx, int64_t dim, const std::vector<Tensor> &parts);
template <typename... T>
Tensor concat(Context &ctx, int64_t dim, const Tensor &first,
              const T &...rest) {
  return concat(ctx, dim, std::vector<Tensor>{first, rest...});
}
/// tensor.empty.
Tensor empty(Context &ctx, Dims shape);

//===----------------------------------------------------------------------===//
// Collectives (upstream shard ops over the rank's group on their grid axes)
//===----------------------------------------------------------------------===//

/// shard.all_reduce (sum). `inPlace`: x is not used again.
Tensor allReduce(Context &ctx, const Tensor &x, const Members &members,
                 bool inPlace);
/// shard.all_gather along `axis`.
Tensor allGather(Context &ctx, const Tensor &x, const Members &members,
                 int64_t axis);
/// shard.all_to_all.
Tensor allToAll(Context &ctx, const Tensor &x, const Members &members,
                int64_t splitAxis, int64_t concatAxis);
/// shard.reduce_scatter (sum) along `axis`.
Tensor reduceScatter(Context &ctx, const Tensor &x, const Members &members,
                     int64_t axis);
/// shard.all_slice: the rank's block of `members.size()` along `axis` (no
/// data moves).
Tensor allSlice(Context &ctx, const Tensor &x, const Members &members,
                int64_t axis);
Ints allSlice(Context &ctx, const Ints &x, const Members &members,
              int64_t axis);
/// shard.send to / shard.recv from member `peer` of a group of two.
Tensor send(Context &ctx, const Tensor &x, const Members &members,
            int64_t peer);
Tensor recv(Context &ctx, const Tensor &buffer, const Members &members,
            int64_t peer);

/// helix.async_start of an all-to-all or all-reduce; other collectives
/// complete at once.
Async allToAllStart(Context &ctx, const Tensor &x, const Members &members,
                    int64_t splitAxis, int64_t concatAxis);
Async allReduceStart(Context &ctx, const Tensor &x, const Members &members,
                     bool inPlace);
Async ready(const Tensor &x);
/// helix.async_wait.
Tensor wait(Context &ctx, Async &pending);

//===----------------------------------------------------------------------===//
// The program
//===----------------------------------------------------------------------===//

using LoadFn = void (*)(Context &, const SafetensorsCheckpoint &, RankState &);
using PrepareFn = void (*)(Context &);
/// One micro-batch (all rows, without pipeline stages) of a step:
/// `in` holds its rows, `microBatchRow` its first row in the batch.
using StepFn = Tensor (*)(Context &, RankState &, const StepInputs &,
                          size_t microBatchRow);

/// One pipeline stage's generated functions, run by every rank of the
/// stage; constructing one registers it. A program compiled with --mtp
/// also has the MTP layer's draft pass (its own weights and KV shards,
/// loaded into a RankState of its own).
struct StageProgram {
  int stage;
  LoadFn load;
  PrepareFn prepare;
  StepFn step;
  LoadFn draftLoad = nullptr;
  StepFn draftStep = nullptr;
  StageProgram(int stage, LoadFn load, PrepareFn prepare, StepFn step,
               LoadFn draftLoad = nullptr, StepFn draftStep = nullptr);
};

/// Runs the helix-decode driver, each rank the program of its pipeline
/// stage (axis 0 of the first registered grid):
/// `worldSize` ranks, `vocab` logits, `maxContext` positions, `batch` rows
/// per step (prompt files may have fewer; the rest run as padding) in
/// micro-batches of `microBatch` rows (pipeline stages run one at a time;
/// else microBatch = batch). The logits come back from the step on rank
/// `logitsRank` (the last stage's first rank), which sends them to rank 0.
int runRankPrograms(int argc, char **argv, const std::string &name,
                    int worldSize, int64_t vocab, int64_t maxContext,
                    int64_t batch, int64_t microBatch, int logitsRank,
                    const std::string &defaultBackend);

/// Runs the helix-decode driver's speculative schedule (Speculative.h)
/// with the stage program's step as the verify step (K + 1 rows for each
/// of `requests` requests) and its draft pass (pipeline stages: none).
int runSpeculativePrograms(int argc, char **argv, const std::string &name,
                           int worldSize, int64_t vocab, int64_t maxContext,
                           int64_t requests, int64_t draftTokens,
                           const std::string &defaultBackend);

/// The backends the program was built for: registers the CUDA backend
/// (HELIX_RUNTIME_CUDA) and names the default one.
inline const char *registerBackends() {
#ifdef HELIX_RUNTIME_CUDA
  registerCudaBackend();
  return "cuda";
#else
  return "cpu";
#endif
}

/// What the generated main calls: registers the backends the program was
/// built for (HELIX_RUNTIME_CUDA: the CUDA backend, the default one) and
/// runs the rank programs.
inline int run(int argc, char **argv, const char *name, int worldSize,
               int64_t vocab, int64_t maxContext, int64_t batch,
               int64_t microBatch, int logitsRank) {
  const char *backend = registerBackends();
  return runRankPrograms(argc, argv, name, worldSize, vocab, maxContext, batch,
                         microBatch, logitsRank, backend);
}

/// The generated main of a program compiled with --mtp K.
inline int runSpeculative(int argc, char **argv, const char *name,
                          int worldSize, int64_t vocab, int64_t maxContext,
                          int64_t requests, int64_t draftTokens) {
  const char *backend = registerBackends();
  return runSpeculativePrograms(argc, argv, name, worldSize, vocab, maxContext,
                                requests, draftTokens, backend);
}

} // namespace cg
} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_CODEGEN_H
