//===- DiskCache.cpp - compiled kernels kept across processes -------------===//

#include "picokernel/Runtime/DiskCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unistd.h>

namespace fs = std::filesystem;

namespace pk {

namespace {

/// Entry layout: magic, payload size, xxh3 of the payload, payload.
constexpr char kMagic[8] = {'p', 'k', 'o', 'b', 'j', '0', '0', '1'};
struct Header {
  char magic[8];
  uint64_t size;
  uint64_t checksum;
};

uint64_t checksumOf(const char *data, size_t size) {
  return llvm::xxh3_64bits(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(data), size));
}

std::string defaultDirectory() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/picokernel";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/picokernel";
  return "";
}

} // namespace

DiskCache *DiskCache::fromEnvironment() {
  static std::once_flag once;
  static std::unique_ptr<DiskCache> cache;
  std::call_once(once, [] {
    if (const char *enabled = std::getenv("PK_CACHE");
        enabled && std::string(enabled) == "0")
      return;
    const char *dir = std::getenv("PK_CACHE_DIR");
    std::string directory = dir && *dir ? dir : defaultDirectory();
    if (directory.empty())
      return;
    uint64_t megabytes = 256;
    if (const char *max = std::getenv("PK_CACHE_MAX_MB"); max && *max)
      megabytes = std::strtoull(max, nullptr, 10);
    std::error_code error;
    fs::create_directories(directory, error);
    if (error || !fs::is_directory(directory))
      return;
    cache = std::make_unique<DiskCache>(directory, megabytes << 20);
  });
  return cache.get();
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
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return std::nullopt;
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                          std::istreambuf_iterator<char>());
  Header header;
  bool valid = bytes.size() >= sizeof(Header);
  if (valid) {
    std::memcpy(&header, bytes.data(), sizeof(Header));
    valid = std::memcmp(header.magic, kMagic, sizeof(kMagic)) == 0 &&
            header.size == bytes.size() - sizeof(Header) &&
            header.checksum ==
                checksumOf(bytes.data() + sizeof(Header), header.size);
  }
  if (!valid) {
    std::error_code ignored;
    fs::remove(path, ignored);
    return std::nullopt;
  }
  // A hit makes the entry the most recently used.
  std::error_code ignored;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ignored);
  return std::vector<char>(bytes.begin() + sizeof(Header), bytes.end());
}

void DiskCache::store(const std::string &key, const std::vector<char> &object) {
  static std::atomic<unsigned> counter{0};
  std::string path = pathOf(key);
  std::string temporary = path + ".tmp." + std::to_string(getpid()) + "." +
                          std::to_string(counter++);
  Header header;
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.size = object.size();
  header.checksum = checksumOf(object.data(), object.size());
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char *>(&header), sizeof(header));
    file.write(object.data(), std::streamsize(object.size()));
    file.flush();
    if (!file) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      return;
    }
  }
  // rename() replaces the entry atomically: readers see the old file or the
  // new one, never a mix; two writers of one key write the same bytes.
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, error);
    return;
  }
  trim();
}

void DiskCache::trim() {
  struct Entry {
    fs::path path;
    fs::file_time_type used;
    uint64_t size;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code error;
  for (const fs::directory_entry &entry : fs::directory_iterator(root, error)) {
    if (entry.path().extension() != ".pkobj")
      continue;
    std::error_code ignored;
    uint64_t size = entry.file_size(ignored);
    entries.push_back({entry.path(), entry.last_write_time(ignored), size});
    total += size;
  }
  if (total <= maxBytes)
    return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.used < b.used; });
  for (const Entry &entry : entries) {
    if (total <= maxBytes)
      break;
    std::error_code ignored;
    if (fs::remove(entry.path, ignored))
      total -= entry.size;
  }
}

} // namespace pk
