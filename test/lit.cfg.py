# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "HELIX"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "Install", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.helix_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.helix_tools_dir, config.llvm_tools_dir]
# "helix" is also a strategy name in option lists ("--strategies tp,helix"):
# only substitute it where it stands as a command.
tools = [ToolSubst(t, unresolved="fatal", pre=r".-^/\\<,=")
         for t in ["helix-opt", "helix-translate", "helix",
                   "helix-bench-fidelity", "helix-long-context-report",
                   "helix-paper-report", "helix-per-layer-report",
                   "helix-mtp-report", "helix-bench-checkpoint-load",
                   "helix-bench-search", "helix-reference",
                   "helix-make-checkpoint"]]
llvm_config.add_tool_substitutions(tools, tool_dirs)
