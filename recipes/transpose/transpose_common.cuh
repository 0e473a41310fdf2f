/// \file transpose_common.cuh
/// \brief What every transpose step shares: the launcher contract (argument checks on the host
/// before any CUDA call), the 32 x 32 tiling of the classic steps, and the launch plan.
///
/// Every step computes `out (cols x rows) = transpose(in (rows x cols))`, both dense and
/// row-major (steps 0 and 1 copy instead: they are the roofs), through a launcher
/// \code
/// template <class T>
/// cudaError_t <step>(int rows, int cols, const T* in, T* out, cudaStream_t stream = nullptr);
/// \endcode
/// that returns `cudaErrorInvalidValue` before any CUDA call, with `out` untouched, for negative
/// sizes, null pointers with a non-zero size, and `in` and `out` that overlap; a zero size is a
/// no-op. It never allocates or synchronizes, so it can be captured in a CUDA graph.
///
/// Accepted sizes: `rows` and `cols` from 0 to INT_MAX each, their product above 2^31 too (offsets
/// are 64-bit), as long as the tiles fit the 1D grid: `tiles(rows, E) * tiles(cols, E) <= 2^31 - 1`
/// for the step's tile edge E (32 for steps 0 to 5, `256 / sizeof(T)` for step 6). Above that the
/// plan is null and the launcher returns `cudaErrorInvalidValue` before any CUDA call, `out`
/// untouched; such a matrix is larger than 1 TiB (e.g. 993 x INT_MAX for steps 0 to 5), so every
/// matrix a GPU holds runs, 1 x INT_MAX and INT_MAX x 1 included.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace smem::transpose {

/// What a launcher does with its arguments: launch, return success without touching the GPU
/// (an empty matrix), or return cudaErrorInvalidValue.
enum class Args { launch, empty, invalid };

//! [contract]
/// Checks `out (cols x rows) = transpose(in (rows x cols))`: negative sizes, null pointers with a
/// non-zero size, and input and output that overlap are invalid; a zero size is a no-op.
template <class T>
constexpr Args check_args(int rows, int cols, const T* in, const T* out) {
  if (rows < 0 || cols < 0) return Args::invalid;
  if (rows == 0 || cols == 0) return Args::empty;
  if (in == nullptr || out == nullptr) return Args::invalid;
  const std::size_t elements = std::size_t(rows) * std::size_t(cols);  // below 2^62
  if (elements > SIZE_MAX / sizeof(T)) return Args::invalid;            // no buffer holds it
  const std::size_t bytes = elements * sizeof(T);
  const auto a = reinterpret_cast<std::uintptr_t>(in), b = reinterpret_cast<std::uintptr_t>(out);
  if ((a < b ? b - a : a - b) < bytes) return Args::invalid;  // in and out overlap (no pointer + bytes to wrap)
  return Args::launch;
}
//! [contract]

/// The cudaError_t a launcher returns when check_args() says not to launch.
constexpr cudaError_t args_error(Args a) { return a == Args::empty ? cudaSuccess : cudaErrorInvalidValue; }

/// Tile edge and block shape of steps 0 to 5: a 32 x 32 tile, 32 x 8 threads, so each thread
/// moves 4 elements of its tile column.
inline constexpr int kTile = 32;
inline constexpr int kBlockRows = 8;

/// Tiles of edge `tile` along `extent` (>= 0) elements. The kernels and the plans count them with
/// this: `(extent + tile - 1) / tile` overflows `int` for an extent near INT_MAX, not `unsigned`.
__host__ __device__ constexpr int tiles(int extent, int tile) {
  return int((unsigned(extent) + unsigned(tile) - 1) / unsigned(tile));
}

/// Number of tile x tile tiles covering a rows x cols matrix. The steps launch a 1D grid of one
/// block per tile (steps 0-5: block b covers tile row b / tiles_c, tile column b % tiles_c; step 6
/// orders them down tile columns): a 1D grid allows 2^31 - 1 blocks, so neither matrix
/// dimension meets the 65,535 limit of gridDim.y.
constexpr long long tile_count(int rows, int cols, int tile) {
  return (long long)tiles(rows, tile) * tiles(cols, tile);
}

//! [plan]
/// What a launcher launches: the kernel, its grid and block, and its dynamic shared memory.
/// The benchmark reads the same plan, so what it reports is what ran. A null kernel: the
/// problem does not fit the grid (the launcher returns cudaErrorInvalidValue).
template <class Kernel>
struct Plan {
  Kernel kernel;
  dim3 grid, block;
  unsigned smem;
  Plan<const void*> erased() const { return {reinterpret_cast<const void*>(kernel), grid, block, smem}; }
};

/// The plan of a kernel over `blocks` blocks of a 1D grid (null when that exceeds 2^31 - 1).
template <class Kernel>
Plan<Kernel> grid_plan(Kernel kernel, long long blocks, dim3 block) {
  if (blocks > 0x7fffffffLL) return {nullptr, dim3(), dim3(), 0};
  return {kernel, dim3(unsigned(blocks)), block, 0};
}

/// Launches a plan with the kernel's arguments; cudaErrorInvalidValue for a null kernel.
template <class Kernel, class... A>
cudaError_t launch(const Plan<Kernel>& p, cudaStream_t stream, A... args) {
  if (p.kernel == nullptr) return cudaErrorInvalidValue;
  p.kernel<<<p.grid, p.block, p.smem, stream>>>(args...);
  return cudaGetLastError();
}
//! [plan]

}  // namespace smem::transpose
