//===- Error.h - The runtime's one exception type ---------------*- C++ -*-===//
//
// Every runtime failure (bad shapes, a checkpoint missing a tensor, a bad
// prompt file, a backend error) is a helix::rt::Error carrying one line of
// text that names what is wrong. The decode driver turns errors into a
// message on every rank and a non-zero exit.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_RUNTIME_ERROR_H
#define HELIX_RUNTIME_ERROR_H

#include <stdexcept>
#include <string>

namespace helix {
namespace rt {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// Throws Error(message) when `condition` is false.
inline void check(bool condition, const std::string &message) {
  if (!condition)
    throw Error(message);
}

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_ERROR_H
