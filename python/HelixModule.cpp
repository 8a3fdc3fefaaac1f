//===- HelixModule.cpp - helix._helix, the Python extension ---------------===//
//
// Two functions under helix/__init__.py: run() is the command line in
// process (helix/Driver/Driver.h), run_pipeline() is helix-opt on a string.
//
//===----------------------------------------------------------------------===//

#include "helix/Driver/Driver.h"
#include "helix/InitAllHelix.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mutex>
#include <optional>

namespace py = pybind11;

namespace {

/// helix ARGS... with `input` as what `--model -` reads; returns
/// (exit code, stdout, stderr, {memory file: text}).
py::tuple run(const std::vector<std::string> &args,
              std::optional<std::string> input, const std::string &inputName,
              const std::vector<std::string> &memoryFiles) {
  helix::driver::Invocation inv;
  inv.args = args;
  if (input) {
    inv.input = *input;
    inv.hasInput = true;
    inv.inputName = inputName;
  }
  for (const std::string &f : memoryFiles)
    inv.memoryFiles[f];
  helix::driver::Outcome outcome;
  {
    py::gil_scoped_release release; // a search can take a while
    outcome = helix::driver::runHelix(inv);
  }
  py::dict files;
  for (auto &[name, text] : inv.memoryFiles)
    files[py::str(name)] = py::str(text);
  return py::make_tuple(outcome.exitCode, outcome.out, outcome.err, files);
}

/// helix-opt as a function: parses `text` with the helix dialects, runs the
/// textual `pipeline` on it and returns the printed result. On failure
/// returns (false, the diagnostics, one per line).
py::tuple runPipeline(const std::string &text, const std::string &pipeline) {
  static std::once_flag passes;
  std::call_once(passes, [] { helix::registerAllHelixPasses(); });
  std::string diagnostics, result;
  bool ok = false;
  {
    py::gil_scoped_release release;
    mlir::DialectRegistry registry;
    helix::registerAllHelixDialects(registry);
    mlir::MLIRContext context(registry);
    context.loadAllAvailableDialects();
    llvm::raw_string_ostream diag(diagnostics);
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      if (d.getSeverity() != mlir::DiagnosticSeverity::Error &&
          d.getSeverity() != mlir::DiagnosticSeverity::Warning)
        return mlir::success();
      // FILE:LINE:COL as helix-opt prints it.
      if (auto fl = llvm::dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
        diag << fl.getFilename().getValue() << ":" << fl.getLine() << ":"
             << fl.getColumn() << ": ";
      else
        diag << d.getLocation() << ": ";
      diag << (d.getSeverity() == mlir::DiagnosticSeverity::Error ? "error: "
                                                                  : "warning: ")
           << d.str() << "\n";
      return mlir::success();
    });
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(
            text, mlir::ParserConfig(&context), "<input>");
    if (module) {
      // Anchored, as helix-opt --pass-pipeline takes it:
      // "builtin.module(helix-search-layouts{...})".
      std::string parseError;
      llvm::raw_string_ostream parseOs(parseError);
      mlir::FailureOr<mlir::OpPassManager> parsed =
          mlir::parsePassPipeline(pipeline, parseOs);
      if (mlir::failed(parsed)) {
        diag << "pipeline: " << parseError;
        if (!parseError.empty() && parseError.back() != '\n')
          diag << "\n";
      } else {
        mlir::PassManager pm(&context);
        static_cast<mlir::OpPassManager &>(pm) = std::move(*parsed);
        if (mlir::succeeded(pm.run(*module))) {
          llvm::raw_string_ostream os(result);
          module->print(os);
          os << "\n"; // as helix-opt ends its output
          ok = true;
        }
      }
    }
    if (!ok && diagnostics.empty())
      diag << "<input>: the pipeline failed\n";
  }
  return py::make_tuple(ok, ok ? result : diagnostics);
}

} // namespace

PYBIND11_MODULE(_helix, m) {
  m.doc() = "helix's command line and helix-opt, in process (see helix)";
  m.def("run", &run, py::arg("args"), py::arg("input") = py::none(),
        py::arg("input_name") = "",
        py::arg("memory_files") = std::vector<std::string>{});
  m.def("run_pipeline", &runPipeline, py::arg("text"), py::arg("pipeline"));
}
