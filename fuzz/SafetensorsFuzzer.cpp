//===- SafetensorsFuzzer.cpp - Fuzz the safetensors reader and slicer -----===//
//
// Input: a .safetensors file (8-byte header length, JSON header, data), or,
// when it starts with '{', a model.safetensors.index.json next to one valid
// shard. The file lives in memory (a memfd opened as /proc/self/fd/N; the
// index in a directory under /dev/shm or $TMPDIR). Every tensor of an
// opened checkpoint is read as the runtime reads it: load, loadSlice and
// loadRaw with boxes and views drawn from the input's last bytes
// (ByteReader.h reads numbers from the end, which is tensor data),
// and, for quantized tensors, storedFormatOf + loadStoredBox + pack +
// dequantize. Only rt::Error may come out; any other exception, crash,
// sanitizer report or allocation beyond the malloc limit is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "helix/Runtime/Error.h"
#include "helix/Runtime/Quant.h"
#include "helix/Runtime/Safetensors.h"

#include "ByteReader.h"

#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace helix;
using namespace helix::rt;

static std::string scratchDir() {
  for (const char *base :
       {"/dev/shm", static_cast<const char *>(std::getenv("TMPDIR")), "/tmp"}) {
    if (!base)
      continue;
    std::string dir = std::string(base) + "/helix-fuzz-safetensors-" +
                      std::to_string(::getpid());
    if (::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST)
      return dir;
  }
  fuzz::fail("scratch directory", "cannot create one");
}

namespace {
/// Where the inputs are written: a memfd for single files, a directory for
/// the index (with two valid shards: "shard.safetensors" holding "a" F32
/// [2, 3], "other.safetensors" holding "b.weight" BF16 [4]); removed at
/// exit.
struct Files {
  Files() {
    fd = ::memfd_create("helix-fuzz.safetensors", MFD_CLOEXEC);
    if (fd < 0)
      fuzz::fail("memfd_create", std::strerror(errno));
    file = "/proc/self/fd/" + std::to_string(fd);
    dir = scratchDir();
    index = dir + "/model.safetensors.index.json";
    HostTensor a{{2, 3}, {1, 2, 3, 4, 5, 6}};
    HostTensor b{{4}, {1, -1, 0.5f, 2}};
    writeSafetensors(dir + "/shard.safetensors", {{"a", a}}, "F32");
    writeSafetensors(dir + "/other.safetensors", {{"b.weight", b}}, "BF16");
  }
  ~Files() {
    ::unlink(index.c_str());
    ::unlink((dir + "/shard.safetensors").c_str());
    ::unlink((dir + "/other.safetensors").c_str());
    ::rmdir(dir.c_str());
    ::close(fd);
  }
  Files(const Files &) = delete;
  Files &operator=(const Files &) = delete;
  int fd = -1;
  std::string file;  // /proc/self/fd/N
  std::string dir;   // holds model.safetensors.index.json
  std::string index; // dir + "/model.safetensors.index.json"
};
} // namespace

static const Files &files() {
  static const Files f;
  return f;
}

static void writeAll(int fd, const uint8_t *data, size_t size) {
  if (::ftruncate(fd, 0) != 0)
    fuzz::fail("ftruncate", std::strerror(errno));
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::pwrite(fd, data + done, size - done, off_t(done));
    if (n <= 0)
      fuzz::fail("pwrite", std::strerror(errno));
    done += size_t(n);
  }
}

/// a * b, wrapping (the harness itself must not overflow).
static int64_t mul(int64_t a, int64_t b) {
  int64_t r;
  __builtin_mul_overflow(a, b, &r);
  return r;
}

/// A view of `shape`: mostly none, sometimes a reshape with the same
/// element count, rarely anything.
static std::vector<int64_t> view(helix::fuzz::ByteReader &fdp,
                                 const std::vector<int64_t> &shape) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 7)) {
  case 0: { // flattened
    int64_t n = 1;
    for (int64_t d : shape)
      n = mul(n, d);
    return {n};
  }
  case 1: { // last two dimensions merged, or the first split
    std::vector<int64_t> v = shape;
    if (v.size() >= 2) {
      v[v.size() - 2] = mul(v[v.size() - 2], v.back());
      v.pop_back();
    } else if (!v.empty() && v[0] % 2 == 0) {
      v = {2, v[0] / 2};
    }
    return v;
  }
  case 2: {
    std::vector<int64_t> v(fdp.ConsumeIntegralInRange<size_t>(0, 4));
    for (int64_t &d : v)
      d = fdp.ConsumeIntegral<int64_t>();
    return v;
  }
  default:
    return {};
  }
}

/// A box of `shape` (or of the view): ranges inside it mostly.
static std::vector<Range> box(helix::fuzz::ByteReader &fdp,
                              const std::vector<int64_t> &shape) {
  std::vector<Range> b;
  size_t n = fdp.ConsumeIntegralInRange<size_t>(0, shape.size() + 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t size = i < shape.size() ? shape[i] : 1;
    Range r;
    if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0) {
      r.begin = fdp.ConsumeIntegral<int64_t>();
      r.count = fdp.ConsumeIntegral<int64_t>();
    } else if (size >= 0) {
      r.begin = fdp.ConsumeIntegralInRange<int64_t>(0, size);
      r.count = fdp.ConsumeIntegralInRange<int64_t>(-1, size - r.begin);
    }
    b.push_back(r);
  }
  return b;
}

/// The logical [out, in] (or MXFP4 [E, in, out]) shape of a quantized
/// weight, from its stored tensor; sometimes perturbed.
static std::vector<int64_t> logicalShape(const SafetensorsCheckpoint &ckpt,
                                         CheckpointFormat format,
                                         const std::string &name,
                                         helix::fuzz::ByteReader &fdp) {
  std::vector<int64_t> s;
  if (format == CheckpointFormat::MXFP4) {
    std::vector<int64_t> b = ckpt.info(name + "_blocks").shape;
    if (b.size() == 4)
      s = {b[0], mul(b[2], 32), b[1]};
  } else {
    s = ckpt.info(name).shape;
    if (format == CheckpointFormat::NVFP4 && !s.empty())
      s.back() = mul(s.back(), 2);
  }
  if (fdp.ConsumeIntegralInRange<int>(0, 7) == 0 && !s.empty())
    s[fdp.ConsumeIntegralInRange<size_t>(0, s.size() - 1)] =
        fdp.ConsumeIntegral<int64_t>();
  return s;
}

static void readTensor(const SafetensorsCheckpoint &ckpt,
                       const std::string &name, helix::fuzz::ByteReader &fdp) {
  const TensorInfo &info = ckpt.info(name);
  try {
    (void)ckpt.load(name, info.shape);
  } catch (const Error &e) {
    fuzz::checkErrorLine(e.what(), "load");
  }
  try {
    std::vector<int64_t> v = view(fdp, info.shape);
    (void)ckpt.loadSlice(name, info.shape, box(fdp, v.empty() ? info.shape : v),
                         v);
  } catch (const Error &e) {
    fuzz::checkErrorLine(e.what(), "loadSlice");
  }
  try {
    std::vector<int64_t> v = view(fdp, info.shape);
    (void)ckpt.loadRaw(name, info.dtype, info.shape,
                       box(fdp, v.empty() ? info.shape : v), v);
  } catch (const Error &e) {
    fuzz::checkErrorLine(e.what(), "loadRaw");
  }
}

static void readQuantized(const SafetensorsCheckpoint &ckpt,
                          const std::string &name,
                          helix::fuzz::ByteReader &fdp) {
  try {
    CheckpointFormat format = storedFormatOf(ckpt, name);
    if (format == CheckpointFormat::BF16)
      return;
    std::vector<int64_t> shape = logicalShape(ckpt, format, name, fdp);
    std::vector<int64_t> v;
    if (fdp.ConsumeBool() && shape.size() == 2 && shape[0] % 2 == 0)
      v = {2, shape[0] / 2, shape[1]}; // split rows, keep the last dim
    ElementBox b = loadStoredBox(ckpt, format, name, shape,
                                 box(fdp, v.empty() ? shape : v), v);
    QuantHost q = pack(b);
    (void)dequantize(b);
    (void)dequantize(q);
  } catch (const Error &e) {
    fuzz::checkErrorLine(e.what(), "loadStoredBox");
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const Files &f = files();
  std::string path;
  if (size > 0 && data[0] == '{') {
    FILE *out = std::fopen(f.index.c_str(), "wb");
    if (!out || std::fwrite(data, 1, size, out) != size || std::fclose(out))
      fuzz::fail("writing the index", f.index);
    path = f.dir;
  } else {
    writeAll(f.fd, data, size);
    path = f.file;
  }
  SafetensorsCheckpoint ckpt;
  try {
    ckpt = SafetensorsCheckpoint::open(path);
  } catch (const Error &e) {
    fuzz::checkErrorLine(e.what(), "SafetensorsCheckpoint::open");
    return 0;
  }
  helix::fuzz::ByteReader fdp(data, size);
  std::vector<std::string> names = ckpt.names();
  for (size_t i = 0; i < names.size() && i < 32; ++i) {
    readTensor(ckpt, names[i], fdp);
    // Quantized weights are read by their bf16 name: "X.weight", or the
    // MXFP4 "P" of "P_blocks".
    std::string n = names[i];
    const std::string blocks = "_blocks";
    if (n.size() > blocks.size() &&
        n.compare(n.size() - blocks.size(), blocks.size(), blocks) == 0)
      n.resize(n.size() - blocks.size());
    readQuantized(ckpt, n, fdp);
  }
  return 0;
}
