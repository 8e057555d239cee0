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
# Fuzz inputs are data, not tests: ctest replays them (test/fuzz).
config.excludes = ["CMakeLists.txt", "README.txt", "lit.cfg.py", "lit.site.cfg.py", "fuzz"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
# Optional parts of the build (CMake PK_ENABLE_*), for REQUIRES: lines.
if config.pk_enable_spirv_cross:
    config.available_features.add("spirv-cross")
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

# Our tools first, then LLVM's (FileCheck, not, split-file, mlir-runner).
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.pk_tools_dir, append_path=True)

tool_dirs = [config.pk_tools_dir, config.llvm_tools_dir]
tools = ["pk-opt", "pk-translate", "llvm-nm"]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Execution tests: kernels compiled by pk-translate into a shared library,
# driven by an MLIR main() through mlir-runner.
llvm_lib_dir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
config.substitutions.append(("%llvm_lib_dir", llvm_lib_dir))
config.substitutions.append(
    ("%mlir_runner_utils",
     os.path.join(llvm_lib_dir, "libmlir_runner_utils.so")))
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(llvm_lib_dir, "libmlir_c_runner_utils.so")))
