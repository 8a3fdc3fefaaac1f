//===- KernelObjects.cpp - CUDA kernels as nvcc built them ----------------===//
//
// Layouts read here (none is a public NVIDIA specification; each was checked
// against CUDA 13.0's nvcc, ptxas and fatbinary, see docs/gpu.md):
//
//  * fatbinary (.nv_fatbin of a host object): a header {u32 magic
//    0xBA55ED50, u16 version, u16 header size, u64 size of the entries},
//    then entries {u16 kind (1 PTX, 2 ELF), u16, u32 header size, u64 payload
//    size, u32 compressed size, u32, u16 minor, u16 major, u32 arch, u32, u32,
//    u64 flags, u64, u64 uncompressed size, ...} each followed by its payload.
//    Flags 0x2000: payload LZ4-compressed (raw block), 0x8000: zstd.
//  * cubin (ELF, e_machine 190): per kernel a .text.<kernel> section,
//    .nv.info.<kernel> and .nv.shared.<kernel>; the module's .nv.info holds
//    EIATTR records {u8 format, u8 attribute, u16 size, payload} where
//    REGCOUNT (0x2f), FRAME_SIZE (0x11) carry {u32 symbol, u32 value}.
//    .note.nv.tkinfo records the ptxas version and command-line options.
//    From sm_90 on, a kernel's .nv.shared section starts with the 1 KB the
//    driver reserves per block (the cubin then has the symbol
//    .nv.reservedSmem.offset0); sm_80 cubins do not include it.
//
//===----------------------------------------------------------------------===//

#include "KernelObjects.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/Object/Archive.h"
#include "llvm/Object/ELF.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Compression.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace helix::benchkernels {

using llvm::StringRef;

namespace {

constexpr uint32_t kFatbinMagic = 0xBA55ED50u;
constexpr uint16_t kEmCuda = 190;
constexpr uint8_t kEiattrFrameSize = 0x11;
constexpr uint8_t kEiattrRegCount = 0x2f;
constexpr uint8_t kEifmtSval = 4;
constexpr uint64_t kFlagLz4 = 0x2000;
constexpr uint64_t kFlagZstd = 0x8000;

template <typename T> bool readLE(StringRef data, size_t at, T &v) {
  if (at > data.size() || data.size() - at < sizeof(T))
    return false;
  std::memcpy(&v, data.data() + at, sizeof(T));
  return true;
}

std::string errorText(llvm::Error e) { return llvm::toString(std::move(e)); }

/// Decodes one raw LZ4 block (the LZ4 block format: sequences of a token,
/// literals, a 16-bit offset and a match length).
bool lz4Decompress(StringRef in, size_t outSize, std::string &out) {
  out.clear();
  out.reserve(outSize);
  size_t i = 0;
  auto length = [&](size_t base, size_t &len) {
    len = base;
    if (base != 15)
      return true;
    while (i < in.size()) {
      uint8_t b = in[i++];
      len += b;
      if (b != 255)
        return true;
    }
    return false;
  };
  while (i < in.size()) {
    uint8_t token = in[i++];
    size_t lit;
    if (!length(token >> 4, lit) || in.size() - i < lit)
      return false;
    out.append(in.data() + i, lit);
    i += lit;
    if (i == in.size())
      break; // the last sequence has literals only
    if (in.size() - i < 2)
      return false;
    size_t offset = uint8_t(in[i]) | (size_t(uint8_t(in[i + 1])) << 8);
    i += 2;
    size_t match;
    if (!length(token & 15, match))
      return false;
    match += 4;
    if (offset == 0 || offset > out.size())
      return false;
    size_t from = out.size() - offset;
    for (size_t k = 0; k < match; ++k)
      out.push_back(out[from + k]);
    if (out.size() > outSize)
      return false;
  }
  return out.size() == outSize;
}

bool decompressPayload(StringRef payload, uint64_t flags, uint32_t compressed,
                       uint64_t uncompressed, std::string &out,
                       std::string &error) {
  if (!(flags & (kFlagLz4 | kFlagZstd))) {
    out = payload.str();
    return true;
  }
  StringRef in = payload.take_front(compressed ? compressed : payload.size());
  if (flags & kFlagZstd) {
    if (!llvm::compression::zstd::isAvailable()) {
      error = "zstd-compressed fatbin entry, and LLVM was built without zstd";
      return false;
    }
    llvm::SmallVector<uint8_t, 0> buf;
    if (llvm::Error e = llvm::compression::zstd::decompress(
            llvm::arrayRefFromStringRef(in), buf, uncompressed)) {
      error = "zstd: " + errorText(std::move(e));
      return false;
    }
    out.assign(buf.begin(), buf.end());
    return true;
  }
  if (!lz4Decompress(in, uncompressed, out)) {
    error = "malformed LZ4-compressed fatbin entry";
    return false;
  }
  return true;
}

bool readFatbin(StringRef data, const std::string &member, DeviceCode &out,
                std::string &error) {
  size_t at = 0;
  while (at + 16 <= data.size()) {
    uint32_t magic = 0;
    readLE(data, at, magic);
    if (magic != kFatbinMagic) {
      at += 8; // padding between fatbinaries
      continue;
    }
    uint16_t headerSize = 0;
    uint64_t size = 0;
    readLE(data, at + 6, headerSize);
    readLE(data, at + 8, size);
    size_t p = at + headerSize, end = p + size;
    if (end > data.size() || end < p) {
      error = member + ": truncated fatbinary";
      return false;
    }
    while (p + 64 <= end) {
      uint16_t kind = 0;
      uint32_t entryHeader = 0, compressed = 0, arch = 0;
      uint64_t payloadSize = 0, flags = 0, uncompressed = 0;
      readLE(data, p, kind);
      readLE(data, p + 4, entryHeader);
      readLE(data, p + 8, payloadSize);
      readLE(data, p + 16, compressed);
      readLE(data, p + 28, arch);
      readLE(data, p + 40, flags);
      readLE(data, p + 56, uncompressed);
      size_t body = p + entryHeader;
      if (entryHeader < 64 || body > end || end - body < payloadSize) {
        error = member + ": malformed fatbinary entry";
        return false;
      }
      StringRef payload = data.substr(body, payloadSize);
      std::string bytes;
      if (kind == 1 || kind == 2) {
        if (!decompressPayload(payload, flags, compressed, uncompressed, bytes,
                               error)) {
          error = member + ": " + error;
          return false;
        }
      }
      if (kind == 1) {
        Ptx ptx;
        ptx.member = member;
        ptx.smVersion = static_cast<int>(arch);
        while (!bytes.empty() && bytes.back() == '\0')
          bytes.pop_back();
        ptx.text = std::move(bytes);
        scanPtx(ptx);
        out.ptx.push_back(std::move(ptx));
      } else if (kind == 2) {
        Cubin cubin;
        cubin.member = member;
        if (!parseCubin(bytes, cubin, error)) {
          error = member + ": " + error;
          return false;
        }
        out.cubins.push_back(std::move(cubin));
      }
      p = body + payloadSize;
    }
    at = end;
  }
  return true;
}

bool readHostObject(llvm::object::ObjectFile &obj, const std::string &member,
                    DeviceCode &out, std::string &error) {
  for (const llvm::object::SectionRef &sec : obj.sections()) {
    llvm::Expected<StringRef> name = sec.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name != ".nv_fatbin")
      continue;
    llvm::Expected<StringRef> contents = sec.getContents();
    if (!contents) {
      error = member + ": " + errorText(contents.takeError());
      return false;
    }
    if (!readFatbin(*contents, member, out, error))
      return false;
  }
  return true;
}

/// ".note.nv.tkinfo": {u32 namesz, u32 descsz, u32 type, "NVIDIA Corp"},
/// then a descriptor {u32, u32, u32 tool, u32 version, u32 branch, u32
/// options} of offsets into the strings that follow it.
void readToolkitNote(StringRef note, Cubin &out) {
  uint32_t namesz, descsz;
  if (!readLE(note, 0, namesz) || !readLE(note, 4, descsz))
    return;
  size_t desc = 12 + ((namesz + 3) & ~3u);
  if (desc > note.size())
    return;
  StringRef d = note.substr(desc, descsz);
  uint32_t versionAt, optionsAt;
  if (!readLE(d, 12, versionAt) || !readLE(d, 20, optionsAt))
    return;
  StringRef strings = d.drop_front(24);
  auto str = [&](uint32_t at) -> std::string {
    if (at >= strings.size())
      return "";
    StringRef s = strings.drop_front(at);
    return s.take_until([](char c) { return c == '\0'; }).str();
  };
  out.toolVersion = str(versionAt);
  std::istringstream options(str(optionsAt));
  for (std::string w; options >> w;)
    out.ptxasOptions.push_back(w);
  for (size_t i = 0; i + 1 < out.ptxasOptions.size(); ++i)
    if (out.ptxasOptions[i] == "-arch" || out.ptxasOptions[i] == "--gpu-name")
      out.arch = out.ptxasOptions[i + 1];
}

} // namespace

bool parseCubin(const std::string &bytes, Cubin &out, std::string &error) {
  using ELFT = llvm::object::ELF64LE;
  auto file = llvm::object::ELFFile<ELFT>::create(StringRef(bytes));
  if (!file) {
    error = "cubin: " + errorText(file.takeError());
    return false;
  }
  const auto &header = file->getHeader();
  if (header.e_machine != kEmCuda) {
    error =
        "not a CUDA ELF (e_machine " + std::to_string(header.e_machine) + ")";
    return false;
  }
  out.bytes = bytes;
  out.smVersion = static_cast<int>((header.e_flags >> 8) & 0xff);
  auto sections = file->sections();
  if (!sections) {
    error = "cubin: " + errorText(sections.takeError());
    return false;
  }
  std::map<std::string, const ELFT::Shdr *> byName;
  const ELFT::Shdr *symtab = nullptr;
  for (const ELFT::Shdr &sec : *sections) {
    auto name = file->getSectionName(sec);
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    byName[name->str()] = &sec;
    if (sec.sh_type == llvm::ELF::SHT_SYMTAB)
      symtab = &sec;
  }
  if (auto it = byName.find(".note.nv.tkinfo"); it != byName.end()) {
    if (auto c = file->getSectionContents(*it->second))
      readToolkitNote(llvm::toStringRef(*c), out);
    else
      llvm::consumeError(c.takeError());
  }
  if (out.arch.empty())
    out.arch = "sm_" + std::to_string(out.smVersion);
  if (!symtab) {
    error = "cubin without a symbol table";
    return false;
  }
  auto syms = file->symbols(symtab);
  if (!syms) {
    error = errorText(syms.takeError());
    return false;
  }
  auto strtab = file->getStringTableForSymtab(*symtab);
  if (!strtab) {
    error = errorText(strtab.takeError());
    return false;
  }
  // Module attributes: REGCOUNT and FRAME_SIZE per symbol index.
  std::map<uint32_t, uint32_t> regs, frames;
  if (auto it = byName.find(".nv.info"); it != byName.end()) {
    auto c = file->getSectionContents(*it->second);
    if (!c) {
      error = errorText(c.takeError());
      return false;
    }
    StringRef info = llvm::toStringRef(*c);
    size_t p = 0;
    while (p + 4 <= info.size()) {
      uint8_t format = info[p], attr = info[p + 1];
      uint16_t size = 0;
      readLE(info, p + 2, size);
      size_t payload = p + 4;
      if (format != kEifmtSval) {
        p += 4; // the value is in the 16 bits that follow
        continue;
      }
      if (payload + size > info.size())
        break;
      uint32_t sym, value;
      if (size == 8 && readLE(info, payload, sym) &&
          readLE(info, payload + 4, value)) {
        if (attr == kEiattrRegCount)
          regs[sym] = value;
        else if (attr == kEiattrFrameSize)
          frames[sym] = value;
      }
      p = payload + size;
    }
  }
  uint32_t index = 0;
  bool reserved = false;
  for (const ELFT::Sym &sym : *syms) {
    uint32_t symIndex = index++;
    auto name = sym.getName(*strtab);
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name == ".nv.reservedSmem.offset0")
      reserved = true;
    if (sym.getType() != llvm::ELF::STT_FUNC)
      continue;
    std::string n = name->str();
    if (!byName.count(".text." + n) || !byName.count(".nv.info." + n))
      continue; // a device function, not a kernel
    CubinKernel k;
    k.mangled = n;
    k.name = shortKernelName(n);
    if (auto it = regs.find(symIndex); it != regs.end())
      k.registers = static_cast<int>(it->second);
    if (auto it = frames.find(symIndex); it != frames.end())
      k.frameBytes = it->second;
    if (auto it = byName.find(".nv.shared." + n); it != byName.end())
      k.sharedSectionBytes = static_cast<int64_t>(it->second->sh_size);
    out.kernels.push_back(std::move(k));
  }
  // The section's first kilobyte is the driver's reserved block when the
  // cubin refers to it (sm_90 and later): the kernel's own data follows it.
  out.reservedSmemBytes = reserved ? 1024 : 0;
  for (CubinKernel &k : out.kernels)
    k.staticSmemBytes =
        std::max<int64_t>(0, k.sharedSectionBytes - out.reservedSmemBytes);
  std::sort(out.kernels.begin(), out.kernels.end(),
            [](const CubinKernel &a, const CubinKernel &b) {
              return a.name < b.name;
            });
  return true;
}

bool readDeviceCode(const std::string &path, DeviceCode &out,
                    std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    error = path + ": " + buffer.getError().message();
    return false;
  }
  StringRef data = (*buffer)->getBuffer();
  std::string base = llvm::sys::path::filename(path).str();
  uint32_t magic = 0;
  readLE(data, 0, magic);
  if (magic == kFatbinMagic)
    return readFatbin(data, base, out, error);
  if (data.starts_with("\x7f"
                       "ELF") &&
      data.size() > 20) {
    uint16_t machine;
    readLE(data, 18, machine);
    if (machine == kEmCuda) {
      Cubin cubin;
      cubin.member = base;
      if (!parseCubin(data.str(), cubin, error)) {
        error = path + ": " + error;
        return false;
      }
      out.cubins.push_back(std::move(cubin));
      return true;
    }
  }
  auto binary = llvm::object::createBinary((*buffer)->getMemBufferRef());
  if (!binary) {
    error = path + ": " + errorText(binary.takeError());
    return false;
  }
  if (auto *archive = llvm::dyn_cast<llvm::object::Archive>(binary->get())) {
    llvm::Error err = llvm::Error::success();
    for (const llvm::object::Archive::Child &child : archive->children(err)) {
      auto name = child.getName();
      std::string member = base + "(" + (name ? name->str() : "?") + ")";
      if (!name)
        llvm::consumeError(name.takeError());
      auto obj = child.getAsBinary();
      if (!obj) {
        llvm::consumeError(obj.takeError());
        continue;
      }
      if (auto *o = llvm::dyn_cast<llvm::object::ObjectFile>(obj->get()))
        if (!readHostObject(*o, member, out, error))
          return false;
    }
    if (err) {
      error = path + ": " + errorText(std::move(err));
      return false;
    }
    return true;
  }
  if (auto *o = llvm::dyn_cast<llvm::object::ObjectFile>(binary->get()))
    return readHostObject(*o, base, out, error);
  error = path + ": not an archive, an object, a fatbinary or a cubin";
  return false;
}

//===----------------------------------------------------------------------===//
// PTX
//===----------------------------------------------------------------------===//

int loadBits(const std::string &opcode) {
  StringRef op(opcode);
  if (!op.starts_with("ld.") && !op.starts_with("ldu."))
    return 0;
  llvm::SmallVector<StringRef, 8> parts;
  op.split(parts, '.');
  int vec = 1, bits = 0;
  for (StringRef p : llvm::ArrayRef<StringRef>(parts).drop_front()) {
    if (p == "v2" || p == "v4" || p == "v8") {
      vec = p[1] - '0';
      continue;
    }
    if (p.contains("::")) // cache hints such as L2::128B
      continue;
    if (p.size() >= 2 && StringRef("bsuf").contains(p[0])) {
      unsigned n;
      if (!p.drop_front().getAsInteger(10, n) &&
          (n == 8 || n == 16 || n == 32 || n == 64 || n == 128))
        bits = static_cast<int>(n);
    }
    if (p == "f16x2" || p == "bf16x2")
      bits = 32;
  }
  return vec * bits;
}

void scanPtx(Ptx &ptx) {
  static const std::regex header(
      R"(^\s*(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$%][\w$%]*))");
  static const std::regex target(R"(^\s*\.target\s+([\w]+))");
  static const std::regex call(R"(\bcall(?:\.uni)?\b)");
  std::istringstream in(ptx.text);
  std::string line;
  std::string current;
  bool isEntry = false, inBody = false, pendingCall = false;
  int depth = 0;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!inBody && current.empty()) {
      if (std::regex_search(line, m, target))
        ptx.target = m[1];
      if (std::regex_search(line, m, header)) {
        current = m[2];
        isEntry = m[1] == "entry";
      }
    }
    if (current.empty())
      continue;
    if (!inBody) {
      // The header runs until the body's '{' or a declaration's ';'.
      size_t brace = line.find('{');
      if (brace == std::string::npos) {
        if (line.find(';') != std::string::npos)
          current.clear(); // a prototype
        continue;
      }
      inBody = true;
      depth = 0;
      ptx.functions[current]; // exists even without loads
      if (isEntry)
        ptx.entries.push_back(current);
    }
    LoadScan &scan = ptx.functions[current];
    std::string code = line.substr(0, line.find("//"));
    // The callee is the first identifier after "call(.uni) (retval),".
    if (pendingCall || std::regex_search(code, call)) {
      std::string rest = code;
      if (!pendingCall)
        rest =
            std::regex_replace(code, std::regex(R"(.*\bcall(\.uni)?\b)"), "");
      rest = std::regex_replace(rest, std::regex(R"(\([^)]*\))"), "");
      std::smatch id;
      if (std::regex_search(rest, id, std::regex(R"([A-Za-z_$][\w$]*)"))) {
        scan.callees.push_back(id[0]);
        pendingCall = false;
      } else {
        pendingCall = true;
      }
    }
    std::istringstream words(code);
    std::string word;
    if (words >> word) {
      if (word[0] == '@' && !(words >> word))
        word.clear();
      if (StringRef(word).starts_with("ld.") ||
          StringRef(word).starts_with("ldu.")) {
        int bits = loadBits(word);
        StringRef w(word);
        bool global = w.contains(".global");
        bool other = w.contains(".shared") || w.contains(".local") ||
                     w.contains(".param") || w.contains(".const");
        if (global) {
          ++scan.globalLoads;
          ++scan.opcodes[word];
          scan.widestGlobalBits = std::max(scan.widestGlobalBits, bits);
          if (bits >= 128)
            ++scan.wideGlobalLoads;
        } else if (!other) {
          scan.widestGenericBits = std::max(scan.widestGenericBits, bits);
        }
      }
    }
    for (char c : code) {
      if (c == '{')
        ++depth;
      else if (c == '}' && --depth == 0) {
        inBody = false;
        current.clear();
        break;
      }
    }
  }
}

LoadScan Ptx::reachable(const std::string &entry) const {
  LoadScan total;
  std::set<std::string> seen;
  std::vector<std::string> work{entry};
  while (!work.empty()) {
    std::string f = work.back();
    work.pop_back();
    if (!seen.insert(f).second)
      continue;
    auto it = functions.find(f);
    if (it == functions.end())
      continue;
    const LoadScan &s = it->second;
    total.globalLoads += s.globalLoads;
    total.wideGlobalLoads += s.wideGlobalLoads;
    total.widestGlobalBits =
        std::max(total.widestGlobalBits, s.widestGlobalBits);
    total.widestGenericBits =
        std::max(total.widestGenericBits, s.widestGenericBits);
    for (const auto &[op, n] : s.opcodes)
      total.opcodes[op] += n;
    if (f != entry)
      total.callees.push_back(f);
    for (const std::string &c : s.callees)
      work.push_back(c);
  }
  return total;
}

//===----------------------------------------------------------------------===//
// ptxas
//===----------------------------------------------------------------------===//

std::map<std::string, PtxasFigures> parsePtxasLog(const std::string &log) {
  static const std::regex compiling(
      R"(Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex properties(R"(Function properties for ([^\s]+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  std::map<std::string, PtxasFigures> out;
  std::istringstream in(log);
  std::string line, arch, entry, props;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, compiling)) {
      entry = m[1];
      arch = m[2];
      PtxasFigures &f = out[arch + "/" + entry];
      f.arch = arch;
      f.entry = true;
      props.clear();
    } else if (std::regex_search(line, m, properties)) {
      props = m[1];
      if (props != entry) // a called function, after its caller's figures
        entry.clear();
    } else if (std::regex_search(line, m, frame)) {
      if (props.empty() || arch.empty())
        continue;
      PtxasFigures &f = out[arch + "/" + props];
      f.arch = arch;
      f.frameBytes = std::stoll(m[1]);
      f.spillStoreBytes = std::stoll(m[2]);
      f.spillLoadBytes = std::stoll(m[3]);
    } else if (std::regex_search(line, m, used)) {
      if (entry.empty())
        continue;
      PtxasFigures &f = out[arch + "/" + entry];
      f.registers = std::stoi(m[1]);
      std::smatch s;
      if (std::regex_search(line, s, smem))
        f.smemBytes = std::stoll(s[1]);
    }
  }
  return out;
}

std::vector<std::string>
cubinDifferences(const std::string &a, const std::string &b,
                 const std::vector<std::string> &ignore, std::string &error) {
  using ELFT = llvm::object::ELF64LE;
  auto sections = [&](const std::string &bytes,
                      std::map<std::string, std::string> &out) {
    auto file = llvm::object::ELFFile<ELFT>::create(StringRef(bytes));
    if (!file) {
      error = errorText(file.takeError());
      return false;
    }
    auto secs = file->sections();
    if (!secs) {
      error = errorText(secs.takeError());
      return false;
    }
    for (const ELFT::Shdr &sec : *secs) {
      auto name = file->getSectionName(sec);
      if (!name) {
        llvm::consumeError(name.takeError());
        continue;
      }
      if (std::find(ignore.begin(), ignore.end(), name->str()) != ignore.end())
        continue;
      std::string content = "size:" + std::to_string(sec.sh_size);
      if (sec.sh_type != llvm::ELF::SHT_NOBITS) {
        auto c = file->getSectionContents(sec);
        if (!c) {
          error = errorText(c.takeError());
          return false;
        }
        content = llvm::toStringRef(*c).str();
      }
      out[name->str()] = std::move(content);
    }
    return true;
  };
  std::map<std::string, std::string> sa, sb;
  std::vector<std::string> diff;
  if (!sections(a, sa) || !sections(b, sb))
    return {"(unreadable)"};
  for (const auto &[name, content] : sa) {
    auto it = sb.find(name);
    if (it == sb.end() || it->second != content)
      diff.push_back(name);
  }
  for (const auto &[name, content] : sb)
    if (!sa.count(name))
      diff.push_back(name);
  return diff;
}

namespace {
bool readWholeFile(const std::string &path, std::string &out) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

bool writeWholeFile(const std::string &path, const std::string &data) {
  std::ofstream f(path, std::ios::binary);
  f << data;
  return static_cast<bool>(f);
}
} // namespace

bool runPtxas(const std::string &ptxas, const std::string &ptxText,
              const std::vector<std::string> &options, std::string &log,
              std::string &cubin, std::string &error) {
  llvm::SmallString<128> dir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("helix-bench-kernels", dir)) {
    error = "temporary directory: " + ec.message();
    return false;
  }
  std::string in = (dir + "/kernels.ptx").str(),
              out = (dir + "/kernels.cubin").str(),
              logPath = (dir + "/ptxas.log").str();
  bool ok = writeWholeFile(in, ptxText);
  if (!ok)
    error = "cannot write " + in;
  if (ok) {
    std::vector<StringRef> args{ptxas};
    for (const std::string &o : options)
      args.push_back(o);
    args.push_back("-v");
    args.push_back(in);
    args.push_back("-o");
    args.push_back(out);
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                            StringRef(logPath)};
    std::string msg;
    int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                       /*SecondsToWait=*/300, 0, &msg);
    readWholeFile(logPath, log);
    if (rc != 0) {
      error = "ptxas failed (" +
              (msg.empty() ? "exit " + std::to_string(rc) : msg) +
              "): " + log.substr(0, 400);
      ok = false;
    } else if (!readWholeFile(out, cubin)) {
      error = "ptxas wrote no " + out;
      ok = false;
    }
  }
  llvm::sys::fs::remove_directories(dir);
  return ok;
}

std::string ptxasVersion(const std::string &ptxas) {
  llvm::SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("helix-bench-kernels", "txt", path))
    return "";
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(path),
                                          StringRef(path)};
  std::vector<StringRef> args{ptxas, "--version"};
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 60);
  std::string text, version;
  readWholeFile(path.str().str(), text);
  llvm::sys::fs::remove(path);
  if (rc != 0)
    return "";
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (StringRef(line).starts_with("Cuda compilation tools"))
      version = line;
  return version;
}

std::string shortKernelName(const std::string &mangled) {
  std::string d = llvm::demangle(mangled);
  // Drop the parameter list: the parentheses that close the name (those of
  // "(anonymous namespace)" come before it).
  if (!d.empty() && d.back() == ')') {
    int depth = 0;
    for (size_t i = d.size(); i-- > 0;) {
      if (d[i] == ')')
        ++depth;
      else if (d[i] == '(' && --depth == 0) {
        d = d.substr(0, i);
        break;
      }
    }
  }
  size_t colon = d.rfind("::");
  if (colon != std::string::npos)
    d = d.substr(colon + 2);
  return d;
}

} // namespace helix::benchkernels
