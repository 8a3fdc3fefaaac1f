//===- Quant.cpp - Resident formats in host memory and conversions --------===//

#include "helix/Runtime/Quant.h"
#include "helix/Runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace helix {
namespace rt {

//===----------------------------------------------------------------------===//
// QuantHost
//===----------------------------------------------------------------------===//

static int64_t numelOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Rows and columns of each matrix (the last two dimensions).
static void matrixOf(const std::vector<int64_t> &shape, int64_t &rows,
                     int64_t &cols) {
  cols = shape.empty() ? 1 : shape.back();
  rows = shape.size() < 2 ? 1 : shape[shape.size() - 2];
}

int64_t QuantHost::numel() const { return numelOf(shape); }

int64_t QuantHost::matrices() const {
  int64_t r, c;
  matrixOf(shape, r, c);
  return r * c != 0 ? numel() / (r * c) : 0;
}

float QuantHost::value(int64_t i) const {
  float v = fmt::decodeElement(dtype, data.data(), i);
  if (!scaled)
    return v;
  BlockScaleDesc d = desc;
  d.scales = scales.data();
  d.globals = globals.empty() ? nullptr : globals.data();
  return d.apply(v, i);
}

std::string QuantHost::describe() const {
  std::string s = dtypeName(dtype);
  if (!scaled)
    return s;
  const char *st = desc.type == ScaleType::F32    ? "f32"
                   : desc.type == ScaleType::E4M3 ? "e4m3"
                                                  : "e8m0";
  s += ", " + std::to_string(desc.blockRows) + "x" +
       std::to_string(desc.blockCols) + " " + st + " block scales";
  if (!globals.empty())
    s += " and an f32 scale per matrix";
  return s;
}

HostTensor dequantize(const QuantHost &q) {
  HostTensor t;
  t.shape = q.shape;
  t.data.resize(static_cast<size_t>(q.numel()));
  for (int64_t i = 0; i < q.numel(); ++i)
    t.data[i] = q.value(i);
  return t;
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

static void needFinite(const HostTensor &t, const std::string &what) {
  for (size_t i = 0; i < t.data.size(); ++i)
    check(std::isfinite(t.data[i]),
          what + ": element " + std::to_string(i) +
              " is not finite; it cannot be quantized");
}

QuantHost toF32(const HostTensor &t) {
  QuantHost q;
  q.dtype = DType::F32;
  q.shape = t.shape;
  q.data.resize(t.data.size() * 4);
  std::memcpy(q.data.data(), t.data.data(), q.data.size());
  return q;
}

QuantHost toBF16(const HostTensor &t) {
  QuantHost q;
  q.dtype = DType::BF16;
  q.shape = t.shape;
  q.data.resize(t.data.size() * 2);
  for (size_t i = 0; i < t.data.size(); ++i) {
    uint16_t h = fmt::floatToBf16(t.data[i]);
    q.data[2 * i] = static_cast<uint8_t>(h & 0xff);
    q.data[2 * i + 1] = static_cast<uint8_t>(h >> 8);
  }
  return q;
}

namespace {

/// Shared skeleton of the block quantizers: blocks of br x bc over each
/// matrix, `scaleOf(amax)` -> (scale code bytes, the scale's value), then
/// each value encoded as `encode(x / value)`.
struct BlockQuantizer {
  DType dtype;
  ScaleType scaleType;
  int64_t br, bc;
};

QuantHost quantizeBlocks(const HostTensor &t, const BlockQuantizer &bq,
                         const std::vector<float> &globals,
                         float (*scaleCode)(float amax, float global,
                                            uint8_t *code)) {
  QuantHost q;
  q.dtype = bq.dtype;
  q.shape = t.shape;
  q.scaled = true;
  int64_t rows, cols;
  matrixOf(t.shape, rows, cols);
  int64_t n = numelOf(t.shape);
  int64_t mats = rows * cols != 0 ? n / (rows * cols) : 0;
  BlockScaleDesc &d = q.desc;
  d.type = bq.scaleType;
  d.rows = rows;
  d.cols = cols;
  d.blockRows = std::min(bq.br, std::max<int64_t>(rows, 1));
  d.blockCols = std::min(bq.bc, std::max<int64_t>(cols, 1));
  d.gridRows = (rows + d.blockRows - 1) / d.blockRows;
  d.gridCols = (cols + d.blockCols - 1) / d.blockCols;
  size_t scaleSize = bq.scaleType == ScaleType::F32 ? 4 : 1;
  q.scales.assign(
      static_cast<size_t>(mats * d.gridRows * d.gridCols) * scaleSize, 0);
  q.globals = globals;
  q.data.assign(dtypeBytes(bq.dtype, n), 0);
  for (int64_t m = 0; m < mats; ++m) {
    float global = globals.empty() ? 1.0f : globals[m];
    const float *x = t.data.data() + m * rows * cols;
    for (int64_t gr = 0; gr < d.gridRows; ++gr)
      for (int64_t gc = 0; gc < d.gridCols; ++gc) {
        int64_t r0 = gr * d.blockRows, r1 = std::min(rows, r0 + d.blockRows);
        int64_t c0 = gc * d.blockCols, c1 = std::min(cols, c0 + d.blockCols);
        float amax = 0;
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c)
            amax = std::max(amax, std::fabs(x[r * cols + c]));
        int64_t g = (m * d.gridRows + gr) * d.gridCols + gc;
        uint8_t code[4];
        float s = scaleCode(amax, global, code);
        std::memcpy(&q.scales[g * scaleSize], code, scaleSize);
        float denom = s * global;
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c) {
            int64_t i = m * rows * cols + r * cols + c;
            float v = denom != 0 ? x[r * cols + c] / denom : 0.0f;
            if (bq.dtype == DType::F8E4M3) {
              q.data[i] = fmt::floatToE4m3(v);
            } else {
              uint8_t c4 = fmt::floatToE2m1(v);
              q.data[i >> 1] |= (i & 1) ? static_cast<uint8_t>(c4 << 4) : c4;
            }
          }
      }
  }
  return q;
}

float fp8Scale(float amax, float, uint8_t *code) {
  float s = amax > 0 ? amax / 448.0f : 1.0f;
  std::memcpy(code, &s, 4);
  return s;
}

float nvfp4Scale(float amax, float global, uint8_t *code) {
  code[0] = global > 0 ? fmt::floatToE4m3(amax / (6.0f * global)) : 0;
  return fmt::e4m3ToFloat(code[0]);
}

float mxfp4Scale(float amax, float, uint8_t *code) {
  int e = -127;
  if (amax > 0) {
    int exp;
    std::frexp(amax, &exp); // amax = f * 2^exp, f in [0.5, 1)
    e = std::max(-127, std::min(127, exp - 1 - 2));
  }
  code[0] = static_cast<uint8_t>(e + 127);
  return fmt::e8m0ToFloat(code[0]);
}

std::vector<float> perMatrixAmax(const HostTensor &t) {
  int64_t rows, cols;
  matrixOf(t.shape, rows, cols);
  int64_t per = rows * cols;
  int64_t mats = per ? static_cast<int64_t>(t.data.size()) / per : 0;
  std::vector<float> amax(mats, 0.0f);
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < per; ++i)
      amax[m] = std::max(amax[m], std::fabs(t.data[m * per + i]));
  return amax;
}

} // namespace

QuantHost quantizeFP8Block(const HostTensor &t, const std::string &what,
                           int64_t block) {
  needFinite(t, what);
  return quantizeBlocks(t, {DType::F8E4M3, ScaleType::F32, block, block}, {},
                        fp8Scale);
}

QuantHost quantizeFP8Tensor(const HostTensor &t, const std::string &what) {
  needFinite(t, what);
  int64_t rows, cols;
  matrixOf(t.shape, rows, cols);
  return quantizeBlocks(t, {DType::F8E4M3, ScaleType::F32, rows, cols}, {},
                        fp8Scale);
}

QuantHost quantizeNVFP4(const HostTensor &t, const std::string &what) {
  needFinite(t, what);
  std::vector<float> globals = perMatrixAmax(t);
  for (float &g : globals)
    g = g > 0 ? g / (6.0f * 448.0f) : 1.0f;
  return quantizeBlocks(t, {DType::F4E2M1, ScaleType::E4M3, 1, 16}, globals,
                        nvfp4Scale);
}

QuantHost quantizeMXFP4(const HostTensor &t, const std::string &what) {
  needFinite(t, what);
  return quantizeBlocks(t, {DType::F4E2M1, ScaleType::E8M0, 1, 32}, {},
                        mxfp4Scale);
}

//===----------------------------------------------------------------------===//
// Element boxes
//===----------------------------------------------------------------------===//

static float scaleValue(ScaleType t, uint32_t code) {
  if (t == ScaleType::F32)
    return fmt::bitsToFloat(code);
  uint8_t b = static_cast<uint8_t>(code);
  return t == ScaleType::E4M3 ? fmt::e4m3ToFloat(b) : fmt::e8m0ToFloat(b);
}

float ElementBox::value(int64_t i) const {
  float v = dtype == DType::F8E4M3 ? fmt::e4m3ToFloat(codes[i])
                                   : fmt::e2m1ToFloat(codes[i]);
  v *= scaleValue(scaleType, scales[i]);
  return globals.empty() ? v : v * globals[i];
}

HostTensor dequantize(const ElementBox &b) {
  HostTensor t;
  t.shape = b.shape;
  t.data.resize(b.codes.size());
  for (int64_t i = 0; i < b.numel(); ++i)
    t.data[i] = b.value(i);
  return t;
}

std::vector<int64_t> transposeLast2Perm(std::vector<int64_t> &shape) {
  size_t r = shape.size();
  check(r >= 2, "transposeLast2: rank " + std::to_string(r));
  int64_t a = shape[r - 2], b = shape[r - 1];
  int64_t outer = a != 0 && b != 0 ? numelOf(shape) / (a * b) : 0;
  std::swap(shape[r - 2], shape[r - 1]);
  std::vector<int64_t> perm(static_cast<size_t>(outer * a * b));
  for (int64_t n = 0; n < outer; ++n)
    for (int64_t i = 0; i < a; ++i)
      for (int64_t j = 0; j < b; ++j)
        perm[(n * b + j) * a + i] = (n * a + i) * b + j;
  return perm;
}

HostTensor transposeLast2(const HostTensor &t) {
  HostTensor o;
  o.shape = t.shape;
  std::vector<int64_t> perm = transposeLast2Perm(o.shape);
  o.data.resize(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    o.data[i] = t.data[perm[i]];
  return o;
}

ElementBox stack(const std::vector<ElementBox> &parts) {
  check(!parts.empty(), "stack: no parts");
  ElementBox out = parts.front();
  out.shape.insert(out.shape.begin(), static_cast<int64_t>(parts.size()));
  for (size_t p = 1; p < parts.size(); ++p) {
    const ElementBox &b = parts[p];
    check(b.shape == parts.front().shape && b.dtype == out.dtype &&
              b.scaleType == out.scaleType &&
              b.globals.empty() == out.globals.empty(),
          "stack: experts stored in different formats or shapes");
    out.codes.insert(out.codes.end(), b.codes.begin(), b.codes.end());
    out.scales.insert(out.scales.end(), b.scales.begin(), b.scales.end());
    out.globals.insert(out.globals.end(), b.globals.begin(), b.globals.end());
  }
  return out;
}

ElementBox permute(const ElementBox &b, const std::vector<int64_t> &perm,
                   const std::vector<int64_t> &shape) {
  check(static_cast<int64_t>(perm.size()) == b.numel() &&
            numelOf(shape) == b.numel(),
        "permute: size mismatch");
  ElementBox o;
  o.dtype = b.dtype;
  o.scaleType = b.scaleType;
  o.shape = shape;
  o.codes.resize(perm.size());
  o.scales.resize(perm.size());
  if (!b.globals.empty())
    o.globals.resize(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    o.codes[i] = b.codes[perm[i]];
    o.scales[i] = b.scales[perm[i]];
    if (!b.globals.empty())
      o.globals[i] = b.globals[perm[i]];
  }
  o.blockRows = b.blockRows;
  o.blockCols = b.blockCols;
  o.rowOrigin = b.rowOrigin;
  o.colOrigin = b.colOrigin;
  return o;
}

namespace {

/// Whether every element's scale (and global) is that of its block under
/// geometry (br, bc, r0, c0), filling the grid.
bool tiles(const ElementBox &b, int64_t br, int64_t bc, int64_t r0, int64_t c0,
           QuantHost &q) {
  int64_t rows, cols;
  matrixOf(b.shape, rows, cols);
  int64_t per = rows * cols, mats = per ? b.numel() / per : 0;
  BlockScaleDesc &d = q.desc;
  d.type = b.scaleType;
  d.rows = rows;
  d.cols = cols;
  d.blockRows = br;
  d.blockCols = bc;
  d.rowOrigin = r0;
  d.colOrigin = c0;
  d.gridRows = rows ? (rows + r0 + br - 1) / br : 0;
  d.gridCols = cols ? (cols + c0 + bc - 1) / bc : 0;
  size_t ss = b.scaleType == ScaleType::F32 ? 4 : 1;
  size_t cells = static_cast<size_t>(mats * d.gridRows * d.gridCols);
  std::vector<uint8_t> seen(cells, 0);
  q.scales.assign(cells * ss, 0);
  q.globals.assign(b.globals.empty() ? 0 : mats, 1.0f);
  // A matrix and row at a time, a run of columns in one cell at a time:
  // each run must hold one code (a loop that vectorizes), then the cell is
  // set or compared once. A checkpoint of billions of elements is packed at
  // memory speed.
  const bool withGlobals = !b.globals.empty();
  for (int64_t m = 0, i = 0; m < mats; ++m) {
    if (withGlobals && per)
      q.globals[m] = b.globals[static_cast<size_t>(m * per)];
    for (int64_t r = 0; r < rows; ++r, i += cols) {
      size_t rowCell =
          static_cast<size_t>((m * d.gridRows + (r + r0) / br) * d.gridCols);
      const uint32_t *sc = &b.scales[static_cast<size_t>(i)];
      if (withGlobals) {
        const float *gl = &b.globals[static_cast<size_t>(i)];
        float want = q.globals[m];
        if (!std::all_of(gl, gl + cols, [&](float v) { return v == want; }))
          return false;
      }
      // Columns [c, next) lie in cell column (c + c0) / bc.
      for (int64_t c = 0; c < cols;) {
        int64_t cell = (c + c0) / bc;
        int64_t next = std::min(cols, (cell + 1) * bc - c0);
        uint32_t code = sc[c];
        if (!std::all_of(sc + c + 1, sc + next,
                         [&](uint32_t v) { return v == code; }))
          return false;
        size_t g = rowCell + static_cast<size_t>(cell);
        if (!seen[g]) {
          seen[g] = 1;
          std::memcpy(&q.scales[g * ss], &code, ss);
        } else {
          uint32_t have = 0;
          std::memcpy(&have, &q.scales[g * ss], ss);
          if (have != (ss == 4 ? code : (code & 0xff)))
            return false;
        }
        c = next;
      }
    }
  }
  return true;
}

} // namespace

QuantHost pack(const ElementBox &b) {
  QuantHost q;
  q.dtype = b.dtype;
  q.shape = b.shape;
  q.scaled = true;
  int64_t n = b.numel();
  q.data.assign(dtypeBytes(b.dtype, n), 0);
  if (b.dtype == DType::F8E4M3)
    std::copy(b.codes.begin(), b.codes.end(), q.data.begin());
  else
    for (int64_t i = 0; i < n; ++i)
      q.data[i >> 1] |= (i & 1) ? static_cast<uint8_t>(b.codes[i] << 4)
                                : static_cast<uint8_t>(b.codes[i] & 0xf);
  int64_t rows, cols;
  matrixOf(b.shape, rows, cols);
  // The stored block grid, then one scale per row and column block.
  if (tiles(b, std::max<int64_t>(1, b.blockRows),
            std::max<int64_t>(1, b.blockCols), b.rowOrigin, b.colOrigin, q))
    return q;
  // Transposed since it was read: the block runs the other way.
  if (tiles(b, std::max<int64_t>(1, b.blockCols),
            std::max<int64_t>(1, b.blockRows), b.colOrigin, b.rowOrigin, q))
    return q;
  // Rows rearranged (split, gathered): blocks along the columns remain.
  if (tiles(b, 1, std::max<int64_t>(1, b.blockCols), 0, b.colOrigin, q))
    return q;
  if (tiles(b, 1, std::max<int64_t>(1, b.blockRows), 0, b.rowOrigin, q))
    return q;
  check(tiles(b, 1, 1, 0, 0, q), "pack: inconsistent per-matrix scales");
  return q;
}

} // namespace rt
} // namespace helix
