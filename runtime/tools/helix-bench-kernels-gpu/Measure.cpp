//===- Measure.cpp - Achieved bandwidth of the kernels on a GPU -----------===//

#include "Measure.h"

#include "CudaKernels.h"
#include "TrafficCounts.h"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace helix::benchkernels {

using namespace helix::rt;

namespace {

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t e, const std::string &what) {
  if (e != cudaSuccess)
    throw Failure(what + ": " + cudaGetErrorString(e));
}

/// Device memory filled with `byte` (small finite values in every format).
class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t bytes, int byte = 0x11) : bytes_(bytes) {
    check(cudaMalloc(&p_, std::max<size_t>(bytes, 16)),
          "cudaMalloc of " + std::to_string(bytes) + " bytes");
    check(cudaMemset(p_, byte, std::max<size_t>(bytes, 16)), "cudaMemset");
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { cudaFree(p_); }
  template <class T> T *as() const { return static_cast<T *>(p_); }
  size_t bytes() const { return bytes_; }

private:
  void *p_ = nullptr;
  size_t bytes_;
};

/// GPU seconds of ops on one stream: before each run a memset larger than
/// the L2 evicts it (decode streams each byte once a step); CUDA events
/// around the op; one warm-up, then the median of 5 runs (3 above 50 ms).
class EventTimer {
public:
  EventTimer(cudaStream_t s, size_t flushBytes) : s_(s), flush_(flushBytes) {
    check(cudaEventCreate(&a_), "cudaEventCreate");
    check(cudaEventCreate(&b_), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(a_);
    cudaEventDestroy(b_);
  }
  double seconds(const std::function<void()> &op) {
    double first = run(op);
    std::vector<double> t;
    for (int i = 0, n = first > 0.05 ? 3 : 5; i < n; ++i)
      t.push_back(run(op));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

private:
  double run(const std::function<void()> &op) {
    check(
        cudaMemsetAsync(flush_.as<void>(), ++byte_ & 0xff, flush_.bytes(), s_),
        "cudaMemsetAsync (L2 flush)");
    check(cudaEventRecord(a_, s_), "cudaEventRecord");
    op();
    check(cudaGetLastError(), "kernel launch");
    check(cudaEventRecord(b_, s_), "cudaEventRecord");
    check(cudaEventSynchronize(b_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a_, b_), "cudaEventElapsedTime");
    return double(ms) * 1e-3;
  }
  cudaStream_t s_;
  DeviceBuffer flush_;
  int byte_ = 0;
  cudaEvent_t a_ = nullptr, b_ = nullptr;
};

struct Row {
  std::string kernel, config;
  double bytes = 0, seconds = 0;
  double gbps() const { return bytes / seconds * 1e-9; }
};

std::string fixed(double v, int digits) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

/// Decode attention of one batch row over `length` tokens of one rank's
/// shard, split-K as the backend sizes it.
Row attention(const char *shape, DType dtype, int64_t qHeads, int64_t kvHeads,
              int64_t keyDim, int64_t valueDim, bool valueInKey, int64_t length,
              int sms, cudaStream_t s, EventTimer &t) {
  KVCacheConfig c;
  c.batch = 1;
  c.capacity = length;
  c.heads = kvHeads;
  c.keyDim = keyDim;
  c.valueDim = valueDim;
  c.valueInKey = valueInKey;
  c.dtype = dtype;
  bool f4 = dtype == DType::F4E2M1;
  auto scales = [&](int64_t dim) {
    return size_t(f4 ? length * kvHeads * fmt::kvScalesPerHead(dim) : 0);
  };
  DeviceBuffer keys(dtypeBytes(dtype, length * kvHeads * keyDim)),
      keyScales(scales(keyDim)),
      values(valueInKey ? 0 : dtypeBytes(dtype, length * kvHeads * valueDim)),
      valueScales(valueInKey ? 0 : scales(valueDim));
  DeviceBuffer q(qHeads * keyDim * 4, 0), out(qHeads * valueDim * 4),
      lse(qHeads * 4);
  int splits = cuda::attentionSplits(qHeads, length, sms);
  DeviceBuffer work(std::max<int64_t>(1, cuda::attentionWorkspace(
                                             splits, 1, qHeads, valueDim)) *
                    4);
  int64_t range[2] = {0, length};
  DeviceBuffer ends(2 * sizeof(int64_t));
  check(
      cudaMemcpy(ends.as<void>(), range, sizeof range, cudaMemcpyHostToDevice),
      "cudaMemcpy");
  const int64_t *begin = ends.as<int64_t>(), *end = begin + 1;
  double secs = t.seconds([&] {
    cuda::attention(q.as<float>(), keys.as<void>(),
                    f4 ? keyScales.as<uint8_t>() : nullptr,
                    valueInKey ? nullptr : values.as<void>(),
                    f4 && !valueInKey ? valueScales.as<uint8_t>() : nullptr,
                    dtype, 1, qHeads, kvHeads, keyDim, valueDim, length, begin,
                    end, 1.0f / std::sqrt(float(keyDim)), out.as<float>(),
                    lse.as<float>(), splits, work.as<float>(), s);
  });
  return {"attention",
          std::string(shape) + " " + dtypeName(dtype) + " " +
              std::to_string(length / 1024) + "K tokens, " +
              std::to_string(splits) + " splits",
          kvEntryBytes(c, double(length)), secs};
}

/// The weight-streaming GEMM: x [M, K] f32 times W [N, K] as stored.
Row linear(DType dtype, int64_t M, int64_t N, int64_t K, cudaStream_t s,
           EventTimer &t) {
  BlockScaleDesc d;
  d.rows = N;
  d.cols = K;
  bool scaled = dtype != DType::BF16;
  if (dtype == DType::F8E4M3) { // DeepSeek's 128 x 128 f32 blocks
    d.type = ScaleType::F32;
    d.blockRows = d.blockCols = 128;
  } else if (dtype == DType::F4E2M1) { // NVFP4: E4M3 per 16, a global
    d.type = ScaleType::E4M3;
    d.blockRows = 1;
    d.blockCols = 16;
  }
  d.gridRows = (N + d.blockRows - 1) / d.blockRows;
  d.gridCols = (K + d.blockCols - 1) / d.blockCols;
  size_t nScales = size_t(d.gridRows * d.gridCols);
  DeviceBuffer w(dtypeBytes(dtype, N * K)),
      sc(scaled ? nScales * (d.type == ScaleType::F32 ? 4 : 1) : 0, 0x3c),
      global(4, 0), x(M * K * 4, 0), out(M * N * 4);
  d.scales = sc.as<uint8_t>();
  if (dtype == DType::F4E2M1) {
    float one = 1.0f;
    check(cudaMemcpy(global.as<void>(), &one, 4, cudaMemcpyHostToDevice),
          "cudaMemcpy");
    d.globals = global.as<float>();
  }
  double secs = t.seconds([&] {
    cuda::linearResident(x.as<float>(), M, K, w.as<void>(), dtype, 0, 0,
                         scaled ? &d : nullptr, N, nullptr, out.as<float>(), s);
  });
  return {"linearResident",
          std::to_string(N) + " x " + std::to_string(K) + " " +
              dtypeName(dtype) + ", M = " + std::to_string(M),
          storedBytes(dtype, scaled ? &d : nullptr, N * K) +
              4.0 * double(M * K + M * N),
          secs};
}

} // namespace

int cudaDevices(std::string &why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
    (void)cudaGetLastError();
    return 0;
  }
  if (n == 0)
    why = "no device in view (CUDA_VISIBLE_DEVICES?)";
  return n;
}

int measure(const MeasureOptions &o, std::ostream &os) {
  const char *cmd = "helix-bench-kernels-gpu --measure";
  std::string why;
  int n = cudaDevices(why);
  if (n == 0 || o.device >= n) {
    std::cerr << cmd << ": no CUDA GPU ("
              << (n ? "device " + std::to_string(o.device) + " of " +
                          std::to_string(n)
                    : why)
              << "); nothing measured\n";
    return 1;
  }
  try {
    check(cudaSetDevice(o.device), "cudaSetDevice");
    cudaDeviceProp p;
    check(cudaGetDeviceProperties(&p, o.device), "cudaGetDeviceProperties");
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
          "cudaStreamCreate");
    size_t freeBytes = 0, total = 0;
    check(cudaMemGetInfo(&freeBytes, &total), "cudaMemGetInfo");
    EventTimer t(s, std::max<size_t>(size_t(4) * p.l2CacheSize, 64 << 20));
    os << cmd << ": " << p.name << " (sm_" << p.major << p.minor << ", "
       << p.multiProcessorCount << " SMs, L2 " << (p.l2CacheSize >> 20)
       << " MiB, " << (total >> 30) << " GiB), CUDA driver " << driver
       << ", runtime " << runtime << "\n";

    // The baseline: a device-to-device copy (read + write).
    size_t copyBytes = std::min<size_t>(size_t(1) << 30, freeBytes / 8);
    double copyGBps;
    {
      DeviceBuffer a(copyBytes), b(copyBytes);
      double secs = t.seconds([&] {
        check(cudaMemcpyAsync(b.as<void>(), a.as<void>(), copyBytes,
                              cudaMemcpyDeviceToDevice, s),
              "cudaMemcpyAsync");
      });
      copyGBps = 2.0 * double(copyBytes) / secs * 1e-9;
      os << "  device-to-device copy of " << (copyBytes >> 20)
         << " MiB: " << fixed(copyGBps, 1) << " GB/s (read + write)\n\n";
    }

    std::vector<Row> rows;
    for (DType dt : {DType::BF16, DType::F8E4M3, DType::F4E2M1})
      for (int64_t len : o.lengths) {
        // GQA: 8 KV heads of 128, 8 query heads each; MLA's latent (576,
        // the value its first 512), 16 query heads on the rank.
        rows.push_back(attention("GQA 64q/8kv 128/128", dt, 64, 8, 128, 128,
                                 false, len, p.multiProcessorCount, s, t));
        rows.push_back(attention("MLA 16q 576/512", dt, 16, 1, 576, 512, true,
                                 len, p.multiProcessorCount, s, t));
      }
    for (DType dt : {DType::BF16, DType::F8E4M3, DType::F4E2M1})
      for (int64_t m : {1, 8, 64})
        for (auto nk : {std::pair<int64_t, int64_t>{8192, 8192},
                        std::pair<int64_t, int64_t>{28672, 8192}})
          rows.push_back(linear(dt, m, nk.first, nk.second, s, t));
    cudaStreamDestroy(s);

    bool missed = false;
    os << std::left << std::setw(16) << "kernel" << std::setw(48) << "config"
       << std::right << std::setw(12) << "MB" << std::setw(12) << "us"
       << std::setw(10) << "GB/s" << std::setw(10) << "of copy"
       << "  target\n";
    nlohmann::json j;
    j["device"] = {{"name", p.name},
                   {"compute_capability",
                    std::to_string(p.major) + "." + std::to_string(p.minor)},
                   {"sms", p.multiProcessorCount},
                   {"l2_bytes", p.l2CacheSize},
                   {"memory_bytes", total},
                   {"cuda_driver", driver},
                   {"cuda_runtime", runtime}};
    j["copy_gbps"] = copyGBps;
    j["attention_target"] = o.attentionTarget;
    for (const Row &r : rows) {
      double frac = r.gbps() / copyGBps;
      bool attn = r.kernel == "attention";
      bool met = frac >= o.attentionTarget;
      missed = missed || (attn && !met);
      os << std::left << std::setw(16) << r.kernel << std::setw(48) << r.config
         << std::right << std::setw(12) << fixed(r.bytes * 1e-6, 1)
         << std::setw(12) << fixed(r.seconds * 1e6, 1) << std::setw(10)
         << fixed(r.gbps(), 1) << std::setw(10) << fixed(frac, 3) << "  "
         << (attn ? (met ? "met" : "missed") : "-") << "\n";
      j["kernels"].push_back({{"kernel", r.kernel},
                              {"config", r.config},
                              {"bytes", r.bytes},
                              {"seconds", r.seconds},
                              {"gbps", r.gbps()},
                              {"fraction_of_copy", frac}});
    }
    os << "\nBytes as the backend counts them (TrafficCounts.h: K/V or "
          "weights as stored with their scales; linearResident adds x and "
          "out in f32); time: CUDA events, L2 flushed, median. Target: "
          "decode attention at "
       << fixed(o.attentionTarget, 2)
       << " of the copy's bandwidth or more: " << (missed ? "missed" : "met")
       << ".\n";
    if (!o.json.empty()) {
      std::ofstream f(o.json);
      f << j.dump(2) << "\n";
      if (!f)
        throw Failure("cannot write " + o.json);
    }
    return o.check && missed ? 1 : 0;
  } catch (const Failure &e) {
    std::cerr << cmd << ": error: " << e.what() << "\n";
    return 1;
  }
}

} // namespace helix::benchkernels
