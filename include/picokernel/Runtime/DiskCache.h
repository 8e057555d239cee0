//===- DiskCache.h - compiled kernels kept across processes -----*- C++ -*-===//
//
// A directory of compiled kernels (object files), keyed by a hash of
// everything that determines the machine code: the traced pk IR (shapes
// and dtypes included), the compile options, the target CPU, and the
// picokernel and LLVM versions. Entries are written atomically (a temporary
// file renamed into place, so two processes never see a torn entry), carry
// a checksum (a corrupt entry is deleted and compiled again), and the
// directory is kept under a size bound by deleting the least recently used
// entries.
//
//   PK_CACHE_DIR=dir    the directory (default: $XDG_CACHE_HOME/picokernel
//                       when that is absolute, else ~/.cache/picokernel)
//   PK_CACHE=0          no disk cache (also false, off, no)
//   PK_CACHE_MAX_MB=n   size bound (default 256)
//
// Entries are machine code that runs in the process, so the cache trusts
// only what its user alone can write, as ccache and Python's bytecode cache
// do: the directory is created 0700 and entries 0600 whatever the umask; a
// directory that is a symlink, belongs to another user or is writable by
// group or others is not used (one warning, then no disk cache); an entry
// must be a regular file (opened without following symlinks) of this user,
// writable by no one else and no larger than the cache. The checksum only
// detects torn or corrupt files: it is not authentication.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_RUNTIME_DISKCACHE_H
#define PICOKERNEL_RUNTIME_DISKCACHE_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pk {

class DiskCache {
public:
  /// The cache the environment asks for; nullptr when it is switched off or
  /// its directory cannot be created or is not trusted (with one warning on
  /// stderr).
  static DiskCache *fromEnvironment();

  /// The cache in `directory`, created 0700 if missing; nullptr, and why in
  /// `whyNot`, when the directory is a symlink, belongs to another user, is
  /// writable by group or others, or cannot be created.
  static std::unique_ptr<DiskCache>
  open(const std::string &directory, uint64_t maxBytes, std::string &whyNot);

  /// The object stored under `key`, if there is a trusted, valid one. An
  /// entry that fails its checks is removed.
  std::optional<std::vector<char>> load(const std::string &key);
  /// Stores `object` under `key` (best effort: a full disk or a read-only
  /// directory only means no caching), then trims the directory.
  void store(const std::string &key, const std::vector<char> &object);

  const std::string &directory() const { return root; }
  /// The hex SHA-256 of `text`: how keys are made from their ingredients.
  static std::string hash(const std::string &text);

private:
  DiskCache(std::string directory, uint64_t maxBytes);
  std::string pathOf(const std::string &key) const;
  void trim();

  std::string root;
  uint64_t maxBytes;
};

} // namespace pk

#endif // PICOKERNEL_RUNTIME_DISKCACHE_H
