//===- ModelBuilder.cpp - ModelSpec to helix model IR ---------------------===//

#include "helix/Dialect/Helix/HelixOps.h"
#include "helix/ModelIR/ModelIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::helix;

namespace {

/// Element type of activations and caches: the checkpoint's dtype.
Type checkpointElementType(MLIRContext *ctx, llvm::StringRef dtype) {
  if (dtype == "float32")
    return Float32Type::get(ctx);
  if (dtype == "float16")
    return Float16Type::get(ctx);
  return BFloat16Type::get(ctx);
}

AttentionKind toAttrKind(::helix::AttentionKind kind) {
  switch (kind) {
  case ::helix::AttentionKind::MHA:
    return AttentionKind::mha;
  case ::helix::AttentionKind::GQA:
    return AttentionKind::gqa;
  case ::helix::AttentionKind::MQA:
    return AttentionKind::mqa;
  case ::helix::AttentionKind::MLA:
    return AttentionKind::mla;
  }
  llvm_unreachable("unknown attention kind");
}

APFloat f64(double v) { return APFloat(v); }

/// Emits the ops of one decode step, layer by layer.
class ModelIRBuilder {
public:
  ModelIRBuilder(MLIRContext *ctx, const ::helix::ModelSpec &spec)
      : ctx(ctx), spec(spec), b(ctx), loc(UnknownLoc::get(ctx)),
        elem(checkpointElementType(ctx, spec.checkpointDType)) {}

  OwningOpRef<ModuleOp> build(bool returnHidden);
  OwningOpRef<ModuleOp> buildDraft();

private:
  RankedTensorType act(int64_t features) const {
    return RankedTensorType::get({ShapedType::kDynamic, features}, elem);
  }
  RankedTensorType heads(int64_t n, int64_t dim) const {
    return RankedTensorType::get({ShapedType::kDynamic, n, dim}, elem);
  }
  AttentionConfigAttr attentionConfig(const ::helix::AttentionSpec &a) const;
  RopeAttr rope(const ::helix::RopeSpec &r) const;
  MoEConfigAttr moeConfig(const ::helix::MoESpec &m) const;
  KVCacheType cacheType(const ::helix::AttentionSpec &a) const;
  LinearAttentionConfigAttr
  linearConfig(const ::helix::LinearAttentionSpec &l) const;
  MambaConfigAttr mambaConfig(const ::helix::MambaSpec &m) const;
  IndexerConfigAttr indexerConfig(const ::helix::IndexerSpec &x) const;
  /// The state a layer's mixer carries: its KV cache (and DSA index keys),
  /// a recurrent state, or nothing.
  SmallVector<Type> cacheTypes(const ::helix::LayerSpec &l) const;
  /// The token mixer of a layer with its output projection (state: the
  /// layer's cacheTypes arguments, in order).
  Value mixer(const ::helix::LayerSpec &l, Value n, Value positions,
              ValueRange state);
  std::string layerPrefix(int64_t index) const {
    return "model.layers." + std::to_string(index);
  }
  Value rmsNorm(Value x, const std::string &weight) {
    return RMSNormOp::create(b, loc, x.getType(), x,
                             b.getF64FloatAttr(spec.rmsNormEps),
                             b.getStringAttr(weight));
  }
  Value layer(const ::helix::LayerSpec &layer, Value h, Value positions,
              ValueRange state);
  /// The selection of the last DSA layer with an indexer (what a layer
  /// that reuses it attends to).
  Value lastSelection;
  /// A module with the decode-step function of `argTypes` (tokens and
  /// positions first) returning `results`, its body to be built.
  func::FuncOp stepFunction(ModuleOp module, ArrayRef<Type> argTypes,
                            ArrayRef<Type> results);

  MLIRContext *ctx;
  const ::helix::ModelSpec &spec;
  OpBuilder b;
  Location loc;
  Type elem;
};

AttentionConfigAttr
ModelIRBuilder::attentionConfig(const ::helix::AttentionSpec &a) const {
  bool mla = a.kind == ::helix::AttentionKind::MLA;
  return AttentionConfigAttr::get(
      ctx, toAttrKind(a.kind), a.numHeads, a.numKVHeads, a.headDim, a.vHeadDim,
      mla ? a.qLoraRank : 0, mla ? a.kvLoraRank : 0, mla ? a.qkRopeHeadDim : 0,
      a.qkvBias, a.outBias, a.qkNorm, a.sinks, a.slidingWindow, a.outputGate,
      a.noRope, f64(a.partialRotary));
}

LinearAttentionConfigAttr
ModelIRBuilder::linearConfig(const ::helix::LinearAttentionSpec &l) const {
  return LinearAttentionConfigAttr::get(
      ctx,
      l.variant == ::helix::LinearAttentionSpec::Variant::KDA
          ? LinearAttnVariant::kda
          : LinearAttnVariant::gated_deltanet,
      l.numKeyHeads, l.numValueHeads, l.keyHeadDim, l.valueHeadDim,
      l.convKernel, l.fullRankGate, f64(l.gateLowerBound), l.stateDType);
}

MambaConfigAttr ModelIRBuilder::mambaConfig(const ::helix::MambaSpec &m) const {
  return MambaConfigAttr::get(ctx, m.numHeads, m.headDim, m.stateSize,
                              m.nGroups, m.convKernel, m.convBias,
                              m.stateDType);
}

IndexerConfigAttr
ModelIRBuilder::indexerConfig(const ::helix::IndexerSpec &x) const {
  return IndexerConfigAttr::get(ctx, x.numHeads, x.headDim, x.topK, x.ropeDim,
                                x.ropeInterleave, x.reusesPrevious);
}

/// The element type of a recurrent state's dtype name.
static Type stateElement(MLIRContext *ctx, const std::string &dtype) {
  if (dtype == "bfloat16")
    return BFloat16Type::get(ctx);
  if (dtype == "float16")
    return Float16Type::get(ctx);
  return Float32Type::get(ctx);
}

SmallVector<Type>
ModelIRBuilder::cacheTypes(const ::helix::LayerSpec &l) const {
  switch (l.mixer) {
  case ::helix::MixerKind::Attention:
    if (l.attention.indexer.sparse() && !l.attention.indexer.reusesPrevious)
      return {cacheType(l.attention),
              IndexCacheType::get(ctx, l.attention.indexer.headDim)};
    return {cacheType(l.attention)};
  case ::helix::MixerKind::LinearAttention:
    return {RecurrentStateType::get(
        ctx, l.linear.numValueHeads, l.linear.keyHeadDim, l.linear.valueHeadDim,
        l.linear.convChannels(), l.linear.convKernel,
        stateElement(ctx, l.linear.stateDType))};
  case ::helix::MixerKind::Mamba:
    return {RecurrentStateType::get(ctx, l.mamba.numHeads, l.mamba.headDim,
                                    l.mamba.stateSize, l.mamba.convChannels(),
                                    l.mamba.convKernel,
                                    stateElement(ctx, l.mamba.stateDType))};
  case ::helix::MixerKind::None:
    break;
  }
  return {};
}

RopeAttr ModelIRBuilder::rope(const ::helix::RopeSpec &r) const {
  return RopeAttr::get(ctx, r);
}

MoEConfigAttr ModelIRBuilder::moeConfig(const ::helix::MoESpec &m) const {
  ScoringFunc scoring =
      m.scoringFunc == "sigmoid" ? ScoringFunc::sigmoid : ScoringFunc::softmax;
  return MoEConfigAttr::get(ctx, m.numExperts, m.topK, m.expertIntermediate,
                            m.numSharedExperts, m.sharedIntermediate, m.nGroup,
                            m.topkGroup, f64(m.routedScalingFactor),
                            m.normTopkProb, scoring, m.activation, m.expertBias,
                            m.latentSize, m.latentNorm, m.sharedExpertGate);
}

KVCacheType ModelIRBuilder::cacheType(const ::helix::AttentionSpec &a) const {
  if (a.kind == ::helix::AttentionKind::MLA)
    return KVCacheType::get(ctx, 1, a.kvLoraRank + a.qkRopeHeadDim,
                            a.kvLoraRank, elem, /*latent=*/true,
                            a.slidingWindow);
  return KVCacheType::get(ctx, a.numKVHeads, a.headDim, a.vHeadDim, elem,
                          /*latent=*/false, a.slidingWindow);
}

Value ModelIRBuilder::mixer(const ::helix::LayerSpec &l, Value n,
                            Value positions, ValueRange state) {
  std::string prefix = layerPrefix(l.index);
  auto layerIdx = b.getI64IntegerAttr(l.index);
  auto outProj = [&](Value o, const std::string &weight, bool bias) {
    return LinearOp::create(
        b, loc, act(spec.hiddenSize), o, b.getStringAttr(weight + ".weight"),
        bias ? b.getStringAttr(weight + ".bias") : StringAttr(), LayoutAttr());
  };
  if (l.mixer == ::helix::MixerKind::LinearAttention) {
    bool kda = l.linear.variant == ::helix::LinearAttentionSpec::Variant::KDA;
    // Qwen3-Next / Qwen3.5: model.layers.N.linear_attn.out_proj; Kimi
    // Linear: model.layers.N.self_attn.o_proj.
    std::string p = prefix + (kda ? ".self_attn" : ".linear_attn");
    Value o = LinearAttentionOp::create(
        b, loc, act(l.linear.outputDim()), n, state[0], linearConfig(l.linear),
        layerIdx, b.getStringAttr(p), LayoutAttr());
    return outProj(o, p + (kda ? ".o_proj" : ".out_proj"), false);
  }
  if (l.mixer == ::helix::MixerKind::Mamba) {
    std::string p = prefix + ".mixer";
    Value o = MambaOp::create(b, loc, act(l.mamba.innerSize()), n, state[0],
                              mambaConfig(l.mamba), layerIdx,
                              b.getStringAttr(p), LayoutAttr());
    return outProj(o, p + ".out_proj", false);
  }
  const ::helix::AttentionSpec &a = l.attention;
  std::string attnPrefix = prefix + ".self_attn";
  auto config = attentionConfig(a);
  SmallVector<Type> qkvTypes;
  if (config.isMLA()) {
    int64_t latent = a.kvLoraRank + a.qkRopeHeadDim;
    qkvTypes = {heads(a.numHeads, latent), heads(1, latent)};
  } else {
    qkvTypes = {heads(a.numHeads, a.headDim), heads(a.numKVHeads, a.headDim),
                heads(a.numKVHeads, a.vHeadDim)};
  }
  auto qkv = QKVProjOp::create(b, loc, qkvTypes[0], qkvTypes[1],
                               config.isMLA() ? Type() : qkvTypes[2], n,
                               positions, config, rope(a.rope), layerIdx,
                               b.getStringAttr(attnPrefix), LayoutAttr());
  Value o;
  if (a.indexer.sparse()) {
    if (!a.indexer.reusesPrevious || !lastSelection) {
      auto selected = RankedTensorType::get(
          {ShapedType::kDynamic, a.indexer.topK}, b.getI64Type());
      lastSelection = DSAIndexerOp::create(
          b, loc, selected, n, positions, state[1], indexerConfig(a.indexer),
          b.getI64IntegerAttr(a.qLoraRank), layerIdx,
          b.getStringAttr(attnPrefix + ".indexer"), LayoutAttr());
    }
    o = SparseAttentionOp::create(b, loc, act(config.getOutputDim()),
                                  qkv.getQ(), qkv.getK(), lastSelection,
                                  state[0], config, layerIdx,
                                  b.getStringAttr(attnPrefix), LayoutAttr());
  } else {
    o = AttentionOp::create(b, loc, act(config.getOutputDim()), qkv.getQ(),
                            qkv.getK(), qkv.getV(), state[0], config, layerIdx,
                            b.getStringAttr(attnPrefix), LayoutAttr());
  }
  return outProj(o, attnPrefix + ".o_proj", a.outBias);
}

Value ModelIRBuilder::layer(const ::helix::LayerSpec &l, Value h,
                            Value positions, ValueRange state) {
  std::string prefix = layerPrefix(l.index);
  auto layerIdx = b.getI64IntegerAttr(l.index);
  Value r = h;
  if (l.mixer != ::helix::MixerKind::None) {
    Value n = rmsNorm(h, prefix + ".input_layernorm.weight");
    r = AddOp::create(b, loc, h, mixer(l, n, positions, state));
  }
  if (!l.hasFFN)
    return r;
  // A single-FFN block (Nemotron-H) has one norm, the input norm.
  Value n2 = rmsNorm(r, prefix + (l.mixer == ::helix::MixerKind::None
                                      ? ".input_layernorm.weight"
                                      : ".post_attention_layernorm.weight"));
  Value f;
  if (l.isMoE) {
    std::string moePrefix =
        prefix + (spec.modelType == "mixtral" ? ".block_sparse_moe" : ".mlp");
    f = MoEOp::create(b, loc, n2.getType(), n2, moeConfig(l.moe), layerIdx,
                      b.getStringAttr(moePrefix), LayoutAttr());
  } else {
    f = FFNOp::create(b, loc, n2.getType(), n2,
                      b.getI64IntegerAttr(l.ffn.intermediate),
                      b.getStringAttr(l.ffn.activation),
                      l.ffn.bias ? b.getUnitAttr() : UnitAttr(), layerIdx,
                      b.getStringAttr(prefix + ".mlp"), LayoutAttr());
  }
  return AddOp::create(b, loc, r, f);
}

func::FuncOp ModelIRBuilder::stepFunction(ModuleOp module,
                                          ArrayRef<Type> argTypes,
                                          ArrayRef<Type> results) {
  b.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(b, loc, ::helix::kDecodeStepFunc,
                                   b.getFunctionType(argTypes, results));
  int64_t mainLayers = llvm::count_if(
      spec.layers, [](const ::helix::LayerSpec &l) { return !l.isMTP; });
  func->setAttr(::helix::kModelAttrName,
                ModelAttr::get(ctx, spec.name, spec.modelType, spec.hiddenSize,
                               spec.vocabSize, mainLayers, spec.checkpointDType,
                               spec.quantMethod, spec.quantFormat,
                               llvm::join(spec.quantExclude, ","),
                               spec.maxPositionEmbeddings,
                               spec.tieWordEmbeddings, spec.zeroCenteredNorms));
  func.setArgAttr(0, ::mlir::helix::attrs::name, b.getStringAttr("tokens"));
  func.setArgAttr(1, ::mlir::helix::attrs::name, b.getStringAttr("positions"));
  if (results.size() > 1)
    func.setResultAttr(1, ::mlir::helix::attrs::name,
                       b.getStringAttr("hidden"));
  b.setInsertionPointToStart(func.addEntryBlock());
  return func;
}

OwningOpRef<ModuleOp> ModelIRBuilder::build(bool returnHidden) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  auto ids = RankedTensorType::get({ShapedType::kDynamic}, b.getI64Type());
  SmallVector<Type> argTypes = {ids, ids};
  SmallVector<std::pair<unsigned, unsigned>> stateArgs; // first, count
  for (const ::helix::LayerSpec &l : spec.layers) {
    SmallVector<Type> types = cacheTypes(l);
    stateArgs.push_back({unsigned(argTypes.size()), unsigned(types.size())});
    argTypes.append(types.begin(), types.end());
  }
  SmallVector<Type> results = {RankedTensorType::get(
      {ShapedType::kDynamic, spec.vocabSize}, b.getF32Type())};
  if (returnHidden)
    results.push_back(act(spec.hiddenSize));
  func::FuncOp func = stepFunction(*module, argTypes, results);
  Block *body = &func.getBody().front();

  Value h = EmbedOp::create(b, loc, act(spec.hiddenSize), body->getArgument(0),
                            b.getI64IntegerAttr(spec.vocabSize),
                            b.getStringAttr("model.embed_tokens.weight"));
  for (auto [i, l] : llvm::enumerate(spec.layers))
    h = layer(
        l, h, body->getArgument(1),
        body->getArguments().slice(stateArgs[i].first, stateArgs[i].second));
  Value n = rmsNorm(h, "model.norm.weight");
  Value out = LMHeadOp::create(b, loc, results[0], n,
                               b.getStringAttr(spec.tieWordEmbeddings
                                                   ? "model.embed_tokens.weight"
                                                   : "lm_head.weight"),
                               LayoutAttr());
  SmallVector<Value> returned = {out};
  if (returnHidden)
    returned.push_back(n); // what the LM head reads: the drafter's input
  func::ReturnOp::create(b, loc, returned);
  return module;
}

// DeepSeek-V3's MTP module (docs/speculative-decoding.md): the normalized
// embedding of the next token and the normalized hidden state,
// concatenated in that order and projected by eh_proj, a decoder layer,
// then shared_head's norm and LM head; its own embedding and head tensors
// (model.layers.<N>.embed_tokens / shared_head.head).
OwningOpRef<ModuleOp> ModelIRBuilder::buildDraft() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  const ::helix::LayerSpec l = ::helix::mtpLayerOf(spec, 0);
  std::string p = layerPrefix(l.index) + ".";
  int64_t H = spec.hiddenSize;
  auto ids = RankedTensorType::get({ShapedType::kDynamic}, b.getI64Type());
  Type logits = RankedTensorType::get({ShapedType::kDynamic, spec.vocabSize},
                                      b.getF32Type());
  SmallVector<Type> argTypes = {ids, ids, act(H)};
  SmallVector<Type> state = cacheTypes(l);
  argTypes.append(state.begin(), state.end());
  func::FuncOp func = stepFunction(*module, argTypes, {logits, act(H)});
  func.setArgAttr(2, ::mlir::helix::attrs::name, b.getStringAttr("hidden"));
  Block *body = &func.getBody().front();
  Value e = EmbedOp::create(b, loc, act(H), body->getArgument(0),
                            b.getI64IntegerAttr(spec.vocabSize),
                            b.getStringAttr(p + "embed_tokens.weight"));
  Value en = rmsNorm(e, p + "enorm.weight");
  Value hn = rmsNorm(body->getArgument(2), p + "hnorm.weight");
  Value both = tensor::ConcatOp::create(
      b, loc, RankedTensorType::get({ShapedType::kDynamic, 2 * H}, elem),
      /*dim=*/1, ValueRange{en, hn});
  Value x = LinearOp::create(b, loc, act(H), both,
                             b.getStringAttr(p + "eh_proj.weight"),
                             StringAttr(), LayoutAttr());
  Value h =
      layer(l, x, body->getArgument(1), body->getArguments().drop_front(3));
  Value n = rmsNorm(h, p + "shared_head.norm.weight");
  Value out = LMHeadOp::create(b, loc, logits, n,
                               b.getStringAttr(p + "shared_head.head.weight"),
                               LayoutAttr());
  func::ReturnOp::create(b, loc, ValueRange{out, h});
  return module;
}

} // namespace

namespace helix {
OwningOpRef<ModuleOp> buildModelIR(MLIRContext &context, const ModelSpec &spec,
                                   bool returnHidden) {
  context.loadDialect<HelixDialect, func::FuncDialect>();
  return ModelIRBuilder(&context, spec).build(returnHidden);
}

OwningOpRef<ModuleOp> buildDraftModelIR(MLIRContext &context,
                                        const ModelSpec &spec) {
  context.loadDialect<HelixDialect, func::FuncDialect, tensor::TensorDialect>();
  return ModelIRBuilder(&context, spec).buildDraft();
}
} // namespace helix
