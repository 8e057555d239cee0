//===- DiskCacheTest.cpp - compiled kernels kept across processes ---------===//
//
// The directory format and the cache key; test_disk_cache.py runs the
// cache across processes (hits, options, corruption, races, bound, off).
//
//===----------------------------------------------------------------------===//

#include "picokernel/Runtime/DiskCache.h"
#include "picokernel/picokernel.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/TargetParser/Host.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

size_t entryCount(const fs::path &directory) {
  size_t count = 0;
  for (const auto &entry : fs::directory_iterator(directory))
    count += entry.path().extension() == ".pkobj";
  return count;
}

TEST(DiskCache, StoresLoadsAndRejectsCorruptEntries) {
  TemporaryDirectory directory;
  pk::DiskCache cache(directory.path.string(), 1 << 20);
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
  pk::DiskCache cache(directory.path.string(), 2100);
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

TEST(DiskCache, KeysCoverTheBuildLLVMTheHostTheOptionsAndTheKernel) {
  auto trace = [](float factor) {
    return pk::trace(
        "scale",
        [factor](pk::Ref x, pk::Ref o) { o[pk::all] = x[pk::all] * factor; },
        {{"x", {8}, pk::f32}, {"o", {8}, pk::f32}});
  };
  auto module = trace(2.0f);
  std::string text = pk::CompiledKernel::cacheKeyText(*module, {});
  EXPECT_NE(text.find("LLVM " LLVM_VERSION_STRING), std::string::npos);
  EXPECT_NE(text.find("pk-unit-tests"), std::string::npos) << text; // build
  EXPECT_NE(text.find(llvm::sys::getHostCPUName().str()), std::string::npos);
  pk::CompileOptions serial;
  serial.parallelThreshold = 0;
  EXPECT_NE(pk::CompiledKernel::cacheKeyText(*module, serial), text);
  EXPECT_NE(pk::CompiledKernel::cacheKeyText(*trace(3.0f), {}), text);
  // The same kernel traced again (other locations, same IR): the same key.
  EXPECT_EQ(pk::CompiledKernel::cacheKeyText(*trace(2.0f), {}), text);
}

} // namespace
