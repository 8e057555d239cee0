//===- WorkspaceTest.cpp - the heap of JIT-compiled kernels ---------------===//

#include "Runtime/Workspace.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace {

using pk::detail::kWorkspaceMaxKept;
using pk::detail::kWorkspaceMaxKeptBlocks;
using pk::detail::kWorkspaceMinBlock;
using pk::detail::workspaceAllocate;
using pk::detail::workspaceFree;

bool aligned16(void *pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % 16 == 0;
}

TEST(Workspace, LargeBlocksAreReusedOnTheNextCall) {
  void *first = workspaceAllocate(1 << 20);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(aligned16(first));
  std::memset(first, 1, 1 << 20);
  workspaceFree(first);
  // The same size, or a bit less, gets the kept block back.
  void *again = workspaceAllocate((1 << 20) - 100);
  EXPECT_EQ(again, first);
  workspaceFree(again);
  // Less than half of it does not (it would waste the rest).
  void *small = workspaceAllocate(kWorkspaceMinBlock);
  EXPECT_NE(small, first);
  workspaceFree(small);
  // Larger blocks are not served from smaller ones.
  void *larger = workspaceAllocate((1 << 20) + 1);
  EXPECT_NE(larger, first);
  std::memset(larger, 2, (1 << 20) + 1);
  workspaceFree(larger);
}

TEST(Workspace, BlocksOfHugePagesAreUsableAndReused) {
  // From 2 MiB up, blocks are mappings of their own (huge pages where the
  // system has them); every byte is usable, and they are kept like others.
  for (size_t bytes : {size_t(2) << 20, (size_t(3) << 20) + 7}) {
    auto *block = static_cast<unsigned char *>(workspaceAllocate(bytes));
    ASSERT_NE(block, nullptr);
    EXPECT_TRUE(aligned16(block));
    std::memset(block, 0xab, bytes);
    EXPECT_EQ(block[0], 0xab);
    EXPECT_EQ(block[bytes - 1], 0xab);
    workspaceFree(block);
    void *again = workspaceAllocate(bytes);
    EXPECT_EQ(again, block);
    workspaceFree(again);
  }
}

TEST(Workspace, SmallBlocksAndNullBehaveAsMalloc) {
  workspaceFree(nullptr);
  void *tiny = workspaceAllocate(0);
  ASSERT_NE(tiny, nullptr);
  EXPECT_TRUE(aligned16(tiny));
  workspaceFree(tiny);
  void *odd = workspaceAllocate(37);
  EXPECT_TRUE(aligned16(odd));
  workspaceFree(odd);
}

TEST(WorkspaceDeathTest, OutOfMemoryIsReportedNotAFault) {
  EXPECT_DEATH(workspaceAllocate(SIZE_MAX - 8), "out of memory");
}

TEST(Workspace, KeepsAtMostItsLimitPerThread) {
  // Blocks over the limit are never kept; many under it evict the oldest.
  std::thread worker([] {
    void *huge = workspaceAllocate(kWorkspaceMaxKept + 1);
    ASSERT_NE(huge, nullptr);
    workspaceFree(huge);
    void *again = workspaceAllocate(kWorkspaceMaxKept + 1);
    workspaceFree(again);
    size_t block = kWorkspaceMaxKept / 4;
    void *blocks[6];
    for (void *&b : blocks)
      b = workspaceAllocate(block);
    for (void *b : blocks)
      workspaceFree(b);
    // The newest four were kept; the first two went back to malloc.
    void *reused = workspaceAllocate(block);
    EXPECT_TRUE(reused == blocks[2] || reused == blocks[3] ||
                reused == blocks[4] || reused == blocks[5]);
    workspaceFree(reused);
  });
  worker.join();
}

TEST(Workspace, KeepsAtMostItsBlockCountPerThread) {
  // Blocks a few KiB large are kept too (a fragmented heap's malloc took
  // microseconds for a small product's packed panels), at most
  // kWorkspaceMaxKeptBlocks of them: freeing more evicts the oldest.
  std::thread worker([] {
    std::vector<void *> blocks(kWorkspaceMaxKeptBlocks + 2);
    for (void *&b : blocks)
      b = workspaceAllocate(kWorkspaceMinBlock);
    for (void *b : blocks)
      workspaceFree(b);
    std::set<void *> kept(blocks.begin() + 2, blocks.end());
    std::vector<void *> again;
    for (size_t i = 0; i < kWorkspaceMaxKeptBlocks; ++i) {
      again.push_back(workspaceAllocate(kWorkspaceMinBlock));
      EXPECT_EQ(kept.erase(again.back()), 1u) << "block " << i;
    }
    for (void *b : again)
      workspaceFree(b);
  });
  worker.join();
}

TEST(Workspace, BlocksMayBeFreedByAnotherThread) {
  void *block = workspaceAllocate(1 << 20);
  std::thread other([block] { workspaceFree(block); });
  other.join();
}

} // namespace
