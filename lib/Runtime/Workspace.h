//===- Workspace.h - heap memory of JIT-compiled kernels --------*- C++ -*-===//
//
// Private to the runtime. Kernels allocate their temporaries (packed matmul
// panels, intermediates) on every call; the JIT links their malloc and free
// to these, which keep a few freed blocks of some KiB or more per thread
// for the next call: a block glibc would return to the system (it maps
// large ones) costs a page fault per 4 KiB when it is touched again, and
// in a process whose heap is fragmented (after hundreds of compiles and
// other libraries' allocations) malloc took microseconds for a 100 x 100
// product's 40 KiB panels (dynamic 100x101 @ 101x102: 41 -> 27 us).
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_LIB_RUNTIME_WORKSPACE_H
#define PICOKERNEL_LIB_RUNTIME_WORKSPACE_H

#include <cstddef>

namespace pk::detail {

/// At least `bytes`, 16-byte aligned. The compiled code that calls it does
/// not check for null, so when memory runs out it reports that and aborts.
void *workspaceAllocate(size_t bytes);
/// free's contract, for pointers from workspaceAllocate (and null).
void workspaceFree(void *pointer);

/// Blocks from this size up are kept for reuse.
inline constexpr size_t kWorkspaceMinBlock = size_t(4) << 10;
/// The most bytes one thread keeps for reuse.
inline constexpr size_t kWorkspaceMaxKept = size_t(256) << 20;
/// The most blocks one thread keeps for reuse.
inline constexpr size_t kWorkspaceMaxKeptBlocks = 32;

} // namespace pk::detail

#endif // PICOKERNEL_LIB_RUNTIME_WORKSPACE_H
