//===- Safetensors.cpp - Memory-mapped safetensors reader and writer
//-------===//
//
// Format: 8 bytes little-endian header length N, N bytes of JSON mapping
// tensor names to {dtype, shape, data_offsets: [begin, end)} (offsets into
// the data that follows the header), an optional "__metadata__" object, then
// the data.
//
//===----------------------------------------------------------------------===//

#include "helix/Runtime/Safetensors.h"
#include "helix/Runtime/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <limits>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace helix {
namespace rt {

using nlohmann::json;

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

float bf16ToFloat(uint16_t v) {
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if (std::isnan(f))
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

float fp16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else {
    bits = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToFp16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  if (std::isnan(f))
    return sign | 0x7e00;
  float a = std::fabs(f);
  if (a >= 65520.0f) // rounds to infinity
    return sign | 0x7c00;
  if (a < 6.103515625e-05f) { // subnormal half: multiples of 2^-24
    int q = static_cast<int>(std::nearbyint(a * 16777216.0f));
    return sign | static_cast<uint16_t>(q);
  }
  uint32_t exp = ((bits >> 23) & 0xff) - 127 + 15;
  uint32_t mant = bits & 0x7fffff;
  uint32_t half = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return sign | static_cast<uint16_t>(half);
}

//===----------------------------------------------------------------------===//
// Memory-mapped files
//===----------------------------------------------------------------------===//

class MappedFile {
public:
  explicit MappedFile(const std::string &path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY);
    if (fd_ < 0)
      throw Error(path + ": cannot open: " + std::strerror(errno));
    struct stat st;
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd_);
      throw Error(path + ": not a regular file");
    }
    size_ = static_cast<uint64_t>(st.st_size);
    if (size_ > 0) {
      void *p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
      if (p == MAP_FAILED) {
        ::close(fd_);
        throw Error(path + ": cannot memory-map: " + std::strerror(errno));
      }
      data_ = static_cast<const uint8_t *>(p);
    }
  }
  ~MappedFile() {
    if (data_)
      ::munmap(const_cast<uint8_t *>(data_), size_);
    if (fd_ >= 0)
      ::close(fd_);
  }
  const uint8_t *data() const { return data_; }
  uint64_t size() const { return size_; }
  const std::string &path() const { return path_; }
  uint64_t dataStart = 0; // first byte after the header

private:
  std::string path_;
  int fd_ = -1;
  const uint8_t *data_ = nullptr;
  uint64_t size_ = 0;
};

static bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

static bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

static std::string dirName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

static std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

static size_t elementSize(const std::string &dtype) {
  if (dtype == "F32" || dtype == "I32" || dtype == "U32")
    return 4;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16")
    return 2;
  if (dtype == "F64" || dtype == "I64" || dtype == "U64")
    return 8;
  if (dtype == "BOOL" || dtype == "U8" || dtype == "I8" ||
      dtype.rfind("F8_", 0) == 0 || dtype.rfind("F4", 0) == 0 ||
      dtype.rfind("F6", 0) == 0 || dtype == "E8M0")
    return 1;
  return 0;
}

/// Checks that a shape can be walked: no negative dimension, and the
/// product of its dimensions (zeros counted as one, so that every stride
/// fits too) within int64. Returns the element count.
static int64_t checkedNumel(const std::vector<int64_t> &shape,
                            const std::string &where) {
  int64_t numel = 1, bound = 1;
  for (int64_t d : shape) {
    check(d >= 0,
          where + ": shape " + shapeText(shape) + " has a negative dimension");
    check(!__builtin_mul_overflow(bound, std::max<int64_t>(d, 1), &bound),
          where + ": shape " + shapeText(shape) + " has too many elements");
    numel *= d; // at most bound
  }
  return numel;
}

/// Parses the header of one file and adds its tensors to `out`.
static void readHeader(const std::shared_ptr<MappedFile> &file,
                       std::map<std::string, TensorInfo> &out,
                       const std::map<std::string, std::string> *onlyThese) {
  const std::string &p = file->path();
  if (file->size() < 8)
    throw Error(p + ": not a safetensors file (shorter than its 8-byte "
                    "header length)");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | file->data()[i];
  if (n < 2 || n > (100ull << 20) || 8 + n > file->size())
    throw Error(p + ": not a safetensors file (header length " +
                std::to_string(n) + " does not fit the file of " +
                std::to_string(file->size()) + " bytes)");
  file->dataStart = 8 + n;
  json header;
  try {
    header = json::parse(file->data() + 8, file->data() + 8 + n);
  } catch (const json::exception &e) {
    throw Error(p + ": malformed safetensors header: " + e.what());
  }
  if (!header.is_object())
    throw Error(p + ": malformed safetensors header: not a JSON object");
  uint64_t dataSize = file->size() - file->dataStart;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__")
      continue;
    const json &t = it.value();
    std::string where = p + ": tensor " + it.key();
    if (!t.is_object() || !t.contains("dtype") || !t["dtype"].is_string() ||
        !t.contains("shape") || !t["shape"].is_array() ||
        !t.contains("data_offsets") || !t["data_offsets"].is_array() ||
        t["data_offsets"].size() != 2)
      throw Error(where + ": malformed entry (expected dtype, shape and "
                          "data_offsets)");
    TensorInfo info;
    info.name = it.key();
    info.dtype = t["dtype"].get<std::string>();
    info.file = p;
    for (const json &d : t["shape"]) {
      if (!d.is_number_unsigned() ||
          d.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        throw Error(where + ": malformed shape");
      info.shape.push_back(d.get<int64_t>());
    }
    uint64_t numel = uint64_t(checkedNumel(info.shape, where));
    const json &off = t["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      throw Error(where + ": malformed data_offsets");
    info.begin = off[0].get<uint64_t>();
    info.end = off[1].get<uint64_t>();
    size_t es = elementSize(info.dtype);
    if (info.begin > info.end || info.end > dataSize)
      throw Error(where + ": data_offsets [" + std::to_string(info.begin) +
                  ", " + std::to_string(info.end) +
                  ") lie outside the file's " + std::to_string(dataSize) +
                  " data bytes (truncated file?)");
    uint64_t bytes = 0;
    if (es != 0 && info.dtype.rfind("F4", 0) != 0 &&
        (__builtin_mul_overflow(uint64_t(es), numel, &bytes) ||
         bytes != info.end - info.begin))
      throw Error(where + ": " + std::to_string(info.end - info.begin) +
                  " data bytes, expected " + std::to_string(es * numel) +
                  " for shape " + shapeText(info.shape) + " " + info.dtype);
    if (onlyThese) {
      auto w = onlyThese->find(info.name);
      if (w == onlyThese->end() || w->second != p)
        continue; // listed under another shard (or not at all)
    }
    out[info.name] = info;
  }
}

SafetensorsCheckpoint::SafetensorsCheckpoint()
    : bytesRead_(std::make_unique<uint64_t>(0)) {}
SafetensorsCheckpoint::~SafetensorsCheckpoint() = default;
SafetensorsCheckpoint::SafetensorsCheckpoint(
    SafetensorsCheckpoint &&) noexcept = default;
SafetensorsCheckpoint &
SafetensorsCheckpoint::operator=(SafetensorsCheckpoint &&) noexcept = default;

SafetensorsCheckpoint SafetensorsCheckpoint::open(const std::string &path) {
  SafetensorsCheckpoint ckpt;
  ckpt.path_ = path;
  std::string indexPath, single;
  if (isDirectory(path)) {
    if (exists(path + "/model.safetensors.index.json"))
      indexPath = path + "/model.safetensors.index.json";
    else if (exists(path + "/model.safetensors"))
      single = path + "/model.safetensors";
    else
      throw Error(path + ": no model.safetensors.index.json or "
                         "model.safetensors in this directory");
  } else if (!exists(path)) {
    throw Error(path + ": no such file or directory");
  } else if (path.size() >= 5 && path.substr(path.size() - 5) == ".json") {
    indexPath = path;
  } else {
    single = path;
  }

  if (!single.empty()) {
    auto file = std::make_shared<MappedFile>(single);
    readHeader(file, ckpt.tensors_, nullptr);
    ckpt.files_[single] = file;
    return ckpt;
  }

  std::ifstream in(indexPath);
  if (!in)
    throw Error(indexPath + ": cannot read");
  json index;
  try {
    index = json::parse(in);
  } catch (const json::exception &e) {
    throw Error(indexPath + ": malformed index: " + e.what());
  }
  if (!index.is_object() || !index.contains("weight_map") ||
      !index["weight_map"].is_object())
    throw Error(indexPath + ": malformed index: no \"weight_map\" object");
  std::string dir = dirName(indexPath);
  std::map<std::string, std::string> where; // tensor -> file path
  for (auto it = index["weight_map"].begin(); it != index["weight_map"].end();
       ++it) {
    if (!it.value().is_string())
      throw Error(indexPath + ": weight_map." + it.key() +
                  ": expected a file name");
    std::string shard = it.value().get<std::string>();
    if (shard.find('/') != std::string::npos || shard == "..")
      throw Error(indexPath + ": weight_map." + it.key() + ": \"" + shard +
                  "\" is not a file name in the checkpoint directory");
    where[it.key()] = dir + "/" + shard;
  }
  for (const auto &kv : where) {
    if (ckpt.files_.count(kv.second))
      continue;
    if (!exists(kv.second))
      throw Error(indexPath + ": shard " + kv.second + " (holding " + kv.first +
                  ") does not exist");
    auto file = std::make_shared<MappedFile>(kv.second);
    readHeader(file, ckpt.tensors_, &where);
    ckpt.files_[kv.second] = file;
  }
  for (const auto &kv : where)
    if (!ckpt.tensors_.count(kv.first))
      throw Error(indexPath + ": " + kv.first + " is listed in shard " +
                  kv.second + " but that file does not hold it");
  return ckpt;
}

bool SafetensorsCheckpoint::has(const std::string &name) const {
  return tensors_.count(name) != 0;
}

const TensorInfo &SafetensorsCheckpoint::info(const std::string &name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    throw Error("checkpoint " + path_ + ": missing tensor " + name);
  return it->second;
}

std::vector<std::string> SafetensorsCheckpoint::names() const {
  std::vector<std::string> out;
  for (const auto &kv : tensors_)
    out.push_back(kv.first);
  return out;
}

HostTensor
SafetensorsCheckpoint::load(const std::string &name,
                            const std::vector<int64_t> &expectedShape) const {
  return loadSlice(name, expectedShape, {});
}

HostTensor
SafetensorsCheckpoint::loadRows(const std::string &name,
                                const std::vector<int64_t> &expectedShape,
                                int64_t begin, int64_t count) const {
  return loadSlice(name, expectedShape, {Range{begin, count}});
}

HostTensor
SafetensorsCheckpoint::loadColumns(const std::string &name,
                                   const std::vector<int64_t> &expectedShape,
                                   int64_t begin, int64_t count) const {
  check(expectedShape.size() == 2,
        name + ": loadColumns needs a 2-D tensor, expected shape is " +
            shapeText(expectedShape));
  return loadSlice(name, expectedShape, {Range{0, -1}, Range{begin, count}});
}

namespace {
/// The box of a tensor (as a view) in innermost runs.
struct BoxWalk {
  std::vector<int64_t> begin, count, stride;
  int64_t numel = 1;
};
} // namespace

static BoxWalk planBox(const std::string &where, const TensorInfo &t,
                       const std::vector<Range> &box,
                       const std::vector<int64_t> &viewShape) {
  std::vector<int64_t> shape = viewShape.empty() ? t.shape : viewShape;
  int64_t numel = checkedNumel(t.shape, where);
  int64_t viewNumel = checkedNumel(shape, where + ": view");
  check(numel == viewNumel, where + ": view shape " + shapeText(shape) +
                                " does not hold the " + std::to_string(numel) +
                                " elements of " + shapeText(t.shape));
  check(box.size() <= shape.size(),
        where + ": slice has more ranges than dimensions");
  size_t rank = shape.size();
  BoxWalk w;
  w.begin.assign(rank, 0);
  w.count = shape;
  for (size_t i = 0; i < box.size(); ++i) {
    // (Checked without overflow: begin and count may be anything.)
    int64_t b = box[i].begin;
    bool inside = b >= 0 && b <= shape[i];
    int64_t c = box[i].count < 0 ? (inside ? shape[i] - b : 0) : box[i].count;
    if (!inside || c > shape[i] - b) {
      int64_t e = 0;
      std::string end = box[i].count < 0 ? std::string("end")
                        : __builtin_add_overflow(b, c, &e)
                            ? std::to_string(b) + " + " + std::to_string(c)
                            : std::to_string(e);
      throw Error(where + ": slice [" + std::to_string(b) + ", " + end +
                  ") of dimension " + std::to_string(i) +
                  " is outside its size " + std::to_string(shape[i]));
    }
    w.begin[i] = b;
    w.count[i] = c;
  }
  w.stride.assign(rank, 1);
  for (int i = static_cast<int>(rank) - 2; i >= 0; --i)
    w.stride[i] = w.stride[i + 1] * shape[i + 1];
  for (int64_t c : w.count)
    w.numel *= c;
  return w;
}

/// Calls fn(src, run) for each innermost run of the box, in order.
template <typename Fn>
static void walkBox(const BoxWalk &w, const uint8_t *base, size_t es, Fn fn) {
  if (w.numel == 0)
    return;
  size_t rank = w.count.size();
  int64_t run = rank ? w.count[rank - 1] : 1;
  int64_t runs = w.numel / run;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t r = 0; r < runs; ++r) {
    int64_t off = 0;
    for (size_t i = 0; i < rank; ++i)
      off += (w.begin[i] + idx[i]) * w.stride[i];
    fn(base + off * es, run);
    for (int i = static_cast<int>(rank) - 2; i >= 0; --i) {
      if (++idx[i] < w.count[i])
        break;
      idx[i] = 0;
    }
  }
}

const uint8_t *SafetensorsCheckpoint::dataOf(const TensorInfo &t) const {
  const MappedFile &file = *files_.at(t.file);
  return file.data() + file.dataStart + t.begin;
}

HostTensor
SafetensorsCheckpoint::loadSlice(const std::string &name,
                                 const std::vector<int64_t> &expectedShape,
                                 const std::vector<Range> &box,
                                 const std::vector<int64_t> &viewShape) const {
  const TensorInfo &t = info(name);
  std::string where = "checkpoint " + path_ + ": tensor " + name;
  if (t.dtype.rfind("F8_", 0) == 0 || t.dtype.rfind("F4", 0) == 0 ||
      t.dtype.rfind("F6", 0) == 0 || t.dtype == "E8M0" || t.dtype == "U8" ||
      t.dtype == "I8")
    throw Error(where + " has dtype " + t.dtype +
                ", a quantized format: it is read with its scales "
                "(loadQuantized), not as floats");
  if (t.dtype != "BF16" && t.dtype != "F16" && t.dtype != "F32" &&
      t.dtype != "F64")
    throw Error(where + " has unsupported dtype " + t.dtype +
                " (supported: BF16, F16, F32)");
  if (t.shape != expectedShape)
    throw Error(where + " has shape " + shapeText(t.shape) + ", expected " +
                shapeText(expectedShape));
  BoxWalk w = planBox(where, t, box, viewShape);
  HostTensor out;
  out.shape = w.count;
  out.data.resize(static_cast<size_t>(w.numel));
  size_t es = elementSize(t.dtype);
  float *dst = out.data.data();
  walkBox(w, dataOf(t), es, [&](const uint8_t *src, int64_t run) {
    if (t.dtype == "F32") {
      std::memcpy(dst, src, run * 4);
    } else if (t.dtype == "BF16") {
      for (int64_t j = 0; j < run; ++j) {
        uint16_t v;
        std::memcpy(&v, src + 2 * j, 2);
        dst[j] = bf16ToFloat(v);
      }
    } else if (t.dtype == "F16") {
      for (int64_t j = 0; j < run; ++j) {
        uint16_t v;
        std::memcpy(&v, src + 2 * j, 2);
        dst[j] = fp16ToFloat(v);
      }
    } else { // F64
      for (int64_t j = 0; j < run; ++j) {
        double v;
        std::memcpy(&v, src + 8 * j, 8);
        dst[j] = static_cast<float>(v);
      }
    }
    *bytesRead_ += static_cast<uint64_t>(run) * es;
    dst += run;
  });
  return out;
}

RawTensor SafetensorsCheckpoint::loadRaw(
    const std::string &name, const std::string &dtype,
    const std::vector<int64_t> &shape, const std::vector<Range> &box,
    const std::vector<int64_t> &viewShape) const {
  const TensorInfo &t = info(name);
  std::string where = "checkpoint " + path_ + ": tensor " + name;
  if (t.dtype != dtype)
    throw Error(where + " has dtype " + t.dtype + ", expected " + dtype);
  if (t.shape != shape)
    throw Error(where + " has shape " + shapeText(t.shape) + ", expected " +
                shapeText(shape));
  size_t es = elementSize(t.dtype);
  check(es != 0, where + ": unsupported dtype " + t.dtype);
  BoxWalk w = planBox(where, t, box, viewShape);
  // Sub-byte dtypes (F4*) pack more than one element per byte: their
  // stored size is not es x elements, and a box of them is not whole bytes
  // (packed FP4 is read as U8).
  check(t.end - t.begin == es * uint64_t(checkedNumel(t.shape, where)),
        where + ": dtype " + t.dtype + " stores " +
            std::to_string(t.end - t.begin) + " bytes for shape " +
            shapeText(t.shape) + "; only whole-byte dtypes are read raw");
  RawTensor out;
  out.dtype = t.dtype;
  out.shape = w.count;
  out.bytes.resize(static_cast<size_t>(w.numel) * es);
  uint8_t *dst = out.bytes.data();
  walkBox(w, dataOf(t), es, [&](const uint8_t *src, int64_t run) {
    std::memcpy(dst, src, run * es);
    *bytesRead_ += static_cast<uint64_t>(run) * es;
    dst += run * es;
  });
  return out;
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

void writeSafetensorsRaw(const std::string &path,
                         const std::vector<RawTensor> &tensors,
                         const std::map<std::string, std::string> &metadata) {
  json header = json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const RawTensor &t : tensors) {
    size_t es = elementSize(t.dtype);
    check(es != 0,
          "writeSafetensors: " + t.name + ": unsupported dtype " + t.dtype);
    int64_t numel = 1;
    for (int64_t d : t.shape)
      numel *= d;
    check(t.bytes.size() == static_cast<size_t>(numel) * es,
          "writeSafetensors: " + t.name + ": " +
              std::to_string(t.bytes.size()) + " bytes for " + t.dtype + " " +
              shapeText(t.shape));
    uint64_t n = t.bytes.size();
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + n}}};
    offset += n;
  }
  std::string text = header.dump();
  while ((text.size() + 8) % 8 != 0) // align the data section
    text.push_back(' ');
  std::ofstream out(path, std::ios::binary);
  check(static_cast<bool>(out), path + ": cannot write");
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const RawTensor &t : tensors)
    out.write(reinterpret_cast<const char *>(t.bytes.data()),
              static_cast<std::streamsize>(t.bytes.size()));
  check(static_cast<bool>(out), path + ": write failed");
}

RawTensor encodeFloats(const std::string &name, const HostTensor &t,
                       const std::string &dtype) {
  size_t es = dtype == "F32" ? 4 : (dtype == "F16" || dtype == "BF16") ? 2 : 0;
  check(es != 0, "writeSafetensors: unsupported dtype " + dtype);
  RawTensor r;
  r.name = name;
  r.dtype = dtype;
  r.shape = t.shape;
  r.bytes.resize(t.data.size() * es);
  for (size_t i = 0; i < t.data.size(); ++i) {
    float f = t.data[i];
    if (es == 4) {
      std::memcpy(&r.bytes[4 * i], &f, 4);
    } else {
      uint16_t h = dtype == "BF16" ? floatToBf16(f) : floatToFp16(f);
      r.bytes[2 * i] = static_cast<uint8_t>(h & 0xff);
      r.bytes[2 * i + 1] = static_cast<uint8_t>(h >> 8);
    }
  }
  return r;
}

void writeSafetensors(const std::string &path,
                      const std::vector<NamedHostTensor> &tensors,
                      const std::string &dtype,
                      const std::map<std::string, std::string> &metadata) {
  std::vector<RawTensor> raw;
  raw.reserve(tensors.size());
  for (const NamedHostTensor &t : tensors)
    raw.push_back(encodeFloats(t.name, t.tensor, dtype));
  writeSafetensorsRaw(path, raw, metadata);
}

} // namespace rt
} // namespace helix
