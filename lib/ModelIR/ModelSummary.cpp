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
  return os.str();
}

static std::string ffnText(const LayerSpec &l) {
  std::ostringstream os;
  if (!l.isMoE) {
    os << "ffn " << l.ffn.intermediate;
  } else {
    const MoESpec &m = l.moe;
    os << "moe " << m.numExperts << "x" << m.expertIntermediate << " top-"
       << m.topK;
    if (m.numSharedExperts)
      os << " +" << m.numSharedExperts << " shared";
    if (m.nGroup > 1)
      os << " groups " << m.topkGroup << "/" << m.nGroup;
  }
  if (l.isMTP)
    os << " (mtp)";
  return os.str();
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

  int64_t kvPerToken = 0;
  for (const LayerSpec &l : spec.layers)
    kvPerToken += l.attention.kvValuesPerToken();
  os << "kv cache    " << kvPerToken << " values per token (all layers), "
     << llvm::format("%.1f", kvPerToken * 2 / 1024.0)
     << " KiB per token at 16 bits\n";

  os << "ops        ";
  for (auto &[name, count] : opCounts)
    os << " " << name << " " << count;
  os << "\n";

  std::vector<std::string> texts;
  for (const LayerSpec &l : spec.layers)
    texts.push_back(attentionText(l.attention) + " | " + ffnText(l));
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
