//===- Defaults.h - picokernel's default settings, in one place -*- C++ -*-===//
//
// Every default that more than one layer states (pass options in .td files,
// pipeline options, runtime and kernel options, the Python API) reads it
// from here.
//
//===----------------------------------------------------------------------===//

#ifndef PICOKERNEL_SUPPORT_DEFAULTS_H
#define PICOKERNEL_SUPPORT_DEFAULTS_H

#include <cstddef>
#include <cstdint>

namespace pk::defaults {

/// Loop nests with at least this many iterations run their outermost
/// parallel loop on all cores (OpenMP); smaller ones stay serial, free of
/// thread start-up costs.
inline constexpr int64_t kParallelThreshold = int64_t(1) << 15;

/// Elements one block of a long reduction reduces before its partial
/// result joins the others (pk-split-reductions). Within a block LLVM keeps
/// 32 partial sums in vector registers (32 elements each). A float32 sum of
/// 1e7 elements (2 threads) took 0.30-0.41 ms with 1024, 0.30-0.45 ms with
/// 4096 and 0.46-0.49 ms with 128 or 256.
inline constexpr int64_t kReductionBlock = 1024;

/// Iterations one tile of rows of a softmax or norm aims at
/// (pk-fuse-rows): 16 KiB of float32 per array, so that a tile of the
/// input, its temporaries and the output stay in L1.
inline constexpr int64_t kRowTileElements = 4096;

/// Tiles of rows a softmax or norm is cut into at least, where there are
/// as many rows, so that every core gets several.
inline constexpr int64_t kMinRowTiles = 32;

/// Matmuls with fewer multiply-adds than this keep a plain loop nest:
/// packing pads them to whole register tiles, which small ones lose to.
inline constexpr int64_t kPackMatmulMinIterations = int64_t(1) << 15;

/// Matrix-vector products with fewer multiply-adds than this keep a plain
/// loop nest. Any that spans one column tile of vectors gains: a float32
/// 64x64 A @ x took 0.4 us vectorized and 2.3 us as a loop nest.
inline constexpr int64_t kMatvecMinIterations = 1;

/// Steps of the reduction dimension one iteration of a packed matmul's
/// inner loop takes (fewer lose the FMA chains' overlap).
inline constexpr int64_t kMatmulKUnroll = 4;

/// Bytes of a packed A row panel's chunk of K, which the column panels of B
/// stream past (from L2). Each chunk after the first reads and rewrites C,
/// and an elementwise epilogue fuses only when K is one chunk: measured
/// with AVX-512 (48 KiB L1, 2 MiB L2), 64 KiB chunks ran float32 n =
/// 1024-2048 1.15-1.2x and float64 1.3-1.8x faster than 16 KiB ones (L1's
/// third), and 128-256 KiB no faster.
inline constexpr int64_t kMatmulKPanelBytes = int64_t(64) << 10;

/// Steps of K a packed matmul's register tile sums from zero before adding
/// the sums to its running total, as BLAS sums in blocks: the rounding
/// error then grows with this and K / this, not with a chunk of K (2048
/// steps of float32 for 64 KiB). 256 matched NumPy's (OpenBLAS's) error on
/// 1024-2048 products of uniform [0, 1) data; 2048 in order was 3-6x it.
inline constexpr int64_t kMatmulSumRun = 256;

/// Bytes of the chunk of packed B that stays in L2 while every row panel of
/// A passes it: half of a 2 MiB L2.
inline constexpr int64_t kMatmulBBlockBytes = int64_t(1) << 20;

/// Calls from Python on arrays of fewer bytes than this (all arguments
/// together) keep the GIL while a compiled kernel runs: releasing and
/// taking it back costs about 60 ns, as much as an fma over 16 KiB.
/// Compiles, and longer runs, release it.
inline constexpr int64_t kKeepGilBytes = int64_t(64) << 10;

/// LLVM optimization level of compiled kernels (0-3).
inline constexpr unsigned kOptLevel = 3;

/// Threads per GPU workgroup (the tile size of the innermost parallel loop).
inline constexpr int64_t kWorkgroupSize = 64;

/// The Vulkan version SPIR-V is compiled for: the lowest the Vulkan runtime
/// runs on (storage of 16-bit types is core there).
inline constexpr const char *kVulkanVersion = "1.1";

/// The NVIDIA architecture PTX is compiled for: Ampere (A100) and later run
/// it, as the CUDA driver compiles PTX for the device it loads on.
inline constexpr const char *kCudaChip = "sm_80";

/// Threads per CUDA block (the tile size of the innermost parallel loop).
inline constexpr int64_t kCudaBlockSize = 128;

/// Compiled variants one kernel keeps; the least recently used goes first.
inline constexpr size_t kMaxCacheEntries = 64;

/// Bytes of device memory the variants of one kernel keep, besides the
/// newest.
inline constexpr uint64_t kMaxDeviceBytes = uint64_t(256) << 20;

} // namespace pk::defaults

#endif // PICOKERNEL_SUPPORT_DEFAULTS_H
