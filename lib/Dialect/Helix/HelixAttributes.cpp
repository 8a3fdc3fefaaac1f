//===- HelixAttributes.cpp - helix attributes -----------------------------===//

#include "helix/Dialect/Helix/HelixAttributes.h"
#include "helix/Common/WeightFormat.h"
#include "helix/Dialect/Helix/HelixDialect.h"
#include "helix/Model/ModelSpec.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

using namespace mlir;
using namespace mlir::helix;

#include "helix/Dialect/Helix/HelixEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "helix/Dialect/Helix/HelixAttributes.cpp.inc"

void HelixDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "helix/Dialect/Helix/HelixAttributes.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Scalar parameters
//===----------------------------------------------------------------------===//

FailureOr<bool> mlir::helix::parseBoolParameter(AsmParser &parser) {
  if (succeeded(parser.parseOptionalKeyword("true")))
    return true;
  if (succeeded(parser.parseOptionalKeyword("false")))
    return false;
  return parser.emitError(parser.getCurrentLocation(),
                          "expected 'true' or 'false'");
}

FailureOr<::helix::Strategy>
mlir::helix::parseStrategyParameter(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  if (parser.parseKeywordOrString(&name))
    return failure();
  if (std::optional<::helix::Strategy> s = ::helix::symbolizeStrategy(name))
    return *s;
  return parser.emitError(loc) << "unknown strategy '" << name
                               << "': expected helix, helix-no-hopb, tp, "
                                  "tp-pp, ep or kvp";
}

FailureOr<::helix::LayerKind>
mlir::helix::parseLayerKindParameter(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  if (parser.parseKeywordOrString(&name))
    return failure();
  if (std::optional<::helix::LayerKind> k = ::helix::symbolizeLayerKind(name))
    return *k;
  return parser.emitError(loc)
         << "unknown kind of layer '" << name
         << "': expected full_attention, window_attention, dense_ffn or "
            "moe_ffn";
}

FailureOr<SmallVector<KindLayoutAttr>>
mlir::helix::parseKindLayoutList(AsmParser &parser) {
  SmallVector<KindLayoutAttr> layouts;
  if (parser.parseCommaSeparatedList(
          AsmParser::Delimiter::Square, [&]() -> ParseResult {
            KindLayoutAttr layout;
            if (parser.parseCustomAttributeWithFallback(layout))
              return failure();
            layouts.push_back(layout);
            return success();
          }))
    return failure();
  return layouts;
}

void mlir::helix::printKindLayoutList(AsmPrinter &printer,
                                      ArrayRef<KindLayoutAttr> layouts) {
  printer << '[';
  llvm::interleaveComma(layouts, printer,
                        [&](KindLayoutAttr l) { printer.printAttribute(l); });
  printer << ']';
}

FailureOr<::helix::DType> mlir::helix::parseDTypeParameter(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  std::string name;
  if (parser.parseKeywordOrString(&name))
    return failure();
  if (std::optional<::helix::DType> d = ::helix::symbolizeDType(name))
    return *d;
  return parser.emitError(loc)
         << "unknown number format '" << name << "': expected fp4, fp8 or bf16";
}

FailureOr<llvm::APFloat> mlir::helix::parseF64Parameter(AsmParser &parser) {
  double value;
  if (parser.parseFloat(value))
    return failure();
  return llvm::APFloat(value);
}

void mlir::helix::printEstimateParameter(AsmPrinter &printer,
                                         const llvm::APFloat &value) {
  std::string text =
      llvm::formatv("{0}", llvm::format("%.6g", value.convertToDouble())).str();
  // A float literal needs a '.' before any exponent.
  if (text.find_first_of(".ni") == std::string::npos)
    text.insert(std::min(text.find('e'), text.size()), ".0");
  printer << text;
}

//===----------------------------------------------------------------------===//
// AttentionConfigAttr
//===----------------------------------------------------------------------===//

static LogicalResult
requirePositive(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                int64_t value) {
  if (value > 0)
    return success();
  return emitError() << "'" << name << "' must be positive, got " << value;
}

static LogicalResult
requireNonNegative(function_ref<InFlightDiagnostic()> emitError, StringRef name,
                   int64_t value) {
  if (value >= 0)
    return success();
  return emitError() << "'" << name << "' must not be negative, got " << value;
}

LogicalResult AttentionConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, AttentionKind kind,
    int64_t heads, int64_t kvHeads, int64_t headDim, int64_t vHeadDim,
    int64_t qLoraRank, int64_t kvLoraRank, int64_t ropeDim, bool qkvBias,
    bool outBias, bool qkNorm, bool sinks, int64_t window, bool, bool,
    APFloat partialRotary) {
  double rotary = partialRotary.convertToDouble();
  if (!partialRotary.isFinite() || rotary <= 0 || rotary > 1)
    return emitError() << "partial_rotary must be in (0, 1], got " << rotary;
  if (failed(requirePositive(emitError, "heads", heads)) ||
      failed(requirePositive(emitError, "kv_heads", kvHeads)) ||
      failed(requirePositive(emitError, "head_dim", headDim)) ||
      failed(requirePositive(emitError, "v_head_dim", vHeadDim)) ||
      failed(requireNonNegative(emitError, "q_lora_rank", qLoraRank)) ||
      failed(requireNonNegative(emitError, "kv_lora_rank", kvLoraRank)) ||
      failed(requireNonNegative(emitError, "rope_dim", ropeDim)) ||
      failed(requireNonNegative(emitError, "window", window)))
    return failure();
  if (heads % kvHeads != 0)
    return emitError() << "query heads (" << heads
                       << ") must be a multiple of kv_heads (" << kvHeads
                       << ")";
  switch (kind) {
  case AttentionKind::mha:
    if (kvHeads != heads)
      return emitError() << "mha needs kv_heads == heads, got kv_heads = "
                         << kvHeads << " and heads = " << heads;
    break;
  case AttentionKind::mqa:
    if (kvHeads != 1)
      return emitError() << "mqa needs kv_heads == 1, got " << kvHeads;
    break;
  case AttentionKind::gqa:
    break;
  case AttentionKind::mla:
    if (kvHeads != 1)
      return emitError() << "mla has one latent KV head shared by all query "
                            "heads: kv_heads must be 1, got "
                         << kvHeads;
    if (kvLoraRank <= 0)
      return emitError() << "mla needs a positive kv_lora_rank";
    if (ropeDim <= 0 || ropeDim >= headDim)
      return emitError() << "mla needs 0 < rope_dim < head_dim, got rope_dim = "
                         << ropeDim << " and head_dim = " << headDim;
    if (qkNorm || sinks)
      return emitError() << "qk_norm and sinks are not defined for mla";
    return success();
  }
  if (qLoraRank != 0 || kvLoraRank != 0 || ropeDim != 0)
    return emitError() << "q_lora_rank, kv_lora_rank and rope_dim are only "
                          "valid for mla";
  return success();
}

/// "float32", "bfloat16" or "float16": the dtypes a recurrent state is kept
/// in (helix::stateDTypeBytes).
static LogicalResult
verifyStateDType(function_ref<InFlightDiagnostic()> emitError,
                 StringRef dtype) {
  if (::helix::stateDTypeBytes(dtype.str()) == 0)
    return emitError() << "state_dtype must be \"float32\", \"bfloat16\" or "
                          "\"float16\", got \""
                       << dtype << "\"";
  return success();
}

LogicalResult LinearAttentionConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, LinearAttnVariant variant,
    int64_t keyHeads, int64_t valueHeads, int64_t keyHeadDim,
    int64_t valueHeadDim, int64_t convKernel, bool fullRankGate,
    APFloat gateLowerBound, StringRef stateDType) {
  if (failed(requirePositive(emitError, "key_heads", keyHeads)) ||
      failed(requirePositive(emitError, "value_heads", valueHeads)) ||
      failed(requirePositive(emitError, "key_head_dim", keyHeadDim)) ||
      failed(requirePositive(emitError, "value_head_dim", valueHeadDim)) ||
      failed(requirePositive(emitError, "conv_kernel", convKernel)) ||
      failed(verifyStateDType(emitError, stateDType)))
    return failure();
  if (valueHeads % keyHeads != 0)
    return emitError() << "value_heads (" << valueHeads
                       << ") must be a multiple of key_heads (" << keyHeads
                       << ")";
  if (variant == LinearAttnVariant::kda && keyHeads != valueHeads)
    return emitError() << "kda has as many key heads as value heads, got "
                       << keyHeads << " and " << valueHeads;
  if (variant == LinearAttnVariant::gated_deltanet &&
      (fullRankGate || !gateLowerBound.isZero()))
    return emitError() << "full_rank_gate and gate_lower_bound are kda's";
  if (!gateLowerBound.isFinite() || gateLowerBound.convertToDouble() > 0)
    return emitError() << "gate_lower_bound must be finite and <= 0";
  return success();
}

LogicalResult
MambaConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t heads, int64_t headDim, int64_t stateSize,
                        int64_t groups, int64_t convKernel, bool,
                        StringRef stateDType) {
  if (failed(requirePositive(emitError, "heads", heads)) ||
      failed(requirePositive(emitError, "head_dim", headDim)) ||
      failed(requirePositive(emitError, "state_size", stateSize)) ||
      failed(requirePositive(emitError, "groups", groups)) ||
      failed(requirePositive(emitError, "conv_kernel", convKernel)) ||
      failed(verifyStateDType(emitError, stateDType)))
    return failure();
  if (heads % groups != 0)
    return emitError() << "groups (" << groups << ") must divide heads ("
                       << heads << ")";
  return success();
}

LogicalResult
IndexerConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          int64_t heads, int64_t headDim, int64_t topK,
                          int64_t ropeDim, bool, bool) {
  if (failed(requirePositive(emitError, "heads", heads)) ||
      failed(requirePositive(emitError, "head_dim", headDim)) ||
      failed(requirePositive(emitError, "top_k", topK)) ||
      failed(requireNonNegative(emitError, "rope_dim", ropeDim)))
    return failure();
  if (ropeDim > headDim)
    return emitError() << "rope_dim (" << ropeDim
                       << ") must not exceed head_dim (" << headDim << ")";
  return success();
}

int64_t AttentionConfigAttr::getKVValuesPerToken() const {
  if (isMLA())
    return getKvLoraRank() + getRopeDim();
  return getKvHeads() * (getHeadDim() + getVHeadDim());
}

//===----------------------------------------------------------------------===//
// RopeAttr
//===----------------------------------------------------------------------===//

static APFloat toAPFloat(double v) { return APFloat(v); }
static double toDouble(const APFloat &v) { return v.convertToDouble(); }

RopeAttr RopeAttr::get(MLIRContext *context, const ::helix::RopeParams &p) {
  return Base::get(context, toAPFloat(p.theta), p.scaling, toAPFloat(p.factor),
                   p.originalMaxPosition, toAPFloat(p.lowFreqFactor),
                   toAPFloat(p.highFreqFactor), toAPFloat(p.betaFast),
                   toAPFloat(p.betaSlow), toAPFloat(p.mscale),
                   toAPFloat(p.mscaleAllDim));
}

RopeAttr RopeAttr::getChecked(function_ref<InFlightDiagnostic()> emitError,
                              MLIRContext *context,
                              const ::helix::RopeParams &p) {
  return Base::getChecked(
      emitError, context, toAPFloat(p.theta), p.scaling, toAPFloat(p.factor),
      p.originalMaxPosition, toAPFloat(p.lowFreqFactor),
      toAPFloat(p.highFreqFactor), toAPFloat(p.betaFast), toAPFloat(p.betaSlow),
      toAPFloat(p.mscale), toAPFloat(p.mscaleAllDim));
}

::helix::RopeParams RopeAttr::getParams() const {
  ::helix::RopeParams p;
  p.theta = toDouble(getTheta());
  p.scaling = getScaling().str();
  p.factor = toDouble(getFactor());
  p.originalMaxPosition = getOriginalMaxPosition();
  p.lowFreqFactor = toDouble(getLowFreqFactor());
  p.highFreqFactor = toDouble(getHighFreqFactor());
  p.betaFast = toDouble(getBetaFast());
  p.betaSlow = toDouble(getBetaSlow());
  p.mscale = toDouble(getMscale());
  p.mscaleAllDim = toDouble(getMscaleAllDim());
  return p;
}

LogicalResult RopeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               APFloat theta, StringRef scaling, APFloat factor,
                               int64_t originalMaxPosition, APFloat, APFloat,
                               APFloat, APFloat, APFloat, APFloat) {
  if (!(theta.convertToDouble() > 0))
    return emitError() << "rope 'theta' must be positive, got "
                       << theta.convertToDouble();
  if (!(factor.convertToDouble() > 0))
    return emitError() << "rope 'factor' must be positive, got "
                       << factor.convertToDouble();
  if (originalMaxPosition < 0)
    return emitError() << "'original_max_position' must not be negative";
  bool known =
      llvm::StringSwitch<bool>(scaling)
          .Cases({"", "linear", "dynamic", "yarn", "llama3", "longrope"}, true)
          .Default(false);
  if (!known)
    return emitError() << "unknown rope scaling '" << scaling
                       << "': expected one of linear, dynamic, yarn, llama3, "
                          "longrope";
  return success();
}

//===----------------------------------------------------------------------===//
// MoEConfigAttr
//===----------------------------------------------------------------------===//

LogicalResult
MoEConfigAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t experts, int64_t topK, int64_t expertIntermediate,
                      int64_t sharedExperts, int64_t sharedIntermediate,
                      int64_t nGroup, int64_t topkGroup, APFloat routedScaling,
                      bool, ScoringFunc, StringRef, bool, int64_t latentSize,
                      bool latentNorm, bool) {
  if (failed(requireNonNegative(emitError, "latent_size", latentSize)))
    return failure();
  if (latentNorm && latentSize == 0)
    return emitError() << "latent_norm needs a latent_size";
  if (failed(requirePositive(emitError, "experts", experts)) ||
      failed(requirePositive(emitError, "top_k", topK)) ||
      failed(requirePositive(emitError, "expert_intermediate",
                             expertIntermediate)) ||
      failed(requireNonNegative(emitError, "shared_experts", sharedExperts)) ||
      failed(requirePositive(emitError, "n_group", nGroup)) ||
      failed(requirePositive(emitError, "topk_group", topkGroup)))
    return failure();
  if (topK > experts)
    return emitError() << "top_k (" << topK
                       << ") exceeds the number of experts (" << experts << ")";
  if (sharedExperts > 0 && sharedIntermediate <= 0)
    return emitError() << "shared experts need a positive "
                          "'shared_intermediate'";
  if (experts % nGroup != 0)
    return emitError() << "n_group (" << nGroup
                       << ") must divide the number of experts (" << experts
                       << ")";
  if (topkGroup > nGroup)
    return emitError() << "topk_group (" << topkGroup << ") exceeds n_group ("
                       << nGroup << ")";
  if (topK > topkGroup * (experts / nGroup))
    return emitError() << "top_k (" << topK << ") exceeds the "
                       << topkGroup * (experts / nGroup)
                       << " experts in the topk_group selected groups";
  if (!(routedScaling.convertToDouble() > 0))
    return emitError() << "'routed_scaling' must be positive";
  return success();
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t gpus, int64_t kvp, int64_t tpa,
                                 int64_t tpf, int64_t ep, int64_t pp,
                                 int64_t dp) {
  if (failed(requirePositive(emitError, "gpus", gpus)) ||
      failed(requirePositive(emitError, "kvp", kvp)) ||
      failed(requirePositive(emitError, "tpa", tpa)) ||
      failed(requirePositive(emitError, "tpf", tpf)) ||
      failed(requirePositive(emitError, "ep", ep)) ||
      failed(requirePositive(emitError, "pp", pp)) ||
      failed(requirePositive(emitError, "dp", dp)))
    return failure();
  // Products checked for overflow (widths come from user IR).
  auto product = [](std::initializer_list<int64_t> factors) {
    int64_t p = 1;
    for (int64_t f : factors)
      if (llvm::MulOverflow(p, f, p))
        return std::optional<int64_t>();
    return std::optional<int64_t>(p);
  };
  std::optional<int64_t> attention = product({kvp, tpa, dp, pp});
  if (attention != gpus)
    return emitError() << "attention layout kvp x tpa x dp x pp = " << kvp
                       << " x " << tpa << " x " << dp << " x " << pp << " = "
                       << (attention ? std::to_string(*attention)
                                     : std::string("more than 2^63"))
                       << " does not match the grid of " << gpus << " GPUs";
  // The FFN may be replicated (Medha-style KVP ties the FFN to the attention
  // TP group and replicates it over the KVP ranks), never over-subscribed.
  std::optional<int64_t> ffn = product({tpf, ep, pp});
  if (!ffn || gpus % *ffn != 0)
    return emitError() << "FFN layout tpf x ep x pp = " << tpf << " x " << ep
                       << " x " << pp << " = "
                       << (ffn ? std::to_string(*ffn)
                               : std::string("more than 2^63"))
                       << " does not divide the grid of " << gpus << " GPUs";
  return success();
}

//===----------------------------------------------------------------------===//
// ModelAttr
//===----------------------------------------------------------------------===//

LogicalResult ModelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StringRef, StringRef, int64_t hidden,
                                int64_t vocab, int64_t layers, StringRef,
                                StringRef, StringRef quantFormat, StringRef,
                                int64_t maxPosition, bool, bool) {
  if (failed(requirePositive(emitError, "hidden", hidden)) ||
      failed(requirePositive(emitError, "vocab", vocab)) ||
      failed(requirePositive(emitError, "layers", layers)) ||
      failed(requireNonNegative(emitError, "max_position", maxPosition)))
    return failure();
  ::helix::CheckpointFormat f;
  if (!quantFormat.empty() &&
      (!::helix::parseCheckpointFormat(quantFormat.str().c_str(), f) ||
       f == ::helix::CheckpointFormat::BF16))
    return emitError() << "model 'quant_format' must be fp8-block, "
                          "fp8-tensor, nvfp4 or mxfp4, got \""
                       << quantFormat << "\"";
  return success();
}

//===----------------------------------------------------------------------===//
// PlanAttr
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// KindLayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult
KindLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                       ::helix::LayerKind kind, int64_t layers, int64_t kvp,
                       int64_t tpa, int64_t tpf, int64_t ep, int64_t replicas) {
  if (failed(requirePositive(emitError, "layers", layers)) ||
      failed(requirePositive(emitError, "kvp", kvp)) ||
      failed(requirePositive(emitError, "tpa", tpa)) ||
      failed(requirePositive(emitError, "tpf", tpf)) ||
      failed(requirePositive(emitError, "ep", ep)) ||
      failed(requirePositive(emitError, "replicas", replicas)))
    return failure();
  StringRef name = ::helix::stringifyLayerKind(kind);
  if (::helix::isAttentionKind(kind)) {
    if (tpf != 1 || ep != 1 || replicas != 1)
      return emitError() << name
                         << " layout: an attention kind has kvp and tpa only";
  } else if (::helix::isRecurrentKind(kind)) {
    if (kvp != 1)
      return emitError()
             << name
             << " layout: a recurrent layer keeps a fixed-size state, not a "
                "KV cache, so KV parallelism (kvp = "
             << kvp
             << ") means nothing for it; use kvp = 1 and a TP group (tpa) "
                "with replicas";
    if (tpf != 1 || ep != 1)
      return emitError() << name
                         << " layout: a recurrent kind has tpa and replicas "
                            "only";
  } else {
    if (kvp != 1 || tpa != 1)
      return emitError() << name
                         << " layout: an FFN kind has tpf, ep and replicas "
                            "only";
    if (kind == ::helix::LayerKind::DenseFFN && ep != 1)
      return emitError() << name
                         << " layout: a dense FFN has no experts (ep "
                            "must be 1)";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PlanAttr
//===----------------------------------------------------------------------===//

/// GPUs a kind's layout occupies (attention kvp x tpa; FFN tpf x ep x
/// replicas), nullopt past 2^63.
static std::optional<int64_t> gpusOf(KindLayoutAttr l) {
  const bool attention = ::helix::isAttentionKind(l.getKind());
  int64_t n = 1;
  if (::helix::isRecurrentKind(l.getKind()))
    return llvm::MulOverflow(l.getTpa(), l.getReplicas(), n)
               ? std::nullopt
               : std::optional<int64_t>(n);
  if (attention ? llvm::MulOverflow(l.getKvp(), l.getTpa(), n)
                : llvm::MulOverflow(l.getTpf(), l.getEp(), n) ||
                      llvm::MulOverflow(n, l.getReplicas(), n))
    return std::nullopt;
  return n;
}

LogicalResult PlanAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ::helix::Strategy strategy, StringRef,
                               int64_t gpus, int64_t batch, int64_t context,
                               ::helix::DType, ::helix::DType, ::helix::DType,
                               bool, bool, APFloat ttl, bool, int64_t slices,
                               int64_t kvBlock, APFloat routingSkew, bool,
                               ArrayRef<KindLayoutAttr> layouts) {
  if (failed(requirePositive(emitError, "gpus", gpus)) ||
      failed(requirePositive(emitError, "batch", batch)) ||
      failed(requirePositive(emitError, "context_length", context)) ||
      failed(requirePositive(emitError, "kv_block", kvBlock)))
    return failure();
  if (slices < 0)
    return emitError() << "plan 'slices' must not be negative";
  if (ttl.isNegative() || !ttl.isFinite())
    return emitError() << "plan 'ttl_s' must be finite and not negative";
  // The range `helix --routing-skew` accepts.
  double skew = routingSkew.convertToDouble();
  if (!routingSkew.isFinite() || skew < 0 || skew > 4)
    return emitError() << "plan 'routing_skew' must be in [0, 4]";
  if (layouts.empty())
    return success();
  if (strategy != ::helix::Strategy::Helix)
    return emitError() << "plan 'layouts' (per-layer layouts) need the helix "
                          "strategy, got "
                       << ::helix::stringifyStrategy(strategy);
  bool seen[::helix::kNumLayerKinds] = {};
  bool attention = false, ffn = false;
  for (KindLayoutAttr l : layouts) {
    StringRef name = ::helix::stringifyLayerKind(l.getKind());
    if (seen[int(l.getKind())])
      return emitError() << "plan 'layouts' lists " << name << " twice";
    seen[int(l.getKind())] = true;
    (::helix::isMixerKind(l.getKind()) ? attention : ffn) = true;
    if (gpusOf(l) != gpus)
      return emitError() << "plan 'layouts': the " << name
                         << " layout does not cover the plan's " << gpus
                         << " GPUs ("
                         << (::helix::isAttentionKind(l.getKind()) ? "kvp x tpa"
                             : ::helix::isRecurrentKind(l.getKind())
                                 ? "tpa x replicas"
                                 : "tpf x ep x replicas")
                         << " must be " << gpus << ")";
  }
  if (!attention || !ffn)
    return emitError() << "plan 'layouts' need a token-mixer kind "
                          "(attention, linear attention or Mamba) and an "
                          "FFN kind";
  return success();
}

//===----------------------------------------------------------------------===//
// MTPAttr
//===----------------------------------------------------------------------===//

LogicalResult MTPAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              int64_t draftTokens, APFloat acceptance) {
  // The ranges helix plan / cost / compile --mtp and --acceptance take.
  if (draftTokens < 1 || draftTokens > ::helix::kMaxMTPTokens)
    return emitError() << "mtp 'draft_tokens' must be in [1, "
                       << ::helix::kMaxMTPTokens << "], got " << draftTokens;
  double a = acceptance.convertToDouble();
  if (!acceptance.isFinite() || !(a > 0 && a <= 1))
    return emitError() << "mtp 'acceptance' must be in (0, 1]";
  return success();
}

//===----------------------------------------------------------------------===//
// CostAttr
//===----------------------------------------------------------------------===//

LogicalResult CostAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               APFloat time, APFloat kvRead, APFloat weightRead,
                               APFloat compute, APFloat overhead, APFloat comm,
                               APFloat stall, APFloat commTotal, APFloat bytes,
                               APFloat flops) {
  std::pair<const char *, APFloat> fields[] = {{"time_us", time},
                                               {"kv_read_us", kvRead},
                                               {"weight_read_us", weightRead},
                                               {"compute_us", compute},
                                               {"overhead_us", overhead},
                                               {"comm_us", comm},
                                               {"stall_us", stall},
                                               {"comm_total_us", commTotal},
                                               {"bytes", bytes},
                                               {"flops", flops}};
  for (auto &[name, value] : fields)
    if (value.isNegative() || !value.isFinite())
      return emitError() << "cost '" << name
                         << "' must be finite and not negative";
  // The categories say where time_us goes: they sum to it (up to the
  // printed precision).
  double t = time.convertToDouble();
  double sum = kvRead.convertToDouble() + weightRead.convertToDouble() +
               compute.convertToDouble() + overhead.convertToDouble() +
               comm.convertToDouble() + stall.convertToDouble();
  if (std::abs(sum - t) > 1e-5 * std::max(t, 1.0))
    return emitError() << "cost categories sum to "
                       << llvm::formatv("{0}", llvm::format("%g", sum)).str()
                       << " us but time_us is "
                       << llvm::formatv("{0}", llvm::format("%g", t)).str();
  return success();
}
