//===- Quant.h - Quantized tensors in host memory ---------------*- C++ -*-===//
//
// Checkpoint formats and the host side of resident formats
// (docs/quantization.md): a QuantHost is a tensor as the program keeps it
// (BF16, FP8 E4M3 or packed FP4 E2M1 values with block scales), built at
// load time either from the stored bytes of a quantized checkpoint (kept
// as stored) or by the documented conversion rules (quantizeFP8Block,
// quantizeNVFP4, ...). The codecs are NumberFormats.h.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_QUANT_H
#define HELIX_RUNTIME_QUANT_H

#include "helix/Common/WeightFormat.h"
#include "helix/Runtime/NumberFormats.h"
#include "helix/Runtime/Safetensors.h"

#include <cstdint>
#include <string>
#include <vector>

namespace helix {
namespace rt {

// CheckpointFormat and its names: helix/Common/WeightFormat.h (shared with
// the code generator).
using ::helix::CheckpointFormat;
using ::helix::checkpointFormatName;

/// A tensor in a resident format, in host memory.
struct QuantHost {
  DType dtype = DType::F32; // F32, BF16, F8E4M3 or F4E2M1
  std::vector<int64_t> shape;
  std::vector<uint8_t> data; // as in memory (FP4: two per byte, even low)
  /// Block scales (F8E4M3, F4E2M1): the desc's pointers are unset here.
  bool scaled = false;
  BlockScaleDesc desc;
  std::vector<uint8_t> scales; // [matrices, gridRows, gridCols] codes
  std::vector<float> globals;  // [matrices] or empty

  int64_t numel() const;
  int64_t matrices() const;
  size_t scaleBytes() const { return scales.size() + 4 * globals.size(); }
  /// Element i decoded and scaled.
  float value(int64_t i) const;
  /// e.g. "f8E4M3, 128x128 f32 block scales".
  std::string describe() const;
};

/// Every element, decoded and scaled.
HostTensor dequantize(const QuantHost &q);

/// The conversion rules of docs/quantization.md. Matrices are the last two
/// dimensions (a 1-D tensor is one row). Non-finite values are an Error
/// naming `what`.
QuantHost toF32(const HostTensor &t);
QuantHost toBF16(const HostTensor &t);
/// E4M3 with one f32 scale (amax / 448, 1 for a zero block) per block of
/// `block` x `block` values of each matrix.
QuantHost quantizeFP8Block(const HostTensor &t, const std::string &what,
                           int64_t block = 128);
/// E4M3 with one f32 scale per matrix.
QuantHost quantizeFP8Tensor(const HostTensor &t, const std::string &what);
/// NVFP4: per matrix s2 = amax / (6 * 448); per 16 values along the last
/// dimension s = e4m3(amax16 / (6 * s2)); q = e2m1(x / (s * s2)).
QuantHost quantizeNVFP4(const HostTensor &t, const std::string &what);
/// MXFP4 (OCP MX): per 32 values along the last dimension the scale is
/// 2^(floor(log2 amax32) - 2) as E8M0; q = e2m1(x / scale).
QuantHost quantizeMXFP4(const HostTensor &t, const std::string &what);

/// A box of a checkpoint tensor as stored codes with each element's scale
/// (transient, at load time): the form in which slices of quantized
/// tensors are cut, stacked and rearranged before they are packed.
struct ElementBox {
  DType dtype = DType::F8E4M3; // F8E4M3 or F4E2M1 codes, one per byte
  ScaleType scaleType = ScaleType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> codes;
  std::vector<uint32_t> scales; // the element's scale code (F32: its bits)
  std::vector<float> globals;   // per element (empty: 1)
  /// Where the box starts in the stored block grid, and the block: used
  /// to pack the scales as a regular grid when they tile it.
  int64_t blockRows = 1, blockCols = 1, rowOrigin = 0, colOrigin = 0;

  int64_t numel() const { return static_cast<int64_t>(codes.size()); }
  float value(int64_t i) const;
};

/// Reads box `box` (of `view`, or the logical shape) of the quantized
/// linear weight `name` stored in `format` (`name` as a bf16 checkpoint
/// names it; logical shape `shape` = out x in, per expert for
/// MXFP4's [E, out, in]). Throws Error naming the checkpoint, the tensor
/// and what was expected on a missing scale, a wrong dtype or shape.
ElementBox loadStoredBox(const SafetensorsCheckpoint &ckpt,
                         CheckpointFormat format, const std::string &name,
                         const std::vector<int64_t> &shape,
                         const std::vector<Range> &box,
                         const std::vector<int64_t> &view);
/// The format `name` is stored in, from the tensors present: BF16 for
/// float tensors.
CheckpointFormat storedFormatOf(const SafetensorsCheckpoint &ckpt,
                                const std::string &name);

/// The permutation that swaps the last two dimensions ([..., a, b] ->
/// [..., b, a]): element i of the result is element perm[i] of the
/// source; `shape` becomes the result's.
std::vector<int64_t> transposeLast2Perm(std::vector<int64_t> &shape);
/// `t` with its last two dimensions swapped.
HostTensor transposeLast2(const HostTensor &t);

/// Boxes stacked along a new leading dimension (experts).
ElementBox stack(const std::vector<ElementBox> &parts);
/// `b` with its elements permuted: element i of the result is element
/// perm[i] of `b`, in shape `shape`. The stored block geometry is kept as a
/// hint: pack() checks every element's scale against the grid it picks.
ElementBox permute(const ElementBox &b, const std::vector<int64_t> &perm,
                   const std::vector<int64_t> &shape);
HostTensor dequantize(const ElementBox &b);
/// The box as a resident tensor with its stored codes and scales: a
/// regular block grid when the scales tile one, else one scale per row and
/// column block.
QuantHost pack(const ElementBox &b);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_QUANT_H
