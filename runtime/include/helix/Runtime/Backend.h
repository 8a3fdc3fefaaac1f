//===- Backend.h - What a backend implements --------------------*- C++ -*-===//
//
// The ops in Ops.h check shapes, allocate outputs and call these kernels;
// a backend (CPU, CUDA) implements them on its own memory. Index arguments
// (tokens, positions, slots) come as host vectors: they are small per step
// and the CUDA backend uploads them.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_BACKEND_H
#define HELIX_RUNTIME_BACKEND_H

#include "helix/Common/KernelTable.h"
#include "helix/Runtime/Context.h"
#include "helix/Runtime/KVCache.h"
#include "helix/Runtime/Ops.h"
#include "helix/Runtime/PartialsLayout.h"
#include "helix/Runtime/Tensor.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace helix {
namespace rt {

/// What one backend op's kernels must move and compute, counted from their
/// arguments and shapes (not measured): weights and the KV cache in their
/// stored formats with their scales, activations in f32 (docs/
/// cuda-on-cpu.md, "Bytes per kernel").
/// Also what they issue: kernel launches, cuBLAS calls and collective
/// operations (an all-to-all, an all-reduce, ...), counted where they are
/// issued (docs/cuda-on-cpu.md, "Launches per op").
struct OpTraffic {
  /// The kind of kernel the op launches (helix/Common/KernelTable.h); an
  /// op whose calls launch more than one kernel launches `extraKind` for
  /// the rest (decode attention: its split-K merge).
  KernelKind kind = KernelKind::Layout, extraKind = KernelKind::Layout;
  int64_t calls = 0;
  double weightBytes = 0, kvBytes = 0, actBytes = 0, flops = 0;
  int64_t launches = 0, blasCalls = 0, collectives = 0;
  /// MoE: the routed experts whose weights the op read (summed over calls).
  int64_t experts = 0;
  OpTraffic &operator+=(const OpTraffic &o) {
    calls += o.calls;
    weightBytes += o.weightBytes;
    kvBytes += o.kvBytes;
    actBytes += o.actBytes;
    flops += o.flops;
    launches += o.launches;
    blasCalls += o.blasCalls;
    collectives += o.collectives;
    experts += o.experts;
    return *this;
  }
};

/// The kernels the ops launched (launches and cuBLAS calls), by kind: each
/// call's first kernel is the op's kind, the rest its extraKind.
inline std::array<int64_t, kNumKernelKinds>
launchesByKind(const std::map<std::string, OpTraffic> &ops) {
  std::array<int64_t, kNumKernelKinds> k{};
  for (const auto &entry : ops) {
    const OpTraffic &t = entry.second;
    int64_t all = t.launches + t.blasCalls;
    int64_t first = std::min(all, t.calls);
    k[static_cast<int>(t.kind)] += first;
    k[static_cast<int>(t.extraKind)] += all - first;
  }
  return k;
}

class Backend {
public:
  virtual ~Backend();
  virtual std::string name() const = 0;
  /// Whether tensors live in device memory (host staging for MPI).
  virtual bool deviceMemory() const = 0;

  // Memory.
  virtual std::shared_ptr<Storage> allocate(size_t bytes) = 0;
  virtual void upload(void *dst, const void *src, size_t bytes) = 0;
  /// Waits for queued work that writes `src`.
  virtual void download(void *dst, const void *src, size_t bytes) = 0;
  virtual void copy(void *dst, const void *src, size_t bytes) = 0;
  virtual void zero(void *dst, size_t bytes) = 0;
  virtual void synchronize() = 0;

  /// A communicator over `members`; `group` holds the MPI communicator of
  /// the group (valid for the communicator's lifetime).
  virtual std::unique_ptr<Communicator>
  createCommunicator(Context &ctx, const std::vector<int> &members, int index,
                     GroupHandle &group) = 0;

  // Kernels: arguments are checked, outputs allocated.
  /// A resident BF16 / FP8 / FP4 tensor (with its block scales) decoded
  /// into f32 `out` of the same shape: how kernels take weights that are
  /// not f32.
  virtual void dequantize(const Tensor &q, Tensor &out) = 0;
  virtual void embedding(const Tensor &table,
                         const std::vector<int64_t> &tokens, int64_t vocabBegin,
                         Tensor &out) = 0;
  /// x, out viewed [rows, D].
  virtual void rmsNorm(const Tensor &x, const Tensor &weight, float eps,
                       Tensor &out) = 0;
  /// x, out [rows, W]: the first D = weight.dim(0) columns of each row
  /// normalized, the other W - D copied (MLA's compressed KV: the latent
  /// normed, the RoPE part kept).
  virtual void rmsNormPrefix(const Tensor &x, const Tensor &weight, float eps,
                             Tensor &out) = 0;
  /// sum = a + b and out = rmsNorm(sum) (viewed [rows, D]): a residual add
  /// and the next norm. Default: add() then rmsNorm(); the CUDA backend
  /// runs them as one kernel.
  virtual void addRmsNorm(const Tensor &a, const Tensor &b,
                          const Tensor &weight, float eps, Tensor &sum,
                          Tensor &out);
  /// rope() on q and on k, then, with a cache, kvAppend(k, v) at `slots`.
  /// Default: those ops one by one; the CUDA backend: one kernel.
  virtual void ropeKvAppend(Tensor &q, Tensor &k, const Tensor *v,
                            KVCache *cache, const std::vector<int64_t> &slots,
                            const std::vector<int64_t> &positions,
                            const std::vector<float> &invFreq,
                            float attentionFactor, int64_t offset,
                            bool interleaved);
  /// Runs one decode step (the driver calls every step through it): the
  /// CUDA backend's per-step state (MoE statistics slots; CUDA graphs) is
  /// kept here. Default: step().
  virtual Tensor runStep(const std::function<Tensor()> &step) { return step(); }
  /// The traffic counted since the last reset, by op (empty: this backend
  /// does not count; the CUDA backend does).
  virtual std::map<std::string, OpTraffic> traffic() const { return {}; }
  virtual void resetTraffic() {}
  /// Whether linear() and moeExperts() take weights in their resident
  /// format (BF16, or FP8 / FP4 with block scales) and read them as stored;
  /// otherwise the ops hand them decoded to f32 (dequantize, a workspace
  /// copy per call: more bytes moved than the plan prices).
  virtual bool readsResidentWeights() const { return false; }
  virtual void linear(const Tensor &x, const Tensor &weight, const Tensor *bias,
                      Tensor &out) = 0;
  /// linear() of x by each weight into its out (checked, allocated);
  /// default: one linear() each.
  virtual void linearMany(const Tensor &x, const std::vector<Tensor> &weights,
                          const std::vector<const Tensor *> &biases,
                          std::vector<Tensor> &outs) {
    for (size_t i = 0; i < weights.size(); ++i)
      linear(x, weights[i], biases[i], outs[i]);
  }
  virtual void headMatmul(const Tensor &x, const Tensor &w, bool transposeW,
                          Tensor &out) = 0;
  virtual void rope(Tensor &x, const std::vector<int64_t> &positions,
                    const std::vector<float> &invFreq, float attentionFactor,
                    int64_t offset, bool interleaved) = 0;
  virtual void kvAppend(KVCache &cache, const Tensor &k, const Tensor *v,
                        const std::vector<int64_t> &slots) = 0;
  /// Decode attention over slots [slotBegin[b], slotEnd[b]) of each row.
  /// piece = 0: out [B, h, d] and lse [B, h]. piece > 0: out is the
  /// packing [B, h * d / piece, piece + 1] (each piece of a head's values,
  /// then the head's LSE), lse undefined.
  virtual void attention(const Tensor &q, const KVCache &cache, float scale,
                         const std::vector<int64_t> &slotBegin,
                         const std::vector<int64_t> &slotEnd, Tensor &out,
                         Tensor &lse, int64_t piece) = 0;
  /// out [B, h, d]: the exact combine of the partials that `layout` finds
  /// from values' and lse's first elements (either may be a view into the
  /// other's storage: the packed layout).
  virtual void lseCombine(const Tensor &values, const Tensor &lse,
                          const PartialsLayout &layout, const Tensor *sinks,
                          Tensor &out) = 0;
  virtual void gatedActivation(const Tensor &gate, const Tensor &up,
                               const Activation &act, Tensor &out) = 0;
  /// indices/weights are host arrays [B, k].
  virtual void moeExperts(const Tensor &x, const std::vector<int32_t> &indices,
                          const std::vector<float> &weights, int64_t topK,
                          const ExpertWeights &experts, int64_t firstExpert,
                          const Activation &act, bool addDownBias,
                          Tensor &out) = 0;
  /// The router: out.indices [B, k] (i32) and out.weights [B, k] from
  /// logits [B, E] (checked, outputs allocated). Default: routeHost on the
  /// host (the logits downloaded, the routing uploaded); the CUDA backend
  /// routes on the device.
  virtual void moeRoute(const Tensor &logits, const RouterConfig &config,
                        const Tensor *correctionBias, Routing &out);
  /// moeExperts with the routing in this backend's memory. Default:
  /// downloads it for moeExperts(); the CUDA backend dispatches, runs the
  /// experts and combines on the device (no host round trip).
  virtual void moeExpertsRouted(const Tensor &x, const Routing &routing,
                                const ExpertWeights &experts,
                                int64_t firstExpert, const Activation &act,
                                bool addDownBias, Tensor &out);
  // Long-context layers (Ops.h): arguments checked, outputs allocated.
  /// gatedDeltaNetStep: the small weights f32, or BF16 where the backend
  /// reads resident weights; state [B, dims.stateValues()].
  virtual void gatedDeltaNet(const Tensor &proj, const Tensor &ba,
                             const GatedDeltaNetWeights &weights, Tensor &state,
                             const std::vector<int64_t> &positions,
                             const GatedDeltaNetDims &dims, float eps,
                             Tensor &out) = 0;
  /// indexerPrepare: RoPE on dims [0, 2 invFreq.size()) of q and of the
  /// normed key.
  virtual void indexerPrepare(Tensor &q, const Tensor &key,
                              const Tensor &normWeight, const Tensor &normBias,
                              float normEps, Tensor &weights, float weightScale,
                              Tensor &cache, const std::vector<int64_t> &slots,
                              const std::vector<int64_t> &positions,
                              const std::vector<float> &invFreq,
                              float attentionFactor, bool interleaved) = 0;
  /// indexerTopK: out [B, topK, 2].
  virtual void indexerTopK(const Tensor &q, const Tensor &weights,
                           const Tensor &cache,
                           const std::vector<int64_t> &begin,
                           const std::vector<int64_t> &end, int64_t topK,
                           Tensor &out) = 0;
  /// kvGather: dst [B, capacity] of src's layout and format.
  virtual void kvGather(const KVCache &src, const std::vector<int64_t> &slots,
                        KVCache &dst) = 0;
  virtual void add(const Tensor &a, const Tensor &b, Tensor &out) = 0;
  /// log(exp(a) + exp(b)). Default: on the host (download, upload); the
  /// CUDA backend: a kernel (no host round trip in a step).
  virtual void logAddExp(const Tensor &a, const Tensor &b, Tensor &out);
  /// x viewed [a, b, c] -> out [b, a, c].
  virtual void swapAxes01(const Tensor &x, int64_t a, int64_t b, int64_t c,
                          Tensor &out) = 0;
  /// x viewed [rows, cols] -> out [rows, count] from column `begin`.
  virtual void sliceColumns(const Tensor &x, int64_t rows, int64_t cols,
                            int64_t begin, int64_t count, Tensor &out) = 0;
  /// a [rows, ca], b [rows, cb] -> out [rows, ca + cb].
  virtual void concatColumns(const Tensor &a, const Tensor &b, int64_t rows,
                             int64_t ca, int64_t cb, Tensor &out) = 0;
  /// x viewed [s, n] -> out [n].
  virtual void sumLeading(const Tensor &x, int64_t s, int64_t n,
                          Tensor &out) = 0;
};

/// The CPU backend (always available as "cpu").
std::unique_ptr<Backend> createCpuBackend(Context &ctx,
                                          const ContextOptions &options);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_BACKEND_H
