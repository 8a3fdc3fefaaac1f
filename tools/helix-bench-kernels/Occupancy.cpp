//===- Occupancy.cpp - Per-SM limits and theoretical occupancy ------------===//

#include "Occupancy.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <fstream>
#include <regex>

namespace helix::benchkernels {

const char *const kLimitKeys[] = {"warp_size",
                                  "max_threads_per_block",
                                  "max_threads_per_sm",
                                  "max_warps_per_sm",
                                  "max_blocks_per_sm",
                                  "registers_per_sm",
                                  "max_registers_per_block",
                                  "max_registers_per_thread",
                                  "register_allocation_unit",
                                  "sub_partitions_per_sm",
                                  "shared_memory_per_sm_bytes",
                                  "max_shared_memory_per_block_bytes",
                                  "default_shared_memory_per_block_bytes",
                                  "reserved_shared_memory_per_block_bytes",
                                  "shared_memory_allocation_unit_bytes",
                                  nullptr};

bool readLimits(const std::string &path, std::map<std::string, SmLimits> &out,
                std::string &error) {
  std::ifstream f(path);
  if (!f) {
    error = path + ": cannot open";
    return false;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception &e) {
    error = path + ": " + e.what();
    return false;
  }
  if (!j.contains("archs") || !j["archs"].is_object()) {
    error = path + ": no 'archs' object";
    return false;
  }
  const nlohmann::json &sources =
      j.contains("sources") ? j["sources"] : nlohmann::json::object();
  for (const auto &[arch, a] : j["archs"].items()) {
    SmLimits lim;
    lim.arch = arch;
    lim.name = a.value("name", arch);
    for (const char *const *key = kLimitKeys; *key; ++key) {
      std::string where = path + ": archs." + arch + "." + *key;
      if (!a.contains(*key) || !a[*key].is_object() ||
          !a[*key].contains("value") || !a[*key]["value"].is_number_integer() ||
          a[*key]["value"].get<int64_t>() <= 0) {
        error =
            where + ": expected {\"value\": positive integer, \"source\": ...}";
        return false;
      }
      if (!a[*key].contains("source") || !a[*key]["source"].is_string() ||
          a[*key]["source"].get<std::string>().empty()) {
        error = where + ": every figure needs a source";
        return false;
      }
      Figure fig;
      fig.value = a[*key]["value"].get<int64_t>();
      fig.source = a[*key]["source"].get<std::string>();
      // "pg: Table 30, ...": every source id named must be described.
      static const std::regex id(R"((?:^|; )(\w+):)");
      for (auto it =
               std::sregex_iterator(fig.source.begin(), fig.source.end(), id);
           it != std::sregex_iterator(); ++it) {
        std::string name = (*it)[1];
        if (!sources.contains(name) || !sources[name].contains("title")) {
          error = where + ": source '" + name + "' is not in 'sources'";
          return false;
        }
        lim.sources[name] = sources[name]["title"].get<std::string>() + " <" +
                            sources[name].value("url", "") + ">";
      }
      if (lim.sources.empty()) {
        error = where + ": the source must start with an id of 'sources'";
        return false;
      }
      lim.figures[*key] = fig;
    }
    if (!a.contains("register_allocation_granularity") ||
        a["register_allocation_granularity"].value("value", "") != "warp") {
      error = path + ": archs." + arch +
              ".register_allocation_granularity: only \"warp\" is modelled";
      return false;
    }
    if (lim.get("max_warps_per_sm") * lim.get("warp_size") !=
        lim.get("max_threads_per_sm")) {
      error = path + ": archs." + arch +
              ": max_warps_per_sm x warp_size != max_threads_per_sm";
      return false;
    }
    out[arch] = std::move(lim);
  }
  return true;
}

const SmLimits *findLimits(const std::map<std::string, SmLimits> &all,
                           const std::string &arch) {
  auto it = all.find(arch);
  if (it == all.end() && !arch.empty() &&
      (arch.back() == 'a' || arch.back() == 'f'))
    it = all.find(arch.substr(0, arch.size() - 1));
  return it == all.end() ? nullptr : &it->second;
}

namespace {
int64_t divUp(int64_t x, int64_t y) { return (x + y - 1) / y; }
int64_t roundUp(int64_t x, int64_t y) { return divUp(x, y) * y; }
} // namespace

Occupancy computeOccupancy(const SmLimits &L, const KernelResources &k) {
  Occupancy o;
  int64_t warp = L.get("warp_size");
  int64_t maxWarps = L.get("max_warps_per_sm");
  if (k.blockSize <= 0 || k.blockSize > L.get("max_threads_per_block")) {
    o.limiter = "block size";
    return o;
  }
  o.warpsPerBlock = static_cast<int>(divUp(k.blockSize, warp));

  // Warps (cudaOccMaxBlocksPerSMWarpsLimit).
  o.blocksByWarps = static_cast<int>(maxWarps / o.warpsPerBlock);

  // Registers (cudaOccMaxBlocksPerSMRegsLimit): allocated per warp in units
  // of register_allocation_unit, in each of the SM's sub-partitions.
  int64_t parts = L.get("sub_partitions_per_sm");
  int64_t regsPerWarp =
      roundUp(int64_t(k.registers) * warp, L.get("register_allocation_unit"));
  o.registersPerBlock = regsPerWarp * o.warpsPerBlock;
  int64_t assumed = regsPerWarp * roundUp(o.warpsPerBlock, parts);
  if (k.registers > L.get("max_registers_per_thread") ||
      o.registersPerBlock > L.get("max_registers_per_block") ||
      assumed > L.get("max_registers_per_block")) {
    o.blocksByRegisters = 0;
  } else if (regsPerWarp == 0) {
    o.blocksByRegisters = INT_MAX;
  } else {
    int64_t warpsPerPart = (L.get("registers_per_sm") / parts) / regsPerWarp;
    o.blocksByRegisters =
        static_cast<int>(warpsPerPart * parts / o.warpsPerBlock);
  }

  // Shared memory (cudaOccMaxBlocksPerSMSmemLimit): the driver's reserved
  // block comes on top of the kernel's static and dynamic data.
  o.smemPerBlock = roundUp(k.staticSmemBytes + k.dynamicSmemBytes +
                               L.get("reserved_shared_memory_per_block_bytes"),
                           L.get("shared_memory_allocation_unit_bytes"));
  int64_t perBlockLimit = L.get("default_shared_memory_per_block_bytes") +
                          L.get("reserved_shared_memory_per_block_bytes");
  if (o.smemPerBlock > perBlockLimit)
    o.blocksBySmem = 0;
  else
    o.blocksBySmem =
        static_cast<int>(L.get("shared_memory_per_sm_bytes") / o.smemPerBlock);

  o.blocksBySmLimit = static_cast<int>(L.get("max_blocks_per_sm"));

  struct Limit {
    int blocks;
    const char *name;
  } limits[] = {{o.blocksByWarps, "warps"},
                {o.blocksByRegisters, "registers"},
                {o.blocksBySmem, "smem"},
                {o.blocksBySmLimit, "blocks"}};
  const Limit *least = &limits[0];
  for (const Limit &l : limits)
    if (l.blocks < least->blocks)
      least = &l;
  o.activeBlocks = least->blocks;
  o.limiter = least->name;
  if (o.activeBlocks == 0 && least == &limits[2])
    o.limiter = "smem>48KB";
  o.activeWarps = o.activeBlocks * o.warpsPerBlock;
  o.occupancy = double(o.activeWarps) / double(maxWarps);
  return o;
}

} // namespace helix::benchkernels
