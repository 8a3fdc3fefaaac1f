//===- OutputFile.h - Write a report to a file ------------------*- C++ -*-===//

#ifndef HELIX_TOOLS_HELIX_OUTPUTFILE_H
#define HELIX_TOOLS_HELIX_OUTPUTFILE_H

#include "CommonOptions.h"
#include "Streams.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>

namespace helix::driver {

/// Writes `path` ("-" is stdout; an in-process run's memory file is
/// kept in memory: Streams.h) with `write`; prints one error line
/// "COMMAND: error: writing PATH: REASON" and returns false if the file
/// cannot be opened or anything written to it is lost (a full disk).
inline bool writeOutputFile(const std::string &command, const std::string &path,
                            const std::function<void(std::ostream &)> &write) {
  if (std::string *memory = cliMemoryFile(path)) {
    std::ostringstream os;
    write(os);
    *memory = os.str();
    return true;
  }
  if (path == "-") {
    write(cliOut());
    return finishStdout(command);
  }
  errno = 0;
  std::ofstream os(path, std::ios::binary);
  if (os)
    write(os);
  if (os)
    os.flush();
  if (os)
    os.close();
  if (!os) {
    cliErr() << command << ": error: writing " << path << ": "
             << (errno ? std::strerror(errno) : "write failed") << "\n";
    return false;
  }
  return true;
}

} // namespace helix::driver

#endif // HELIX_TOOLS_HELIX_OUTPUTFILE_H
