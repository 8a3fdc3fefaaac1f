//===- ModelExtractor.cpp - helix model IR to ModelSpec -------------------===//

#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/ModelIR/ModelIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::helix;

namespace {

::helix::AttentionKind fromAttrKind(AttentionKind kind) {
  switch (kind) {
  case AttentionKind::mha:
    return ::helix::AttentionKind::MHA;
  case AttentionKind::gqa:
    return ::helix::AttentionKind::GQA;
  case AttentionKind::mqa:
    return ::helix::AttentionKind::MQA;
  case AttentionKind::mla:
    return ::helix::AttentionKind::MLA;
  }
  llvm_unreachable("unknown attention kind");
}

double f64(const APFloat &v) { return v.convertToDouble(); }

} // namespace

namespace helix {

std::optional<int64_t> layerOfCheckpointName(StringRef name) {
  if (!name.consume_front("model.layers."))
    return std::nullopt;
  StringRef digits = name.take_while(llvm::isDigit);
  int64_t layer = 0;
  if (digits.empty() || digits.getAsInteger(10, layer) ||
      !name.drop_front(digits.size()).starts_with("."))
    return std::nullopt;
  return layer;
}

std::optional<int64_t> layerOfOp(Operation *op) {
  if (auto layer = op->getAttrOfType<IntegerAttr>("layer"))
    return layer.getInt();
  if (auto linear = dyn_cast<LinearOp>(op))
    return layerOfCheckpointName(linear.getWeight());
  if (auto norm = dyn_cast<RMSNormOp>(op))
    return layerOfCheckpointName(norm.getWeight());
  return std::nullopt;
}

AttentionSpec attentionSpecOf(AttentionConfigAttr c, RopeAttr r) {
  ::helix::AttentionSpec a;
  a.kind = fromAttrKind(c.getKind());
  a.numHeads = c.getHeads();
  a.numKVHeads = c.getKvHeads();
  a.headDim = c.getHeadDim();
  a.vHeadDim = c.getVHeadDim();
  a.qLoraRank = c.getQLoraRank();
  a.kvLoraRank = c.getKvLoraRank();
  a.qkRopeHeadDim = c.getRopeDim();
  a.qkNopeHeadDim = c.isMLA() ? c.getHeadDim() - c.getRopeDim() : 0;
  a.qkvBias = c.getQkvBias();
  a.outBias = c.getOutBias();
  a.qkNorm = c.getQkNorm();
  a.sinks = c.getSinks();
  a.slidingWindow = c.getWindow();
  a.rope = r.getParams();
  return a;
}

MoESpec moeSpecOf(MoEConfigAttr c) {
  ::helix::MoESpec m;
  m.numExperts = c.getExperts();
  m.topK = c.getTopK();
  m.expertIntermediate = c.getExpertIntermediate();
  m.numSharedExperts = c.getSharedExperts();
  m.sharedIntermediate = c.getSharedIntermediate();
  m.nGroup = c.getNGroup();
  m.topkGroup = c.getTopkGroup();
  m.routedScalingFactor = f64(c.getRoutedScaling());
  m.normTopkProb = c.getNormTopkProb();
  m.scoringFunc = stringifyScoringFunc(c.getScoring()).str();
  m.activation = c.getActivation().str();
  m.expertBias = c.getExpertBias();
  return m;
}

func::FuncOp findDecodeStep(ModuleOp module) {
  if (auto f = module.lookupSymbol<func::FuncOp>(::helix::kDecodeStepFunc))
    return f;
  func::FuncOp found;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (!f->hasAttr(::helix::kModelAttrName))
      continue;
    if (found)
      return {};
    found = f;
  }
  return found;
}

ModelSpec modelSpecBasics(ModelAttr model) {
  ModelSpec spec;
  spec.name = model.getName().str();
  spec.modelType = model.getModelType().str();
  spec.hiddenSize = model.getHidden();
  spec.vocabSize = model.getVocab();
  spec.maxPositionEmbeddings = model.getMaxPosition();
  spec.checkpointDType = model.getCheckpointDtype().str();
  spec.quantMethod = model.getQuantMethod().str();
  spec.quantFormat = model.getQuantFormat().str();
  llvm::SmallVector<llvm::StringRef> patterns;
  model.getQuantExclude().split(patterns, ',', -1, false);
  for (llvm::StringRef p : patterns)
    spec.quantExclude.push_back(p.str());
  spec.tieWordEmbeddings = model.getTiedEmbeddings();
  return spec;
}

FailureOr<ModelSpec> extractModelSpec(func::FuncOp func) {
  auto model = func->getAttrOfType<ModelAttr>(::helix::kModelAttrName);
  if (!model)
    return func.emitError() << "not helix model IR: missing the '"
                            << ::helix::kModelAttrName << "' attribute";
  ::helix::ModelSpec spec = modelSpecBasics(model);

  std::map<int64_t, ::helix::LayerSpec> layers;
  std::map<int64_t, bool> hasFFN;
  bool sawNorm = false;
  func.walk([&](Operation *op) {
    if (auto norm = dyn_cast<RMSNormOp>(op); norm && !sawNorm) {
      spec.rmsNormEps = norm.getEps().convertToDouble();
      sawNorm = true;
    } else if (auto qkv = dyn_cast<QKVProjOp>(op)) {
      ::helix::LayerSpec &l = layers[qkv.getLayer()];
      l.index = qkv.getLayer();
      l.attention = attentionSpecOf(qkv.getConfig(), qkv.getRope());
    } else if (auto ffn = dyn_cast<FFNOp>(op)) {
      ::helix::LayerSpec &l = layers[ffn.getLayer()];
      l.isMoE = false;
      l.ffn.intermediate = ffn.getIntermediate();
      l.ffn.activation = ffn.getActivation().str();
      l.ffn.bias = ffn.getBias();
      hasFFN[ffn.getLayer()] = true;
    } else if (auto moe = dyn_cast<MoEOp>(op)) {
      ::helix::LayerSpec &l = layers[moe.getLayer()];
      l.isMoE = true;
      l.moe = moeSpecOf(moe.getConfig());
      hasFFN[moe.getLayer()] = true;
    }
  });
  for (auto &[index, l] : layers) {
    if (l.attention.numHeads == 0)
      return func.emitError()
             << "layer " << index << " has an FFN but no helix.qkv_proj";
    if (!hasFFN[index])
      return func.emitError() << "layer " << index
                              << " has attention but no helix.ffn or helix.moe";
    l.isMTP = index >= model.getLayers();
    spec.layers.push_back(l);
  }
  int64_t mainLayers = 0;
  for (const ::helix::LayerSpec &l : spec.layers)
    mainLayers += l.isMTP ? 0 : 1;
  if (mainLayers != model.getLayers())
    return func.emitError()
           << ::mlir::helix::attrs::model << " says " << model.getLayers()
           << " layers but the function has " << mainLayers;
  return spec;
}

FailureOr<std::pair<func::FuncOp, ModelSpec>>
findDecodeStepModel(ModuleOp module, llvm::StringRef pass) {
  func::FuncOp func = findDecodeStep(module);
  if (!func)
    return module.emitError()
           << pass
           << ": no decode-step function (func.func @decode_step or one "
              "carrying helix.model)";
  FailureOr<ModelSpec> model = extractModelSpec(func);
  if (failed(model))
    return failure();
  return std::make_pair(func, *model);
}

} // namespace helix
