//===- Launchers.cpp - How CudaKernels.cu launches each kernel ------------===//

#include "Launchers.h"

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace helix::benchkernels {

namespace {
int64_t none(const LaunchDims &) { return 0; }

/// attention(): threads = 128, smem = (keyDim + valueDim + threads) *
/// sizeof(float): q [keyDim], acc [valueDim] and p [blockDim] floats.
int64_t attentionSmem(const LaunchDims &d) {
  return (d.keyDim + d.valueDim + 128) * 4;
}

/// moeRoute(): moeRouteSharedBytes(p) = (2 experts + groups) doubles
/// (scores, choices, group scores) + (groups + topK) ints.
int64_t routeSmem(const LaunchDims &d) {
  return (2 * d.experts + d.expertGroups) * 8 + (d.expertGroups + d.topK) * 4;
}

/// gatedDeltaNet(): one key head's q and k, its r value heads' v and one
/// value head's output, floats; r = 1 here (Qwen3.5 has 2 to 4).
int64_t gdnSmem(const LaunchDims &d) {
  return (2 * d.keyDim + d.valueDim + d.valueDim) * 4;
}

/// indexerPrepare(): one index key (dim = keyDim here) as floats.
int64_t indexKeySmem(const LaunchDims &d) { return d.keyDim * 4; }

/// indexerTopK(): the index queries and head weights in shared memory when
/// they fit (DeepSeek-V3.2: 64 heads of keyDim values, and 64 weights).
int64_t indexQuerySmem(const LaunchDims &d) { return (64 * d.keyDim + 64) * 4; }
} // namespace

const std::vector<Launcher> &launchers() {
  // kThreads = 256 in CudaKernels.cu. Hot kernels first; the streaming
  // kernels (KV cache, resident weights, the grouped expert GEMM) must have
  // 128-bit loads.
  static const std::vector<Launcher> table = {
      {"attentionKernel", "attention", 128,
       "(keyDim + valueDim + threads) * sizeof(float)",
       "(keyDim + valueDim + 128) * 4", attentionSmem, true, true},
      {"linearResidentKernel", "linearResident", 128, "0", "0", none, true,
       true},
      {"linearPartsKernel", "linearResidentParts", 128, "0", "0", none, true,
       true},
      // MLA's W_UK / W_UV at decode sizes: element loads (W_UK is read
      // along its columns).
      {"headMatmulResidentKernel", "headMatmulResident", 128, "0", "0", none,
       true},
      {"dequantizeKernel", "dequantize", 256, "0", "0", none, true},
      {"kvStoreKernel", "kvStore", 32, "0", "0", none, true},
      {"rmsNormKernel", "rmsNorm", 256, "0", "0", none, true},
      {"addRmsNormKernel", "addRmsNorm", 256, "0", "0", none, true},
      {"rmsNormPrefixKernel", "rmsNormPrefix", 256, "0", "0", none, true},
      {"ropeKvStoreKernel", "ropeKvStore", 256, "0", "0", none, true},
      {"embeddingKernel", "embedding", 256, "0", "0", none, true},
      {"moeRouteKernel", "moeRoute", 256, "moeRouteSharedBytes(p)",
       "(2 E + G) * 8 + (G + k) * 4", routeSmem, true},
      {"moeDispatchKernel", "moeDispatch", 256, "0", "0", none, true},
      {"linearGroupedKernel", "linearGrouped", 128, "0", "0", none, true, true},
      {"moeCombineKernel", "moeCombine", 256, "0", "0", none, true},
      {"lseCombineKernel", "lseCombine", 128, "0", "0", none, true},
      {"splitCombineKernel", "attention", 128, "0", "0", none, false},
      {"addBiasKernel", "addBias", 256, "0", "0", none, false},
      {"ropeKernel", "rope", 256, "0", "0", none, false},
      {"gatedKernel", "gated", 256, "0", "0", none, false},
      {"addKernel", "add", 256, "0", "0", none, false},
      {"logAddExpKernel", "logAddExp", 256, "0", "0", none, false},
      {"swapKernel", "swapAxes01", 256, "0", "0", none, false},
      {"sliceKernel", "sliceColumns", 256, "0", "0", none, false},
      {"concatKernel", "concatColumns", 256, "0", "0", none, false},
      {"sumLeadingKernel", "sumLeading", 256, "0", "0", none, false},
      {"gatherRowsKernel", "gatherRows", 256, "0", "0", none, true},
      // The long-context layers (docs/long-context-architectures.md).
      {"gatedDeltaNetKernel", "gatedDeltaNet", 128,
       "static_cast<size_t>(2 * a.keyDim + r * a.valueDim + a.valueDim) * "
       "sizeof(float)",
       "(2 * keyDim + 2 * valueDim) * 4 (r = 1)", gdnSmem, false},
      {"indexerPrepareKernel", "indexerPrepare", 128,
       "static_cast<size_t>(a.dim) * sizeof(float)", "keyDim * 4", indexKeySmem,
       false},
      {"indexScoresKernel", "indexerTopK", 256, "shared ? qBytes : 0",
       "(64 * keyDim + 64) * 4", indexQuerySmem, false},
      {"indexSelectKernel", "indexerTopK", 256, "0", "0", none, false},
      {"kvGatherKernel", "kvGather", 128, "0", "0", none, false},
  };
  return table;
}

const Launcher *findLauncher(const std::string &kernel) {
  for (const Launcher &l : launchers())
    if (kernel == l.kernel)
      return &l;
  return nullptr;
}

namespace {
std::string squeeze(const std::string &s) {
  std::string out;
  for (char c : s)
    if (!isspace(static_cast<unsigned char>(c)))
      out += c;
  return out;
}

std::vector<std::string> splitArgs(const std::string &s) {
  std::vector<std::string> out(1);
  int depth = 0;
  for (char c : s) {
    if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    if (c == ',' && depth == 0) {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  for (std::string &a : out)
    a = std::regex_replace(a, std::regex(R"(^\s+|\s+$)"), "");
  return out;
}

/// The last definition `type name = value;` before `pos`.
std::string definition(const std::string &text, size_t pos,
                       const std::string &name) {
  std::regex def("\\b(?:constexpr\\s+)?(?:int|unsigned|size_t|int64_t)\\s+" +
                 name + "\\s*=\\s*([^;]+);");
  std::string value;
  std::string before = text.substr(0, pos);
  for (auto it = std::sregex_iterator(before.begin(), before.end(), def);
       it != std::sregex_iterator(); ++it)
    value = (*it)[1];
  return value;
}
} // namespace

std::vector<std::string> checkLaunchers(const std::string &sourcePath) {
  std::vector<std::string> problems;
  std::ifstream f(sourcePath);
  if (!f)
    return {sourcePath + ": cannot open"};
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  std::regex launch(R"((\w+)\s*<<<([^>]*)>>>)");
  std::map<std::string, int> seen;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), launch);
       it != std::sregex_iterator(); ++it) {
    std::string kernel = (*it)[1];
    std::vector<std::string> args = splitArgs((*it)[2]);
    size_t pos = it->position();
    ++seen[kernel];
    const Launcher *l = findLauncher(kernel);
    if (!l) {
      problems.push_back(kernel + " is launched in " + sourcePath +
                         " but missing from the launcher table "
                         "(tools/helix-bench-kernels/Launchers.cpp)");
      continue;
    }
    if (args.size() < 2) {
      problems.push_back(kernel + ": cannot read the launch configuration");
      continue;
    }
    // A name: its definition, followed through names (threads =
    // kAttentionThreads = 128).
    std::string block = args[1];
    for (int depth = 0; depth < 4 && !block.empty() &&
                        !std::regex_match(block, std::regex(R"(\d+)"));
         ++depth)
      block = std::regex_match(block, std::regex(R"(\w+)"))
                  ? definition(text, pos, block)
                  : std::string();
    if (block != std::to_string(l->blockSize))
      problems.push_back(kernel + ": the launch uses " + args[1] + " = " +
                         (block.empty() ? "?" : block) +
                         " threads per block, the table " +
                         std::to_string(l->blockSize));
    std::string smem = args.size() > 2 ? args[2] : "0";
    if (!std::regex_match(smem, std::regex(R"(\d+)"))) {
      std::string d = definition(text, pos, smem);
      if (!d.empty())
        smem = d;
    }
    if (squeeze(smem) != squeeze(l->smemText))
      problems.push_back(kernel +
                         ": the launch requests dynamic shared memory " + smem +
                         ", the table " + l->smemText);
  }
  for (const Launcher &l : launchers())
    if (!seen.count(l.kernel))
      problems.push_back(std::string(l.kernel) +
                         " is in the launcher table but "
                         "not launched in " +
                         sourcePath);
  return problems;
}

} // namespace helix::benchkernels
