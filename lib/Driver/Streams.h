//===- Streams.h - The streams of the current helix run ---------*- C++ -*-===//
//
// The commands print through these, not std::cout / std::cerr, so that a
// run in process (runHelix: the C API, Python) returns what it printed and
// the executable prints to the terminal. Set for the duration of a run, per
// thread.
//
//===----------------------------------------------------------------------===//

#ifndef HELIX_LIB_DRIVER_STREAMS_H
#define HELIX_LIB_DRIVER_STREAMS_H

#include <ostream>
#include <string>

namespace helix::driver {

/// Standard output and standard error of the current run.
std::ostream &cliOut();
std::ostream &cliErr();
/// Whether cliOut() is the process's stdout (its write errors are checked
/// on the C stream too).
bool cliOutIsProcessStdout();

/// The text `--model -` reads: the run's input, else all of standard input.
/// False with `error` set when standard input cannot be read.
bool readCliInput(std::string &text, std::string &error);
/// What messages call that input: the in-process run's inputName (empty:
/// errors say "<input>" and the model is named by its model_type), else
/// "<stdin>".
std::string cliInputName();

/// The in-memory file a run asked for at `path` (Invocation::memoryFiles),
/// or null: then the path is a file to write.
std::string *cliMemoryFile(const std::string &path);

} // namespace helix::driver

#endif // HELIX_LIB_DRIVER_STREAMS_H
