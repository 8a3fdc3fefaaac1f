//===- ElementType.h - The element formats of tensors -----------*- C++ -*-===//
//
// The one enum of element formats shared by the compiler and the runtime:
// compute (f32), indices (i32), the formats weights and KV caches are kept
// in (bf16, OCP E4M3, OCP E2M1; a program's "resident formats": f32, bf16,
// f8E4M3, f4E2M1) and raw bytes (u8). The runtime's tensors carry it
// (`helix::rt::DType` is this enum); the EmitC lowering writes its
// enumerators into the generated load calls. Header-only, dependency-free
// and usable in CUDA device code.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_ELEMENTTYPE_H
#define HELIX_COMMON_ELEMENTTYPE_H

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define HELIX_HD __host__ __device__
#else
#define HELIX_HD
#endif

namespace helix {

enum class ElementType : uint8_t { F32, I32, BF16, F8E4M3, F4E2M1, U8 };

/// Bits per element (4 for F4E2M1: two values per byte).
HELIX_HD inline size_t dtypeBits(ElementType dtype) {
  switch (dtype) {
  case ElementType::F32:
  case ElementType::I32:
    return 32;
  case ElementType::BF16:
    return 16;
  case ElementType::F8E4M3:
  case ElementType::U8:
    return 8;
  case ElementType::F4E2M1:
    return 4;
  }
  return 32;
}

HELIX_HD inline size_t dtypeBytes(ElementType dtype, int64_t numel) {
  return (static_cast<size_t>(numel) * dtypeBits(dtype) + 7) / 8;
}

/// "f32", "i32", "bf16", "f8E4M3", "f4E2M1", "u8" (MLIR's spellings).
inline const char *dtypeName(ElementType dtype) {
  switch (dtype) {
  case ElementType::F32:
    return "f32";
  case ElementType::I32:
    return "i32";
  case ElementType::BF16:
    return "bf16";
  case ElementType::F8E4M3:
    return "f8E4M3";
  case ElementType::F4E2M1:
    return "f4E2M1";
  case ElementType::U8:
    return "u8";
  }
  return "?";
}

/// The enumerator's name ("F8E4M3"), as generated code spells it after
/// `helix::ElementType::`.
inline const char *enumeratorName(ElementType dtype) {
  switch (dtype) {
  case ElementType::F32:
    return "F32";
  case ElementType::I32:
    return "I32";
  case ElementType::BF16:
    return "BF16";
  case ElementType::F8E4M3:
    return "F8E4M3";
  case ElementType::F4E2M1:
    return "F4E2M1";
  case ElementType::U8:
    return "U8";
  }
  return "?";
}

/// Whether a program can keep a weight or KV cache in `dtype`.
inline bool isResidentFormat(ElementType dtype) {
  return dtype == ElementType::F32 || dtype == ElementType::BF16 ||
         dtype == ElementType::F8E4M3 || dtype == ElementType::F4E2M1;
}

} // namespace helix

#endif // HELIX_COMMON_ELEMENTTYPE_H
