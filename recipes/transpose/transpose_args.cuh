/// \file transpose_args.cuh
/// \brief The launcher contract shared by every transpose step: argument checks done on the host
/// before any CUDA call.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace smem::transpose {

/// What a launcher does with its arguments: launch, return success without touching the GPU
/// (an empty matrix), or return cudaErrorInvalidValue.
enum class Args { launch, empty, invalid };

/// Checks `out (cols x rows) = transpose(in (rows x cols))`, both dense and row-major:
/// negative sizes, null pointers with a non-zero size, and input and output that overlap are
/// invalid; a zero size is an empty (no-op) transpose.
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

/// The cudaError_t a launcher returns when check_args() says not to launch.
constexpr cudaError_t args_error(Args a) {
  return a == Args::empty ? cudaSuccess : cudaErrorInvalidValue;
}

/// Number of tile x tile tiles covering a rows x cols matrix. The steps launch a 1D grid of one
/// block per tile (steps 0-5: block b covers tile row b / tiles_c, tile column b % tiles_c; step 6
/// orders them down tile columns), so no grid dimension limit applies to either matrix dimension.
constexpr long long tile_count(int rows, int cols, int tile) {
  return (long long)((rows + tile - 1) / tile) * ((cols + tile - 1) / tile);
}

}  // namespace smem::transpose
