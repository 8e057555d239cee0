# -*- Python -*-
# lit configuration for the picokernel tests.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "PICOKERNEL"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.pk_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.txt", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Our tools first, then LLVM's (FileCheck, not, split-file, mlir-runner).
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.pk_tools_dir, append_path=True)

tool_dirs = [config.pk_tools_dir, config.llvm_tools_dir]
tools = ["pk-opt", "pk-translate"]
llvm_config.add_tool_substitutions(tools, tool_dirs)
