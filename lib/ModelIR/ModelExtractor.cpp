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
  a.outputGate = c.getOutputGate();
  a.noRope = c.getNoRope();
  a.partialRotary = f64(c.getPartialRotary());
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
  m.latentSize = c.getLatentSize();
  m.latentNorm = c.getLatentNorm();
  m.sharedExpertGate = c.getSharedExpertGate();
  return m;
}

::helix::LinearAttentionSpec linearSpecOf(LinearAttentionConfigAttr c) {
  ::helix::LinearAttentionSpec l;
  l.variant = c.getVariant() == LinearAttnVariant::kda
                  ? ::helix::LinearAttentionSpec::Variant::KDA
                  : ::helix::LinearAttentionSpec::Variant::GatedDeltaNet;
  l.numKeyHeads = c.getKeyHeads();
  l.numValueHeads = c.getValueHeads();
  l.keyHeadDim = c.getKeyHeadDim();
  l.valueHeadDim = c.getValueHeadDim();
  l.convKernel = c.getConvKernel();
  l.fullRankGate = c.getFullRankGate();
  l.gateLowerBound = f64(c.getGateLowerBound());
  l.stateDType = c.getStateDtype().str();
  return l;
}

static ::helix::MambaSpec mambaSpecOf(MambaConfigAttr c) {
  ::helix::MambaSpec m;
  m.numHeads = c.getHeads();
  m.headDim = c.getHeadDim();
  m.stateSize = c.getStateSize();
  m.nGroups = c.getGroups();
  m.convKernel = c.getConvKernel();
  m.convBias = c.getConvBias();
  m.stateDType = c.getStateDtype().str();
  return m;
}

::helix::IndexerSpec indexerSpecOf(IndexerConfigAttr c) {
  ::helix::IndexerSpec x;
  x.numHeads = c.getHeads();
  x.headDim = c.getHeadDim();
  x.topK = c.getTopK();
  x.ropeDim = c.getRopeDim();
  x.ropeInterleave = c.getRopeInterleave();
  x.reusesPrevious = c.getReusesPrevious();
  return x;
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
  spec.zeroCenteredNorms = model.getZeroCenteredNorms();
  return spec;
}

FailureOr<ModelSpec> extractModelSpec(func::FuncOp func) {
  auto model = func->getAttrOfType<ModelAttr>(::helix::kModelAttrName);
  if (!model)
    return func.emitError() << "not helix model IR: missing the '"
                            << ::helix::kModelAttrName << "' attribute";
  ::helix::ModelSpec spec = modelSpecBasics(model);

  std::map<int64_t, ::helix::LayerSpec> layers;
  std::map<int64_t, bool> hasFFN, hasMixer;
  std::map<int64_t, IndexerConfigAttr> indexers;
  std::map<int64_t, IndexerConfigAttr> sparseLayers; // the selection used
  bool sawNorm = false;
  auto mixerOf = [&](int64_t index) -> ::helix::LayerSpec & {
    ::helix::LayerSpec &l = layers[index];
    l.index = index;
    hasMixer[index] = true;
    return l;
  };
  func.walk([&](Operation *op) {
    if (auto norm = dyn_cast<RMSNormOp>(op); norm && !sawNorm) {
      spec.rmsNormEps = norm.getEps().convertToDouble();
      sawNorm = true;
    } else if (auto qkv = dyn_cast<QKVProjOp>(op)) {
      ::helix::LayerSpec &l = mixerOf(qkv.getLayer());
      l.mixer = ::helix::MixerKind::Attention;
      l.attention = attentionSpecOf(qkv.getConfig(), qkv.getRope());
    } else if (auto la = dyn_cast<LinearAttentionOp>(op)) {
      ::helix::LayerSpec &l = mixerOf(la.getLayer());
      l.mixer = ::helix::MixerKind::LinearAttention;
      l.linear = linearSpecOf(la.getConfig());
    } else if (auto mamba = dyn_cast<MambaOp>(op)) {
      ::helix::LayerSpec &l = mixerOf(mamba.getLayer());
      l.mixer = ::helix::MixerKind::Mamba;
      l.mamba = mambaSpecOf(mamba.getConfig());
    } else if (auto idx = dyn_cast<DSAIndexerOp>(op)) {
      indexers[idx.getLayer()] = idx.getConfig();
    } else if (auto sa = dyn_cast<SparseAttentionOp>(op)) {
      if (auto idx = sa.getSelected().getDefiningOp<DSAIndexerOp>()) {
        IndexerConfigAttr c = idx.getConfig();
        if (idx.getLayer() != sa.getLayer())
          c = IndexerConfigAttr::get(c.getContext(), c.getHeads(),
                                     c.getHeadDim(), c.getTopK(),
                                     c.getRopeDim(), c.getRopeInterleave(),
                                     /*reuses_previous=*/true);
        sparseLayers[sa.getLayer()] = c;
      }
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
    l.index = index;
    if (!hasMixer[index])
      l.mixer = ::helix::MixerKind::None;
    l.hasFFN = hasFFN[index];
    if (!hasMixer[index] && !l.hasFFN)
      return func.emitError()
             << "layer " << index << " has neither a token mixer nor an FFN";
    if (auto it = sparseLayers.find(index); it != sparseLayers.end())
      l.attention.indexer = indexerSpecOf(it->second);
    else if (indexers.count(index))
      return func.emitError()
             << "layer " << index << " has a "
             << DSAIndexerOp::getOperationName() << " but no "
             << SparseAttentionOp::getOperationName() << " reads it";
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
