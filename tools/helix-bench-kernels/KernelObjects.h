//===- KernelObjects.h - CUDA kernels as nvcc built them -------*- C++ -*-===//
//
// Reads the device code that nvcc embedded in a host object or a static
// library (.nv_fatbin sections: one ELF "cubin" per real architecture, the
// PTX per virtual one), the per-kernel resources the cubins record, the
// global loads of the PTX, and the resources ptxas reports for that PTX
// (spills are only in ptxas's report, not in the cubin). No GPU involved.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_TOOLS_BENCHKERNELS_KERNELOBJECTS_H
#define HELIX_TOOLS_BENCHKERNELS_KERNELOBJECTS_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace helix::benchkernels {

/// One kernel (.entry) of one cubin, as the cubin records it.
struct CubinKernel {
  std::string mangled;
  std::string name;               // e.g. "attentionKernel"
  int registers = -1;             // EIATTR_REGCOUNT
  int64_t frameBytes = 0;         // EIATTR_FRAME_SIZE (local memory per thread)
  int64_t sharedSectionBytes = 0; // size of .nv.shared.<kernel>
  int64_t staticSmemBytes = 0;    // the kernel's own __shared__ data
};

/// One cubin (SASS for one architecture).
struct Cubin {
  std::string member; // archive member / object it came from
  std::string arch;   // "sm_90", "sm_90a", ... (from ptxas's note)
  int smVersion = 0;  // 90, 100, ... (ELF e_flags)
  std::string
      toolVersion; // e.g. "Cuda compilation tools, release 13.0, V13.0.88"
  std::vector<std::string>
      ptxasOptions;              // as recorded, e.g. {-arch, sm_90, -m, 64}
  int64_t reservedSmemBytes = 0; // system-reserved block at the start of smem
  std::string bytes;             // the ELF image
  std::vector<CubinKernel> kernels;
};

/// Global loads of one PTX function body (and of the functions it calls).
struct LoadScan {
  int globalLoads = 0; // ld/ldu .global instructions
  int widestGlobalBits = 0;
  int wideGlobalLoads = 0;   // of which >= 128 bits
  int widestGenericBits = 0; // ld without a state space (may be global)
  std::vector<std::string> callees;
  std::map<std::string, int> opcodes; // ld.global... -> count (own body)
};

/// One PTX module (one virtual architecture).
struct Ptx {
  std::string member;
  int smVersion = 0;  // the fatbin entry's architecture, e.g. 90
  std::string target; // ".target" of the module, e.g. "sm_90"
  std::string text;
  std::map<std::string, LoadScan> functions; // .entry and .func by name
  std::vector<std::string> entries;

  /// The loads of `entry` merged with those of every function it reaches.
  LoadScan reachable(const std::string &entry) const;
};

struct DeviceCode {
  std::vector<Cubin> cubins;
  std::vector<Ptx> ptx;
};

/// Reads an archive (.a), a host object (.o) with a .nv_fatbin section, a
/// bare fatbinary or a bare cubin.
bool readDeviceCode(const std::string &path, DeviceCode &out,
                    std::string &error);

/// Parses a cubin image (also used for ptxas's output).
bool parseCubin(const std::string &bytes, Cubin &out, std::string &error);

/// Parses a PTX module's functions and their global loads.
void scanPtx(Ptx &ptx);

/// The width in bits of a load opcode such as "ld.global.nc.v4.f32"
/// (vector count x element bits), 0 when it is not a load of registers.
int loadBits(const std::string &opcode);

/// Figures from `ptxas -v` for one function.
struct PtxasFigures {
  std::string arch;
  bool entry = false;
  int registers = -1;
  int64_t frameBytes = 0, spillStoreBytes = 0, spillLoadBytes = 0;
  int64_t smemBytes = 0;
};

/// Parses the output of `ptxas -v` (also `nvcc -Xptxas -v`): function ->
/// figures, keyed by "arch/function".
std::map<std::string, PtxasFigures> parsePtxasLog(const std::string &log);

/// The sections of two cubins that differ, ignoring the ones named in
/// `ignore` (".note.nv.tkinfo" holds the command line). Empty when equal.
std::vector<std::string>
cubinDifferences(const std::string &a, const std::string &b,
                 const std::vector<std::string> &ignore, std::string &error);

/// Runs `ptxas` on `ptxText` with `options` plus -v; fills the log and the
/// cubin it produced.
bool runPtxas(const std::string &ptxas, const std::string &ptxText,
              const std::vector<std::string> &options, std::string &log,
              std::string &cubin, std::string &error);

/// "Cuda compilation tools, release 13.0, V13.0.88" of `ptxas --version`.
std::string ptxasVersion(const std::string &ptxas);

/// "helix::rt::cuda::(anonymous namespace)::attentionKernel(...)" ->
/// "attentionKernel".
std::string shortKernelName(const std::string &mangled);

} // namespace helix::benchkernels

#endif
