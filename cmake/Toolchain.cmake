# Build defaults found on the machine, so that `cmake -S . -B build` and
# `pip install .` need no options where LLVM/MLIR 22 are installed. Anything
# named on the command line or in the environment wins.
#
# Included twice from CMakeLists.txt: before project() (PK_TOOLCHAIN_STAGE
# "compilers") and after LLVM is found ("tools").

if(PK_TOOLCHAIN_STAGE STREQUAL "compilers")
  # LLVM 22's own llvm-config tells where its packages put LLVM and MLIR (an
  # llvm-config of another version is not used).
  find_program(PK_LLVM_CONFIG NAMES llvm-config-22 llvm-config
    HINTS /usr/lib/llvm-22/bin)
  if(PK_LLVM_CONFIG)
    execute_process(COMMAND ${PK_LLVM_CONFIG} --version
      OUTPUT_VARIABLE PK_LLVM_CONFIG_VERSION OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE PK_LLVM_CONFIG_FAILED)
    if(NOT PK_LLVM_CONFIG_FAILED AND PK_LLVM_CONFIG_VERSION MATCHES "^22\\.")
      execute_process(COMMAND ${PK_LLVM_CONFIG} --bindir
        OUTPUT_VARIABLE PK_LLVM_BINDIR OUTPUT_STRIP_TRAILING_WHITESPACE)
      execute_process(COMMAND ${PK_LLVM_CONFIG} --cmakedir
        OUTPUT_VARIABLE PK_LLVM_CMAKEDIR OUTPUT_STRIP_TRAILING_WHITESPACE)
    endif()
  endif()

  # Where no compiler is named (a non-empty CC or CXX, or
  # -DCMAKE_<LANG>_COMPILER, for either language: naming one leaves both to
  # CMake): LLVM 22's clang, next to its llvm-config. Any compiler that
  # builds LLVM 22 projects (clang or GCC with C++20) can be named instead.
  if(NOT DEFINED CMAKE_C_COMPILER AND NOT DEFINED CMAKE_CXX_COMPILER
     AND "$ENV{CC}" STREQUAL "" AND "$ENV{CXX}" STREQUAL "")
    find_program(PK_C_CLANG NAMES clang HINTS ${PK_LLVM_BINDIR}
      NO_DEFAULT_PATH)
    find_program(PK_CXX_CLANG NAMES clang++ HINTS ${PK_LLVM_BINDIR}
      NO_DEFAULT_PATH)
    if(NOT PK_C_CLANG OR NOT PK_CXX_CLANG)
      find_program(PK_C_CLANG NAMES clang-22)
      find_program(PK_CXX_CLANG NAMES clang++-22)
    endif()
    if(PK_C_CLANG AND PK_CXX_CLANG)
      set(CMAKE_C_COMPILER ${PK_C_CLANG})
      set(CMAKE_CXX_COMPILER ${PK_CXX_CLANG})
    endif()
  endif()

  # ccache where it is installed (PK_USE_CCACHE=OFF or a named launcher
  # turns it off).
  option(PK_USE_CCACHE "Compile through ccache when it is found" ON)
  find_program(PK_CCACHE ccache)
  foreach(lang C CXX)
    if(PK_USE_CCACHE AND PK_CCACHE
       AND NOT DEFINED CMAKE_${lang}_COMPILER_LAUNCHER
       AND NOT DEFINED ENV{CMAKE_${lang}_COMPILER_LAUNCHER})
      set(CMAKE_${lang}_COMPILER_LAUNCHER ${PK_CCACHE})
    endif()
  endforeach()

elseif(PK_TOOLCHAIN_STAGE STREQUAL "tools")
  # lld with LLVM's own clang, which finds LLVM's ld.lld beside itself
  # (much faster links of libMLIR users).
  if(NOT DEFINED LLVM_USE_LINKER
     AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang"
     AND CMAKE_CXX_COMPILER_VERSION MATCHES "^${LLVM_VERSION_MAJOR}\\."
     AND EXISTS ${LLVM_TOOLS_BINARY_DIR}/ld.lld)
    set(LLVM_USE_LINKER lld)
  endif()
  # The lit that runs the .mlir tests.
  if(NOT LLVM_EXTERNAL_LIT)
    find_program(LLVM_EXTERNAL_LIT NAMES lit llvm-lit lit.py
      HINTS ${LLVM_TOOLS_BINARY_DIR})
  endif()
endif()
