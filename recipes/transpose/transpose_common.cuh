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
  const std::size_t bytes = std::size_t(rows) * std::size_t(cols) * sizeof(T);
  const auto a = reinterpret_cast<std::uintptr_t>(in), b = reinterpret_cast<std::uintptr_t>(out);
  if (a < b + bytes && b < a + bytes) return Args::invalid;  // in and out overlap
  return Args::launch;
}
//! [contract]

/// The cudaError_t a launcher returns when check_args() says not to launch.
constexpr cudaError_t args_error(Args a) { return a == Args::empty ? cudaSuccess : cudaErrorInvalidValue; }

/// Tile edge and block shape of steps 0 to 5: a 32 x 32 tile, 32 x 8 threads, so each thread
/// moves 4 elements of its tile column.
inline constexpr int kTile = 32;
inline constexpr int kBlockRows = 8;

/// Number of tile x tile tiles covering a rows x cols matrix. The steps launch a 1D grid of one
/// block per tile (steps 0-5: block b covers tile row b / tiles_c, tile column b % tiles_c; step 6
/// orders them down tile columns): a 1D grid allows 2^31 - 1 blocks, so neither matrix
/// dimension meets the 65,535 limit of gridDim.y.
constexpr long long tile_count(int rows, int cols, int tile) {
  return (long long)((rows + tile - 1) / tile) * ((cols + tile - 1) / tile);
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
  return {blocks <= 0x7fffffffLL ? kernel : nullptr, dim3(unsigned(blocks)), block, 0};
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
