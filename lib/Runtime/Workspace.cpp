//===- Workspace.cpp - heap memory of JIT-compiled kernels ----------------===//

#include "Workspace.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace pk::detail {

namespace {

/// Each block starts with its size; the caller's memory follows, 16-byte
/// aligned like malloc's.
struct alignas(16) Header {
  size_t bytes;
};

/// The freed large blocks of one thread, most recently freed last.
struct Kept {
  std::vector<Header *> blocks;
  size_t bytes = 0;

  ~Kept() {
    for (Header *block : blocks)
      std::free(block);
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
  auto *block = static_cast<Header *>(std::malloc(sizeof(Header) + bytes));
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
    std::free(block);
    return;
  }
  kept.blocks.push_back(block);
  kept.bytes += block->bytes;
  // Over the limit: the oldest go back to malloc.
  while (kept.bytes > kWorkspaceMaxKept) {
    Header *oldest = kept.blocks.front();
    kept.blocks.erase(kept.blocks.begin());
    kept.bytes -= oldest->bytes;
    std::free(oldest);
  }
}

} // namespace pk::detail
