//===- ModelSummary.cpp - Readable summary of helix model IR --------------===//

#include "helix/ModelIR/ModelIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"

#include <map>
#include <sstream>

using namespace mlir;

namespace helix {

/// Parameter counts as usually quoted: "671.0 B", "8.03 B", "1.23 M".
static std::string paramCount(int64_t n) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  if (n >= 1'000'000'000LL) {
    os.precision(n >= 10'000'000'000LL ? 1 : 2);
    os << static_cast<double>(n) / 1e9 << " B";
  } else {
    os.precision(2);
    os << static_cast<double>(n) / 1e6 << " M";
  }
  return os.str();
}

static std::string attentionText(const AttentionSpec &a);

/// "4.0 MiB", "96.0 KiB", "512 B".
static std::string bytesText(int64_t bytes) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  if (bytes >= 1024 * 1024)
    os << double(bytes) / (1024.0 * 1024.0) << " MiB";
  else if (bytes >= 1024)
    os << double(bytes) / 1024.0 << " KiB";
  else
    os << bytes << " B";
  return os.str();
}

/// The token mixer: attention (attentionText), a recurrent mixer with its
/// state per request, or "-" for an FFN-only block.
static std::string mixerText(const LayerSpec &l) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  switch (l.mixer) {
  case MixerKind::Attention:
    return attentionText(l.attention);
  case MixerKind::LinearAttention: {
    const LinearAttentionSpec &x = l.linear;
    os << stringifyLinearAttentionVariant(x.variant) << " " << x.numKeyHeads
       << "k/" << x.numValueHeads << "v x " << x.keyHeadDim << " state "
       << bytesText(x.stateValues() * stateDTypeBytes(x.stateDType));
    return os.str();
  }
  case MixerKind::Mamba: {
    const MambaSpec &m = l.mamba;
    os << "mamba2 " << m.numHeads << "h x " << m.headDim << " state "
       << m.stateSize << " groups " << m.nGroups << " ("
       << bytesText(m.stateValues() * stateDTypeBytes(m.stateDType)) << ")";
    return os.str();
  }
  case MixerKind::None:
    break;
  }
  return "-";
}

static std::string attentionText(const AttentionSpec &a) {
  std::ostringstream os;
  os << stringifyAttentionKind(a.kind) << " " << a.numHeads << "q";
  if (a.kind == AttentionKind::MLA)
    os << " latent " << a.kvLoraRank << "+" << a.qkRopeHeadDim;
  else
    os << "/" << a.numKVHeads << "kv x " << a.headDim;
  if (a.slidingWindow)
    os << " window " << a.slidingWindow;
  if (a.sinks)
    os << " sinks";
  if (a.qkNorm)
    os << " qk-norm";
  if (a.qkvBias)
    os << " bias";
  if (a.outputGate)
    os << " gated";
  if (a.noRope)
    os << " nope";
  if (a.partialRotary != 1.0)
    os << " rope " << a.partialRotary;
  if (a.indexer.sparse())
    os << " dsa top-" << a.indexer.topK
       << (a.indexer.reusesPrevious
               ? " (shared)"
               : " (" + std::to_string(a.indexer.numHeads) + " index heads)");
  return os.str();
}

static std::string ffnText(const LayerSpec &l) {
  std::ostringstream os;
  if (!l.hasFFN) {
    os << "-";
  } else if (!l.isMoE) {
    os << "ffn " << l.ffn.intermediate;
    if (!isGatedActivation(l.ffn.activation))
      os << " " << l.ffn.activation;
  } else {
    const MoESpec &m = l.moe;
    os << "moe " << m.numExperts << "x" << m.expertIntermediate << " top-"
       << m.topK;
    if (m.numSharedExperts)
      os << " +" << m.numSharedExperts << " shared";
    if (m.nGroup > 1)
      os << " groups " << m.topkGroup << "/" << m.nGroup;
    if (m.latentSize > 0)
      os << " latent " << m.latentSize;
    if (!m.gated())
      os << " " << m.activation;
  }
  if (l.isMTP)
    os << " (mtp)";
  return os.str();
}

/// Layer indices as ranges, "0-2,4-6,8-10", the middle elided past 8
/// ranges: "0-2,4-6,8-10,...,56-58".
static std::string layerList(const std::vector<int64_t> &ix) {
  std::vector<std::string> ranges;
  for (size_t i = 0; i < ix.size();) {
    size_t j = i;
    while (j + 1 < ix.size() && ix[j + 1] == ix[j] + 1)
      ++j;
    ranges.push_back(std::to_string(ix[i]) +
                     (j > i ? "-" + std::to_string(ix[j]) : ""));
    i = j + 1;
  }
  std::string out;
  for (size_t r = 0; r < ranges.size(); ++r) {
    if (ranges.size() > 8 && r == 3) {
      out += ",...";
      r = ranges.size() - 2;
      continue;
    }
    out += (out.empty() ? "" : ",") + ranges[r];
  }
  return out;
}

LogicalResult printModelSummary(ModuleOp module, llvm::raw_ostream &os) {
  func::FuncOp func = findDecodeStep(module);
  if (!func)
    return module.emitError() << "no helix decode-step function found";
  FailureOr<ModelSpec> specOr = extractModelSpec(func);
  if (failed(specOr))
    return failure();
  const ModelSpec &spec = *specOr;

  std::map<std::string, int64_t> opCounts;
  func.walk([&](Operation *op) {
    if (op->getDialect() && op->getDialect()->getNamespace() == "helix")
      ++opCounts[op->getName().getStringRef().str()];
  });

  os << "model       " << spec.name << " (" << spec.modelType
     << "), checkpoint " << spec.checkpointDType;
  if (!spec.quantMethod.empty())
    os << " / " << spec.quantMethod;
  os << "\n";
  os << "dimensions  hidden " << spec.hiddenSize << ", vocab " << spec.vocabSize
     << ", " << spec.numLayers() << " layers (" << spec.numDenseLayers()
     << " dense FFN, " << spec.numMoELayers() << " MoE";
  int64_t mtp =
      llvm::count_if(spec.layers, [](const LayerSpec &l) { return l.isMTP; });
  if (mtp)
    os << ", " << mtp << " multi-token-prediction";
  os << ")";
  if (spec.tieWordEmbeddings)
    os << ", tied embeddings";
  os << "\n";
  os << "parameters  " << paramCount(spec.parameterCount()) << " total, "
     << paramCount(spec.activeParameterCount()) << " active per token\n";

  int64_t kvPerToken = 0, indexBytes = 0, stateBytes = 0;
  for (const LayerSpec &l : spec.layers) {
    if (l.hasAttention()) {
      kvPerToken += l.attention.kvValuesPerToken();
      if (l.attention.indexer.sparse() && !l.attention.indexer.reusesPrevious)
        indexBytes += l.attention.indexer.keyBytes();
    }
    if (l.mixer == MixerKind::LinearAttention)
      stateBytes +=
          l.linear.stateValues() * stateDTypeBytes(l.linear.stateDType);
    if (l.mixer == MixerKind::Mamba)
      stateBytes += l.mamba.stateValues() * stateDTypeBytes(l.mamba.stateDType);
  }
  os << "kv cache    " << kvPerToken << " values per token (all layers), "
     << llvm::format("%.1f", kvPerToken * 2 / 1024.0)
     << " KiB per token at 16 bits";
  if (indexBytes)
    os << ", plus " << indexBytes << " bytes of DSA index keys";
  os << "\n";
  if (stateBytes)
    os << "state       " << bytesText(stateBytes)
       << " of recurrent state per request (all layers), whatever the "
          "context\n";

  os << "ops        ";
  for (auto &[name, count] : opCounts)
    os << " " << name << " " << count;
  os << "\n";

  std::vector<std::string> texts;
  for (const LayerSpec &l : spec.layers)
    texts.push_back(mixerText(l) + " | " + ffnText(l));
  os << "layers\n";
  // Two layer kinds strictly alternating (gpt-oss: sliding, full, ...).
  size_t n = texts.size();
  bool alternating = n >= 4 && texts[0] != texts[1];
  for (size_t i = 2; alternating && i < n; ++i)
    alternating = texts[i] == texts[i % 2];
  if (alternating) {
    for (size_t first = 0; first < 2; ++first) {
      size_t last = (n - 1) % 2 == first ? n - 1 : n - 2;
      os << "  " << spec.layers[first].index << ","
         << spec.layers[first + 2].index << ",...," << spec.layers[last].index
         << "  " << texts[first] << "\n";
    }
    return success();
  }
  // Hybrid stacks (3 linear : 1 full attention, ...) make many short runs:
  // then each kind of layer once, with the layers that have it.
  size_t runs = 1;
  for (size_t i = 1; i < n; ++i)
    runs += texts[i] != texts[i - 1];
  if (runs > 12) {
    std::vector<size_t> order;
    std::map<std::string, std::vector<int64_t>> indices;
    for (size_t i = 0; i < n; ++i) {
      if (!indices.count(texts[i]))
        order.push_back(i);
      indices[texts[i]].push_back(spec.layers[i].index);
    }
    for (size_t first : order) {
      const std::vector<int64_t> &ix = indices[texts[first]];
      os << "  " << texts[first] << "\n    " << ix.size()
         << (ix.size() == 1 ? " layer: " : " layers: ") << layerList(ix)
         << "\n";
    }
    return success();
  }
  // Runs of identical layers, e.g. "3-60  mla 128q latent 512+64 | moe ...".
  size_t i = 0;
  while (i < n) {
    size_t j = i + 1;
    while (j < n && texts[j] == texts[i])
      ++j;
    std::string range = std::to_string(spec.layers[i].index);
    if (j - i > 1)
      range += "-" + std::to_string(spec.layers[j - 1].index);
    os << "  " << llvm::left_justify(range, 8) << texts[i] << "\n";
    i = j;
  }
  return success();
}

} // namespace helix
