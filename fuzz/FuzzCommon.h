//===- FuzzCommon.h - Helpers shared by the libFuzzer targets ---*- C++ -*-===//
//
// Source-tree inputs the targets price or rewrite (read once, at start-up),
// and the oracle every target applies on top of ASan/UBSan: an error is one
// non-empty line, anything else is a finding (FUZZ_CHECK aborts with the
// message, so libFuzzer saves the input as a crash).
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_FUZZ_FUZZCOMMON_H
#define HELIX_FUZZ_FUZZCOMMON_H

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#ifndef HELIX_SOURCE_DIR
#define HELIX_SOURCE_DIR "."
#endif

namespace helix {
namespace fuzz {

/// A file of the source tree (HELIX_SOURCE_DIR, or $HELIX_SOURCE_DIR when the
/// binary runs elsewhere); aborts when it cannot be read, which is a set-up
/// error, not a finding.
inline std::string readSourceFile(const std::string &relative) {
  const char *env = std::getenv("HELIX_SOURCE_DIR");
  std::string path = std::string(env ? env : HELIX_SOURCE_DIR) + "/" + relative;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "helix fuzz: cannot read %s (set HELIX_SOURCE_DIR)\n",
                 path.c_str());
    std::abort();
  }
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

[[noreturn]] inline void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "helix fuzz: oracle failed: %s\n  %s\n", what,
               detail.c_str());
  std::abort();
}

/// The contract of every helix error: one non-empty line.
inline void checkErrorLine(const std::string &error, const char *api) {
  if (error.empty())
    fail(api, "failed without an error message");
  if (error.find('\n') != std::string::npos)
    fail(api, "error message is not one line: " + error);
}

} // namespace fuzz
} // namespace helix

// UBSan reports stop the run with a stack (the build has
// -fno-sanitize-recover=all; this adds the stack). One definition per
// fuzzer binary: each is one translation unit.
extern "C" const char *__ubsan_default_options() {
  return "print_stacktrace=1:halt_on_error=1";
}

#define FUZZ_CHECK(cond, detail)                                               \
  do {                                                                         \
    if (!(cond))                                                               \
      ::helix::fuzz::fail(#cond, (detail));                                    \
  } while (0)

#endif // HELIX_FUZZ_FUZZCOMMON_H
