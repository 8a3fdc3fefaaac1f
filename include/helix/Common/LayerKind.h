//===- LayerKind.h - Kinds of layer a per-layer plan lays out ---*- C++ -*-===//
//
// `helix::LayerKind` and its names ("full_attention", "window_attention",
// "dense_ffn", "moe_ffn"): stringifyLayerKind / symbolizeLayerKind,
// generated from dialects/Helix/HelixLayerKind.td. The per-layer search
// (helix/Cost/PerLayer.h), the reports and #helix.kind_layout's `kind` use
// this one definition. Needs LLVM's ADT headers only; link HelixCommon.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_LAYERKIND_H
#define HELIX_COMMON_LAYERKIND_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/DenseMapInfo.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>

#include "helix/Dialect/Helix/HelixLayerKind.h.inc"

namespace helix {
constexpr int kNumLayerKinds = 4;
/// True for the two attention kinds.
inline bool isAttentionKind(LayerKind kind) {
  return kind == LayerKind::FullAttention || kind == LayerKind::WindowAttention;
}
} // namespace helix

#endif // HELIX_COMMON_LAYERKIND_H
