//===- Weights.cpp - Checkpoint tensors to f32, dequantized ---------------===//

#include "Weights.h"

#include "Formats.h"

#include "helix/Runtime/Error.h"

#include <cstring>

namespace helix {
namespace reference {

using nlohmann::json;
using rt::Error;

namespace {

std::string shapeText(const std::vector<int64_t> &s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i)
    t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

bool isFloat(const std::string &dtype) {
  return dtype == "BF16" || dtype == "F16" || dtype == "F32" || dtype == "F64";
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

float f32At(const rt::RawTensor &t, size_t i) {
  float f;
  std::memcpy(&f, t.bytes.data() + 4 * i, 4);
  return f;
}

/// A scalar F32 scale ([] or [1]).
bool isScalarShape(const std::vector<int64_t> &s) {
  return s.empty() || (s.size() == 1 && s[0] == 1);
}

} // namespace

WeightLoader::WeightLoader(const rt::SafetensorsCheckpoint &ckpt,
                           const json &config)
    : ckpt_(ckpt) {
  std::string where = "checkpoint " + ckpt.path() + ": config.json ";
  auto it = config.find("quantization_config");
  if (it == config.end() || it->is_null())
    return;
  const json &q = *it;
  if (!q.is_object())
    throw Error(where + "quantization_config is not an object");
  auto str = [&](const json &o, const char *key, std::string &out) {
    auto f = o.find(key);
    if (f == o.end())
      return false;
    if (!f->is_string())
      throw Error(where + "quantization_config." + key + " is not a string");
    out = f->get<std::string>();
    return true;
  };
  std::string method;
  if (!str(q, "quant_method", method))
    throw Error(where + "quantization_config has no quant_method (supported: "
                        "fp8, modelopt, mxfp4)");
  if (method == "fp8") {
    std::string fmt;
    if (str(q, "fmt", fmt) && fmt != "e4m3")
      throw Error(where + "quantization_config.fmt is \"" + fmt +
                  "\", only \"e4m3\" is supported for quant_method \"fp8\"");
    auto bs = q.find("weight_block_size");
    if (bs != q.end() && !bs->is_null()) {
      if (!bs->is_array() || bs->size() != 2 || !(*bs)[0].is_number_integer() ||
          !(*bs)[1].is_number_integer() || (*bs)[0].get<int64_t>() <= 0 ||
          (*bs)[1].get<int64_t>() <= 0)
        throw Error(where + "quantization_config.weight_block_size is " +
                    bs->dump() + ", expected two positive integers");
      blockN_ = (*bs)[0].get<int64_t>();
      blockK_ = (*bs)[1].get<int64_t>();
    }
    format_ = Format::Fp8Block;
    quantDesc_ = "quant_method \"fp8\" (fp8-block " + std::to_string(blockN_) +
                 "x" + std::to_string(blockK_) + ")";
  } else if (method == "modelopt") {
    // quant_algo (and group_size) at the top, or nested in "quantization"
    // as hf_quant_config.json writes them.
    const json *src = &q;
    std::string algo;
    if (!str(q, "quant_algo", algo)) {
      auto n = q.find("quantization");
      if (n != q.end() && n->is_object() && str(*n, "quant_algo", algo))
        src = &*n;
      else
        throw Error(where + "quantization_config (quant_method \"modelopt\") "
                            "has no quant_algo (supported: FP8, NVFP4)");
    }
    if (algo == "FP8") {
      format_ = Format::Fp8Tensor;
    } else if (algo == "NVFP4") {
      format_ = Format::Nvfp4;
      auto g = src->find("group_size");
      if (g != src->end() && !g->is_null()) {
        if (!g->is_number_integer() || g->get<int64_t>() <= 0 ||
            g->get<int64_t>() % 2 != 0)
          throw Error(where + "quantization_config.group_size is " + g->dump() +
                      ", expected a positive even integer (16)");
        nvfp4Group_ = g->get<int64_t>();
      }
    } else {
      throw Error(where +
                  "quantization_config has quant_method \"modelopt\" "
                  "with quant_algo \"" +
                  algo + "\"; supported: FP8, NVFP4");
    }
    quantDesc_ = "quant_method \"modelopt\", quant_algo \"" + algo + "\"";
  } else if (method == "mxfp4") {
    format_ = Format::Mxfp4;
    quantDesc_ = "quant_method \"mxfp4\"";
  } else {
    throw Error(where + "quantization_config has quant_method \"" + method +
                "\", which is not supported (supported: fp8 with "
                "weight_block_size, modelopt FP8 / NVFP4, mxfp4)");
  }
}

std::string WeightLoader::where(const std::string &name) const {
  return "checkpoint " + ckpt_.path() + ": tensor " + name;
}

Mat WeightLoader::plain(const std::string &name,
                        const std::vector<int64_t> &shape) const {
  const rt::TensorInfo &t = ckpt_.info(name); // throws when missing
  if (!isFloat(t.dtype))
    throw Error(where(name) + " is stored as " + t.dtype +
                ", expected BF16, F16 or F32 (only the decoder layers' linear "
                "weights are quantized)");
  rt::HostTensor h = ckpt_.load(name, shape);
  return Mat{h.shape, std::move(h.data)};
}

Mat WeightLoader::linear(const std::string &name,
                         const std::vector<int64_t> &shape) const {
  const rt::TensorInfo &t = ckpt_.info(name);
  if (isFloat(t.dtype)) {
    rt::HostTensor h = ckpt_.load(name, shape);
    return Mat{h.shape, std::move(h.data)};
  }
  int64_t N = shape.at(0), K = shape.at(1);
  if (format_ == Format::None)
    throw Error(where(name) + " is stored as " + t.dtype +
                " but config.json has no quantization_config (expected BF16, "
                "F16 or F32)");
  if (t.dtype == "F8_E4M3" && format_ == Format::Fp8Block)
    return fp8Block(name, N, K);
  if (t.dtype == "F8_E4M3" && format_ == Format::Fp8Tensor)
    return fp8Tensor(name, N, K);
  if (t.dtype == "U8" && format_ == Format::Nvfp4)
    return nvfp4(name, N, K);
  std::string expected;
  switch (format_) {
  case Format::Fp8Block:
  case Format::Fp8Tensor:
    expected = "F8_E4M3 or BF16, F16, F32";
    break;
  case Format::Nvfp4:
    expected = "U8 (packed E2M1) or BF16, F16, F32";
    break;
  default:
    expected = "BF16, F16 or F32 (mxfp4 quantizes only the gpt-oss experts' "
               "gate_up_proj / down_proj)";
  }
  throw Error(where(name) + " is stored as " + t.dtype +
              ", which contradicts config.json's quantization_config (" +
              quantDesc_ + "): expected " + expected);
}

Mat WeightLoader::fp8Block(const std::string &name, int64_t N,
                           int64_t K) const {
  const rt::TensorInfo &t = ckpt_.info(name);
  if (t.shape != std::vector<int64_t>{N, K})
    throw Error(where(name) + " (F8_E4M3) has shape " + shapeText(t.shape) +
                ", expected " + shapeText({N, K}));
  std::string sname = name + "_scale_inv";
  std::vector<int64_t> sshape = {ceilDiv(N, blockN_), ceilDiv(K, blockK_)};
  std::string want = "F32 " + shapeText(sshape) + " (fp8-block " +
                     std::to_string(blockN_) + "x" + std::to_string(blockK_) +
                     " scales of " + shapeText({N, K}) + ")";
  if (!ckpt_.has(sname))
    throw Error(where(name) + " is F8_E4M3 but its scale " + sname +
                " is missing, expected " + want +
                (ckpt_.has(name + "_scale") ? "; found " + name +
                                                  "_scale (a ModelOpt FP8 "
                                                  "checkpoint?)"
                                            : ""));
  const rt::TensorInfo &s = ckpt_.info(sname);
  if (s.dtype != "F32" || s.shape != sshape)
    throw Error(where(sname) + " is " + s.dtype + " " + shapeText(s.shape) +
                ", expected " + want);
  rt::RawTensor q = ckpt_.loadRaw(name, "F8_E4M3", {N, K});
  rt::RawTensor sc = ckpt_.loadRaw(sname, "F32", sshape);
  Mat m{{N, K}, std::vector<float>(static_cast<size_t>(N * K))};
  int64_t sK = sshape[1];
  for (int64_t r = 0; r < N; ++r)
    for (int64_t c = 0; c < K; ++c)
      m.v[r * K + c] =
          e4m3ToFloat(q.bytes[r * K + c]) *
          f32At(sc, static_cast<size_t>((r / blockN_) * sK + c / blockK_));
  return m;
}

Mat WeightLoader::fp8Tensor(const std::string &name, int64_t N,
                            int64_t K) const {
  const rt::TensorInfo &t = ckpt_.info(name);
  if (t.shape != std::vector<int64_t>{N, K})
    throw Error(where(name) + " (F8_E4M3) has shape " + shapeText(t.shape) +
                ", expected " + shapeText({N, K}));
  std::string sname = name + "_scale";
  if (!ckpt_.has(sname))
    throw Error(
        where(name) + " is F8_E4M3 but its scale " + sname +
        " is missing, expected F32 [] (fp8-tensor)" +
        (ckpt_.has(name + "_scale_inv")
             ? "; found " + name + "_scale_inv (an fp8-block checkpoint?)"
             : ""));
  const rt::TensorInfo &s = ckpt_.info(sname);
  if (s.dtype != "F32" || !isScalarShape(s.shape))
    throw Error(where(sname) + " is " + s.dtype + " " + shapeText(s.shape) +
                ", expected F32 [] or [1] (the fp8-tensor scale of " + name +
                ")");
  rt::RawTensor q = ckpt_.loadRaw(name, "F8_E4M3", {N, K});
  float scale = f32At(ckpt_.loadRaw(sname, "F32", s.shape), 0);
  Mat m{{N, K}, std::vector<float>(static_cast<size_t>(N * K))};
  for (size_t i = 0; i < m.v.size(); ++i)
    m.v[i] = e4m3ToFloat(q.bytes[i]) * scale;
  return m;
}

Mat WeightLoader::nvfp4(const std::string &name, int64_t N, int64_t K) const {
  const rt::TensorInfo &t = ckpt_.info(name);
  int64_t G = nvfp4Group_;
  if (K % G != 0)
    throw Error(where(name) + " is NVFP4 (U8), but its logical shape " +
                shapeText({N, K}) + " has " + std::to_string(K) +
                " columns, not a multiple of the group size " +
                std::to_string(G));
  if (t.shape != std::vector<int64_t>{N, K / 2})
    throw Error(where(name) + " is packed NVFP4 (U8) of shape " +
                shapeText(t.shape) + ", expected " + shapeText({N, K / 2}) +
                " (two E2M1 values per byte) for the logical shape " +
                shapeText({N, K}));
  std::string sname = name + "_scale", s2name = name + "_scale_2";
  std::vector<int64_t> sshape = {N, K / G};
  if (!ckpt_.has(sname))
    throw Error(where(name) + " is NVFP4 but its block scales " + sname +
                " are missing, expected F8_E4M3 " + shapeText(sshape));
  const rt::TensorInfo &s = ckpt_.info(sname);
  if (s.dtype != "F8_E4M3" || s.shape != sshape)
    throw Error(where(sname) + " is " + s.dtype + " " + shapeText(s.shape) +
                ", expected F8_E4M3 " + shapeText(sshape) +
                " (one NVFP4 block scale per " + std::to_string(G) +
                " values of " + shapeText({N, K}) + ")");
  if (!ckpt_.has(s2name))
    throw Error(where(name) + " is NVFP4 but its global scale " + s2name +
                " is missing, expected F32 []");
  const rt::TensorInfo &s2 = ckpt_.info(s2name);
  if (s2.dtype != "F32" || !isScalarShape(s2.shape))
    throw Error(where(s2name) + " is " + s2.dtype + " " + shapeText(s2.shape) +
                ", expected F32 [] or [1] (the NVFP4 global scale of " + name +
                ")");
  rt::RawTensor q = ckpt_.loadRaw(name, "U8", {N, K / 2});
  rt::RawTensor sc = ckpt_.loadRaw(sname, "F8_E4M3", sshape);
  float scale2 = f32At(ckpt_.loadRaw(s2name, "F32", s2.shape), 0);
  Mat m{{N, K}, std::vector<float>(static_cast<size_t>(N * K))};
  for (int64_t r = 0; r < N; ++r)
    for (int64_t c = 0; c < K; ++c) {
      uint8_t byte = q.bytes[r * (K / 2) + c / 2];
      uint8_t code = (c % 2 == 0) ? (byte & 0xF) : (byte >> 4);
      float block = e4m3ToFloat(sc.bytes[r * (K / G) + c / G]);
      m.v[r * K + c] = (e2m1ToFloat(code) * block) * scale2;
    }
  return m;
}

Mat WeightLoader::experts(const std::string &name, int64_t E, int64_t in,
                          int64_t out) const {
  std::string bname = name + "_blocks", sname = name + "_scales";
  bool packed = ckpt_.has(bname) || ckpt_.has(sname);
  if (!packed) {
    if (format_ == Format::Mxfp4 && !ckpt_.has(name))
      throw Error("checkpoint " + ckpt_.path() + ": missing tensor " + bname +
                  " (mxfp4 experts, expected U8 " +
                  shapeText({E, out, in / 32, 16}) + " with " + sname +
                  ", or " + name + " as BF16 " + shapeText({E, in, out}) + ")");
    const rt::TensorInfo &t = ckpt_.info(name);
    if (!isFloat(t.dtype))
      throw Error(where(name) + " is stored as " + t.dtype +
                  ", expected BF16, F16 or F32 " + shapeText({E, in, out}) +
                  " or mxfp4 " + bname + " / " + sname);
    rt::HostTensor h = ckpt_.load(name, {E, in, out});
    return Mat{h.shape, std::move(h.data)};
  }
  if (format_ != Format::Mxfp4)
    throw Error(where(ckpt_.has(bname) ? bname : sname) +
                " is an mxfp4 expert tensor, which contradicts config.json's "
                "quantization_config (" +
                (quantDesc_.empty() ? std::string("none") : quantDesc_) +
                "): expected " + name + " as BF16, F16 or F32 " +
                shapeText({E, in, out}) + ", or quant_method \"mxfp4\"");
  // Stored [E, N, K] = [E, out, in], 32 values per block.
  int64_t N = out, K = in;
  if (K % 32 != 0)
    throw Error(where(bname) + ": mxfp4 needs the input dimension " +
                std::to_string(K) + " of " + name + " to be a multiple of 32");
  std::vector<int64_t> bshape = {E, N, K / 32, 16}, sshape = {E, N, K / 32};
  for (const std::string &n : {bname, sname})
    if (!ckpt_.has(n))
      throw Error("checkpoint " + ckpt_.path() + ": missing tensor " + n +
                  " (mxfp4 experts: expected " + bname + " U8 " +
                  shapeText(bshape) + " and " + sname + " U8 " +
                  shapeText(sshape) + ")");
  const rt::TensorInfo &b = ckpt_.info(bname), &s = ckpt_.info(sname);
  if (b.dtype != "U8" || b.shape != bshape)
    throw Error(where(bname) + " is " + b.dtype + " " + shapeText(b.shape) +
                ", expected U8 " + shapeText(bshape) +
                " (packed E2M1 of the logical [E, out, in] = " +
                shapeText({E, N, K}) + ")");
  if (s.dtype != "U8" || s.shape != sshape)
    throw Error(where(sname) + " is " + s.dtype + " " + shapeText(s.shape) +
                ", expected U8 " + shapeText(sshape) + " (E8M0 scales of " +
                shapeText({E, N, K}) + ")");
  rt::RawTensor q = ckpt_.loadRaw(bname, "U8", bshape);
  rt::RawTensor sc = ckpt_.loadRaw(sname, "U8", sshape);
  // Dequantize [e, r, c] and write it transposed, [e, c, r] = [E, in, out].
  Mat m{{E, in, out}, std::vector<float>(static_cast<size_t>(E * N * K))};
  for (int64_t e = 0; e < E; ++e)
    for (int64_t r = 0; r < N; ++r) {
      const uint8_t *row = q.bytes.data() + (e * N + r) * (K / 2);
      const uint8_t *rs = sc.bytes.data() + (e * N + r) * (K / 32);
      float *dst = m.v.data() + e * K * N;
      for (int64_t c = 0; c < K; ++c) {
        uint8_t code = (c % 2 == 0) ? (row[c / 2] & 0xF) : (row[c / 2] >> 4);
        dst[c * N + r] = e2m1ToFloat(code) * e8m0ToFloat(rs[c / 32]);
      }
    }
  return m;
}

} // namespace reference
} // namespace helix
