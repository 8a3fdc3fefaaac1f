//===- Measurements.cpp - Byte accounting and checks of the records -------===//

#include "helix/Calibrate/Measurements.h"

#include <cmath>
#include <sstream>

namespace helix {
namespace calibrate {

const char *attentionKindName(AttentionKind kind) {
  return kind == AttentionKind::MLA ? "mla" : "gqa";
}

double bytesPerValue(DType format) {
  Precision p;
  p.nvfp4BlockScales = true;
  return p.bytesPerValue(format);
}

double gemmBytes(const GemmSample &s) {
  double n = double(s.n), k = double(s.k), m = double(s.m);
  return n * k * bytesPerValue(s.format) + m * (n + k) * 2.0;
}

double gemmFlops(const GemmSample &s) {
  return 2.0 * double(s.m) * double(s.n) * double(s.k);
}

int64_t attentionRows(const AttentionSample &s) {
  return s.kind == AttentionKind::MLA ? s.batch : s.batch * s.kvHeads;
}

double attentionKVBytes(const AttentionSample &s) {
  double b = bytesPerValue(s.kvFormat);
  double perToken = s.kind == AttentionKind::MLA
                        ? double(s.headDim)
                        : 2.0 * double(s.kvHeads) * double(s.headDim);
  return double(s.batch) * double(s.kvLength) * perToken * b;
}

const char *attentionCurveName(const AttentionSample &s) {
  if (s.kind == AttentionKind::GQA)
    return "gqa";
  return s.qHeads <= 32 ? "mla_few_heads" : "mla";
}

namespace {

std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

bool goodTime(double s) { return std::isfinite(s) && s > 0 && s < 1e6; }

std::string badTime(const std::string &what, double s) {
  return what + ": seconds must be a positive finite number (below 1e6), got " +
         number(s);
}

std::string badRuns(const std::string &what, int64_t runs) {
  return what + ": runs must be at least 1, got " + std::to_string(runs);
}

/// Dimensions up to 1e9 (the hardware file's limit on m and rows; far
/// beyond any GPU's memory for the others).
bool goodDim(int64_t d) { return d >= 1 && d <= 1000000000; }

} // namespace

std::string validate(const MeasurementSet &set) {
  for (size_t i = 0; i < set.gemm.size(); ++i) {
    const GemmSample &s = set.gemm[i];
    std::string what =
        "gemm[" + std::to_string(i) + "] (" + stringifyDType(s.format).str() +
        " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
        " k=" + std::to_string(s.k) + ")";
    if (!goodDim(s.m) || !goodDim(s.n) || !goodDim(s.k))
      return what + ": m, n and k must be integers from 1 to 1e9";
    if (!goodTime(s.seconds))
      return badTime(what, s.seconds);
    if (s.runs < 1)
      return badRuns(what, s.runs);
  }
  for (size_t i = 0; i < set.attention.size(); ++i) {
    const AttentionSample &s = set.attention[i];
    std::string what = "attention[" + std::to_string(i) + "] (" +
                       attentionKindName(s.kind) + " " +
                       stringifyDType(s.kvFormat).str() +
                       " batch=" + std::to_string(s.batch) +
                       " kv_heads=" + std::to_string(s.kvHeads) +
                       " q_heads=" + std::to_string(s.qHeads) +
                       " head_dim=" + std::to_string(s.headDim) +
                       " kv_length=" + std::to_string(s.kvLength) + ")";
    if (!goodDim(s.batch) || !goodDim(s.kvHeads) || !goodDim(s.qHeads) ||
        !goodDim(s.headDim) || !goodDim(s.kvLength))
      return what + ": batch, heads, head_dim and kv_length must be integers "
                    "from 1 to 1e9";
    if (!goodDim(attentionRows(s)))
      return what + ": batch x kv_heads must be at most 1e9";
    if (s.qHeads % s.kvHeads != 0)
      return what + ": q_heads must be a multiple of kv_heads";
    if (s.kind == AttentionKind::MLA && s.kvHeads != 1)
      return what + ": MLA has one latent KV head (kv_heads 1)";
    if (!goodTime(s.seconds))
      return badTime(what, s.seconds);
    if (s.runs < 1)
      return badRuns(what, s.runs);
  }
  for (size_t i = 0; i < set.elementwise.size(); ++i) {
    const ElementwiseSample &s = set.elementwise[i];
    std::string what = "elementwise[" + std::to_string(i) + "] (" +
                       (s.kernel.empty() ? "unnamed" : s.kernel) + ")";
    if (s.kernel.empty())
      return what + ": the kernel must be named";
    if (!goodTime(s.seconds))
      return badTime(what, s.seconds);
    if (s.runs < 1)
      return badRuns(what, s.runs);
  }
  for (size_t i = 0; i < set.collectives.size(); ++i) {
    const CollectiveSample &s = set.collectives[i];
    std::string what = "collectives[" + std::to_string(i) + "] (" +
                       stringifyCollectiveKind(s.op) +
                       " gpus=" + std::to_string(s.gpus) +
                       " bytes=" + number(s.bytes) + ")";
    if (s.gpus < 2 || s.gpus > 4096)
      return what + ": gpus must be an integer from 2 to 4096";
    if (!std::isfinite(s.bytes) || s.bytes < 1 || s.bytes > 1e15)
      return what + ": bytes must be a number from 1 to 1e15";
    if (!goodTime(s.seconds))
      return badTime(what, s.seconds);
    if (s.runs < 1)
      return badRuns(what, s.runs);
  }
  return "";
}

} // namespace calibrate
} // namespace helix
