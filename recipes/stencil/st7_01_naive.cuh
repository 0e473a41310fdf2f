/// \file st7_01_naive.cuh
/// \brief 7-point step 1, naive: one thread per point, its seven inputs read from global memory.
///
/// Thread (x, y) of the block for plane z reads u and its six neighbours, 0 outside the grid,
/// and writes one output. Every input is read by up to seven threads: its x neighbours are in the
/// same warp request, its y neighbours in the warps of the same block, its z neighbours in the
/// blocks of the planes above and below, which run at other times. L1 and L2 absorb part of it;
/// the load pipeline still issues seven loads per output.
#pragma once
#include <cuda_runtime.h>

#include "stencil_common.cuh"

namespace smem::stencil {

//! [naive 7-point kernel]
static __global__ void __launch_bounds__(kSt7X * kSt7Y)
    st7_naive_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, Coefficients c) {
  const int tiles_x = (nx + kSt7X - 1) / kSt7X, tiles_y = (ny + kSt7Y - 1) / kSt7Y;
  const long long tile = blockIdx.x % (unsigned(tiles_x) * unsigned(tiles_y));
  const long long z = blockIdx.x / (unsigned(tiles_x) * unsigned(tiles_y));
  const long long x = tile % tiles_x * kSt7X + threadIdx.x, y = tile / tiles_x * kSt7Y + threadIdx.y;
  if (x >= nx || y >= ny) return;
  const auto u = [&](long long dx, long long dy, long long dz) {
    return fetch3d(in, nx, ny, nz, x + dx, y + dy, z + dz);
  };
  out[(z * ny + y) * nx + x] = seven_point(c, u(0, 0, 0), u(-1, 0, 0), u(1, 0, 0), u(0, -1, 0), u(0, 1, 0),
                                           u(0, 0, -1), u(0, 0, 1));
}
//! [naive 7-point kernel]

inline Plan<void (*)(const float*, float*, int, int, int, Coefficients)> st7_naive_plan(int nx, int ny, int nz) {
  return grid_plan(st7_naive_kernel, tile_count(nx, ny, kSt7X, kSt7Y) * nz, dim3(kSt7X, kSt7Y));
}

/// The 7-point stencil of `in` into `out`, zero outside the grid; see stencil_common.cuh.
inline cudaError_t st7_naive(const float* in, float* out, int nx, int ny, int nz, Coefficients c,
                             cudaStream_t stream = nullptr) {
  if (Args a = check_7point_args(in, out, nx, ny, nz); a != Args::launch) return args_error(a);
  return launch(st7_naive_plan(nx, ny, nz), stream, in, out, nx, ny, nz, c);
}

}  // namespace smem::stencil
