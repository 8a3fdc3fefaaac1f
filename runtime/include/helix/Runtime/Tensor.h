//===- Tensor.h - Dense row-major tensors in backend memory -----*- C++ -*-===//
//
// A Tensor is a shape, an element type and a view into memory a backend
// allocated (host memory for the CPU backend, device memory for CUDA).
// Tensors are cheap handles: copies share the memory, which is freed when the
// last handle goes. Every tensor is contiguous and row-major; views select
// leading rows (`rows`) or reinterpret the shape (`view`).
//
// Compute is f32 throughout; i32 tensors carry indices (MoE routing).
// Weights and KV caches may be resident in BF16, FP8 E4M3 or FP4 E2M1
// (NumberFormats.h); a quantized tensor carries its block scales
// (`scales()`), and the ops dequantize such operands inside their kernels.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_TENSOR_H
#define HELIX_RUNTIME_TENSOR_H

#include "helix/Runtime/NumberFormats.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace helix {
namespace rt {

// DType: NumberFormats.h.

// dtypeBits, dtypeBytes, dtypeName: NumberFormats.h.
/// Bytes per element of the byte-addressed formats; throws for F4E2M1.
size_t dtypeSize(DType dtype);

struct BlockScales;

/// Memory owned by a backend, released through `release` when the last
/// tensor using it goes away.
struct Storage {
  void *data = nullptr;
  size_t bytes = 0;
  bool onDevice = false;
  std::function<void(void *)> release;

  Storage() = default;
  Storage(const Storage &) = delete;
  Storage &operator=(const Storage &) = delete;
  ~Storage();
};

class Tensor {
public:
  Tensor() = default;
  Tensor(std::shared_ptr<Storage> storage, std::vector<int64_t> shape,
         DType dtype, size_t byteOffset = 0);

  bool defined() const { return storage_ != nullptr; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  /// Size of dimension `i`; negative `i` counts from the end.
  int64_t dim(int i) const;
  int64_t numel() const;
  size_t bytes() const { return dtypeBytes(dtype_, numel()); }
  DType dtype() const { return dtype_; }
  bool onDevice() const { return storage_ && storage_->onDevice; }

  void *raw();
  const void *raw() const;
  float *f32();
  const float *f32() const;
  int32_t *i32();
  const int32_t *i32() const;

  /// Rows [begin, end) of dimension 0, sharing memory.
  Tensor rows(int64_t begin, int64_t end) const;
  /// The same memory with another shape of the same size; one -1 entry is
  /// inferred.
  Tensor view(std::vector<int64_t> shape) const;

  /// The block scales of a quantized (F8E4M3 / F4E2M1) tensor, else null.
  const std::shared_ptr<const BlockScales> &scales() const { return scales_; }
  /// The same tensor with `scales` attached.
  Tensor withScales(std::shared_ptr<const BlockScales> scales) const;
  /// Elements before this view in its storage (block scales count from
  /// the storage's first element).
  int64_t elementOffset() const;

  /// "[2, 4, 8] f32".
  std::string str() const;
  const std::shared_ptr<Storage> &storage() const { return storage_; }

private:
  std::shared_ptr<Storage> storage_;
  std::vector<int64_t> shape_;
  DType dtype_ = DType::F32;
  size_t offset_ = 0; // bytes
  std::shared_ptr<const BlockScales> scales_;
};

/// The scales of a quantized tensor, in the same backend memory: `desc`
/// with its pointers into `scales` and `globals` (NumberFormats.h).
struct BlockScales {
  BlockScaleDesc desc;
  Tensor scales;  // U8 raw codes (4 per scale for F32)
  Tensor globals; // f32 [matrices], or undefined
  /// Bytes of scales and globals.
  size_t bytes() const {
    return (scales.defined() ? scales.bytes() : 0) +
           (globals.defined() ? globals.bytes() : 0);
  }
};

std::string shapeString(const std::vector<int64_t> &shape);
int64_t shapeNumel(const std::vector<int64_t> &shape);

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_TENSOR_H
