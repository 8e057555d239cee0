//===- Workspace.cpp - heap memory of JIT-compiled kernels ----------------===//

#include "Workspace.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif

namespace pk::detail {

namespace {

/// Each block starts with its size and, for a block mapped on its own,
/// the size of its mapping; the caller's memory follows, 16-byte aligned
/// like malloc's.
struct alignas(16) Header {
  size_t bytes;
  size_t mapped;
};

/// Blocks from 2 MiB up are mapped on their own, 2 MiB-aligned and marked
/// for transparent huge pages where the system has them: touching one
/// costs a page fault per 2 MiB instead of per 4 KiB (a 1024 x 1024 float
/// matmul's packed panels: 4 faults, not 2,048), and the packed panels that
/// a matmul streams through need fewer TLB entries.
constexpr size_t kHugePage = size_t(2) << 20;

Header *mapBlock(size_t bytes) {
#if (defined(__unix__) || defined(__APPLE__)) && defined(MAP_ANONYMOUS)
  if (bytes < kHugePage - sizeof(Header) ||
      bytes > SIZE_MAX - sizeof(Header) - 2 * kHugePage)
    return nullptr;
  size_t size =
      (sizeof(Header) + bytes + kHugePage - 1) / kHugePage * kHugePage;
  // One huge page more than needed, so that an aligned range fits; the
  // rest is unmapped.
  void *raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED)
    return nullptr;
  auto start = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
  if (aligned > start)
    munmap(raw, aligned - start);
  if (size_t tail = start + kHugePage - aligned)
    munmap(reinterpret_cast<void *>(aligned + size), tail);
#ifdef MADV_HUGEPAGE
  madvise(reinterpret_cast<void *>(aligned), size, MADV_HUGEPAGE);
#endif
  auto *block = reinterpret_cast<Header *>(aligned);
  block->mapped = size;
  return block;
#else
  (void)bytes;
  return nullptr;
#endif
}

void release(Header *block) {
#if (defined(__unix__) || defined(__APPLE__)) && defined(MAP_ANONYMOUS)
  if (block->mapped) {
    munmap(block, block->mapped);
    return;
  }
#endif
  std::free(block);
}

/// The freed large blocks of one thread, most recently freed last.
struct Kept {
  std::vector<Header *> blocks;
  size_t bytes = 0;

  ~Kept() {
    for (Header *block : blocks)
      release(block);
  }
};

thread_local Kept kept;

} // namespace

void *workspaceAllocate(size_t bytes) {
  if (bytes > SIZE_MAX - sizeof(Header))
    bytes = SIZE_MAX - sizeof(Header); // fails below
  if (bytes >= kWorkspaceMinBlock) {
    // The smallest kept block that fits, if it is not twice too large.
    Header *best = nullptr;
    size_t bestIndex = 0;
    for (size_t i = 0; i < kept.blocks.size(); ++i) {
      Header *block = kept.blocks[i];
      if (block->bytes >= bytes && block->bytes / 2 <= bytes &&
          (!best || block->bytes < best->bytes)) {
        best = block;
        bestIndex = i;
      }
    }
    if (best) {
      kept.blocks.erase(kept.blocks.begin() + bestIndex);
      kept.bytes -= best->bytes;
      return best + 1;
    }
  }
  Header *block = mapBlock(bytes);
  if (!block) {
    block = static_cast<Header *>(std::malloc(sizeof(Header) + bytes));
    if (block)
      block->mapped = 0;
  }
  if (!block) {
    // Compiled code does not check for null: say why, rather than fault.
    std::fprintf(stderr,
                 "picokernel: out of memory: a kernel's temporary of %zu "
                 "bytes could not be allocated\n",
                 bytes);
    std::abort();
  }
  block->bytes = bytes;
  return block + 1;
}

void workspaceFree(void *pointer) {
  if (!pointer)
    return;
  Header *block = static_cast<Header *>(pointer) - 1;
  if (block->bytes < kWorkspaceMinBlock || block->bytes > kWorkspaceMaxKept) {
    release(block);
    return;
  }
  kept.blocks.push_back(block);
  kept.bytes += block->bytes;
  // Over the limits: the oldest go back to malloc.
  while (kept.bytes > kWorkspaceMaxKept ||
         kept.blocks.size() > kWorkspaceMaxKeptBlocks) {
    Header *oldest = kept.blocks.front();
    kept.blocks.erase(kept.blocks.begin());
    kept.bytes -= oldest->bytes;
    release(oldest);
  }
}

} // namespace pk::detail
