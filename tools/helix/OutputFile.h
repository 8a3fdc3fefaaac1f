//===- OutputFile.h - Write a report to a file ------------------*- C++ -*-===//

#ifndef HELIX_TOOLS_HELIX_OUTPUTFILE_H
#define HELIX_TOOLS_HELIX_OUTPUTFILE_H

#include <fstream>
#include <functional>
#include <iostream>
#include <string>

namespace helix::driver {

/// Writes `path` ("-" is stdout) with `write`; prints one error line prefixed
/// with `command` and returns false if the file cannot be written.
inline bool writeOutputFile(const std::string &command, const std::string &path,
                            const std::function<void(std::ostream &)> &write) {
  if (path == "-") {
    write(std::cout);
    return true;
  }
  std::ofstream os(path, std::ios::binary);
  if (os)
    write(os);
  if (os)
    os.flush();
  if (!os) {
    std::cerr << command << ": error: cannot write " << path << "\n";
    return false;
  }
  return true;
}

} // namespace helix::driver

#endif // HELIX_TOOLS_HELIX_OUTPUTFILE_H
