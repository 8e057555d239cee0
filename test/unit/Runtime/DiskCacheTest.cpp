//===- DiskCacheTest.cpp - compiled kernels kept across processes ---------===//
//
// The directory format and the cache key; test_disk_cache.py runs the
// cache across processes (hits, options, corruption, races, bound, off).
//
//===----------------------------------------------------------------------===//

#include "picokernel/Runtime/DiskCache.h"
#include "picokernel/Runtime/CompiledKernel.h"
#include "picokernel/Support/ModuleIR.h"
#include "picokernel/picokernel.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/TargetParser/Host.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct TemporaryDirectory {
  TemporaryDirectory() {
    path = fs::temp_directory_path() /
           ("pk-disk-cache-" + std::to_string(getpid()) + "-" +
            std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TemporaryDirectory() { fs::remove_all(path); }
  fs::path path;
  static inline int counter = 0;
};

std::unique_ptr<pk::DiskCache> open(const fs::path &directory,
                                    uint64_t maxBytes) {
  std::string whyNot;
  std::unique_ptr<pk::DiskCache> cache =
      pk::DiskCache::open(directory.string(), maxBytes, whyNot);
  EXPECT_TRUE(cache) << whyNot;
  return cache;
}

size_t entryCount(const fs::path &directory) {
  size_t count = 0;
  for (const auto &entry : fs::directory_iterator(directory))
    count += entry.path().extension() == ".pkobj";
  return count;
}

TEST(DiskCache, StoresLoadsAndRejectsCorruptEntries) {
  TemporaryDirectory directory;
  std::unique_ptr<pk::DiskCache> opened = open(directory.path, 1 << 20);
  pk::DiskCache &cache = *opened;
  std::vector<char> object = {'\x7f', 'E', 'L', 'F', 1, 2, 3};
  EXPECT_FALSE(cache.load("absent"));
  cache.store("key", object);
  EXPECT_EQ(cache.load("key"), object);

  fs::path file = directory.path / "key.pkobj";
  {
    std::fstream stream(file, std::ios::in | std::ios::out | std::ios::binary);
    stream.seekp(-1, std::ios::end);
    stream.put('\x55'); // the checksum no longer matches
  }
  EXPECT_FALSE(cache.load("key"));
  EXPECT_FALSE(fs::exists(file)); // removed, to be compiled again
  std::ofstream(file, std::ios::binary) << "short";
  EXPECT_FALSE(cache.load("key"));
}

TEST(DiskCache, TrimsTheLeastRecentlyUsedEntries) {
  TemporaryDirectory directory;
  // Room for two 1000-byte entries (plus their 24-byte headers), not three.
  std::unique_ptr<pk::DiskCache> opened = open(directory.path, 2100);
  pk::DiskCache &cache = *opened;
  std::vector<char> object(1000, 'x');
  cache.store("first", object);
  cache.store("second", object);
  // Make "first" the most recently used, explicitly in the past for "second".
  fs::last_write_time(directory.path / "second.pkobj",
                      fs::file_time_type::clock::now() - std::chrono::hours(1));
  EXPECT_TRUE(cache.load("first"));
  cache.store("third", object);
  EXPECT_EQ(entryCount(directory.path), 2u);
  EXPECT_TRUE(cache.load("first"));
  EXPECT_FALSE(cache.load("second"));
  EXPECT_TRUE(cache.load("third"));
}

fs::perms permissionsOf(const fs::path &path) {
  return fs::symlink_status(path).permissions() & fs::perms::mask;
}

std::string refusal(const fs::path &directory) {
  std::string whyNot;
  EXPECT_FALSE(pk::DiskCache::open(directory.string(), 1 << 20, whyNot));
  return whyNot;
}

TEST(DiskCache, TheDirectoryAndEntriesAreTheUsersAloneWhateverTheUmask) {
  TemporaryDirectory directory;
  fs::path cacheDirectory = directory.path / "a" / "cache";
  mode_t previous = ::umask(0);
  std::unique_ptr<pk::DiskCache> cache = open(cacheDirectory, 1 << 20);
  cache->store("key", {1, 2, 3});
  ::umask(previous);
  EXPECT_EQ(permissionsOf(cacheDirectory), fs::perms::owner_all);
  EXPECT_EQ(permissionsOf(cacheDirectory / "key.pkobj"),
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(cache->load("key"), std::vector<char>({1, 2, 3}));
}

TEST(DiskCache, UntrustedDirectoriesAreNotUsed) {
  TemporaryDirectory directory;
  fs::path shared = directory.path / "shared";
  fs::create_directory(shared);
  fs::permissions(shared, fs::perms::all);
  EXPECT_NE(refusal(shared).find("writable by group or others"),
            std::string::npos);
  fs::path link = directory.path / "link";
  fs::path mine = directory.path / "mine";
  fs::create_directory(mine);
  fs::create_directory_symlink(mine, link);
  EXPECT_NE(refusal(link).find("symlink"), std::string::npos);
  EXPECT_NE(refusal(link.string() + "/").find("symlink"), std::string::npos);
  std::ofstream(directory.path / "file") << "x";
  EXPECT_NE(refusal(directory.path / "file").find("not a directory"),
            std::string::npos);
  if (::geteuid() != 0)
    GTEST_SKIP() << "giving a directory to another user needs root";
  fs::path foreign = directory.path / "foreign";
  fs::create_directory(foreign);
  ASSERT_EQ(::chown(foreign.c_str(), 65534, 65534), 0);
  EXPECT_NE(refusal(foreign).find("belongs to user 65534"), std::string::npos);
}

TEST(DiskCache, UntrustedEntriesAreIgnoredAndReplaced) {
  TemporaryDirectory directory;
  std::unique_ptr<pk::DiskCache> cache =
      open(directory.path / "cache", 1 << 20);
  fs::path entry = directory.path / "cache" / "key.pkobj";
  std::vector<char> object = {'o', 'b', 'j'};

  // A valid entry elsewhere, linked in: not followed, and the link (not
  // its target) is replaced by the next store.
  fs::path elsewhere = directory.path / "elsewhere.pkobj";
  cache->store("key", object);
  fs::rename(entry, elsewhere);
  fs::create_symlink(elsewhere, entry);
  EXPECT_FALSE(cache->load("key"));
  cache->store("key", {'n', 'e', 'w'});
  EXPECT_FALSE(fs::is_symlink(entry));
  EXPECT_EQ(cache->load("key"), std::vector<char>({'n', 'e', 'w'}));
  EXPECT_EQ(fs::file_size(elsewhere), 24u + object.size());

  // Endless or blocking files: no read of gigabytes, no hang.
  fs::remove(entry);
  fs::create_symlink("/dev/zero", entry);
  EXPECT_FALSE(cache->load("key"));
  fs::remove(entry);
  ASSERT_EQ(::mkfifo(entry.c_str(), 0600), 0);
  EXPECT_FALSE(cache->load("key"));
  fs::remove(entry);
  fs::create_directory(entry);
  EXPECT_FALSE(cache->load("key"));
  cache->store("key", object); // the rename fails: not cached, no harm
  EXPECT_FALSE(cache->load("key"));
  fs::remove(entry);

  // Writable by others: planted or tampered with.
  cache->store("key", object);
  fs::permissions(entry, fs::perms::others_write, fs::perm_options::add);
  EXPECT_FALSE(cache->load("key"));
  EXPECT_FALSE(fs::exists(entry));
  if (::geteuid() == 0) {
    cache->store("key", object);
    ASSERT_EQ(::chown(entry.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(cache->load("key"));
  }
}

TEST(DiskCache, TemporaryFilesFollowNothingAndStaleOnesArePruned) {
  TemporaryDirectory directory;
  std::unique_ptr<pk::DiskCache> cache =
      open(directory.path / "cache", 1 << 20);
  fs::path victim = directory.path / "victim";
  std::ofstream(victim) << "precious";
  // Links at every name the cache used to write its temporaries under.
  for (int counter = 0; counter < 4; ++counter)
    fs::create_symlink(victim,
                       directory.path / "cache" /
                           ("key.pkobj.tmp." + std::to_string(getpid()) + "." +
                            std::to_string(counter)));
  fs::path stale = directory.path / "cache" / "old.pkobj.tmp-abc";
  std::ofstream(stale) << "left by a crash";
  fs::last_write_time(stale,
                      fs::file_time_type::clock::now() - std::chrono::hours(2));
  cache->store("key", {1});
  std::ifstream contents(victim);
  std::string text((std::istreambuf_iterator<char>(contents)), {});
  EXPECT_EQ(text, "precious");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_EQ(cache->load("key"), std::vector<char>({1}));
}

TEST(DiskCache, EntriesLargerThanTheCacheAreRejected) {
  TemporaryDirectory directory;
  std::unique_ptr<pk::DiskCache> cache = open(directory.path, 100);
  std::vector<char> object(50, 'x');
  cache->store("small", object);
  EXPECT_EQ(cache->load("small"), object);
  std::unique_ptr<pk::DiskCache> smaller = open(directory.path, 10);
  EXPECT_FALSE(smaller->load("small"));
}

TEST(DiskCache, KeysCoverTheBuildLLVMTheHostTheOptionsAndTheKernel) {
  auto trace = [](float factor) {
    return pk::trace(
        "scale",
        [factor](pk::Ref x, pk::Ref o) { o[pk::all] = x[pk::all] * factor; },
        {{"x", {8}, pk::f32}, {"o", {8}, pk::f32}});
  };
  auto module = trace(2.0f);
  std::string text = pk::CompiledKernel::cacheKeyText(pk::irOf(module), {});
  EXPECT_NE(text.find("LLVM " LLVM_VERSION_STRING), std::string::npos);
  EXPECT_NE(text.find("pk-unit-tests"), std::string::npos) << text; // build
  EXPECT_NE(text.find(llvm::sys::getHostCPUName().str()), std::string::npos);
  pk::CompileOptions serial;
  serial.parallelThreshold = 0;
  EXPECT_NE(pk::CompiledKernel::cacheKeyText(pk::irOf(module), serial), text);
  EXPECT_NE(pk::CompiledKernel::cacheKeyText(pk::irOf(trace(3.0f)), {}), text);
  // The same kernel traced again (other locations, same IR): the same key.
  EXPECT_EQ(pk::CompiledKernel::cacheKeyText(pk::irOf(trace(2.0f)), {}), text);
}

} // namespace
