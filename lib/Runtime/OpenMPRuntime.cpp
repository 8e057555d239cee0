//===- OpenMPRuntime.cpp - the OpenMP runtime threaded kernels use --------===//

#include "OpenMPRuntime.h"

#include "OpenMPEnvironment.h"
#include "picokernel/Config.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <dlfcn.h>
#include <link.h>
#include <optional>
#include <string>
#include <vector>

namespace pk::detail {

namespace {
/// Entry points every LLVM or Intel OpenMP runtime defines (GNU's libgomp
/// has none of them), the first to find it.
constexpr const char *kOpenMPEntries[] = {
    "__kmpc_fork_call", "__kmpc_for_static_init_8u", "omp_get_num_threads"};

/// The file of the object that `handle`'s lookup of the entry points finds
/// (it also searches the libraries the object depends on), if one object
/// defines them all: an OpenMP runtime.
std::optional<std::string> runtimeDefining(void *handle) {
  Dl_info definer;
  void *entry = dlsym(handle, kOpenMPEntries[0]);
  if (!entry || !dladdr(entry, &definer) || !definer.dli_fname)
    return std::nullopt;
  std::string file = definer.dli_fname;
  for (const char *other : kOpenMPEntries) {
    Dl_info where;
    void *address = dlsym(handle, other);
    if (!address || !dladdr(address, &where) || !where.dli_fname ||
        file != where.dli_fname)
      return std::nullopt;
  }
  return file;
}

/// The file of the OpenMP runtime already loaded in the process, if any:
/// one whose symbols are global, or one a library loaded privately (a Python
/// extension's dependency).
std::optional<std::string> loadedOpenMPRuntime() {
  if (std::optional<std::string> global = runtimeDefining(RTLD_DEFAULT))
    return global;
  // The loaded objects' names first, then a look into each: dlopen inside
  // dl_iterate_phdr's callback could deadlock with another thread's dlopen.
  std::vector<std::string> objects;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *names) {
        if (info->dlpi_name && *info->dlpi_name)
          static_cast<std::vector<std::string> *>(names)->push_back(
              info->dlpi_name);
        return 0;
      },
      &objects);
  for (const std::string &object : objects) {
    void *handle = dlopen(object.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!handle)
      continue;
    std::optional<std::string> runtime = runtimeDefining(handle);
    dlclose(handle);
    if (runtime)
      return runtime;
  }
  return std::nullopt;
}

/// The copies of the runtime next to the module holding this code (through
/// a symbolic link to the module, next to the link and next to the file).
void addBundledRuntimes(std::vector<std::string> &candidates) {
#ifdef PK_BUNDLED_OPENMP
  Dl_info module;
  if (!dladdr(reinterpret_cast<void *>(&addBundledRuntimes), &module) ||
      !module.dli_fname)
    return;
  llvm::SmallString<256> real;
  for (llvm::StringRef path : {llvm::StringRef(module.dli_fname),
                               llvm::sys::fs::real_path(module.dli_fname, real)
                                   ? llvm::StringRef()
                                   : llvm::StringRef(real)}) {
    if (path.empty())
      continue;
    llvm::SmallString<256> bundled(llvm::sys::path::parent_path(path));
    llvm::sys::path::append(bundled, PK_BUNDLED_OPENMP);
    if (llvm::sys::fs::exists(bundled) &&
        !llvm::is_contained(candidates, bundled))
      candidates.push_back(std::string(bundled));
  }
#else
  (void)candidates;
#endif
}
} // namespace

llvm::Error loadOpenMPRuntime() {
  prepareOpenMPEnvironment();
  std::vector<std::string> candidates;
  if (std::optional<std::string> loaded = loadedOpenMPRuntime()) {
    candidates.push_back(*loaded);
  } else {
    addBundledRuntimes(candidates);
    candidates.push_back(PK_OPENMP_LIBRARY);
  }
  std::string failures;
  for (const std::string &candidate : candidates) {
    // (Loading an already loaded library makes its symbols global.)
    std::string error;
    if (!llvm::sys::DynamicLibrary::LoadLibraryPermanently(candidate.c_str(),
                                                           &error))
      return llvm::Error::success();
    failures += (failures.empty() ? "" : "; ") + error;
  }
  return llvm::createStringError("cannot load the OpenMP runtime: " + failures);
}

} // namespace pk::detail
