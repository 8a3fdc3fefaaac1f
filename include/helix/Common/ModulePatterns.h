//===- ModulePatterns.h - Modules a checkpoint keeps unquantized -*- C++ -*-=//
//
// A quantized checkpoint lists the modules it keeps unquantized
// (modules_to_not_convert, ignore, exclude_modules) as glob patterns (`*`
// matches any text) or, compressed-tensors' way, as regular expressions
// written "re:<regex>" and matched against the whole module name. This is
// the one matcher for both, with its own small regular-expression engine
// (literals, `.`, classes `[a-z0-9_]` and `[^...]`, escapes `\.` `\d` `\w`
// `\s`, groups with alternation `(a|b)`, and `*` `+` `?`), so that
// std::regex stays out of the compiler. Needs nothing but the standard
// library; link HelixCommon.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_COMMON_MODULEPATTERNS_H
#define HELIX_COMMON_MODULEPATTERNS_H

#include <string>
#include <vector>

namespace helix {

/// Whether `name` (a tensor or module) lies in a module `patterns` keeps
/// unquantized: a glob pattern names a module, so it matches the module and
/// everything in it ("<module>.*"); a "re:" pattern must match all of
/// `name`. A regular expression this engine cannot read matches nothing
/// (the importer refuses such configs: checkModuleRegex).
bool isExcludedModule(const std::string &name,
                      const std::vector<std::string> &patterns);

/// False with a one-line `error` when `re` is not a regular expression the
/// engine reads.
bool checkModuleRegex(const std::string &re, std::string &error);

/// Whether regular expression `re` matches all of `text` (false for one the
/// engine cannot read).
bool regexFullMatch(const std::string &re, const std::string &text);

} // namespace helix

#endif // HELIX_COMMON_MODULEPATTERNS_H
