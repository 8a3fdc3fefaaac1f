//===- QuantLoad.cpp - Slices of quantized checkpoint tensors -------------===//
//
// Reads a box of a quantized linear weight as stored (docs/quantization.md)
// with the scales of exactly the blocks it touches, as an ElementBox.
//
//===----------------------------------------------------------------------===//

#include "helix/Runtime/Error.h"
#include "helix/Runtime/Quant.h"

#include <algorithm>
#include <cstring>

namespace helix {
namespace rt {

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// "X.weight" -> "X." (the prefix of its scale tensors).
std::string scalePrefix(const std::string &name) {
  const std::string w = "weight";
  if (name.size() >= w.size() &&
      name.compare(name.size() - w.size(), w.size(), w) == 0)
    return name.substr(0, name.size() - w.size());
  return name + ".";
}

std::string where(const SafetensorsCheckpoint &ckpt, const std::string &t) {
  return "checkpoint " + ckpt.path() + ": tensor " + t;
}

/// A scalar f32 tensor ([] or [1]).
float scalar(const SafetensorsCheckpoint &ckpt, const std::string &name,
             const std::string &forTensor) {
  check(ckpt.has(name),
        where(ckpt, forTensor) + ": its scale tensor " + name + " is missing");
  const TensorInfo &i = ckpt.info(name);
  check(i.dtype == "F32" &&
            (i.shape.empty() || i.shape == std::vector<int64_t>{1}),
        where(ckpt, name) + " has dtype " + i.dtype + " and shape " +
            shapeText(i.shape) + ", expected an F32 scalar ([] or [1])");
  RawTensor r = ckpt.loadRaw(name, "F32", i.shape);
  float f;
  std::memcpy(&f, r.bytes.data(), 4);
  return f;
}

/// The box (begin/count per dim of `view`) with missing ranges filled.
/// Throws Error, as loadRaw would, when a range lies outside the view
/// (checked first: the arithmetic on the box below must not overflow).
void resolveBox(const std::string &w, const std::vector<Range> &box,
                const std::vector<int64_t> &view, std::vector<int64_t> &begin,
                std::vector<int64_t> &count) {
  check(box.size() <= view.size(),
        w + ": slice has more ranges than dimensions");
  begin.assign(view.size(), 0);
  count = view;
  for (size_t i = 0; i < view.size(); ++i) {
    check(view[i] >= 0,
          w + ": view " + shapeText(view) + " has a negative dimension");
    if (i >= box.size())
      continue;
    int64_t b = box[i].begin;
    bool inside = b >= 0 && b <= view[i];
    int64_t c = box[i].count < 0 ? (inside ? view[i] - b : 0) : box[i].count;
    check(inside && c <= view[i] - b,
          w + ": slice of " +
              (box[i].count < 0 ? std::string("the rest")
                                : std::to_string(c) + " elements") +
              " from " + std::to_string(b) + " of dimension " +
              std::to_string(i) + " is outside its size " +
              std::to_string(view[i]));
    begin[i] = b;
    count[i] = c;
  }
}

/// Unpacks FP4 codes: `bytes` rows of `rowBytes` bytes -> codes of columns
/// [skip, skip + n) of each row.
std::vector<uint8_t> unpackRows(const std::vector<uint8_t> &bytes,
                                int64_t rowBytes, int64_t skip, int64_t n) {
  int64_t rows = rowBytes ? static_cast<int64_t>(bytes.size()) / rowBytes : 0;
  std::vector<uint8_t> out(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) {
      int64_t e = skip + c;
      uint8_t b = bytes[r * rowBytes + e / 2];
      out[r * n + c] = (e & 1) ? (b >> 4) : (b & 0xf);
    }
  return out;
}

/// A 2-D [N, K] weight stored as codes (fp8: one per element; nvfp4: two
/// per byte) with a 2-D scale grid of blocks br x bc.
ElementBox loadMatrixBox(const SafetensorsCheckpoint &ckpt,
                         CheckpointFormat format, const std::string &name,
                         const std::vector<int64_t> &shape,
                         const std::vector<Range> &box,
                         std::vector<int64_t> view) {
  std::string w = where(ckpt, name);
  check(shape.size() == 2,
        w + ": a quantized weight must be 2-D, expected " + shapeText(shape));
  int64_t N = shape[0], K = shape[1];
  if (view.empty())
    view = shape;
  check(!view.empty() && view.back() == K,
        w + ": the view " + shapeText(view) +
            " splits the rows of a quantized weight; its last dimension "
            "must stay " +
            std::to_string(K));
  std::vector<int64_t> begin, count;
  resolveBox(w, box, view, begin, count);
  std::string prefix = scalePrefix(name);
  ElementBox out;
  out.shape = count;
  // Codes.
  if (format == CheckpointFormat::NVFP4) {
    check(K % 16 == 0, w + ": NVFP4 needs the input dimension (" +
                           std::to_string(K) + ") to be a multiple of 16");
    out.dtype = DType::F4E2M1;
    std::vector<int64_t> bview = view;
    bview.back() = K / 2;
    std::vector<Range> bbox;
    for (size_t i = 0; i + 1 < view.size(); ++i)
      bbox.push_back({begin[i], count[i]});
    int64_t c0 = begin.back(), c1 = begin.back() + count.back();
    int64_t b0 = c0 / 2, b1 = (c1 + 1) / 2;
    bbox.push_back({b0, b1 - b0});
    RawTensor raw = ckpt.loadRaw(name, "U8", {N, K / 2}, bbox, bview);
    out.codes = unpackRows(raw.bytes, b1 - b0, c0 - 2 * b0, count.back());
  } else {
    out.dtype = DType::F8E4M3;
    out.codes = ckpt.loadRaw(name, "F8_E4M3", shape, box, view).bytes;
  }
  // Scales: the grid blocks the box touches. The view's last dimension is
  // the stored row (checked above), so the box is runs of `cb` contiguous
  // columns, one stored row each: the scales are filled a run at a time
  // (a checkpoint of billions of elements is read at memory speed).
  int64_t n = out.numel();
  int64_t cb = count.back();
  int64_t runs = cb ? n / cb : 0;
  std::vector<int64_t> stride(view.size(), 1);
  for (int i = static_cast<int>(view.size()) - 2; i >= 0; --i)
    stride[i] = stride[i + 1] * view[i + 1];
  // The stored row of each run.
  std::vector<int64_t> rowOf(static_cast<size_t>(runs));
  std::vector<int64_t> idx(view.size(), 0);
  int64_t rmin = N, rmax = -1;
  for (int64_t o = 0; o < runs; ++o) {
    int64_t lin = 0;
    for (size_t d = 0; d + 1 < view.size(); ++d)
      lin += (begin[d] + idx[d]) * stride[d];
    rowOf[o] = lin / K;
    rmin = std::min(rmin, rowOf[o]);
    rmax = std::max(rmax, rowOf[o]);
    for (int d = static_cast<int>(view.size()) - 2; d >= 0; --d) {
      if (++idx[d] < count[d])
        break;
      idx[d] = 0;
    }
  }
  int64_t cmin = begin.back(), cmax = begin.back() + cb - 1;
  int64_t br, bc;
  std::string scaleName, scaleDType;
  switch (format) {
  case CheckpointFormat::FP8Block:
    br = bc = 128;
    scaleName = prefix + "weight_scale_inv";
    scaleDType = "F32";
    out.scaleType = ScaleType::F32;
    break;
  case CheckpointFormat::FP8Tensor:
    br = N;
    bc = K;
    out.scaleType = ScaleType::F32;
    break;
  default: // NVFP4
    br = 1;
    bc = 16;
    scaleName = prefix + "weight_scale";
    scaleDType = "F8_E4M3";
    out.scaleType = ScaleType::E4M3;
    break;
  }
  out.blockRows = std::max<int64_t>(1, br);
  out.blockCols = std::max<int64_t>(1, bc);
  out.colOrigin = cmin % out.blockCols;
  // Rows of the box are contiguous stored rows when the view keeps the
  // matrix shape; otherwise pack() finds the grid from the scales.
  out.rowOrigin = view.size() == 2 ? (begin[0] % out.blockRows) : 0;
  if (format == CheckpointFormat::FP8Tensor) {
    float s = scalar(ckpt, prefix + "weight_scale", name);
    check(ckpt.has(prefix + "input_scale"),
          w + ": its activation scale " + prefix + "input_scale is missing");
    out.scales.assign(static_cast<size_t>(n), fmt::floatToBits(s));
    return out;
  }
  out.scales.resize(static_cast<size_t>(n));
  if (n == 0)
    return out;
  int64_t gr = (N + br - 1) / br, gc = (K + bc - 1) / bc;
  check(ckpt.has(scaleName),
        w + ": its scale tensor " + scaleName + " is missing");
  const TensorInfo &si = ckpt.info(scaleName);
  check(si.dtype == scaleDType && si.shape == std::vector<int64_t>{gr, gc},
        where(ckpt, scaleName) + " has dtype " + si.dtype + " and shape " +
            shapeText(si.shape) + ", expected " + scaleDType + " " +
            shapeText({gr, gc}) + " (one scale per " + std::to_string(br) +
            "x" + std::to_string(bc) + " block of " + shapeText(shape) + ")");
  int64_t g0 = rmin / br, g1 = rmax / br, h0 = cmin / bc, h1 = cmax / bc;
  RawTensor sr = ckpt.loadRaw(scaleName, scaleDType, {gr, gc},
                              {{g0, g1 - g0 + 1}, {h0, h1 - h0 + 1}});
  size_t ss = scaleDType == "F32" ? 4 : 1;
  int64_t sw = h1 - h0 + 1;
  // The scale codes of the cells read, and the cell column of each column.
  std::vector<uint32_t> cells(static_cast<size_t>((g1 - g0 + 1) * sw), 0);
  for (size_t i = 0; i < cells.size(); ++i)
    std::memcpy(&cells[i], &sr.bytes[i * ss], ss);
  std::vector<int64_t> cellCol(static_cast<size_t>(cb));
  for (int64_t j = 0; j < cb; ++j)
    cellCol[j] = (cmin + j) / bc - h0;
  for (int64_t o = 0; o < runs; ++o) {
    const uint32_t *row =
        &cells[static_cast<size_t>((rowOf[o] / br - g0) * sw)];
    uint32_t *dst = &out.scales[static_cast<size_t>(o * cb)];
    for (int64_t j = 0; j < cb; ++j)
      dst[j] = row[cellCol[j]];
  }
  if (format == CheckpointFormat::NVFP4) {
    float g = scalar(ckpt, prefix + "weight_scale_2", name);
    check(ckpt.has(prefix + "input_scale"),
          w + ": its activation scale " + prefix + "input_scale is missing");
    out.globals.assign(n, g);
  }
  return out;
}

/// gpt-oss experts: P_blocks [E, N, K/32, 16], P_scales [E, N, K/32];
/// `shape` / `view` / `box` are in the bf16 layout [E, K, N] (in x out).
ElementBox loadMXFP4Box(const SafetensorsCheckpoint &ckpt,
                        const std::string &name,
                        const std::vector<int64_t> &shape,
                        const std::vector<Range> &box,
                        const std::vector<int64_t> &view) {
  std::string blocks = name + "_blocks", scales = name + "_scales";
  std::string w = where(ckpt, blocks);
  check(shape.size() == 3 && (view.empty() || view == shape),
        where(ckpt, name) +
            ": MXFP4 experts must be read as [E, in, out], "
            "got " +
            shapeText(shape));
  int64_t E = shape[0], K = shape[1], N = shape[2];
  check(K % 32 == 0, w + ": MXFP4 needs the input dimension (" +
                         std::to_string(K) + ") to be a multiple of 32");
  std::vector<int64_t> begin, count;
  resolveBox(where(ckpt, name), box, shape, begin, count);
  const TensorInfo &bi = ckpt.info(blocks);
  check(bi.dtype == "U8" && bi.shape == std::vector<int64_t>{E, N, K / 32, 16},
        w + " has dtype " + bi.dtype + " and shape " + shapeText(bi.shape) +
            ", expected U8 " + shapeText({E, N, K / 32, 16}) +
            " (two E2M1 values per byte of the [E, out, in] = " +
            shapeText({E, N, K}) + " experts)");
  check(ckpt.has(scales), w + ": its scale tensor " + scales + " is missing");
  const TensorInfo &si = ckpt.info(scales);
  check(si.dtype == "U8" && si.shape == std::vector<int64_t>{E, N, K / 32},
        where(ckpt, scales) + " has dtype " + si.dtype + " and shape " +
            shapeText(si.shape) + ", expected U8 (E8M0) " +
            shapeText({E, N, K / 32}));
  // Stored box [e, n, k] in bytes of the [E, N, K/2] view.
  int64_t k0 = begin[1], k1 = begin[1] + count[1];
  int64_t b0 = k0 / 2, b1 = (k1 + 1) / 2;
  RawTensor raw =
      ckpt.loadRaw(blocks, "U8", bi.shape,
                   {{begin[0], count[0]}, {begin[2], count[2]}, {b0, b1 - b0}},
                   {E, N, K / 2});
  std::vector<uint8_t> codes =
      unpackRows(raw.bytes, b1 - b0, k0 - 2 * b0, count[1]);
  int64_t s0 = k0 / 32, s1 = (k1 - 1) / 32;
  RawTensor sr = ckpt.loadRaw(
      scales, "U8", si.shape,
      {{begin[0], count[0]}, {begin[2], count[2]}, {s0, s1 - s0 + 1}});
  // Stored order [e, n, k] -> the bf16 layout [e, k, n].
  ElementBox out;
  out.dtype = DType::F4E2M1;
  out.scaleType = ScaleType::E8M0;
  out.shape = count;
  int64_t ce = count[0], ck = count[1], cn = count[2], sw = s1 - s0 + 1;
  out.codes.resize(static_cast<size_t>(ce * ck * cn));
  out.scales.resize(out.codes.size());
  for (int64_t e = 0; e < ce; ++e)
    for (int64_t n = 0; n < cn; ++n)
      for (int64_t k = 0; k < ck; ++k) {
        size_t o = static_cast<size_t>((e * ck + k) * cn + n);
        out.codes[o] = codes[(e * cn + n) * ck + k];
        out.scales[o] = sr.bytes[(e * cn + n) * sw + (k0 + k) / 32 - s0];
      }
  // Transposed: blocks of 32 run down the rows.
  out.blockRows = 32;
  out.blockCols = 1;
  out.rowOrigin = k0 % 32;
  return out;
}

} // namespace

CheckpointFormat storedFormatOf(const SafetensorsCheckpoint &ckpt,
                                const std::string &name) {
  if (!ckpt.has(name) && ckpt.has(name + "_blocks"))
    return CheckpointFormat::MXFP4;
  const TensorInfo &i = ckpt.info(name); // throws naming a missing tensor
  std::string prefix = scalePrefix(name);
  if (i.dtype == "F8_E4M3") {
    if (ckpt.has(prefix + "weight_scale_inv"))
      return CheckpointFormat::FP8Block;
    if (ckpt.has(prefix + "weight_scale"))
      return CheckpointFormat::FP8Tensor;
    throw Error(where(ckpt, name) +
                " is F8_E4M3 but has no scale tensor (expected " + prefix +
                "weight_scale_inv for 128x128 blocks or " + prefix +
                "weight_scale per tensor)");
  }
  if (i.dtype == "U8") {
    check(ckpt.has(prefix + "weight_scale"),
          where(ckpt, name) + " is U8 (packed FP4) but its NVFP4 scale " +
              prefix + "weight_scale is missing");
    return CheckpointFormat::NVFP4;
  }
  return CheckpointFormat::BF16;
}

ElementBox loadStoredBox(const SafetensorsCheckpoint &ckpt,
                         CheckpointFormat format, const std::string &name,
                         const std::vector<int64_t> &shape,
                         const std::vector<Range> &box,
                         const std::vector<int64_t> &view) {
  switch (format) {
  case CheckpointFormat::MXFP4:
    return loadMXFP4Box(ckpt, name, shape, box, view);
  case CheckpointFormat::FP8Block:
  case CheckpointFormat::FP8Tensor:
  case CheckpointFormat::NVFP4: {
    if (format == CheckpointFormat::NVFP4) {
      const TensorInfo &i = ckpt.info(name);
      check(shape.size() == 2 && i.dtype == "U8" &&
                i.shape == std::vector<int64_t>{shape[0], shape[1] / 2},
            where(ckpt, name) + " has dtype " + i.dtype + " and shape " +
                shapeText(i.shape) + ", expected U8 " +
                shapeText({shape.empty() ? 0 : shape[0],
                           shape.size() < 2 ? 0 : shape[1] / 2}) +
                " (two E2M1 values per byte of " + shapeText(shape) + ")");
    }
    return loadMatrixBox(ckpt, format, name, shape, box, view);
  }
  case CheckpointFormat::BF16:
    break;
  }
  throw Error(where(ckpt, name) + " is not quantized");
}

} // namespace rt
} // namespace helix
