/// \file st7_01_naive.cuh
/// \brief 7-point step 1, naive: one thread per point, its seven inputs read from global memory.
///
/// Thread (x, y) of the block for plane z reads u and its six neighbours, 0 outside the grid,
/// and writes one output. Every input is read by up to seven threads: its x neighbours are in the
/// same warp request, its y neighbours in the warps of the same block, its z neighbours in the
/// blocks of the planes above and below, which run at other times. L1 and L2 absorb part of it;
/// the load pipeline still issues seven loads per output. A grid of one block per tile and plane
/// would pass gridDim.x's limit for a thin and tall grid (1 x 9 x 2^30 points: 2^31 blocks); there
/// the grid holds as many planes as fit, and each block walks its tile's planes with that stride.
#pragma once
#include <cuda_runtime.h>

#include "stencil_common.cuh"

namespace smem::stencil {

//! [naive 7-point kernel]
/// Block b: tile b % tiles of planes b / tiles, then every gridDim.x / tiles planes further up
/// (one plane, but for a grid capped by st7_naive_plan).
static __global__ void __launch_bounds__(kSt7X * kSt7Y)
    st7_naive_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, Coefficients c) {
  const unsigned tiles_x = tiles_along(nx, kSt7X), tiles = tiles_x * tiles_along(ny, kSt7Y);  // <= gridDim.x
  const unsigned tile = blockIdx.x % tiles;
  const long long x = tile % tiles_x * kSt7X + threadIdx.x, y = tile / tiles_x * kSt7Y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  for (long long z = blockIdx.x / tiles; z < nz; z += gridDim.x / tiles) {
    const auto u = [&](long long dx, long long dy, long long dz) {
      return fetch3d(in, nx, ny, nz, x + dx, y + dy, z + dz);
    };
    out[(z * ny + y) * nx + x] = seven_point(c, u(0, 0, 0), u(-1, 0, 0), u(1, 0, 0), u(0, -1, 0), u(0, 1, 0),
                                             u(0, 0, -1), u(0, 0, 1));
  }
}
//! [naive 7-point kernel]

/// One block per tile and plane; where that passes kMaxBlocks, as many whole planes of tiles as
/// kMaxBlocks holds (null where not even one plane fits).
inline Plan<void (*)(const float*, float*, int, int, int, Coefficients)> st7_naive_plan(int nx, int ny, int nz) {
  const long long tiles = tile_count(nx, ny, kSt7X, kSt7Y);
  const long long fit = tiles == 0 || tiles > kMaxBlocks ? 1 : kMaxBlocks / tiles;  // planes of a full grid
  return grid_plan(st7_naive_kernel, tiles * (nz < fit ? nz : fit), dim3(kSt7X, kSt7Y));
}

/// The 7-point stencil of `in` into `out`, zero outside the grid; see stencil_common.cuh.
inline cudaError_t st7_naive(const float* in, float* out, int nx, int ny, int nz, Coefficients c,
                             cudaStream_t stream = nullptr) {
  if (Args a = check_7point_args(in, out, nx, ny, nz); a != Args::launch) return args_error(a);
  return launch(st7_naive_plan(nx, ny, nz), stream, in, out, nx, ny, nz, c);
}

}  // namespace smem::stencil
