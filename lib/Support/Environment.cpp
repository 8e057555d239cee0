//===- Environment.cpp - picokernel's environment switches ----------------===//

#include "picokernel/Support/Environment.h"
#include "picokernel/Support/Log.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/Support/FileSystem.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <string>

namespace pk {
namespace {

/// Whether this is the first warning about variable `name` in the process:
/// hashes of the names warned about, claimed without locks (a fork may
/// come at any time).
bool firstWarningAbout(llvm::StringRef name) {
  static std::array<std::atomic<uint64_t>, 16> warned{};
  // (Never zero: zero marks a free slot.)
  uint64_t hash = uint64_t(llvm::hash_value(name)) | 1;
  for (std::atomic<uint64_t> &slot : warned) {
    uint64_t seen = slot.load();
    if (seen == hash)
      return false;
    if (seen == 0 && slot.compare_exchange_strong(seen, hash))
      return true;
    if (seen == hash)
      return false;
  }
  return true; // (more variables than slots: warn again)
}

} // namespace

std::optional<bool> parseSwitch(llvm::StringRef value) {
  std::string text = value.trim().lower();
  if (text == "1" || text == "true" || text == "on" || text == "yes")
    return true;
  if (text == "0" || text == "false" || text == "off" || text == "no")
    return false;
  return std::nullopt;
}

bool environmentSwitch(llvm::StringRef name, bool unset) {
  const char *value = std::getenv(name.str().c_str());
  if (!value || llvm::StringRef(value).trim().empty())
    return unset;
  if (std::optional<bool> on = parseSwitch(value))
    return *on;
  if (firstWarningAbout(name))
    logRecord(LogLevel::Warning,
              name.str() + "=" + value +
                  " is not one of 0/1, false/true, off/on, no/yes; it stays " +
                  (unset ? "on" : "off"));
  return unset;
}

std::string cudaToolkitPath() {
  for (const char *name : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(name); value && *value)
      return value;
  const char *fallback = "/usr/local/cuda";
  return llvm::sys::fs::is_directory(fallback) ? fallback : "";
}

} // namespace pk
