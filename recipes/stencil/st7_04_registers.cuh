/// \file st7_04_registers.cuh
/// \brief 7-point step 4, register tiling: the z neighbours in registers, one shared plane, and
/// each thread owning four consecutive points of x, moved as 16-byte vectors.
///
/// What changes from step 3, and why it is faster:
/// - Only one plane lives in shared memory. The z - 1 and z + 1 values a point needs are its own
///   column's, which no other thread reads: they stay in the thread's registers (below, this
///   plane, above) and rotate as the block moves up. Shared memory serves only the x and y
///   neighbours, and the shared memory per point drops to about a third of step 3's.
/// - Each thread owns 4 consecutive points of a row: one 16-byte load per plane. The x neighbours
///   inside its vector are its own registers, those at the vector's ends its warp neighbours'
///   (one `__shfl_up_sync` and one `__shfl_down_sync`); only the first and last lanes of a warp
///   read the x halo from shared memory. Shared memory serves the rows above and below: two
///   16-byte shared loads per 4 points. The block (32 x 8 threads, a warp per row) covers a
///   128 x 8 tile, so a warp moves 512 contiguous bytes per request, and the x halo shrinks to 2
///   columns per 128.
/// - The loads run ahead: while plane z is computed, plane z + 2 (its interior and halo pieces)
///   is already being loaded into registers, so the latency of a load is hidden behind a whole
///   plane of work, and every thread always has 16 bytes or more in flight.
/// - `__launch_bounds__(256, 4)` holds the kernel to 64 registers, so that four blocks (1024
///   threads, each with its next plane in flight) share an SM.
/// - Each block walks kRegPlanesZ planes: the two planes beyond its ends are the only inputs it
///   reads that another block also reads from DRAM.
///
/// 16-byte accesses need nx a multiple of 4 and `in` and `out` 16-byte aligned; otherwise the
/// same kernel moves the 4 points element by element.
///
/// Bank conflicts: a warp's vector stores and loads of a plane row are 32 consecutive 16-byte
/// vectors, conflict-free; the 16 x-halo stores of warp 0 fall two to a bank (see the bank model).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "stencil_common.cuh"

namespace smem::stencil {

//! [register plane map]
/// The shared plane of steps 4 and 5 and its thread maps. Block: 32 x 8 threads, thread (tx, ty)
/// owning points x0 + 4 tx .. x0 + 4 tx + 3 of row y0 + ty. The plane: rows -1 .. 8 (the y halo
/// and the tile), each of kPitch floats, with the tile's 128 points at words 4 .. 131 and the x
/// halo at words 3 (x0 - 1) and 132 (x0 + 128): every row's tile starts 16-byte aligned.
struct RegisterPlane {
  static constexpr int kThreadsX = 32, kThreadsY = 8, kThreads = kThreadsX * kThreadsY;
  static constexpr int kTileX = 4 * kThreadsX, kTileY = kThreadsY;
  static constexpr int kPitch = kTileX + 8, kWords = (kTileY + 2) * kPitch;
  /// Word of point (y0 + row, x0 + col), row in [-1, kTileY], col in [-1, kTileX].
  __host__ __device__ static constexpr int offset(int row, int col) { return (row + 1) * kPitch + col + 4; }
  /// The first of thread (tx, ty)'s 4 points in row ty + dy (dy = -1, 0, 1).
  __host__ __device__ static constexpr int vector_offset(int tx, int ty, int dy) { return offset(ty + dy, 4 * tx); }
  /// The x halo: thread t < 2 kTileY loads row t / 2, column -1 (t even) or kTileX (t odd).
  static constexpr int kXHaloThreads = 2 * kTileY;
  __host__ __device__ static constexpr int x_halo_row(int t) { return t / 2; }
  __host__ __device__ static constexpr int x_halo_col(int t) { return t % 2 == 0 ? -1 : kTileX; }
  __host__ __device__ static constexpr int x_halo_offset(int t) { return offset(x_halo_row(t), x_halo_col(t)); }
  /// The y halo: the threads of row 0 load row -1, those of row kTileY - 1 load row kTileY.
  __host__ __device__ static constexpr int y_halo_row(int ty) { return ty == 0 ? -1 : kTileY; }
};
//! [register plane map]

/// What one thread loads of one plane: its 4 points, and its piece of the halo (a vector of the
/// y halo for the threads of the first and last rows, one x-halo point for the first 16 threads).
struct Slice {
  float4 c, yh;
  float xh;
};

/// The 4 points (x .. x + 3, y, z), 0 outside the grid; one 16-byte load when `vec` (then nx % 4
/// == 0 and x % 4 == 0, so the 4 points are all inside or all outside).
__device__ inline float4 load4(const float* __restrict__ in, int nx, int ny, int nz, long long x, long long y,
                               long long z, bool vec) {
  if (vec)
    return x < nx && y >= 0 && y < ny && z >= 0 && z < nz
               ? __ldg(reinterpret_cast<const float4*>(in + (z * ny + y) * nx + x))
               : make_float4(0.f, 0.f, 0.f, 0.f);
  return make_float4(fetch3d(in, nx, ny, nz, x, y, z), fetch3d(in, nx, ny, nz, x + 1, y, z),
                     fetch3d(in, nx, ny, nz, x + 2, y, z), fetch3d(in, nx, ny, nz, x + 3, y, z));
}

/// Tiles of a plane in steps 4 and 5.
__host__ __device__ constexpr long long register_tiles(int nx, int ny) {
  return tile_count(nx, ny, RegisterPlane::kTileX, RegisterPlane::kTileY);
}

/// Where a block of steps 4 and 5 works: its tile's corner (x0, y0) and the thread's first point.
struct TileCorner {
  long long x0, y0, x, y;
};
__device__ inline TileCorner tile_corner(long long tile, int nx) {
  using P = RegisterPlane;
  const long long tiles_x = tiles_along(nx, P::kTileX);
  const long long x0 = tile % tiles_x * P::kTileX, y0 = tile / tiles_x * P::kTileY;
  return {x0, y0, x0 + 4 * threadIdx.x, y0 + threadIdx.y};
}

//! [slice]
/// The thread's slice of plane z (zeros outside the grid).
__device__ inline Slice load_slice(const float* __restrict__ in, int nx, int ny, int nz, const TileCorner& t,
                                   long long z, bool vec) {
  using P = RegisterPlane;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * P::kThreadsX + tx;
  Slice s{load4(in, nx, ny, nz, t.x, t.y, z, vec), make_float4(0.f, 0.f, 0.f, 0.f), 0.f};
  if (ty == 0 || ty == P::kTileY - 1) s.yh = load4(in, nx, ny, nz, t.x, t.y0 + P::y_halo_row(ty), z, vec);
  if (tid < P::kXHaloThreads)
    s.xh = fetch3d(in, nx, ny, nz, t.x0 + P::x_halo_col(tid), t.y0 + P::x_halo_row(tid), z);
  return s;
}

/// Writes the thread's slice into the shared plane (the caller synchronizes).
__device__ inline void stage_slice(float* plane, const Slice& s) {
  using P = RegisterPlane;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * P::kThreadsX + tx;
  *reinterpret_cast<float4*>(plane + P::vector_offset(tx, ty, 0)) = s.c;
  if (ty == 0 || ty == P::kTileY - 1) *reinterpret_cast<float4*>(plane + P::offset(P::y_halo_row(ty), 4 * tx)) = s.yh;
  if (tid < P::kXHaloThreads) plane[P::x_halo_offset(tid)] = s.xh;
}

/// The thread's 4 outputs of the plane staged in `plane` (whose own values are `u`), with the
/// planes below and above it `zm` and `zp`. Every lane of the warp must call it (shuffles).
__device__ inline float4 update4(const float* plane, const Coefficients& c, float4 u, float4 zm, float4 zp) {
  using P = RegisterPlane;
  const int tx = threadIdx.x, ty = threadIdx.y;
  const float4 ym = *reinterpret_cast<const float4*>(plane + P::vector_offset(tx, ty, -1));
  const float4 yp = *reinterpret_cast<const float4*>(plane + P::vector_offset(tx, ty, 1));
  float xl = __shfl_up_sync(0xffffffffu, u.w, 1), xr = __shfl_down_sync(0xffffffffu, u.x, 1);
  if (tx == 0) xl = plane[P::offset(ty, -1)];  // the warp's row ends: the x halo
  if (tx == P::kThreadsX - 1) xr = plane[P::offset(ty, P::kTileX)];
  return seven_point4(c, u, xl, xr, ym, yp, zm, zp);
}

/// Stores the thread's 4 outputs of plane z (those inside the grid).
__device__ inline void store4(float* __restrict__ out, int nx, int ny, const TileCorner& t, long long z, float4 v,
                              bool vec) {
  if (t.y >= ny || t.x >= nx) return;
  float* o = out + (z * ny + t.y) * nx + t.x;
  if (vec) {
    *reinterpret_cast<float4*>(o) = v;
  } else {
    const float a[4] = {v.x, v.y, v.z, v.w};
    for (int k = 0; k < 4 && t.x + k < nx; ++k) o[k] = a[k];
  }
}
//! [slice]

/// Planes per block of step 4.
inline constexpr int kRegPlanesZ = 32;

//! [registers kernel]
static __global__ void __launch_bounds__(RegisterPlane::kThreads, 4)
    st7_registers_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, Coefficients c,
                         bool vec) {
  using P = RegisterPlane;
  __shared__ float4 plane4[P::kWords / 4];
  float* plane = reinterpret_cast<float*>(plane4);
  const long long tiles = register_tiles(nx, ny);
  const TileCorner t = tile_corner(blockIdx.x % tiles, nx);
  const long long z0 = blockIdx.x / tiles * kRegPlanesZ, z1 = z0 + kRegPlanesZ < nz ? z0 + kRegPlanesZ : nz;

  float4 below = load4(in, nx, ny, nz, t.x, t.y, z0 - 1, vec);  // plane z - 1: the point's own column
  Slice cur = load_slice(in, nx, ny, nz, t, z0, vec);           // plane z, to be staged
  Slice next = load_slice(in, nx, ny, nz, t, z0 + 1, vec);      // plane z + 1
  for (long long z = z0; z < z1; ++z) {
    // Plane z + 2 is loaded while plane z is computed; it is needed from the next step on.
    const Slice after = z + 2 <= z1 ? load_slice(in, nx, ny, nz, t, z + 2, vec) : Slice{};
    stage_slice(plane, cur);
    __syncthreads();
    store4(out, nx, ny, t, z, update4(plane, c, cur.c, below, next.c), vec);
    __syncthreads();  // everyone has read the plane before the next is staged
    below = cur.c;
    cur = next;
    next = after;
  }
}
//! [registers kernel]

/// True when the grid allows 16-byte accesses: nx a multiple of 4, both pointers aligned.
inline bool st7_vector_ok(const float* in, const float* out, int nx) {
  return nx % 4 == 0 && (reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(out)) % 16 == 0;
}

inline Plan<void (*)(const float*, float*, int, int, int, Coefficients, bool)> st7_registers_plan(int nx, int ny,
                                                                                                 int nz) {
  return grid_plan(st7_registers_kernel, register_tiles(nx, ny) * tiles_along(nz, kRegPlanesZ),
                   dim3(RegisterPlane::kThreadsX, RegisterPlane::kThreadsY));
}

/// The 7-point stencil of `in` into `out`, zero outside the grid; see stencil_common.cuh.
inline cudaError_t st7_registers(const float* in, float* out, int nx, int ny, int nz, Coefficients c,
                                 cudaStream_t stream = nullptr) {
  if (Args a = check_7point_args(in, out, nx, ny, nz); a != Args::launch) return args_error(a);
  return launch(st7_registers_plan(nx, ny, nz), stream, in, out, nx, ny, nz, c, st7_vector_ok(in, out, nx));
}

}  // namespace smem::stencil
