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
#include <type_traits>

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

/// The same for a fixed message: no std::string is built unless it fails.
inline void check(bool condition, const char *message) {
  if (!condition)
    throw Error(message);
}

/// Throws Error(makeMessage()) when `condition` is false; the message is
/// built only then. For checks on the decode loop's path (a tensor's data
/// accessors run for every operand of every op), where building the text
/// on every call is most of the cost of the check.
template <typename MakeMessage,
          typename =
              std::enable_if_t<std::is_invocable_r_v<std::string, MakeMessage>>>
inline void check(bool condition, MakeMessage &&makeMessage) {
  if (!condition)
    throw Error(makeMessage());
}

} // namespace rt
} // namespace helix

#endif // HELIX_RUNTIME_ERROR_H
