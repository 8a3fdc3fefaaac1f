//===- BenchKernels.cpp - Static performance evidence for the CUDA kernels ===//
//
//   helix-bench-kernels --measure [--device N] [--lengths 131072,...]
//                       [--json FILE] [--check]    (on a GPU)
//   helix-bench-kernels --devices                  (CUDA devices in view)
//
//   (both run helix-bench-kernels-gpu, beside this tool: the GPU half,
//   runtime/tools/helix-bench-kernels-gpu, which needs no LLVM)
//
//   helix-bench-kernels --static [--arch sm_90a,...] [--json FILE]
//                       [--markdown FILE] [--check]
//                       [--lib libHelixRuntimeCUDA.a] [--limits sm-limits.json]
//                       [--source CudaKernels.cu] [--ptxas PATH | --ptxas-log
//                       FILE]
//                       [--key-dim N] [--value-dim N] [--experts N]
//                       [--expert-groups N] [--top-k N]
//
// For each kernel of the CUDA backend and each architecture the library was
// built for: registers per thread, stack frame, spill stores and loads,
// static and dynamic shared memory, the launcher's block size, theoretical
// occupancy against documented per-SM limits, and whether its global loads
// are 128 bits wide or wider. No GPU is used (docs/gpu.md):
//
//  * registers, stack frame, static shared memory: the cubins (SASS) in the
//    library's fatbinary, i.e. the code the program runs;
//  * spills: ptxas's report, obtained by running ptxas again on the PTX the
//    library embeds with the options recorded in each cubin; the tool checks
//    that this reproduces the library's cubin section for section;
//  * load widths: the PTX bodies of each kernel and the functions it calls;
//  * block size, dynamic shared memory: the launcher table (Launchers.cpp),
//    checked against CudaKernels.cu by --source;
//  * occupancy: cuda_occupancy.h's calculation with data/gpu/sm-limits.json.
//
// --check exits 1 when a hot kernel (Launchers.cpp) spills or its spills
// are unknown on a built architecture, a streaming kernel (attention,
// linearResident, linearGrouped) has no 128-bit global load, an occupancy is
// outside [0, 1] or unknown, the replayed ptxas disagrees with the library, or
// the launcher table and CudaKernels.cu (with --source) or the library differ.
//
//===----------------------------------------------------------------------===//

#include "KernelObjects.h"
#include "Launchers.h"
#include "Occupancy.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include <unistd.h>

#ifndef HELIX_BENCH_KERNELS_LIBRARY
#define HELIX_BENCH_KERNELS_LIBRARY ""
#endif
#ifndef HELIX_BENCH_KERNELS_LIMITS
#define HELIX_BENCH_KERNELS_LIMITS ""
#endif
#ifndef HELIX_BENCH_KERNELS_PTXAS
#define HELIX_BENCH_KERNELS_PTXAS "ptxas"
#endif

using namespace helix::benchkernels;

namespace {

const char *kCmd = "helix-bench-kernels";

struct Options {
  bool staticMode = false;
  std::string library = HELIX_BENCH_KERNELS_LIBRARY;
  std::string limits = HELIX_BENCH_KERNELS_LIMITS;
  std::string ptxas = HELIX_BENCH_KERNELS_PTXAS;
  std::string ptxasLog;
  std::string savePtxasLog;
  std::string source;
  std::string json;
  std::string markdown;
  std::vector<std::string> archs;
  int64_t keyDim = 128, valueDim = 128;
  int64_t experts = 256, expertGroups = 8, topK = 8;
  bool check = false;
};

/// One architecture's code as the table reports it.
struct ArchCode {
  std::string arch;
  Cubin cubin;              // the library's, or ptxas's for a derived arch
  const Ptx *ptx = nullptr; // the PTX it was (or is) compiled from
  std::string origin;       // "library" or how it was derived
  std::string replay;       // "identical", "differs: ...", "log", "none: why"
  std::map<std::string, PtxasFigures> figures; // "arch/function"
  std::string figuresArch;                     // the arch name ptxas printed
};

struct Row {
  std::string kernel, mangled, arch;
  const Launcher *launcher = nullptr;
  int registers = -1;
  int ptxasRegisters = -1;
  int64_t frameBytes = 0, staticSmem = 0, sharedSection = 0;
  std::optional<int64_t> spillStores, spillLoads;
  std::string spillSource;
  int64_t dynamicSmem = 0;
  std::optional<Occupancy> occ;
  std::optional<LoadScan> loads;
  std::string ptxTarget;
};

std::string join(const std::vector<std::string> &v, const char *sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i)
    out += (i ? sep : "") + v[i];
  return out;
}

int smNumber(const std::string &arch) {
  size_t i = arch.find_first_of("0123456789");
  return i == std::string::npos ? 0 : std::atoi(arch.c_str() + i);
}

/// The PTX `arch`'s code comes from: the module whose .target is `arch`
/// (sm_90a's is compute_90a's), else the newest portable one (no `a` / `f`
/// suffix: arch-specific PTX is not compiled for other targets) up to it.
const Ptx *ptxFor(const DeviceCode &code, const std::string &arch, int sm) {
  for (const Ptx &p : code.ptx)
    if (p.target == arch)
      return &p;
  const Ptx *best = nullptr;
  for (const Ptx &p : code.ptx) {
    bool specific =
        !p.target.empty() && (p.target.back() == 'a' || p.target.back() == 'f');
    if (!specific && p.smVersion <= sm &&
        (!best || p.smVersion > best->smVersion))
      best = &p;
  }
  return best;
}

std::vector<std::string> optionsFor(const Cubin &c, const std::string &arch) {
  std::vector<std::string> o = c.ptxasOptions;
  if (o.empty())
    o = {"-arch", c.arch, "-m", "64"};
  for (size_t i = 0; i + 1 < o.size(); ++i)
    if (o[i] == "-arch" || o[i] == "--gpu-name")
      o[i + 1] = arch;
  return o;
}

std::string fmtOpt(const std::optional<int64_t> &v) {
  return v ? std::to_string(*v) : "?";
}

std::string fixed3(double v) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(3) << v;
  return o.str();
}

/// The table as Markdown: one row per kernel, each column one value when
/// every architecture has it, else the values in architecture order.
std::string markdownTable(const std::vector<Row> &rows,
                          const std::vector<std::string> &archs) {
  using Cell = std::function<std::string(const Row &)>;
  std::vector<std::pair<const char *, Cell>> cols = {
      {"regs", [](const Row &r) { return std::to_string(r.registers); }},
      {"stack", [](const Row &r) { return std::to_string(r.frameBytes); }},
      {"spill st/ld",
       [](const Row &r) {
         return fmtOpt(r.spillStores) + " / " + fmtOpt(r.spillLoads);
       }},
      {"smem static",
       [](const Row &r) { return std::to_string(r.staticSmem); }},
      {"smem dyn", [](const Row &r) { return std::to_string(r.dynamicSmem); }},
      {"block",
       [](const Row &r) {
         return r.launcher ? std::to_string(r.launcher->blockSize) : "?";
       }},
      {"blocks/SM",
       [](const Row &r) {
         return r.occ ? std::to_string(r.occ->activeBlocks) : "?";
       }},
      {"warps/SM",
       [](const Row &r) {
         return r.occ ? std::to_string(r.occ->activeWarps) : "?";
       }},
      {"occupancy",
       [](const Row &r) { return r.occ ? fixed3(r.occ->occupancy) : "?"; }},
      {"limiter", [](const Row &r) { return r.occ ? r.occ->limiter : "?"; }},
      {"128-bit loads",
       [](const Row &r) {
         return !r.loads ? "?" : r.loads->wideGlobalLoads > 0 ? "yes" : "no";
       }},
      {"hot", [](const Row &r) {
         return r.launcher && r.launcher->hot ? "yes" : "no";
       }}};
  std::ostringstream os;
  os << "| kernel | arch";
  for (const auto &c : cols)
    os << " | " << c.first;
  os << " |\n|---|---";
  for (size_t i = 0; i < cols.size(); ++i)
    os << (i < 2 || (i >= 3 && i <= 8) ? "|---:" : "|---");
  os << "|\n";
  std::vector<std::string> order;
  for (const Row &r : rows)
    if (std::find(order.begin(), order.end(), r.kernel) == order.end())
      order.push_back(r.kernel);
  for (const std::string &k : order) {
    std::vector<const Row *> mine;
    for (const std::string &a : archs)
      for (const Row &r : rows)
        if (r.kernel == k && r.arch == a)
          mine.push_back(&r);
    std::vector<std::string> names;
    for (const Row *r : mine)
      names.push_back(r->arch);
    os << "| " << k << " | "
       << (mine.size() == archs.size() ? std::string("all")
                                       : join(names, " / "));
    for (const auto &c : cols) {
      std::vector<std::string> v;
      for (const Row *r : mine)
        v.push_back(c.second(*r));
      bool same = std::all_of(v.begin(), v.end(),
                              [&](const std::string &x) { return x == v[0]; });
      os << " | " << (same && !v.empty() ? v[0] : join(v, " / "));
    }
    os << " |\n";
  }
  return os.str();
}

/// --measure and --devices: the GPU half, helix-bench-kernels-gpu beside
/// this executable, run with the same arguments.
int runGpuHalf(char **argv) {
  std::string self = "helix-bench-kernels";
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0)
    self.assign(exe, static_cast<size_t>(n));
  std::string gpu =
      self.substr(0, self.rfind('/') + 1) + "helix-bench-kernels-gpu";
  argv[0] = const_cast<char *>(gpu.c_str());
  execv(gpu.c_str(), argv);
  std::cerr << kCmd << ": error: --measure and --devices run " << gpu
            << ", which cannot be run\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--measure" ||
        std::string(argv[i]) == "--devices")
      return runGpuHalf(argv);
  Options opt;
  CLI::App app{"helix-bench-kernels: static resource, occupancy and load-width "
               "report for the CUDA backend's kernels (no GPU needed)"};
  app.add_flag("--static", opt.staticMode,
               "report from the object code (no GPU used)");
  // (Listed for --help; main() hands these to helix-bench-kernels-gpu.)
  bool measured = false, devices = false;
  app.add_flag("--measure", measured,
               "time the streaming kernels on the GPU: achieved bandwidth "
               "against a device-to-device copy (needs a GPU; runs "
               "helix-bench-kernels-gpu with these arguments: --device, "
               "--lengths, --json, --check)");
  app.add_flag("--devices", devices,
               "print how many CUDA devices are in view and exit (runs "
               "helix-bench-kernels-gpu)");
  app.add_option("--lib", opt.library,
                 "libHelixRuntimeCUDA.a, an object, a fatbinary or a cubin")
      ->capture_default_str();
  app.add_option("--limits", opt.limits, "per-SM limits (sm-limits.json)")
      ->capture_default_str();
  app.add_option("--arch", opt.archs,
                 "architectures to report (default: every one the library "
                 "holds); sm_90a etc. not in the library are compiled from its "
                 "PTX")
      ->delimiter(',');
  app.add_option("--json", opt.json, "also write the report as JSON");
  app.add_option("--markdown", opt.markdown,
                 "also write the table as Markdown, one row per kernel "
                 "(docs/gpu.md's)");
  app.add_option("--ptxas", opt.ptxas,
                 "ptxas for the spill figures ('none': skip)")
      ->capture_default_str();
  app.add_option("--ptxas-log", opt.ptxasLog,
                 "take the ptxas figures from this `ptxas -v` output instead "
                 "of running ptxas");
  app.add_option("--save-ptxas-log", opt.savePtxasLog,
                 "write the output of the ptxas runs (input for --ptxas-log)");
  app.add_option("--source", opt.source,
                 "CudaKernels.cu: check the launcher table against it");
  app.add_option("--key-dim", opt.keyDim, "attention key head dim")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  app.add_option("--value-dim", opt.valueDim, "attention value head dim")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  app.add_option("--experts", opt.experts, "MoE router: experts")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  app.add_option("--expert-groups", opt.expertGroups,
                 "MoE router: expert groups")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  app.add_option("--top-k", opt.topK, "MoE router: experts per token")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 20));
  app.add_flag("--check", opt.check,
               "exit 1 when a hot kernel spills, an occupancy is outside "
               "[0, 1], or the sources disagree");
  CLI11_PARSE(app, argc, argv);
  if (!opt.staticMode) {
    std::cerr << kCmd << ": error: give --static (object code, no GPU) or "
              << "--measure (on a GPU)\n";
    return 1;
  }

  std::string error;
  DeviceCode code;
  if (opt.library.empty()) {
    std::cerr << kCmd << ": error: no --lib and no built-in library path\n";
    return 1;
  }
  if (!readDeviceCode(opt.library, code, error)) {
    std::cerr << kCmd << ": error: " << error << "\n";
    return 1;
  }
  if (code.cubins.empty()) {
    std::cerr << kCmd << ": error: " << opt.library
              << ": no CUDA device code (.nv_fatbin) found\n";
    return 1;
  }
  std::map<std::string, SmLimits> limits;
  if (!readLimits(opt.limits, limits, error)) {
    std::cerr << kCmd << ": error: " << error << "\n";
    return 1;
  }
  std::sort(
      code.cubins.begin(), code.cubins.end(),
      [](const Cubin &a, const Cubin &b) { return a.smVersion < b.smVersion; });

  std::vector<std::string> problems;
  std::string savedLog;
  bool usePtxas = opt.ptxasLog.empty() && opt.ptxas != "none";
  std::string ptxasVer = usePtxas ? ptxasVersion(opt.ptxas) : "";
  if (usePtxas && ptxasVer.empty()) {
    usePtxas = false;
    std::cerr << kCmd << ": warning: cannot run " << opt.ptxas
              << ": spill figures unknown\n";
  }
  std::map<std::string, PtxasFigures> logFigures;
  if (!opt.ptxasLog.empty()) {
    std::ifstream f(opt.ptxasLog);
    if (!f) {
      std::cerr << kCmd << ": error: " << opt.ptxasLog << ": cannot open\n";
      return 1;
    }
    std::stringstream ss;
    ss << f.rdbuf();
    logFigures = parsePtxasLog(ss.str());
  }

  // The architectures to report.
  std::vector<std::string> wanted = opt.archs;
  if (wanted.empty())
    for (const Cubin &c : code.cubins)
      wanted.push_back(c.arch);
  std::vector<ArchCode> archs;
  for (const std::string &arch : wanted) {
    if (std::any_of(archs.begin(), archs.end(),
                    [&](const ArchCode &a) { return a.arch == arch; }))
      continue;
    ArchCode ac;
    ac.arch = arch;
    auto lib = std::find_if(code.cubins.begin(), code.cubins.end(),
                            [&](const Cubin &c) { return c.arch == arch; });
    if (lib != code.cubins.end()) {
      ac.cubin = *lib;
      ac.origin = "library";
      ac.ptx = ptxFor(code, lib->arch, lib->smVersion);
    } else {
      // e.g. sm_90a: the library's PTX for sm_90 through ptxas -arch sm_90a.
      int sm = smNumber(arch);
      auto base =
          std::find_if(code.cubins.begin(), code.cubins.end(),
                       [&](const Cubin &c) { return c.smVersion == sm; });
      ac.ptx = ptxFor(code, arch, sm);
      if (!ac.ptx || base == code.cubins.end() || !usePtxas) {
        std::cerr << kCmd << ": error: --arch " << arch
                  << " is not in the library (it holds ";
        std::vector<std::string> held;
        for (const Cubin &c : code.cubins)
          held.push_back(c.arch);
        std::cerr << join(held, ", ") << ")"
                  << (ac.ptx && base != code.cubins.end()
                          ? " and ptxas is not available to compile it"
                          : "")
                  << "\n";
        return 1;
      }
      std::string log, bytes;
      if (!runPtxas(opt.ptxas, ac.ptx->text, optionsFor(*base, arch), log,
                    bytes, error)) {
        std::cerr << kCmd << ": error: " << arch << ": " << error << "\n";
        return 1;
      }
      if (!parseCubin(bytes, ac.cubin, error)) {
        std::cerr << kCmd << ": error: " << arch << ": " << error << "\n";
        return 1;
      }
      ac.cubin.arch = arch;
      ac.figures = parsePtxasLog(log);
      savedLog += log;
      ac.figuresArch = arch;
      std::vector<std::string> diff = cubinDifferences(
          bytes, base->bytes, {".note.nv.tkinfo", ".nv.compat"}, error);
      ac.origin = "not in the library: ptxas -arch " + arch + " on its " +
                  ac.ptx->target + " PTX; code " +
                  (diff.empty() ? "identical to " + base->arch
                                : "differs from " + base->arch + " (" +
                                      join(diff, ", ") + ")");
      ac.replay = "derived";
    }
    archs.push_back(std::move(ac));
  }

  // ptxas's figures for the library's cubins.
  for (ArchCode &ac : archs) {
    if (ac.origin != "library")
      continue;
    ac.figuresArch = ac.cubin.arch;
    if (!opt.ptxasLog.empty()) {
      for (const auto &[key, f] : logFigures)
        if (f.arch == ac.cubin.arch)
          ac.figures[key] = f;
      ac.replay = ac.figures.empty() ? "none: not in --ptxas-log" : "log";
      continue;
    }
    if (!usePtxas) {
      ac.replay = "none: no ptxas";
      continue;
    }
    if (!ac.ptx) {
      ac.replay = "none: the library has no PTX for " + ac.arch;
      continue;
    }
    std::string log, bytes;
    if (!runPtxas(opt.ptxas, ac.ptx->text, optionsFor(ac.cubin, ac.cubin.arch),
                  log, bytes, error)) {
      ac.replay = "none: " + error;
      continue;
    }
    ac.figures = parsePtxasLog(log);
    savedLog += log;
    std::vector<std::string> diff =
        cubinDifferences(bytes, ac.cubin.bytes, {".note.nv.tkinfo"}, error);
    ac.replay = diff.empty() ? "identical" : "differs: " + join(diff, ", ");
  }

  // Rows: the launcher table's order, then kernels it does not know.
  std::vector<std::string> order;
  for (const Launcher &l : launchers())
    order.push_back(l.kernel);
  for (const ArchCode &ac : archs)
    for (const CubinKernel &k : ac.cubin.kernels)
      if (std::find(order.begin(), order.end(), k.name) == order.end())
        order.push_back(k.name);
  LaunchDims dims{opt.keyDim, opt.valueDim, opt.experts, opt.expertGroups,
                  opt.topK};
  std::vector<Row> rows;
  for (const std::string &name : order) {
    for (const ArchCode &ac : archs) {
      auto k =
          std::find_if(ac.cubin.kernels.begin(), ac.cubin.kernels.end(),
                       [&](const CubinKernel &c) { return c.name == name; });
      const Launcher *l = findLauncher(name);
      if (k == ac.cubin.kernels.end()) {
        if (l)
          problems.push_back(name + " (launcher table) is not in the " +
                             ac.arch + " code");
        continue;
      }
      Row r;
      r.kernel = name;
      r.mangled = k->mangled;
      r.arch = ac.arch;
      r.launcher = l;
      r.registers = k->registers;
      r.frameBytes = k->frameBytes;
      r.staticSmem = k->staticSmemBytes;
      r.sharedSection = k->sharedSectionBytes;
      if (ac.ptx) {
        r.ptxTarget = ac.ptx->target;
        if (ac.ptx->functions.count(k->mangled))
          r.loads = ac.ptx->reachable(k->mangled);
      }
      auto fig = ac.figures.find(ac.figuresArch + "/" + k->mangled);
      if (fig == ac.figures.end() && ac.replay == "log") {
        // A log from another build of the same source: match by name (the
        // anonymous namespace's mangling differs from build to build).
        for (auto it = ac.figures.begin(); it != ac.figures.end(); ++it)
          if (it->second.arch == ac.figuresArch && it->second.entry &&
              shortKernelName(it->first.substr(it->first.find('/') + 1)) ==
                  name)
            fig = it;
      }
      if (fig != ac.figures.end()) {
        int64_t st = fig->second.spillStoreBytes,
                ld = fig->second.spillLoadBytes;
        // Spills of the (non-inlined) functions the kernel calls count too.
        if (r.loads)
          for (const std::string &callee : r.loads->callees)
            if (auto c = ac.figures.find(ac.figuresArch + "/" + callee);
                c != ac.figures.end()) {
              st += c->second.spillStoreBytes;
              ld += c->second.spillLoadBytes;
            }
        r.spillStores = st;
        r.spillLoads = ld;
        r.ptxasRegisters = fig->second.registers;
        r.spillSource = ac.replay == "log" ? "ptxas log" : "ptxas";
        if (r.ptxasRegisters != r.registers)
          problems.push_back(name + " " + ac.arch + ": ptxas reports " +
                             std::to_string(r.ptxasRegisters) +
                             " registers, the cubin " +
                             std::to_string(r.registers) +
                             ": its spill figures are not about this code");
        if (ac.origin == "library" && fig->second.smemBytes != r.staticSmem)
          problems.push_back(name + " " + ac.arch + ": ptxas reports " +
                             std::to_string(fig->second.smemBytes) +
                             " bytes of static shared memory, the cubin " +
                             std::to_string(r.staticSmem));
      } else if (r.frameBytes == 0) {
        // No local memory at all: nothing can have been spilled.
        r.spillStores = r.spillLoads = 0;
        r.spillSource = "no stack frame";
      }
      if (l)
        r.dynamicSmem = l->dynamicSmem(dims);
      else
        problems.push_back(name + " " + ac.arch +
                           ": not in the launcher table (block size and "
                           "dynamic shared memory unknown): add it to "
                           "tools/helix-bench-kernels/Launchers.cpp");
      if (const SmLimits *lim = findLimits(limits, ac.arch); lim && l) {
        KernelResources res{r.registers, r.staticSmem, r.dynamicSmem,
                            l->blockSize};
        r.occ = computeOccupancy(*lim, res);
      }
      rows.push_back(std::move(r));
    }
  }
  for (const ArchCode &ac : archs) {
    if (ac.replay.rfind("differs", 0) == 0)
      problems.push_back(ac.arch + ": ptxas on the library's PTX " + ac.replay +
                         " (not the library's code: spill figures unproven)");
    if (!findLimits(limits, ac.arch))
      problems.push_back(ac.arch + ": no per-SM limits in " + opt.limits +
                         ": occupancy unknown");
  }
  if (!opt.source.empty())
    for (const std::string &p : checkLaunchers(opt.source))
      problems.push_back(p);
  for (const Row &r : rows) {
    std::string at = r.kernel + " " + r.arch + ": ";
    if (r.launcher && r.launcher->hot) {
      if (!r.spillStores || !r.spillLoads)
        problems.push_back(at + "spill bytes unknown (" +
                           std::to_string(r.frameBytes) +
                           " bytes of stack frame and no ptxas figures)");
      else if (*r.spillStores > 0 || *r.spillLoads > 0)
        problems.push_back(
            at + std::to_string(*r.spillStores) + " bytes spill stores, " +
            std::to_string(*r.spillLoads) + " bytes spill loads");
    }
    if (r.launcher && r.launcher->streaming) {
      if (!r.loads)
        problems.push_back(at + "global load widths unknown (no PTX)");
      else if (r.loads->wideGlobalLoads == 0)
        problems.push_back(at + "no 128-bit global loads (widest " +
                           std::to_string(r.loads->widestGlobalBits) +
                           " bits): the streaming loop lost its vector loads");
    }
    if (r.occ) {
      if (!(r.occ->occupancy >= 0.0 && r.occ->occupancy <= 1.0))
        problems.push_back(at + "occupancy " +
                           std::to_string(r.occ->occupancy) +
                           " is outside [0, 1]");
      if (r.occ->activeBlocks == 0)
        problems.push_back(at + "cannot run: 0 blocks per SM (" +
                           r.occ->limiter + ")");
    } else if (r.launcher) {
      problems.push_back(at + "occupancy unknown");
    }
  }

  // The report.
  std::ostream &os = std::cout;
  os << kCmd << " --static: " << opt.library << "\n";
  {
    std::vector<std::string> sass, ptx;
    std::set<std::string> members;
    for (const Cubin &c : code.cubins) {
      sass.push_back(c.arch);
      members.insert(c.member);
    }
    for (const Ptx &p : code.ptx) {
      ptx.push_back("compute_" + (p.target.size() > 3
                                      ? p.target.substr(3)
                                      : std::to_string(p.smVersion)));
      members.insert(p.member);
    }
    os << "  device code: SASS " << join(sass, ", ") << "; PTX "
       << (ptx.empty() ? "none" : join(ptx, ", ")) << " (from "
       << join(std::vector<std::string>(members.begin(), members.end()), ", ")
       << ")\n";
    const Cubin &first = code.cubins.front();
    os << "  built by: "
       << (first.toolVersion.empty() ? "?" : first.toolVersion) << "\n";
  }
  if (!opt.ptxasLog.empty())
    os << "  spills: from " << opt.ptxasLog << "\n";
  else if (usePtxas)
    os << "  spills: " << opt.ptxas << " (" << ptxasVer
       << ") on the library's PTX with the recorded options\n";
  else
    os << "  spills: no ptxas; known only where the stack frame is 0\n";
  for (const ArchCode &ac : archs)
    os << "  " << ac.arch << ": " << ac.origin
       << (ac.origin == "library"
               ? " (ptxas " + join(ac.cubin.ptxasOptions, " ") +
                     "); ptxas replay " + ac.replay
               : "")
       << "\n";
  os << "  dynamic shared memory for keyDim=" << opt.keyDim
     << ", valueDim=" << opt.valueDim << "; experts=" << opt.experts
     << ", expert groups=" << opt.expertGroups << ", top-k=" << opt.topK
     << "\n\n";

  os << std::left << std::setw(26) << "kernel" << std::setw(8) << "arch"
     << std::right << std::setw(5) << "regs" << std::setw(7) << "stack"
     << std::setw(10) << "spill_st" << std::setw(10) << "spill_ld"
     << std::setw(12) << "smem_static" << std::setw(10) << "smem_dyn"
     << std::setw(7) << "block" << std::setw(11) << "blocks_sm" << std::setw(10)
     << "warps_sm" << std::setw(11) << "occupancy"
     << "  " << std::left << std::setw(11) << "limiter" << std::setw(7)
     << "ld128"
     << "hot\n";
  for (const Row &r : rows) {
    os << std::left << std::setw(26) << r.kernel << std::setw(8) << r.arch
       << std::right << std::setw(5) << r.registers << std::setw(7)
       << r.frameBytes << std::setw(10) << fmtOpt(r.spillStores)
       << std::setw(10) << fmtOpt(r.spillLoads) << std::setw(12) << r.staticSmem
       << std::setw(10) << r.dynamicSmem << std::setw(7)
       << (r.launcher ? std::to_string(r.launcher->blockSize) : "?");
    if (r.occ) {
      std::ostringstream occ;
      occ << std::fixed << std::setprecision(3) << r.occ->occupancy;
      os << std::setw(11) << r.occ->activeBlocks << std::setw(10)
         << r.occ->activeWarps << std::setw(11) << occ.str() << "  "
         << std::left << std::setw(11) << r.occ->limiter;
    } else {
      os << std::setw(11) << "?" << std::setw(10) << "?" << std::setw(11) << "?"
         << "  " << std::left << std::setw(11) << "?";
    }
    std::string ld128 = !r.loads                       ? "?"
                        : r.loads->wideGlobalLoads > 0 ? "yes"
                                                       : "no";
    os << std::setw(7) << ld128
       << (r.launcher && r.launcher->hot ? "yes" : "no") << "\n";
  }
  os << "\n";
  os << "Columns: regs = registers per thread; stack = stack frame (local "
        "memory) bytes per thread; spill_st / spill_ld = bytes of registers "
        "spilled to / reloaded from local memory per thread (ptxas); "
        "smem_static = the kernel's __shared__ bytes; smem_dyn = dynamic "
        "shared memory its launcher requests; block = threads per block; "
        "blocks_sm, warps_sm, occupancy = theoretical active blocks and warps "
        "per SM and warps / max warps; limiter = the limit that binds; ld128 "
        "= some global load of the kernel (or a function it calls) is 128 "
        "bits or wider in the PTX (required of the KV- and weight-streaming "
        "kernels: attention, linearResident, linearGrouped); hot = "
        "checked for spills.\n\n";

  os << "Global loads (PTX, per kernel and architecture: count, widest "
        "bits):\n";
  for (const Row &r : rows) {
    if (!r.loads)
      continue;
    os << "  " << std::left << std::setw(26) << r.kernel << std::setw(8)
       << r.arch << std::right << std::setw(4) << r.loads->globalLoads
       << " loads, widest " << std::setw(3) << r.loads->widestGlobalBits
       << " bits:";
    for (const auto &[op, n] : r.loads->opcodes)
      os << " " << op << " x" << n;
    os << "\n";
  }
  os << "\nLaunchers (runtime/lib/CUDA/CudaKernels.cu):\n";
  for (const Launcher &l : launchers())
    os << "  " << std::left << std::setw(26) << l.kernel << "block "
       << std::setw(4) << l.blockSize << " dynamic smem " << l.smemFormula
       << " bytes (" << l.function << "(): " << l.smemText << ")\n";
  os << "\nPer-SM limits (" << opt.limits << "):\n";
  for (const ArchCode &ac : archs) {
    const SmLimits *lim = findLimits(limits, ac.arch);
    if (!lim) {
      os << "  " << ac.arch << ": none\n";
      continue;
    }
    os << "  " << ac.arch << " (" << lim->name << "):\n";
    for (const char *const *key = kLimitKeys; *key; ++key) {
      const Figure &f = lim->figures.at(*key);
      os << "    " << std::left << std::setw(40) << *key << std::right
         << std::setw(7) << f.value << "  " << f.source << "\n";
    }
  }
  std::map<std::string, std::string> sources;
  for (const ArchCode &ac : archs)
    if (const SmLimits *lim = findLimits(limits, ac.arch))
      sources.insert(lim->sources.begin(), lim->sources.end());
  os << "  sources:\n";
  for (const auto &[id, text] : sources)
    os << "    " << id << ": " << text << "\n";

  if (!opt.markdown.empty()) {
    std::vector<std::string> names;
    for (const ArchCode &ac : archs)
      names.push_back(ac.arch);
    std::ofstream f(opt.markdown);
    f << "Architectures (\"all\"): " << join(names, ", ")
      << "; attention head dims " << opt.keyDim << "/" << opt.valueDim
      << "; router " << opt.experts << " experts in " << opt.expertGroups
      << " groups, top-" << opt.topK << ". Bytes per thread for stack and "
      << "spills, per block for shared memory.\n\n"
      << markdownTable(rows, names);
    if (!f) {
      std::cerr << kCmd << ": error: cannot write " << opt.markdown << "\n";
      return 1;
    }
  }
  if (!opt.savePtxasLog.empty()) {
    std::ofstream f(opt.savePtxasLog);
    f << savedLog;
    if (!f) {
      std::cerr << kCmd << ": error: cannot write " << opt.savePtxasLog << "\n";
      return 1;
    }
  }
  if (!opt.json.empty()) {
    nlohmann::json j;
    j["library"] = opt.library;
    j["limits"] = opt.limits;
    j["launch_dims"] = {{"key_dim", opt.keyDim},
                        {"value_dim", opt.valueDim},
                        {"experts", opt.experts},
                        {"expert_groups", opt.expertGroups},
                        {"top_k", opt.topK}};
    j["archs"] = nlohmann::json::array();
    for (const ArchCode &ac : archs)
      j["archs"].push_back({{"arch", ac.arch},
                            {"origin", ac.origin},
                            {"ptxas_replay", ac.replay},
                            {"ptx_target", ac.ptx ? ac.ptx->target : ""},
                            {"built_by", ac.cubin.toolVersion},
                            {"ptxas_options", ac.cubin.ptxasOptions}});
    j["kernels"] = nlohmann::json::array();
    for (const Row &r : rows) {
      nlohmann::json k = {
          {"kernel", r.kernel},
          {"mangled", r.mangled},
          {"arch", r.arch},
          {"hot", r.launcher && r.launcher->hot},
          {"registers", r.registers},
          {"stack_frame_bytes", r.frameBytes},
          {"spill_store_bytes", r.spillStores ? nlohmann::json(*r.spillStores)
                                              : nlohmann::json(nullptr)},
          {"spill_load_bytes", r.spillLoads ? nlohmann::json(*r.spillLoads)
                                            : nlohmann::json(nullptr)},
          {"spill_source", r.spillSource},
          {"static_smem_bytes", r.staticSmem},
          {"shared_section_bytes", r.sharedSection},
          {"dynamic_smem_bytes", r.dynamicSmem},
          {"dynamic_smem_formula", r.launcher ? r.launcher->smemFormula : ""},
          {"block_size", r.launcher ? nlohmann::json(r.launcher->blockSize)
                                    : nlohmann::json(nullptr)}};
      if (r.occ)
        k["occupancy"] = {{"warps_per_block", r.occ->warpsPerBlock},
                          {"blocks_by_warps", r.occ->blocksByWarps},
                          {"blocks_by_registers", r.occ->blocksByRegisters},
                          {"blocks_by_smem", r.occ->blocksBySmem},
                          {"blocks_by_sm_limit", r.occ->blocksBySmLimit},
                          {"registers_per_block", r.occ->registersPerBlock},
                          {"smem_per_block_bytes", r.occ->smemPerBlock},
                          {"active_blocks_per_sm", r.occ->activeBlocks},
                          {"active_warps_per_sm", r.occ->activeWarps},
                          {"occupancy", r.occ->occupancy},
                          {"limiter", r.occ->limiter}};
      else
        k["occupancy"] = nullptr;
      if (r.loads)
        k["global_loads"] = {
            {"ptx_target", r.ptxTarget},
            {"count", r.loads->globalLoads},
            {"widest_bits", r.loads->widestGlobalBits},
            {"loads_128_bits_or_wider", r.loads->wideGlobalLoads},
            {"widest_generic_bits", r.loads->widestGenericBits},
            {"opcodes", r.loads->opcodes},
            {"callees", r.loads->callees}};
      else
        k["global_loads"] = nullptr;
      j["kernels"].push_back(std::move(k));
    }
    nlohmann::json lj = nlohmann::json::object();
    for (const ArchCode &ac : archs)
      if (const SmLimits *lim = findLimits(limits, ac.arch))
        for (const auto &[key, f] : lim->figures)
          lj[ac.arch][key] = {{"value", f.value}, {"source", f.source}};
    j["sm_limits"] = lj;
    j["check"] = {{"problems", problems}, {"ok", problems.empty()}};
    std::ofstream f(opt.json);
    f << j.dump(2) << "\n";
    if (!f) {
      std::cerr << kCmd << ": error: cannot write " << opt.json << "\n";
      return 1;
    }
  }

  if (!problems.empty()) {
    std::ostream &ps = opt.check ? std::cerr : std::cout;
    ps << "\n"
       << (opt.check ? "check failed" : "warnings") << ": " << problems.size()
       << "\n";
    for (const std::string &p : problems)
      ps << "  " << p << "\n";
  } else if (opt.check) {
    os << "\ncheck passed: no spills in the hot kernels on " << archs.size()
       << " architectures, 128-bit loads in the streaming kernels, "
       << "occupancies in [0, 1], ptxas "
       << "agrees with the library"
       << (opt.source.empty() ? "" : ", launchers match " + opt.source) << "\n";
  }
  os.flush();
  return opt.check && !problems.empty() ? 1 : 0;
}
