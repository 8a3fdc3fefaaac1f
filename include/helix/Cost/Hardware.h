//===- Hardware.h - Per-GPU hardware figures for the cost model -*- C++ -*-===//
//
// What the cost model knows about a GPU and its interconnect. Built-in presets
// live in data/hardware/*.json (embedded into the library at build time, so
// the binary needs no data files) and every figure there carries its source.
// All members are SI units: FLOP/s, bytes, bytes/s, seconds.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COST_HARDWARE_H
#define HELIX_COST_HARDWARE_H

#include "helix/Cost/Precision.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace helix {

/// Collective operations the cost model prices.
enum class CollectiveKind {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Broadcast,
  MoEDispatch,
  MoECombine,
  P2P,
};
constexpr int kNumCollectiveKinds = 8;

/// JSON key of a collective ("all_reduce", "moe_dispatch", ...).
const char *stringifyCollectiveKind(CollectiveKind kind);

/// One measured time of a collective: `gpus` GPUs, a message of `bytes`
/// (nccl-tests size), `seconds`.
struct CollectivePoint {
  CollectivePoint() = default;
  CollectivePoint(int64_t gpus, double bytes, double seconds)
      : gpus(gpus), bytes(bytes), seconds(seconds), logBytes(std::log(bytes)),
        logSeconds(std::log(seconds)) {}
  int64_t gpus = 0;
  double bytes = 0;
  double seconds = 0;
  /// log(bytes) and log(seconds), for the log-log interpolation between
  /// points (collectiveTime: the search reads these curves some 10^5 times).
  double logBytes = 0, logSeconds = 0;
};

/// Latency and achieved bandwidth of one collective kind.
struct CollectiveParams {
  /// Measured small-message latency (alpha) by group size, sorted by size.
  std::vector<std::pair<int64_t, double>> alphaS;
  /// Achieved bus bandwidth as a fraction of the per-direction link peak.
  double busEfficiency = 0.7;
  /// Measured times by group size and message size ("latency_us"), sorted
  /// by (gpus, bytes); empty when the file gives none (alpha-beta only).
  /// Collectives.h says how they are used.
  std::vector<CollectivePoint> measured;

  /// Alpha for a group of `n` GPUs: interpolateLog2(alphaS, n) (tree and
  /// NVLS algorithms grow with log n).
  double alpha(int64_t n) const;
};

/// A latency table by group size read at `n`: interpolated linearly in
/// log2(n) between the listed sizes, extended with the last slope beyond
/// them when it grows (held at the last value when it falls, so that a
/// latency never reaches 0), held constant below the first size or when
/// only one is listed; 0 for an empty table.
double interpolateLog2(const std::vector<std::pair<int64_t, double>> &table,
                       int64_t n);

/// One measured point of a kernel curve. `x` is the kernel's parallel
/// dimension: the token dimension M of a GEMM (tokens through a grouped
/// expert GEMM), or the rows of a decode-attention kernel (requests x KV
/// heads on the GPU; MLA: requests). At x the kernel costs `fixedS` plus
/// the bytes it streams at `bandwidthEfficiency` of HBM peak (and its
/// FLOPs at `mathEfficiency` of peak math; 0 = compute.gemm_efficiency).
struct KernelPoint {
  double x = 1;
  double fixedS = 0;
  double bandwidthEfficiency = 1;
  double mathEfficiency = 0;
};

/// Points of one kernel kind, sorted by x. at() interpolates linearly in
/// log2(x) and holds the end points beyond the measured range.
struct KernelCurve {
  std::vector<KernelPoint> points;
  bool empty() const { return points.empty(); }
  KernelPoint at(double x) const;
};

/// The kernel kinds with a curve in a hardware file ("kernels" section).
/// Without a curve a kind costs compute.kernel_overhead_us per kernel and
/// streams at the flat efficiencies of "memory".
struct KernelCurves {
  KernelCurve gemm[kNumDTypes]; // by weight format
  KernelCurve
      gemmMath[kNumDTypes]; // math_efficiency only, by arithmetic format
  KernelCurve groupedGemm[kNumDTypes]; // MoE routed experts, by format
  /// MoE routed experts stored as MXFP4 (E2M1 values, one E8M0 scale per
  /// 32; gpt-oss's checkpoints, kept as stored by helix's programs): the
  /// engines run their own MXFP4 MoE kernels for them (W4A8 on Blackwell,
  /// W4A16 on Hopper), not the NVFP4 ones. Empty: the FP4 curve (and its
  /// fallback) applies.
  KernelCurve groupedGemmMXFP4;
  /// NVFP4 routed experts on TensorRT-LLM's other MoE kernel, trtllm-gen
  /// (its "TRTLLM" MoE backend; FlashInfer's trtllm_fp4_block_scale_moe in
  /// vLLM and SGLang), where the file measures it. Engines tuned for
  /// decode pick it at small token counts, the grouped GEMM (`groupedGemm`)
  /// at large ones: the cost model prices FP4 experts with the faster of
  /// the two at each op (Roofline.h, kernelCost).
  KernelCurve groupedGemmFP4TrtllmGen;
  /// Decode attention by KV-cache format: GQA/MHA; MLA with many local
  /// query heads (measured at 128) and with few (measured at 16).
  KernelCurve attentionGQA[kNumDTypes];
  KernelCurve attentionMLA[kNumDTypes];
  KernelCurve attentionMLAFewHeads[kNumDTypes];
  /// Norm, activation, RoPE, combine, sampling kernels: fixed seconds each;
  /// < 0 takes compute.kernel_overhead_us.
  double elementwiseS = -1;

  /// The attention curve for a KV format: its own, else the nearest wider
  /// measured format (fp4 -> fp8 -> bf16); MLA with <= 32 local query heads
  /// prefers the few-heads curve.
  const KernelCurve &attention(bool mla, double localHeads,
                               DType kvFormat) const;
  /// The GEMM (grouped: MoE block) curve for a weight format, with the same
  /// fallback to the nearest wider measured format (FP4 weights on Hopper,
  /// which has no FP4 tensor cores, run FP8 or BF16 kernels).
  const KernelCurve &gemmFor(DType format, bool grouped) const;
};

struct Hardware {
  std::string name;
  std::string description;
  /// The built-in preset this is, or is based on ("base"); empty for a
  /// complete user file. Engine profiles (helix/Cost/EngineProfile.h) are
  /// measured per preset.
  std::string preset;
  /// The engine profile applied over the preset's curves ("vllm", "sglang",
  /// "trtllm"); empty: the presets' own, engine-neutral curves.
  std::string engineProfile;
  /// Dense peak per format, indexed by DType; 0 means not supported.
  double peakFlops[kNumDTypes] = {0, 0, 0};
  double gemmEfficiency = 1.0;   // achieved fraction of peak FLOP/s
  double kernelOverheadS = 0.0;  // fixed cost per kernel
  double hbmCapacityBytes = 0.0; // per GPU
  double hbmBandwidth = 0.0;     // bytes/s per GPU
  double memoryEfficiency = 1.0; // memory-bound GEMV / elementwise kernels
  double attentionMemoryEfficiency = 1.0; // decode attention KV streaming
  double nvlinkBandwidth = 0.0;           // bytes/s per GPU per direction
  int64_t nvlinkDomain = 1;               // GPUs in one NVLink domain
  /// Streaming multiprocessors per GPU (0: not given): the decode attention
  /// kernel's split-K, and so its kernel count, follows it
  /// (helix/Common/AttentionSplits.h).
  int64_t smCount = 0;
  double scaleOutBandwidth = 0.0; // bytes/s per GPU per direction
  /// Crossing NVLink domains (Collectives.h, "Beyond one NVLink domain"):
  /// the measured latency of one exchange round among `domains` domains
  /// over the scale-out network, by domain count, sorted; and the fraction
  /// of the NIC's bandwidth such exchanges reach. Empty: a collective over
  /// several domains is priced by its alpha-beta line on the NIC.
  std::vector<std::pair<int64_t, double>> scaleOutLatencyS;
  double scaleOutEfficiency = 0.0;
  CollectiveParams collectives[kNumCollectiveKinds];
  KernelCurves kernels;
  /// (field path, source) for every figure read from JSON.
  std::vector<std::pair<std::string, std::string>> sources;

  bool supports(DType dtype) const {
    return peakFlops[static_cast<int>(dtype)] > 0;
  }
  double peak(DType dtype) const { return peakFlops[static_cast<int>(dtype)]; }
  /// The narrowest format with arithmetic on this GPU (FP4 on Blackwell,
  /// FP8 on Hopper, else BF16): what --dtype defaults to.
  DType nativeDType() const {
    for (DType d : {DType::FP4, DType::FP8})
      if (supports(d))
        return d;
    return DType::BF16;
  }
  const CollectiveParams &collective(CollectiveKind kind) const {
    return collectives[static_cast<int>(kind)];
  }
  /// The latency of one exchange round among `domains` NVLink domains
  /// (scaleOutLatencyS, interpolated as CollectiveParams::alpha).
  double scaleOutLatency(int64_t domains) const;
  /// Per-direction link bandwidth a group of `n` GPUs runs at: NVLink inside
  /// one domain, the scale-out NIC once the group spans domains.
  double linkBandwidth(int64_t n) const {
    return n <= nvlinkDomain ? nvlinkBandwidth : scaleOutBandwidth;
  }
};

/// Name of the default preset ("gb200-nvl72").
const char *defaultHardwareName();

/// Names of the built-in presets, sorted.
std::vector<std::string> listHardwarePresets();

/// The JSON text of a built-in preset, or nullptr.
const char *hardwarePresetJSON(const std::string &name);

/// Loads a preset by name, or else a user JSON file by path. A user file may
/// name a preset in "base" and override only some fields; otherwise every
/// field is required. On failure returns false with one line naming the file
/// (or preset) and the field.
bool loadHardware(const std::string &nameOrPath, Hardware &hw,
                  std::string &error);

/// Parses hardware JSON text; `origin` names it in errors.
bool parseHardwareJSON(const std::string &text, const std::string &origin,
                       Hardware &hw, std::string &error);

/// Reads the figures and curves present in a JSON object over `hw`, as a
/// user file with "base" does: what it gives replaces, what it lacks stays
/// (an engine profile's curves). Errors name `origin` and the field.
bool overlayHardwareJSON(const std::string &text, const std::string &origin,
                         Hardware &hw, std::string &error);

} // namespace helix

#endif // HELIX_COST_HARDWARE_H
