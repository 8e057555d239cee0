# Build defaults found on the machine, so that `cmake -S . -B build` and
# `pip install .` need no options where LLVM/MLIR 22 are installed. Anything
# named on the command line or in the environment wins.
#
# Included twice from CMakeLists.txt: before project() (PK_TOOLCHAIN_STAGE
# "compilers") and after LLVM is found ("tools").

if(PK_TOOLCHAIN_STAGE STREQUAL "compilers")
  # LLVM 22's own llvm-config tells where its packages put LLVM and MLIR.
  find_program(PK_LLVM_CONFIG NAMES llvm-config-22 llvm-config
    HINTS /usr/lib/llvm-22/bin)
  if(PK_LLVM_CONFIG)
    execute_process(COMMAND ${PK_LLVM_CONFIG} --bindir
      OUTPUT_VARIABLE PK_LLVM_BINDIR OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE PK_LLVM_CONFIG_FAILED)
    execute_process(COMMAND ${PK_LLVM_CONFIG} --cmakedir
      OUTPUT_VARIABLE PK_LLVM_CMAKEDIR OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()

  # Where no compiler is named (CC/CXX or -DCMAKE_<LANG>_COMPILER): LLVM's
  # clang, next to its llvm-config. Any compiler that builds LLVM 22
  # projects (clang or GCC with C++20) can be named instead.
  foreach(lang C CXX)
    if(lang STREQUAL "C")
      set(env_name CC)
      set(clang_name clang)
    else()
      set(env_name CXX)
      set(clang_name clang++)
    endif()
    if(NOT DEFINED CMAKE_${lang}_COMPILER AND NOT DEFINED ENV{${env_name}})
      find_program(PK_${lang}_CLANG NAMES ${clang_name}
        HINTS ${PK_LLVM_BINDIR} NO_DEFAULT_PATH)
      if(NOT PK_${lang}_CLANG)
        find_program(PK_${lang}_CLANG NAMES ${clang_name}-22)
      endif()
      if(PK_${lang}_CLANG)
        set(CMAKE_${lang}_COMPILER ${PK_${lang}_CLANG})
      endif()
    endif()
  endforeach()

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
  # lld with clang where LLVM has it (much faster links of libMLIR users).
  if(NOT DEFINED LLVM_USE_LINKER
     AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang"
     AND EXISTS ${LLVM_TOOLS_BINARY_DIR}/ld.lld)
    set(LLVM_USE_LINKER lld)
  endif()
  # The lit that runs the .mlir tests.
  if(NOT LLVM_EXTERNAL_LIT)
    find_program(LLVM_EXTERNAL_LIT NAMES lit llvm-lit lit.py
      HINTS ${LLVM_TOOLS_BINARY_DIR})
  endif()
endif()
