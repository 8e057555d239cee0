# -*- Python -*-
# lit configuration for the picokernel tests.

import os
import shutil

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
# The CUDA toolkit's ptxas checks the PTX pk-translate makes (REQUIRES: ptxas).
ptxas = shutil.which("ptxas") or next(
    (os.path.join(root, "bin", "ptxas")
     for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda")
     if root and os.access(os.path.join(root, "bin", "ptxas"), os.X_OK)), None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
else:
    lit_config.note("ptxas (CUDA toolkit) not found: PTX tests are unsupported")
# CUDA's libdevice, which kernels with math link (where pk::cudaToolkitPath
# looks for the toolkit).
toolkit = next((os.environ[name] for name in ("CUDA_ROOT", "CUDA_HOME", "CUDA_PATH")
                if os.environ.get(name)), "/usr/local/cuda")
if os.path.isfile(os.path.join(toolkit, "nvvm", "libdevice", "libdevice.10.bc")):
    config.available_features.add("libdevice")
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"])
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
