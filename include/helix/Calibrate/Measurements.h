//===- Measurements.h - What helix calibrate times --------------*- C++ -*-===//
//
// The records `helix calibrate` takes on a GPU (docs/gpu.md, "helix
// calibrate"): one median time per shape of the runtime's GEMM path, decode
// attention kernel, elementwise kernels and NCCL collectives, with the GPU,
// driver and date they were taken on. Plain data: the CUDA timing plugin
// fills them, the fit (Fit.h) reads them, MeasurementsJSON.h keeps them in
// a file. Also here: the bytes each record streams as the cost model counts
// them (docs/cost-model.md §3), which is what the fit divides by.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_CALIBRATE_MEASUREMENTS_H
#define HELIX_CALIBRATE_MEASUREMENTS_H

#include "helix/Cost/Hardware.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace helix {
namespace calibrate {

/// One weight-streaming GEMM out [m, n] = x [m, k] . w [n, k]^T with `w`
/// stored in `format` (bf16; fp8 with 128x128 block scales; fp4 as NVFP4).
struct GemmSample {
  DType format = DType::BF16;
  int64_t m = 0, n = 0, k = 0;
  double seconds = 0; // median of `runs`
  int64_t runs = 1;
};

/// Decode attention kinds: GQA/MHA (K and V of `headDim` per KV head) and
/// MLA's absorbed form (one latent head of `headDim` = kv_lora + rope values,
/// the value its first entries).
enum class AttentionKind { GQA, MLA };

const char *attentionKindName(AttentionKind kind); // "gqa", "mla"

/// One decode attention kernel: `batch` rows of one new token each, over
/// `kvLength` cached tokens in `kvFormat`.
struct AttentionSample {
  AttentionKind kind = AttentionKind::GQA;
  DType kvFormat = DType::BF16;
  int64_t batch = 0, kvHeads = 0, qHeads = 0, headDim = 0, kvLength = 0;
  double seconds = 0;
  int64_t runs = 1;
};

/// One small kernel (norm, RoPE, KV append, combine, activation) at a
/// decode shape: what the cost model calls an elementwise kernel's fixed
/// cost. `kernel` names it and its shape ("rmsNorm 1x8192").
struct ElementwiseSample {
  std::string kernel;
  double seconds = 0;
  int64_t runs = 1;
};

/// One collective over `gpus` GPUs; `bytes` as nccl-tests sizes it
/// (all-reduce buffer, all-gather output, reduce-scatter input, per-rank
/// all-to-all send buffer).
struct CollectiveSample {
  CollectiveKind op = CollectiveKind::AllReduce;
  int64_t gpus = 0;
  double bytes = 0;
  double seconds = 0;
  int64_t runs = 1;
};

/// Everything one calibration measured, and on what.
struct MeasurementSet {
  std::string gpu;         // "NVIDIA H100 80GB HBM3"
  std::string driver;      // "550.54.15"
  std::string date;        // "2025-06-01" (UTC)
  std::string environment; // "CUDA runtime 13.0, cuBLAS ..., NCCL ..."
  /// Streaming multiprocessors of the GPU (0: not recorded). The hardware
  /// file carries it as compute.sm_count: the decode attention kernel's
  /// split-K, and so its kernel count, follows it.
  int64_t smCount = 0;
  /// What was timed, one phrase for the description ("helix's CUDA runtime
  /// kernels ..."), and how each kind was timed, by the hardware file's
  /// key ("gemm", "gemm_math", "attention", "elementwise", "all_reduce",
  /// ...): appended to the sources of that kind's points.
  std::string subject;
  std::map<std::string, std::string> methods;
  /// What was not measured and why, one line each (they go into the
  /// output's description).
  std::vector<std::string> notMeasured;
  std::vector<GemmSample> gemm;
  std::vector<AttentionSample> attention;
  std::vector<ElementwiseSample> elementwise;
  std::vector<CollectiveSample> collectives;

  bool empty() const {
    return gemm.empty() && attention.empty() && elementwise.empty() &&
           collectives.empty();
  }
};

/// Bytes per stored value of a weight or KV format as the cost model counts
/// them with NVFP4 scales (what helix's runtime stores): bf16 2, fp8 1,
/// fp4 0.5625.
double bytesPerValue(DType format);

/// Bytes a GEMM streams in the cost model's terms: the weights in their
/// format plus the activations in and out at 2 bytes (bf16), as the
/// presets' fits count them: n*k*w + m*(n+k)*2.
double gemmBytes(const GemmSample &s);
/// FLOPs of a GEMM: 2*m*n*k.
double gemmFlops(const GemmSample &s);

/// The kernel dimension the cost model reads an attention curve at:
/// requests x KV heads (GQA), requests (MLA).
int64_t attentionRows(const AttentionSample &s);
/// KV-cache bytes the kernel streams: GQA batch*kvHeads*kvLength*2*headDim*b,
/// MLA batch*kvLength*headDim*b.
double attentionKVBytes(const AttentionSample &s);
/// The hardware file's attention curve the sample belongs to: "gqa", "mla"
/// (more than 32 query heads) or "mla_few_heads" (at most 32), as
/// KernelCurves::attention chooses.
const char *attentionCurveName(const AttentionSample &s);

/// Checks every record: positive finite times and sizes, formats and kinds
/// the hardware file can hold. Returns "" or one line naming the record
/// ("gemm[3] (bf16 m=1 n=4096 k=4096): seconds must be a positive finite
/// number, got -1").
std::string validate(const MeasurementSet &set);

} // namespace calibrate
} // namespace helix

#endif // HELIX_CALIBRATE_MEASUREMENTS_H
