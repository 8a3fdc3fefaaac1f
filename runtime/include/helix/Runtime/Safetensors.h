//===- Safetensors.h - Memory-mapped safetensors checkpoints ----*- C++ -*-===//
//
// Reads Hugging Face safetensors checkpoints: one `.safetensors` file, or a
// directory / `model.safetensors.index.json` naming the shard that holds
// each tensor. Files are memory-mapped and only the bytes of the requested
// tensor or slice are touched, so each rank reads only its own slices and
// never the whole model.
//
// bf16, fp16, fp32 (and f64) tensors are converted to f32 on load
// (`load*`); quantized tensors (F8_E4M3, packed FP4 in U8, E8M0 scales) are
// read as stored bytes (`loadRaw`) and decoded with their scales by
// Quant.h (loadStoredBox).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_SAFETENSORS_H
#define HELIX_RUNTIME_SAFETENSORS_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace helix {
namespace rt {

/// A tensor in host memory, f32, row-major.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;

  int64_t numel() const { return static_cast<int64_t>(data.size()); }
};

/// A range of one dimension: `count` elements from `begin`; count < 0 means
/// "to the end".
struct Range {
  int64_t begin = 0;
  int64_t count = -1;
};

struct TensorInfo {
  std::string name;
  std::string dtype; // as safetensors spells it: BF16, F16, F32, F8_E4M3, ...
  std::vector<int64_t> shape;
  std::string file;
  uint64_t begin = 0, end = 0; // byte offsets in the file's data section
};

/// Stored bytes of a tensor (or of a box of it), row-major.
struct RawTensor {
  std::string name;
  std::string dtype; // as safetensors spells it
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

class MappedFile;

class SafetensorsCheckpoint {
public:
  /// `path`: a .safetensors file, a model.safetensors.index.json, or a
  /// directory holding either (model.safetensors.index.json preferred, then
  /// model.safetensors). Throws Error on unreadable or malformed files.
  static SafetensorsCheckpoint open(const std::string &path);

  SafetensorsCheckpoint();
  ~SafetensorsCheckpoint();
  SafetensorsCheckpoint(SafetensorsCheckpoint &&) noexcept;
  SafetensorsCheckpoint &operator=(SafetensorsCheckpoint &&) noexcept;

  const std::string &path() const { return path_; }
  bool has(const std::string &name) const;
  /// Throws Error naming the tensor and the checkpoint when missing.
  const TensorInfo &info(const std::string &name) const;
  std::vector<std::string> names() const;

  /// The whole tensor; throws Error when it is missing, has another shape
  /// than `expectedShape`, or an unsupported dtype.
  HostTensor load(const std::string &name,
                  const std::vector<int64_t> &expectedShape) const;

  /// A box of the tensor: `box[i]` selects a range of dimension i of
  /// `viewShape` (the checkpoint shape reinterpreted, same element count;
  /// empty: the checkpoint shape). Missing trailing ranges select whole
  /// dimensions. Only the selected bytes are read.
  HostTensor loadSlice(const std::string &name,
                       const std::vector<int64_t> &expectedShape,
                       const std::vector<Range> &box,
                       const std::vector<int64_t> &viewShape = {}) const;

  /// Rows [begin, begin + count) of dimension 0.
  HostTensor loadRows(const std::string &name,
                      const std::vector<int64_t> &expectedShape, int64_t begin,
                      int64_t count) const;
  /// Columns [begin, begin + count) of the last dimension of a 2-D tensor.
  HostTensor loadColumns(const std::string &name,
                         const std::vector<int64_t> &expectedShape,
                         int64_t begin, int64_t count) const;

  /// A box of a tensor as stored bytes: throws Error naming the tensor
  /// unless it has `dtype` and `shape`. Box and view as in loadSlice (in
  /// stored elements: bytes for U8-packed FP4).
  RawTensor loadRaw(const std::string &name, const std::string &dtype,
                    const std::vector<int64_t> &shape,
                    const std::vector<Range> &box = {},
                    const std::vector<int64_t> &viewShape = {}) const;

  /// Bytes of tensor data read so far (tests check that ranks read slices).
  uint64_t bytesRead() const { return *bytesRead_; }

private:
  const uint8_t *dataOf(const TensorInfo &t) const;
  std::string path_;
  std::map<std::string, TensorInfo> tensors_;
  std::map<std::string, std::shared_ptr<MappedFile>> files_;
  std::unique_ptr<uint64_t> bytesRead_;
};

/// Writes a single safetensors file (used by helix-make-checkpoint and the
/// tests). `dtype`: "F32", "F16" or "BF16"; values are rounded to nearest
/// even. Tensors are written in the order given.
struct NamedHostTensor {
  std::string name;
  HostTensor tensor;
};
void writeSafetensors(const std::string &path,
                      const std::vector<NamedHostTensor> &tensors,
                      const std::string &dtype,
                      const std::map<std::string, std::string> &metadata = {});

/// Writes tensors as stored bytes (any safetensors dtype: BF16, F8_E4M3,
/// U8, F32, ...), in the order given.
void writeSafetensorsRaw(
    const std::string &path, const std::vector<RawTensor> &tensors,
    const std::map<std::string, std::string> &metadata = {});
/// `t` encoded as F32, F16 or BF16 (round to nearest even).
RawTensor encodeFloats(const std::string &name, const HostTensor &t,
                       const std::string &dtype);

/// bf16 / fp16 <-> f32 conversions (round to nearest even).
float bf16ToFloat(uint16_t v);
uint16_t floatToBf16(float f);
float fp16ToFloat(uint16_t v);
uint16_t floatToFp16(float f);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_SAFETENSORS_H
