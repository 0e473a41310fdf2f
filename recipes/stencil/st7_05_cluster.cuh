/// \file st7_05_cluster.cuh
/// \brief 7-point step 5 (Hopper, sm_90): a thread block cluster splits a column of planes among
/// its blocks, and the blocks hand each other the planes at their slabs' ends through distributed
/// shared memory instead of reloading them from L2.
///
/// What changes from step 4: a block of step 4 walks kRegPlanesZ planes and also reads the plane
/// below its first and the plane above its last, which the blocks next to it in z read too: two
/// extra planes per kRegPlanesZ, from L2 at best and from DRAM when the neighbour ran long
/// before. Longer walks cost fewer reloads but give fewer blocks, and the grid's last wave idles.
/// Here kClusterZ blocks of a cluster (same 128 x 8 tile) take consecutive slabs of kSlabZ
/// planes each; a block walks its slab exactly as step 4 does, but leaves the two outputs at its
/// slab's ends for last. It keeps its first plane staged in a second shared buffer; at the end,
/// after one cluster barrier, its last plane sits in its walking buffer. The plane below its slab
/// is then the last plane of the block below, read from that block's shared memory
/// (`cluster.map_shared_rank`), and the plane above is the first plane of the block above. Only
/// the blocks at the cluster's ends read a plane beyond their slab from global memory: two extra
/// planes per kClusterZ x kSlabZ, with short walks. A second cluster barrier keeps each block's
/// shared memory alive until its neighbours have read it.
///
/// Clusters need sm_90; a build for an older architecture stops here with one message.
///
/// Bank conflicts: step 4's, plus the remote reads: 32 consecutive 16-byte vectors of one row.
#pragma once
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "st7_04_registers.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "st7_05_cluster.cuh needs thread block clusters: compile for sm_90 or newer (e.g. -arch=sm_90)"
#endif

namespace smem::stencil {

/// Blocks per cluster (consecutive slabs of one column) and planes per block.
inline constexpr int kClusterZ = 4, kSlabZ = 16;
static_assert(kSlabZ >= 2, "a full slab's first and last planes are distinct");

//! [cluster kernel]
static __global__ void __cluster_dims__(kClusterZ, 1, 1) __launch_bounds__(RegisterPlane::kThreads, 4)
    st7_cluster_kernel(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz, Coefficients c,
                       bool vec) {
  using P = RegisterPlane;
  namespace cg = cooperative_groups;
  __shared__ float4 first4[P::kWords / 4], walk4[P::kWords / 4];
  float* first_plane = reinterpret_cast<float*>(first4);  // the slab's first plane, kept to the end
  float* plane = reinterpret_cast<float*>(walk4);         // the walk's plane; the slab's last at the end
  const cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  const long long tiles = register_tiles(nx, ny), cluster_id = blockIdx.x / kClusterZ;
  const TileCorner t = tile_corner(cluster_id % tiles, nx);
  const long long s0 = (cluster_id / tiles * kClusterZ + rank) * kSlabZ, s1 = s0 + kSlabZ < nz ? s0 + kSlabZ : nz;
  const int tx = threadIdx.x, ty = threadIdx.y;

  Slice cur{};
  float4 prev{}, second{};  // plane s0 + 1 of the thread's points, kept for the end
  if (s0 < nz) {  // a block past the grid's last plane only takes part in the barriers
    const Slice first = load_slice(in, nx, ny, nz, t, s0, vec);
    stage_slice(first_plane, first);
    // The walk over outputs s0 + 1 .. s1 - 2, as in step 4, with every plane inside the slab.
    prev = first.c;
    cur = s0 + 1 < s1 ? load_slice(in, nx, ny, nz, t, s0 + 1, vec) : Slice{};
    Slice next = s0 + 2 < s1 ? load_slice(in, nx, ny, nz, t, s0 + 2, vec) : Slice{};
    second = cur.c;
    for (long long z = s0 + 1; z < s1 - 1; ++z) {
      const Slice after = z + 2 < s1 ? load_slice(in, nx, ny, nz, t, z + 2, vec) : Slice{};
      stage_slice(plane, cur);
      __syncthreads();
      store4(out, nx, ny, t, z, update4(plane, c, cur.c, prev, next.c), vec);
      __syncthreads();
      prev = cur.c;
      cur = next;
      next = after;
    }
    if (s1 - 1 > s0) stage_slice(plane, cur);  // the slab's last plane, for the block above
  }
  cluster.sync();  // every block's first and last planes are staged

  // The plane beyond either end of the slab: a neighbour's shared memory inside the cluster,
  // global memory at the cluster's ends, zeros outside the grid.
  const auto beyond = [&](long long z, int neighbour, float* buffer) {
    if (z < 0 || z >= nz) return make_float4(0.f, 0.f, 0.f, 0.f);
    if (neighbour < 0 || neighbour >= kClusterZ) return load4(in, nx, ny, nz, t.x, t.y, z, vec);
    const float* remote = cluster.map_shared_rank(buffer, neighbour);
    return *reinterpret_cast<const float4*>(remote + P::vector_offset(tx, ty, 0));
  };
  if (s0 < nz) {
    if (s1 - 1 > s0)
      store4(out, nx, ny, t, s1 - 1, update4(plane, c, cur.c, prev, beyond(s1, rank + 1, first_plane)), vec);
    const float4 above = s0 + 1 < s1 ? second : beyond(s1, rank + 1, first_plane);
    const float4 first = *reinterpret_cast<const float4*>(first_plane + P::vector_offset(tx, ty, 0));
    store4(out, nx, ny, t, s0, update4(first_plane, c, first, beyond(s0 - 1, rank - 1, plane), above), vec);
  }
  cluster.sync();  // no block leaves while a neighbour may still read its shared memory
}
//! [cluster kernel]

inline Plan<void (*)(const float*, float*, int, int, int, Coefficients, bool)> st7_cluster_plan(int nx, int ny,
                                                                                                int nz) {
  const long long columns = tiles_along(nz, kClusterZ * kSlabZ);
  return grid_plan(st7_cluster_kernel, register_tiles(nx, ny) * columns * kClusterZ,
                   dim3(RegisterPlane::kThreadsX, RegisterPlane::kThreadsY));
}

/// The 7-point stencil of `in` into `out`, zero outside the grid; see stencil_common.cuh.
inline cudaError_t st7_cluster(const float* in, float* out, int nx, int ny, int nz, Coefficients c,
                               cudaStream_t stream = nullptr) {
  if (Args a = check_7point_args(in, out, nx, ny, nz); a != Args::launch) return args_error(a);
  return launch(st7_cluster_plan(nx, ny, nz), stream, in, out, nx, ny, nz, c, st7_vector_ok(in, out, nx));
}

}  // namespace smem::stencil
