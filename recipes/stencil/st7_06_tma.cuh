/// \file st7_06_tma.cuh
/// \brief 7-point step 6 (Hopper, sm_90): TMA brings a wider and taller tile of five planes, its
/// halo included, into shared memory at once, and a block computes the three planes between.
///
/// What changes from step 4, and why it is faster:
/// - The bytes. Both steps are limited by L2, not DRAM: every sector a block reads from L2, its
///   own or a neighbour's halo, costs L2 and fabric bandwidth as an output sector does, and a
///   copy of the same bytes already keeps L2 near its limit. Step 4's 128 x 8 tile reads 10 rows
///   for 8, and 18 sectors for the 16 of a row (one 4-byte halo value costs a 32-byte sector).
///   Here the tile is 256 x 32 (each thread owns 2 vectors of 4 points in each of 4 rows): 34 rows
///   for 32, and 34 sectors for 32 a row.
/// - The loads. One thread asks the TMA unit for each plane as three boxes of 3D tensor maps:
///   the tile's 256 columns of rows -1 .. 32, and the 4 columns on each side for the x halo (a box
///   row is a whole number of 16-byte units). TMA fills with zeros wherever a box reaches outside
///   the grid: the padding, for free, and no read there. The maps do not promote L2 misses to
///   256-byte lines, which would drag 256 bytes in for each 16-byte halo row. All five planes
///   are asked for at once, each landing in its own slot on its own mbarrier: 180 kilobytes in
///   flight per block without a register, where step 4 kept 16 to 32 bytes a thread in flight.
///   No slot is reused, so the threads never wait for one another.
/// - The z neighbours are read from the slots of planes z - 1 and z + 1 instead of rotating
///   through registers: every value a thread needs is in shared memory already.
/// - The walk is short, kWalk = 3 planes, and the blocks of a plane's tiles are numbered next to
///   each other: the blocks running at any moment cover a few consecutive planes, and the grid
///   sweeps the arrays from the first plane to the last as a copy kernel does. DRAM serves such a
///   front faster than the scattered streams of long slabs walked side by side. The two planes
///   beyond a slab's ends are read again by the slab next to it, which runs at the same time: L2
///   serves them, and DRAM reads each input byte once.
///
/// TMA needs nx a multiple of 4 and `in` and `out` 16-byte aligned (a tensor map's rows are whole
/// 16-byte units); for any other grid the launcher runs step 4. A grid narrower than the tile
/// leaves lanes idle (nx = 64 uses a quarter of them). TMA needs sm_90: a build for an older
/// architecture stops here with one message.
///
/// Bank conflicts: every warp reads rows of 32 consecutive 16-byte vectors, and lanes 0 and 31
/// read the x halo in one request (two words, two banks); TMA's own writes take no part in the
/// shared-memory instruction counts.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "st7_04_registers.cuh"
#include "stencil_sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "st7_06_tma.cuh needs TMA: compile for sm_90 or newer (e.g. -arch=sm_90)"
#endif

namespace smem::stencil {

/// TMA load: the box of a 3D map with corner (x, y, z) into shared memory at dst (128-byte
/// aligned); its bytes complete on `bar`. Coordinates may be negative.
__device__ __forceinline__ void tma_load_3d(float* dst, const CUtensorMap* map, int x, int y, int z,
                                            std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(smem_u32(dst)),
      "l"(map), "r"(x), "r"(y), "r"(z), "r"(smem_u32(bar))
      : "memory");
}

//! [plane slab]
/// Step 6's block and slots. Block: 32 x 8 threads; thread (tx, ty) owns kVecs 16-byte vectors of
/// each of kRowsPerThread rows: points x0 + 128 p + 4 tx .. + 3 (p < kVecs) of rows y0 + 4 ty ..
/// y0 + 4 ty + 3, a 256 x 32 tile, a warp per 4 rows, in kWalk planes. A slot holds one input
/// plane's three boxes: the tile's columns of rows -1 .. 32 (the tile and its y halo), kTileX
/// floats a row, then the 4 columns left of the tile and the 4 right of it (x0 - 4 .. x0 - 1 and
/// x0 + 256 .. x0 + 259: a TMA box row is a whole number of 16-byte units), kHalo floats a row.
struct PlaneSlab {
  static constexpr int kThreadsX = 32, kThreadsY = 8, kThreads = kThreadsX * kThreadsY;
  static constexpr int kVecs = 2, kRowsPerThread = 4;
  static constexpr int kTileX = 4 * kVecs * kThreadsX, kTileY = kRowsPerThread * kThreadsY, kRows = kTileY + 2;
  static constexpr int kHalo = 4, kHaloWords = (kRows * kHalo + 31) / 32 * 32;  // boxes 128-byte aligned, as TMA needs
  static constexpr int kLeft = kRows * kTileX, kRight = kLeft + kHaloWords, kSlotWords = kRight + kHaloWords;
  static constexpr unsigned kBoxBytes = kRows * (kTileX + 2 * kHalo) * sizeof(float);  // what lands a plane
  static constexpr int kWalk = 3, kPlanes = kWalk + 2;  // output planes of a block; input planes (slots)
  static constexpr unsigned kSmem = kPlanes * kSlotWords * sizeof(float);
  /// Word of point (y0 + row, x0 + col) of the plane in `slot`: row in [-1, kTileY], col in
  /// [-1, kTileX] (-1 and kTileX: the x halo).
  __host__ __device__ static constexpr int offset(int slot, int row, int col) {
    return slot * kSlotWords + (col < 0         ? kLeft + (row + 1) * kHalo + kHalo - 1
                                : col >= kTileX ? kRight + (row + 1) * kHalo
                                                : (row + 1) * kTileX + col);
  }
  /// The tile row of thread row ty's k-th point row (k in [-1, kRowsPerThread]: with its halo).
  __host__ __device__ static constexpr int row(int ty, int k) { return kRowsPerThread * ty + k; }
  /// The first column of lane tx's vector p.
  __host__ __device__ static constexpr int col(int p, int tx) { return 4 * (kThreadsX * p + tx); }
  /// The x-halo word of a row that lane tx reads: lane 0 the left one, every other lane the
  /// right one (lane 31 uses it), so the warp's request touches two words.
  __host__ __device__ static constexpr int x_halo_offset(int slot, int row, int tx) {
    return offset(slot, row, tx == 0 ? -1 : kTileX);
  }
};
//! [plane slab]

//! [tma slab kernel]
static __global__ void __launch_bounds__(PlaneSlab::kThreads)
    st7_tma_kernel(const __grid_constant__ CUtensorMap tile_map, const __grid_constant__ CUtensorMap halo_map,
                   float* __restrict__ out, int nx, int ny, int nz, Coefficients c) {
  using S = PlaneSlab;
  extern __shared__ __align__(128) float slots[];
  __shared__ std::uint64_t full[S::kPlanes];
  const int tiles_x = tiles_along(nx, S::kTileX), tiles = tiles_x * tiles_along(ny, S::kTileY);  // <= gridDim.x
  const int tile = int(blockIdx.x % unsigned(tiles));  // the tiles of a slab are consecutive blocks
  const int x0 = tile % tiles_x * S::kTileX, y0 = tile / tiles_x * S::kTileY;
  const int z0 = int(blockIdx.x / unsigned(tiles)) * S::kWalk, outputs = nz - z0 < S::kWalk ? nz - z0 : S::kWalk;
  // The right halo's first column, or the grid's edge where the tile reaches it: the box is then
  // all zeros either way, and x0 + kTileX would pass INT_MAX for an nx near it.
  const int x_right = min(x0, nx - S::kTileX) + S::kTileX;
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    for (int i = 0; i < outputs + 2; ++i) mbar_init(&full[i], 1);
    fence_barrier_init();
    for (int i = 0; i < outputs + 2; ++i) {  // input plane z0 - 1 + i into slot i, all at once
      float* slot = slots + i * S::kSlotWords;
      mbar_arrive_expect_tx(&full[i], S::kBoxBytes);
      tma_load_3d(slot, &tile_map, x0, y0 - 1, z0 - 1 + i, &full[i]);
      tma_load_3d(slot + S::kLeft, &halo_map, x0 - S::kHalo, y0 - 1, z0 - 1 + i, &full[i]);
      tma_load_3d(slot + S::kRight, &halo_map, x_right, y0 - 1, z0 - 1 + i, &full[i]);
    }
  }
  __syncthreads();  // the barriers are initialized before anyone waits on them
  const int tx = threadIdx.x, ty = threadIdx.y;
  const auto at = [&](int slot, int row, int p) {
    return *reinterpret_cast<const float4*>(slots + S::offset(slot, row, S::col(p, tx)));
  };
  mbar_wait(&full[0], 0);
  mbar_wait(&full[1], 0);
  for (int i = 0; i < outputs; ++i) {  // output plane z0 + i from inputs i, i + 1, i + 2
    const int below = i, here = i + 1, above = i + 2;
    mbar_wait(&full[above], 0);
    float4 v[S::kRowsPerThread + 2][S::kVecs];  // this plane's rows row(ty, -1) .. row(ty, kRowsPerThread)
#pragma unroll
    for (int k = 0; k < S::kRowsPerThread + 2; ++k)
#pragma unroll
      for (int p = 0; p < S::kVecs; ++p) v[k][p] = at(here, S::row(ty, k - 1), p);
#pragma unroll
    for (int k = 0; k < S::kRowsPerThread; ++k) {
      const int row = S::row(ty, k);
      const float h = slots[S::x_halo_offset(here, row, tx)];
      // Each lane's x neighbours beyond its vector: the lanes beside it, across the warp's ends to
      // the next vector of the row, and the x halo at the row's ends.
      float left[S::kVecs], right[S::kVecs];
#pragma unroll
      for (int p = 0; p < S::kVecs; ++p) {
        left[p] = __shfl_sync(0xffffffffu, v[k + 1][p].w, (tx + 31) % 32);
        right[p] = __shfl_sync(0xffffffffu, v[k + 1][p].x, (tx + 1) % 32);
      }
#pragma unroll
      for (int p = 0; p < S::kVecs; ++p) {
        const float xl = tx > 0 ? left[p] : p > 0 ? left[p - 1] : h;
        const float xr = tx < S::kThreadsX - 1 ? right[p] : p < S::kVecs - 1 ? right[p + 1] : h;
        const float4 o = seven_point4(c, v[k + 1][p], xl, xr, v[k][p], v[k + 2][p], at(below, row, p),
                                      at(above, row, p));
        const int x = x0 + S::col(p, tx);
        if (y0 + row < ny && x < nx)  // nx % 4 == 0: the 4 points are all inside or all outside
          *reinterpret_cast<float4*>(out + ((long long)(z0 + i) * ny + y0 + row) * nx + x) = o;
      }
    }
  }
}
//! [tma slab kernel]

/// Tiles of a plane in step 6.
__host__ __device__ constexpr long long tma_slab_tiles(int nx, int ny) {
  return tile_count(nx, ny, PlaneSlab::kTileX, PlaneSlab::kTileY);
}

/// The kernel of step 6: (maps of `in`'s tile and halo boxes, out, nx, ny, nz, coefficients).
using TmaSt7Kernel = void (*)(const CUtensorMap, const CUtensorMap, float*, int, int, int, Coefficients);

/// One block per tile and slab of kWalk planes (the last slab may be shorter), a plane's tiles
/// first: block b is tile b % tiles of slab b / tiles.
inline Plan<TmaSt7Kernel> st7_tma_plan(int nx, int ny, int nz) {
  using S = PlaneSlab;
  return grid_plan(st7_tma_kernel, tma_slab_tiles(nx, ny) * tiles_along(nz, S::kWalk),
                   dim3(S::kThreadsX, S::kThreadsY), S::kSmem);
}

/// The 7-point stencil of `in` into `out`, zero outside the grid; see stencil_common.cuh. Where
/// TMA cannot read the grid (nx not a multiple of 4, `in` or `out` not 16-byte aligned) or the
/// grid of slabs does not fit, step 4 runs.
inline cudaError_t st7_tma(const float* in, float* out, int nx, int ny, int nz, Coefficients c,
                           cudaStream_t stream = nullptr) {
  using S = PlaneSlab;
  if (Args a = check_7point_args(in, out, nx, ny, nz); a != Args::launch) return args_error(a);
  const Plan<TmaSt7Kernel> plan = st7_tma_plan(nx, ny, nz);
  const long long dims[3] = {nx, ny, nz};
  const int tile_box[3] = {S::kTileX, S::kRows, 1}, halo_box[3] = {S::kHalo, S::kRows, 1};
  CUtensorMap tile_map, halo_map;
  const CUtensorMapL2promotion exact = CU_TENSOR_MAP_L2_PROMOTION_NONE;  // a 16-byte halo row reads one sector
  if (plan.kernel == nullptr || !st7_vector_ok(in, out, nx) ||
      !make_float_map(&tile_map, in, 3, dims, tile_box, exact) ||
      !make_float_map(&halo_map, in, 3, dims, halo_box, exact))
    return st7_registers(in, out, nx, ny, nz, c, stream);
  return launch(plan, stream, tile_map, halo_map, out, nx, ny, nz, c);
}

}  // namespace smem::stencil
