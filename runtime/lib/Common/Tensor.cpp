//===- Tensor.cpp - Tensor handles ----------------------------------------===//

#include "helix/Runtime/Tensor.h"
#include "helix/Runtime/Error.h"

namespace helix {
namespace rt {

size_t dtypeSize(DType dtype) {
  check(dtype != DType::F4E2M1, "f4E2M1 values are packed two per byte");
  return dtypeBits(dtype) / 8;
}

Storage::~Storage() {
  if (release && data)
    release(data);
}

int64_t shapeNumel(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Tensor::Tensor(std::shared_ptr<Storage> storage, std::vector<int64_t> shape,
               DType dtype, size_t byteOffset)
    : storage_(std::move(storage)), shape_(std::move(shape)), dtype_(dtype),
      offset_(byteOffset) {
  for (int64_t d : shape_)
    check(d >= 0, [&] {
      return "tensor: negative dimension in " + shapeString(shape_);
    });
  check(!storage_ || offset_ + bytes() <= storage_->bytes, [&] {
    return "tensor: " + shapeString(shape_) + " does not fit its storage";
  });
}

int64_t Tensor::dim(int i) const {
  int r = rank();
  int j = i < 0 ? i + r : i;
  check(j >= 0 && j < r, [&] {
    return "tensor " + str() + ": no dimension " + std::to_string(i);
  });
  return shape_[j];
}

int64_t Tensor::numel() const { return shapeNumel(shape_); }

void *Tensor::raw() {
  check(defined(), "tensor: use of an undefined tensor");
  return static_cast<char *>(storage_->data) + offset_;
}

const void *Tensor::raw() const {
  check(defined(), "tensor: use of an undefined tensor");
  return static_cast<const char *>(storage_->data) + offset_;
}

float *Tensor::f32() {
  check(dtype_ == DType::F32,
        [&] { return "tensor " + str() + ": expected f32"; });
  return static_cast<float *>(raw());
}
const float *Tensor::f32() const {
  check(dtype_ == DType::F32,
        [&] { return "tensor " + str() + ": expected f32"; });
  return static_cast<const float *>(raw());
}
int32_t *Tensor::i32() {
  check(dtype_ == DType::I32,
        [&] { return "tensor " + str() + ": expected i32"; });
  return static_cast<int32_t *>(raw());
}
const int32_t *Tensor::i32() const {
  check(dtype_ == DType::I32,
        [&] { return "tensor " + str() + ": expected i32"; });
  return static_cast<const int32_t *>(raw());
}

Tensor Tensor::rows(int64_t begin, int64_t end) const {
  check(defined() && rank() >= 1, [&] {
    return "tensor rows: needs a defined tensor of rank >= 1, got " + str();
  });
  check(0 <= begin && begin <= end && end <= shape_[0], [&] {
    return "tensor rows: [" + std::to_string(begin) + ", " +
           std::to_string(end) + ") outside " + str();
  });
  std::vector<int64_t> s = shape_;
  s[0] = end - begin;
  int64_t rowElems = shapeNumel(shape_) / (shape_[0] ? shape_[0] : 1);
  check(dtypeBits(dtype_) % 8 == 0 || (begin * rowElems) % 2 == 0, [&] {
    return "tensor rows: row " + std::to_string(begin) + " of " + str() +
           " starts inside a byte";
  });
  Tensor t(storage_, s, dtype_, offset_ + dtypeBytes(dtype_, begin * rowElems));
  t.scales_ = scales_;
  return t;
}

Tensor Tensor::withScales(std::shared_ptr<const BlockScales> scales) const {
  Tensor t = *this;
  t.scales_ = std::move(scales);
  return t;
}

int64_t Tensor::elementOffset() const {
  return static_cast<int64_t>(offset_ * 8 / dtypeBits(dtype_));
}

Tensor Tensor::view(std::vector<int64_t> shape) const {
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      check(infer < 0, [&] {
        return "tensor view: more than one -1 in " + shapeString(shape);
      });
      infer = static_cast<int>(i);
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    check(known > 0 && numel() % known == 0, [&] {
      return "tensor view: cannot view " + str() + " as " + shapeString(shape);
    });
    shape[infer] = numel() / known;
  }
  check(shapeNumel(shape) == numel(), [&] {
    return "tensor view: cannot view " + str() + " as " + shapeString(shape);
  });
  Tensor t(storage_, shape, dtype_, offset_);
  t.scales_ = scales_;
  return t;
}

std::string Tensor::str() const {
  if (!defined())
    return "<undefined>";
  return shapeString(shape_) + " " + dtypeName(dtype_);
}

} // namespace rt
} // namespace helix
