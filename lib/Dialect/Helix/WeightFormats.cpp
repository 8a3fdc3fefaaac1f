//===- WeightFormats.cpp - Which format each weight is kept in ------------===//

#include "helix/Dialect/Helix/WeightFormats.h"
#include "helix/Common/ModulePatterns.h"

#include "llvm/ADT/StringExtras.h"

namespace mlir {
namespace helix {

std::vector<std::string> excludedModules(ModelAttr model) {
  std::vector<std::string> out;
  llvm::SmallVector<llvm::StringRef> parts;
  model.getQuantExclude().split(parts, ',', -1, false);
  for (llvm::StringRef p : parts)
    out.push_back(p.trim().str());
  return out;
}

bool isLayerLinearWeight(WeightOp w) {
  llvm::StringRef name = w.getName();
  if (!name.starts_with("model.layers.") || name.ends_with("bias") ||
      w.getShape().size() < 2)
    return false;
  // An MTP layer's own embedding and LM head are kept like the model's.
  if (name.ends_with(".embed_tokens.weight") ||
      name.ends_with(".shared_head.head.weight"))
    return false;
  for (Operation *user : w->getUsers()) {
    if (isa<MoERouterOp>(user))
      return false;
    // Of a Gated DeltaNet layer only the input projections are linear
    // weights; its convolution taps stay as the checkpoint keeps them.
    if (auto gdn = dyn_cast<GDNStepOp>(user))
      if (w.getResult() != gdn.getWqkvz() && w.getResult() != gdn.getWba())
        return false;
    // The shared expert's sigmoid gate [1, H] is kept like a router.
    if (auto moe = dyn_cast<MoEExpertsOp>(user))
      if (moe.getSharedWeights().size() == 4 &&
          w.getResult() == moe.getSharedWeights()[3])
        return false;
    // DSA's head weights stay as DeepSeek-V3.2 keeps them (BF16).
    if (auto index = dyn_cast<IndexCandidatesOp>(user))
      if (w.getResult() == index.getWProj())
        return false;
  }
  return true;
}

bool takesPlannedFormat(WeightOp w, ModelAttr model) {
  return isLayerLinearWeight(w) &&
         !(model && ::helix::isExcludedModule(w.getName().str(),
                                              excludedModules(model)));
}

bool isZeroCenteredNormWeight(WeightOp w, ModelAttr model) {
  if (!model || !model.getZeroCenteredNorms())
    return false;
  Value v = w.getResult();
  return llvm::any_of(w->getUsers(), [&](Operation *user) {
    if (auto norm = dyn_cast<NormRowsOp>(user))
      return norm.getWeight() == v;
    if (auto qkv = dyn_cast<QKVOp>(user))
      return qkv.getQNorm() == v || qkv.getKNorm() == v;
    return false;
  });
}

::helix::CheckpointFormat checkpointFormatOf(WeightOp w, ModelAttr model) {
  ::helix::CheckpointFormat f = ::helix::CheckpointFormat::BF16;
  if (model && !model.getQuantFormat().empty() && takesPlannedFormat(w, model))
    ::helix::parseCheckpointFormat(model.getQuantFormat().str().c_str(), f);
  return f;
}

Type elementTypeOf(MLIRContext *ctx, ::helix::DType format) {
  switch (format) {
  case ::helix::DType::FP4:
    return Float4E2M1FNType::get(ctx);
  case ::helix::DType::FP8:
    return Float8E4M3FNType::get(ctx);
  case ::helix::DType::BF16:
    return BFloat16Type::get(ctx);
  }
  return BFloat16Type::get(ctx);
}

FailureOr<::helix::ElementType> residentFormatOf(Type element) {
  if (element.isF32())
    return ::helix::ElementType::F32;
  if (element.isBF16())
    return ::helix::ElementType::BF16;
  if (isa<Float8E4M3FNType>(element))
    return ::helix::ElementType::F8E4M3;
  if (isa<Float4E2M1FNType>(element))
    return ::helix::ElementType::F4E2M1;
  return failure();
}

} // namespace helix
} // namespace mlir
