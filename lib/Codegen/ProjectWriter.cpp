//===- ProjectWriter.cpp - Write the project of a compiled plan -----------===//

#include "ProjectParts.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace helix {

static bool writeFile(const std::string &path, const std::string &text,
                      std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (!ec) {
    os << text;
    os.close();
    if (!os.has_error())
      return true;
    ec = os.error();
    os.clear_error();
  }
  error = path + ": cannot write: " + ec.message();
  return false;
}

bool writeProject(mlir::ModuleOp rankIR, const ProjectOptions &options,
                  std::string &error) {
  if (options.backend != "cpu" && options.backend != "cuda") {
    error = "backend: expected cpu or cuda, got \"" + options.backend + "\"";
    return false;
  }
  if (options.outputDir.empty()) {
    error = "no project directory (-o DIR)";
    return false;
  }
  codegen::ProgramSummary summary = codegen::summarize(rankIR);
  std::map<std::string, std::string> sources;
  if (!codegen::emitSources(rankIR, options, sources, error))
    return false;

  llvm::SmallString<256> src(options.outputDir);
  llvm::sys::path::append(src, "src");
  if (std::error_code ec = llvm::sys::fs::create_directories(src)) {
    error = src.str().str() + ": cannot create: " + ec.message();
    return false;
  }
  // Sources of an earlier, larger plan would be left behind unused.
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(src, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".cpp")
      llvm::sys::fs::remove(it->path());

  std::vector<std::string> names;
  for (const auto &[name, text] : sources) {
    llvm::SmallString<256> path(src);
    llvm::sys::path::append(path, name);
    if (!writeFile(path.str().str(), text, error))
      return false;
    names.push_back(name);
  }
  auto top = [&](const char *name) {
    llvm::SmallString<256> path(options.outputDir);
    llvm::sys::path::append(path, name);
    return path.str().str();
  };
  return writeFile(top("CMakeLists.txt"),
                   codegen::cmakeLists(summary, options, names), error) &&
         writeFile(top("README.md"), codegen::readme(summary, options),
                   error) &&
         writeFile(top("plan.json"), codegen::planJson(summary, options),
                   error);
}

} // namespace helix
