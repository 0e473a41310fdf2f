/// \file st7_03_planes.cuh
/// \brief 7-point step 3, thread coarsening in z: a block walks its 32 x 8 tile up a column of
/// kPlanesZ planes, loading one 2D plane (with its x and y halo) into shared memory at a time.
///
/// What changes from step 2: the tile is a 2D plane, (32 + 2) x (8 + 2) with its halo, and the
/// block computes kPlanesZ of them instead of one. Three planes live in shared memory, a ring of
/// z - 1, z and z + 1; each step loads one new plane into the slot of the oldest and computes
/// plane z from the three. Each input plane is loaded once per column instead of three times
/// (step 2's z halo is gone, but for the two planes at the ends of the column), and the x-y halo
/// costs 1.33 times the interior instead of step 2's 2.4. Two barriers per plane: the new plane
/// is complete before anyone reads it, and read by everyone before the next overwrites a slot.
///
/// Bank conflicts: the loads and the reads are rows of 32 consecutive words: conflict-free.
#pragma once
#include <cuda_runtime.h>

#include "stencil_common.cuh"

namespace smem::stencil {

/// Planes per block of steps 3 and 4 (a column of the grid is cut into chunks of this many).
inline constexpr int kPlanesZ = 32;

//! [plane ring map]
/// The ring of three planes: slot s holds a plane of (kSt7Y + 2) rows of (kSt7X + 2) floats;
/// point (y, x) of the plane, each counted from the halo's first, is grid point (y0 - 1 + y,
/// x0 - 1 + x). Plane z of the chunk starting at z0 lives in slot (z - z0 + 1) % 3.
__host__ __device__ constexpr int ring_offset(int slot, int y, int x) {
  return (slot * (kSt7Y + 2) + y) * (kSt7X + 2) + x;
}
inline constexpr int kRingPlaneWords = (kSt7Y + 2) * (kSt7X + 2);
//! [plane ring map]

//! [planes kernel]
static __global__ void __launch_bounds__(kSt7X * kSt7Y)
    st7_planes_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, Coefficients c) {
  __shared__ float ring[3 * kRingPlaneWords];
  const long long tiles_x = tiles_along(nx, kSt7X), tiles_y = tiles_along(ny, kSt7Y);
  const long long b = blockIdx.x;
  const long long x0 = b % tiles_x * kSt7X, y0 = b / tiles_x % tiles_y * kSt7Y;
  const long long z0 = b / (tiles_x * tiles_y) * kPlanesZ, z1 = z0 + kPlanesZ < nz ? z0 + kPlanesZ : nz;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kSt7X + tx;
  const auto slot = [&](long long z) { return int((z - z0 + 1) % 3); };
  const auto load_plane = [&](long long z) {
    for (int e = tid; e < kRingPlaneWords; e += kSt7X * kSt7Y) {
      const int x = e % (kSt7X + 2), y = e / (kSt7X + 2);
      ring[ring_offset(slot(z), y, x)] = fetch3d(in, nx, ny, nz, x0 - 1 + x, y0 - 1 + y, z);
    }
  };

  load_plane(z0 - 1);
  load_plane(z0);
  const long long x = x0 + tx, y = y0 + ty;
  for (long long z = z0; z < z1; ++z) {
    load_plane(z + 1);  // into the slot of z - 2, which the previous step's barrier freed
    __syncthreads();
    const int m = slot(z - 1), s = slot(z), p = slot(z + 1);
    const auto u = [&](int sl, int dy, int dx) { return ring[ring_offset(sl, ty + 1 + dy, tx + 1 + dx)]; };
    if (x < nx && y < ny)
      out[(z * ny + y) * nx + x] =
          seven_point(c, u(s, 0, 0), u(s, 0, -1), u(s, 0, 1), u(s, -1, 0), u(s, 1, 0), u(m, 0, 0), u(p, 0, 0));
    __syncthreads();
  }
}
//! [planes kernel]

inline Plan<void (*)(const float*, float*, int, int, int, Coefficients)> st7_planes_plan(int nx, int ny, int nz) {
  return grid_plan(st7_planes_kernel, tile_count(nx, ny, kSt7X, kSt7Y) * tiles_along(nz, kPlanesZ),
                   dim3(kSt7X, kSt7Y));
}

/// The 7-point stencil of `in` into `out`, zero outside the grid; see stencil_common.cuh.
inline cudaError_t st7_planes(const float* in, float* out, int nx, int ny, int nz, Coefficients c,
                              cudaStream_t stream = nullptr) {
  if (Args a = check_7point_args(in, out, nx, ny, nz); a != Args::launch) return args_error(a);
  return launch(st7_planes_plan(nx, ny, nz), stream, in, out, nx, ny, nz, c);
}

}  // namespace smem::stencil
