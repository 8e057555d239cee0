//===- DiskCache.cpp - compiled kernels kept across processes -------------===//

#include "picokernel/Runtime/DiskCache.h"

#include "picokernel/Support/Environment.h"
#include "picokernel/Support/Log.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace pk {

namespace {

/// Entry layout: magic, payload size, xxh3 of the payload, payload.
constexpr char kMagic[8] = {'p', 'k', 'o', 'b', 'j', '0', '0', '1'};
struct Header {
  char magic[8];
  uint64_t size;
  uint64_t checksum;
};

/// Temporary files are "<entry>.tmp-<random>"; one a crashed writer left is
/// removed once it is this old.
constexpr llvm::StringLiteral kTemporaryMarker = ".tmp";
constexpr std::chrono::hours kStaleTemporaryAge(1);

uint64_t checksumOf(const char *data, size_t size) {
  return llvm::xxh3_64bits(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(data), size));
}

/// Why a file or directory with this status cannot be trusted ("" if it
/// can): only its user may have written it.
std::string distrust(const struct stat &status) {
  if (status.st_uid != geteuid())
    return "it belongs to user " + std::to_string(status.st_uid) +
           ", not to this process's user " + std::to_string(geteuid());
  if (status.st_mode & (S_IWGRP | S_IWOTH))
    return "it is writable by group or others";
  return "";
}

/// An untrusted entry: said once per process, and removed from the
/// directory (which is ours: removing never touches what a link points to).
void discardUntrusted(const std::string &path, const std::string &why) {
  static std::once_flag once;
  std::call_once(once, [&] {
    logRecord(LogLevel::Warning, "ignoring the disk cache entry " + path +
                                     ": " + why +
                                     " (entries are machine code)");
  });
  ::unlink(path.c_str());
}

class FileDescriptor {
public:
  explicit FileDescriptor(int fd) : fd(fd) {}
  ~FileDescriptor() {
    if (fd >= 0)
      ::close(fd);
  }
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  int get() const { return fd; }
  /// Closes it, reporting whether everything written reached the file.
  bool close() {
    int result = ::close(fd);
    fd = -1;
    return result == 0;
  }

private:
  int fd;
};

/// Moves `size` bytes with `transfer` (::read or ::write), retrying after
/// signals and short transfers; false on an error or an early end.
template <typename Data, typename Transfer>
bool transferAll(int fd, Data *data, size_t size, Transfer transfer) {
  while (size) {
    ssize_t count = transfer(fd, data, size);
    if (count < 0 && errno == EINTR)
      continue;
    if (count <= 0)
      return false;
    data += count;
    size -= size_t(count);
  }
  return true;
}

bool readAll(int fd, char *data, size_t size) {
  return transferAll(fd, data, size, ::read);
}

bool writeAll(int fd, const char *data, size_t size) {
  return transferAll(fd, data, size, ::write);
}

std::string defaultDirectory() {
  // The XDG base directory specification: a relative XDG_CACHE_HOME is
  // invalid and ignored.
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && xdg[0] == '/')
    return std::string(xdg) + "/picokernel";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/picokernel";
  return "";
}

/// PK_CACHE_MAX_MB: a whole number of megabytes (at most 2^30); anything
/// else warns and keeps the default.
uint64_t maxMegabytes() {
  constexpr uint64_t kDefault = 256, kLargest = uint64_t(1) << 30;
  const char *value = std::getenv("PK_CACHE_MAX_MB");
  if (!value || !*value)
    return kDefault;
  uint64_t megabytes = 0;
  if (llvm::StringRef(value).trim().getAsInteger(10, megabytes) ||
      megabytes > kLargest) {
    logRecord(LogLevel::Warning,
              "PK_CACHE_MAX_MB=" + std::string(value) +
                  " is not a whole number of megabytes from 0 to 2^30; using " +
                  std::to_string(kDefault));
    return kDefault;
  }
  return megabytes;
}

} // namespace

DiskCache *DiskCache::fromEnvironment() {
  static std::once_flag once;
  static std::unique_ptr<DiskCache> cache;
  std::call_once(once, [] {
    // (PK_CACHE: a switch, on when unset.)
    if (!environmentSwitch("PK_CACHE", true))
      return;
    const char *dir = std::getenv("PK_CACHE_DIR");
    std::string directory = dir && *dir ? dir : defaultDirectory();
    if (directory.empty())
      return;
    std::string whyNot;
    cache = open(directory, maxMegabytes() << 20, whyNot);
    if (!cache)
      logRecord(LogLevel::Warning, "not using the disk cache: " + whyNot);
  });
  return cache.get();
}

std::unique_ptr<DiskCache> DiskCache::open(const std::string &directory,
                                           uint64_t maxBytes,
                                           std::string &whyNot) {
  llvm::SmallString<256> path(directory);
  if (path.empty() || llvm::sys::fs::make_absolute(path)) {
    whyNot = "no usable directory '" + directory + "'";
    return nullptr;
  }
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  while (path.size() > 1 && path.back() == '/')
    path.pop_back(); // "dir/" would make lstat follow a symlink
  // The parents as `mkdir -p` makes them; the cache itself 0700 whatever the
  // umask (chmod: a umask can only take permissions away).
  llvm::StringRef parent = llvm::sys::path::parent_path(path);
  if (!parent.empty())
    (void)llvm::sys::fs::create_directories(parent);
  if (::mkdir(path.c_str(), 0700) == 0)
    ::chmod(path.c_str(), 0700);
  else if (errno != EEXIST) {
    whyNot = "cannot create " + path.str().str() + ": " + std::strerror(errno);
    return nullptr;
  }
  struct stat status;
  std::string why;
  if (::lstat(path.c_str(), &status) != 0)
    why = std::strerror(errno);
  else if (S_ISLNK(status.st_mode))
    why = "it is a symlink";
  else if (!S_ISDIR(status.st_mode))
    why = "it is not a directory";
  else
    why = distrust(status);
  if (!why.empty()) {
    whyNot = path.str().str() + ": " + why +
             " (entries are machine code: the directory must be its user's "
             "alone)";
    return nullptr;
  }
  return std::unique_ptr<DiskCache>(new DiskCache(path.str().str(), maxBytes));
}

DiskCache::DiskCache(std::string directory, uint64_t maxBytes)
    : root(std::move(directory)), maxBytes(maxBytes) {}

std::string DiskCache::hash(const std::string &text) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(text.data()), text.size()));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::string DiskCache::pathOf(const std::string &key) const {
  return root + "/" + key + ".pkobj";
}

std::optional<std::vector<char>> DiskCache::load(const std::string &key) {
  std::string path = pathOf(key);
  // No symlinks followed, and no wait on a FIFO.
  FileDescriptor file(
      ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (file.get() < 0) {
    if (errno == ELOOP)
      discardUntrusted(path, "it is a symlink");
    return std::nullopt;
  }
  struct stat status;
  if (::fstat(file.get(), &status) != 0)
    return std::nullopt;
  if (!S_ISREG(status.st_mode)) {
    discardUntrusted(path, "it is not a regular file");
    return std::nullopt;
  }
  if (std::string why = distrust(status); !why.empty()) {
    discardUntrusted(path, why);
    return std::nullopt;
  }
  uint64_t size = uint64_t(status.st_size);
  std::vector<char> bytes;
  bool valid = size >= sizeof(Header) && size - sizeof(Header) <= maxBytes;
  if (valid) {
    bytes.resize(size);
    valid = readAll(file.get(), bytes.data(), size);
  }
  Header header;
  if (valid) {
    std::memcpy(&header, bytes.data(), sizeof(Header));
    valid = std::memcmp(header.magic, kMagic, sizeof(kMagic)) == 0 &&
            header.size == size - sizeof(Header) &&
            header.checksum ==
                checksumOf(bytes.data() + sizeof(Header), header.size);
  }
  if (!valid) {
    ::unlink(path.c_str()); // torn or corrupt: compiled again
    return std::nullopt;
  }
  // A hit makes the entry the most recently used.
  ::futimens(file.get(), nullptr);
  return std::vector<char>(bytes.begin() + sizeof(Header), bytes.end());
}

void DiskCache::store(const std::string &key, const std::vector<char> &object) {
  std::string path = pathOf(key);
  // A new file under a random name (O_CREAT | O_EXCL): nothing planted in
  // the directory is followed or overwritten.
  int fd = -1;
  llvm::SmallString<256> temporary;
  if (llvm::sys::fs::createUniqueFile(path + kTemporaryMarker + "-%%%%%%%%%%%%",
                                      fd, temporary, llvm::sys::fs::OF_None,
                                      0600))
    return;
  FileDescriptor file(fd);
  Header header;
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.size = object.size();
  header.checksum = checksumOf(object.data(), object.size());
  bool written = ::fchmod(file.get(), 0600) == 0 &&
                 writeAll(file.get(), reinterpret_cast<const char *>(&header),
                          sizeof(header)) &&
                 writeAll(file.get(), object.data(), object.size());
  written = file.close() && written;
  // rename() replaces the entry atomically (a symlink there is replaced,
  // not followed): readers see the old file or the new one, never a mix;
  // two writers of one key write the same bytes.
  if (!written || ::rename(temporary.c_str(), path.c_str()) != 0) {
    ::unlink(temporary.c_str());
    return;
  }
  trim();
}

void DiskCache::trim() {
  struct Entry {
    std::string path;
    struct timespec used;
    uint64_t size;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  DIR *directory = ::opendir(root.c_str());
  if (!directory)
    return;
  auto now = std::chrono::system_clock::now();
  while (const dirent *item = ::readdir(directory)) {
    llvm::StringRef name(item->d_name);
    struct stat status;
    if (::fstatat(::dirfd(directory), item->d_name, &status,
                  AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(status.st_mode))
      continue;
    std::string path = root + "/" + name.str();
    if (name.contains(kTemporaryMarker)) {
      if (now - std::chrono::system_clock::from_time_t(status.st_mtime) >
          kStaleTemporaryAge)
        ::unlink(path.c_str());
      continue;
    }
    if (!name.ends_with(".pkobj"))
      continue;
    entries.push_back({path, status.st_mtim, uint64_t(status.st_size)});
    total += uint64_t(status.st_size);
  }
  ::closedir(directory);
  if (total <= maxBytes)
    return;
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return std::tie(a.used.tv_sec, a.used.tv_nsec) <
           std::tie(b.used.tv_sec, b.used.tv_nsec);
  });
  for (const Entry &entry : entries) {
    if (total <= maxBytes)
      break;
    if (::unlink(entry.path.c_str()) == 0)
      total -= entry.size;
  }
}

} // namespace pk
