/// \file st7_02_smem_3d.cuh
/// \brief 7-point step 2, a 3D shared tile with its halo: the block loads (32 + 2) x (4 + 2) x
/// (4 + 2) points once and computes its 32 x 4 x 4 from shared memory.
///
/// What changes from step 1: each input is read from global memory once per block instead of
/// up to seven times per block, and the six neighbour reads of each output go to shared memory.
/// The weakness is the halo: a 3D tile small enough for one block (512 threads) has a thin
/// interior, and its halo, read from L2 by the neighbouring blocks too, is 2.4 times the
/// interior. Steps 3 and 4 keep the tile two-dimensional and walk it along z instead.
///
/// Bank conflicts: in the load and the compute, the lanes of a warp access consecutive words of
/// one row (the x neighbours one word to either side): conflict-free.
#pragma once
#include <cuda_runtime.h>

#include "stencil_common.cuh"

namespace smem::stencil {

/// Block and tile of step 2: 32 x 4 x 4 threads, one point each.
inline constexpr int kBox3dX = 32, kBox3dY = 4, kBox3dZ = 4, kBox3dThreads = kBox3dX * kBox3dY * kBox3dZ;

//! [3d tile map]
/// The shared tile: (kBox3dZ + 2) planes of (kBox3dY + 2) rows of (kBox3dX + 2) floats; point
/// (z, y, x) of the tile, each counted from the halo's first, is grid point (z0 - 1 + z,
/// y0 - 1 + y, x0 - 1 + x).
__host__ __device__ constexpr int box3d_offset(int z, int y, int x) {
  return (z * (kBox3dY + 2) + y) * (kBox3dX + 2) + x;
}
inline constexpr int kBox3dWords = (kBox3dZ + 2) * (kBox3dY + 2) * (kBox3dX + 2);
//! [3d tile map]

//! [3d tile kernel]
static __global__ void __launch_bounds__(kBox3dThreads)
    st7_smem_3d_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, Coefficients c) {
  __shared__ float tile[kBox3dWords];
  const long long tiles_x = tiles_along(nx, kBox3dX), tiles_y = tiles_along(ny, kBox3dY);
  const long long b = blockIdx.x;
  const long long x0 = b % tiles_x * kBox3dX, y0 = b / tiles_x % tiles_y * kBox3dY;
  const long long z0 = b / (tiles_x * tiles_y) * kBox3dZ;
  const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
  const int tid = (tz * kBox3dY + ty) * kBox3dX + tx;

  for (int e = tid; e < kBox3dWords; e += kBox3dThreads) {
    const int x = e % (kBox3dX + 2), y = e / (kBox3dX + 2) % (kBox3dY + 2), z = e / ((kBox3dX + 2) * (kBox3dY + 2));
    tile[box3d_offset(z, y, x)] = fetch3d(in, nx, ny, nz, x0 - 1 + x, y0 - 1 + y, z0 - 1 + z);
  }
  __syncthreads();

  const long long x = x0 + tx, y = y0 + ty, z = z0 + tz;
  if (x >= nx || y >= ny || z >= nz) return;
  const auto u = [&](int dz, int dy, int dx) { return tile[box3d_offset(tz + 1 + dz, ty + 1 + dy, tx + 1 + dx)]; };
  out[(z * ny + y) * nx + x] =
      seven_point(c, u(0, 0, 0), u(0, 0, -1), u(0, 0, 1), u(0, -1, 0), u(0, 1, 0), u(-1, 0, 0), u(1, 0, 0));
}
//! [3d tile kernel]

inline Plan<void (*)(const float*, float*, int, int, int, Coefficients)> st7_smem_3d_plan(int nx, int ny, int nz) {
  return grid_plan(st7_smem_3d_kernel, tile_count(nx, ny, kBox3dX, kBox3dY) * tiles_along(nz, kBox3dZ),
                   dim3(kBox3dX, kBox3dY, kBox3dZ));
}

/// The 7-point stencil of `in` into `out`, zero outside the grid; see stencil_common.cuh.
inline cudaError_t st7_smem_3d(const float* in, float* out, int nx, int ny, int nz, Coefficients c,
                               cudaStream_t stream = nullptr) {
  if (Args a = check_7point_args(in, out, nx, ny, nz); a != Args::launch) return args_error(a);
  return launch(st7_smem_3d_plan(nx, ny, nz), stream, in, out, nx, ny, nz, c);
}

}  // namespace smem::stencil
