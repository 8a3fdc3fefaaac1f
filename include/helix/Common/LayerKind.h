//===- LayerKind.h - Kinds of layer a per-layer plan lays out ---*- C++ -*-===//
//
// `helix::LayerKind` and its names ("full_attention", "window_attention",
// "dense_ffn", "moe_ffn", "linear_attention", "mamba", "sparse_attention"):
// stringifyLayerKind / symbolizeLayerKind, generated from
// dialects/Helix/HelixLayerKind.td. The per-layer search
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
constexpr int kNumLayerKinds = 7;
/// True for the kinds of softmax attention over a KV cache (full, window,
/// sparse): laid out kvp x tpa.
inline bool isAttentionKind(LayerKind kind) {
  return kind == LayerKind::FullAttention ||
         kind == LayerKind::WindowAttention ||
         kind == LayerKind::SparseAttention;
}
/// True for the recurrent token mixers (linear attention, Mamba-2): a
/// fixed-size state per request, laid out as TP groups (no KVP).
inline bool isRecurrentKind(LayerKind kind) {
  return kind == LayerKind::LinearAttention || kind == LayerKind::Mamba;
}
/// True for the kinds of a layer's first half, its token mixer.
inline bool isMixerKind(LayerKind kind) {
  return isAttentionKind(kind) || isRecurrentKind(kind);
}
} // namespace helix

#endif // HELIX_COMMON_LAYERKIND_H
