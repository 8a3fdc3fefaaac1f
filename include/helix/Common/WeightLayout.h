//===- WeightLayout.h - How a loaded weight slice is stored -----*- C++ -*-===//
//
// The layouts a weight slice can be stored in after loading, shared by the
// EmitC lowering (which picks the layout a slice's consumer takes and writes
// it into the generated load call) and the runtime (which rearranges the
// slice accordingly). Header-only and dependency-free.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_WEIGHTLAYOUT_H
#define HELIX_COMMON_WEIGHTLAYOUT_H

namespace helix {

/// How a weight slice is stored after loading (the layout its consumer
/// takes).
enum class WeightLayout : int {
  /// As the box of the view selects it.
  Plain = 0,
  /// Last two dimensions swapped ([E, I, H] -> [E, H, I]).
  TransposeLast2 = 1,
  /// Fused gate/up, interleaved along the last dimension ([E, H, 2I],
  /// gpt-oss): stored as [2, E, I, H] (gate, then up).
  SplitGateUpTransposed = 2,
  /// Fused gate/up bias, interleaved ([E, 2I]): stored as [2, E, I].
  SplitGateUp = 3,
  /// Zero-centred RMSNorm weights (Qwen3-Next, Qwen3.5: the norm scales
  /// by 1 + w): stored as loaded plus one, so the norm kernels scale by the
  /// stored weight as for every other model.
  PlusOne = 4,
};

/// The enumerator's name ("TransposeLast2"), as generated code spells it
/// after `helix::WeightLayout::`.
inline const char *enumeratorName(WeightLayout l) {
  switch (l) {
  case WeightLayout::Plain:
    return "Plain";
  case WeightLayout::TransposeLast2:
    return "TransposeLast2";
  case WeightLayout::SplitGateUpTransposed:
    return "SplitGateUpTransposed";
  case WeightLayout::SplitGateUp:
    return "SplitGateUp";
  case WeightLayout::PlusOne:
    return "PlusOne";
  }
  return "?";
}

} // namespace helix

#endif // HELIX_COMMON_WEIGHTLAYOUT_H
