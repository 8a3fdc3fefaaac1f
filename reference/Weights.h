//===- Weights.h - Checkpoint tensors to f32, dequantized -------*- C++ -*-===//
//
// Reads the weights of the reference from a safetensors checkpoint stored in
// any of the formats of docs/quantization.md and dequantizes them to f32
// with the reference's own decoders (Formats.h):
//
//   (none)     BF16 / F16 / F32 as stored;
//   fp8-block  quant_method "fp8": W.weight F8_E4M3 [N, K] and
//              W.weight_scale_inv F32 [ceil(N/bn), ceil(K/bk)] (bn x bk =
//              weight_block_size, default 128 x 128);
//              value = e4m3(q[r, c]) * scale_inv[r/bn, c/bk];
//   fp8-tensor quant_method "modelopt", quant_algo "FP8": W.weight F8_E4M3
//              and W.weight_scale F32 [] or [1]; value = e4m3(q) * scale
//              (W.input_scale, an activation scale, is not read);
//   nvfp4      quant_method "modelopt", quant_algo "NVFP4": W.weight U8
//              [N, K/2] (two E2M1, even element in the low nibble),
//              W.weight_scale F8_E4M3 [N, K/16] (16 = group_size) and
//              W.weight_scale_2 F32 [] or [1];
//              value = e2m1(q) * e4m3(scale[r, c/16]) * scale_2;
//   mxfp4      quant_method "mxfp4" (gpt-oss): the experts' P = gate_up_proj
//              / down_proj as P_blocks U8 [E, N, K/32, 16] and P_scales U8
//              [E, N, K/32] (E8M0), N x K = out x in;
//              value = e2m1(q) * 2^(scale - 127).
//
// Each tensor's stored dtype decides how it is read, cross-checked with
// config.json's quantization_config: a linear weight stored as BF16 / F16 /
// F32 is always accepted (modules a checkpoint leaves unquantized), a
// quantized one must be stored exactly as its quant_method says, with its
// scale tensors present and of the right dtype and shape. Anything else
// (an unknown quant_method or quant_algo, a quantized tensor where the
// config has none or another format, a quantized embedding / norm / bias /
// router, a missing scale, a packed tensor of the wrong size) throws
// rt::Error naming the checkpoint, the tensor and what was expected.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_REFERENCE_WEIGHTS_H
#define HELIX_REFERENCE_WEIGHTS_H

#include "helix/Runtime/Safetensors.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace helix {
namespace reference {

/// A weight matrix or vector in f32.
struct Mat {
  std::vector<int64_t> shape;
  std::vector<float> v;
  bool empty() const { return v.empty(); }
};

class WeightLoader {
public:
  /// Reads quantization_config from `config`; throws rt::Error on an
  /// unknown or malformed one.
  WeightLoader(const rt::SafetensorsCheckpoint &ckpt,
               const nlohmann::json &config);

  /// A tensor that is never quantized (embeddings, LM head, norms, biases,
  /// routers, sinks): BF16 / F16 / F32 of shape `shape`.
  Mat plain(const std::string &name, const std::vector<int64_t> &shape) const;

  /// A linear layer's weight [out, in] as nn.Linear stores it: float, or
  /// quantized in the checkpoint's format.
  Mat linear(const std::string &name, const std::vector<int64_t> &shape) const;

  /// gpt-oss experts' `name` (gate_up_proj / down_proj) as the bf16
  /// checkpoints store it, [E, in, out]: stored so, or as mxfp4
  /// `name_blocks` / `name_scales` [E, out, in] transposed per expert.
  Mat experts(const std::string &name, int64_t E, int64_t in,
              int64_t out) const;

private:
  enum class Format { None, Fp8Block, Fp8Tensor, Nvfp4, Mxfp4 };
  const rt::SafetensorsCheckpoint &ckpt_;
  Format format_ = Format::None;
  std::string quantDesc_; // quantization_config in words, for messages
  int64_t blockN_ = 128, blockK_ = 128, nvfp4Group_ = 16;

  std::string where(const std::string &name) const;
  Mat fp8Block(const std::string &name, int64_t N, int64_t K) const;
  Mat fp8Tensor(const std::string &name, int64_t N, int64_t K) const;
  Mat nvfp4(const std::string &name, int64_t N, int64_t K) const;
};

} // namespace reference
} // namespace helix

#endif // HELIX_REFERENCE_WEIGHTS_H
