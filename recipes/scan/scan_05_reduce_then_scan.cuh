/// \file scan_05_reduce_then_scan.cuh
/// \brief Step 5, reduce-then-scan: three kernels over large tiles, with the input read twice
/// and the output written once.
///
/// What changes from step 4: steps 1 to 4 write the whole output and then read and write it
/// again to add each tile's carry, four passes over memory in all. Here the first kernel only
/// reduces each tile to its total, the second scans the totals in one block, and the third scans
/// each tile again, starting from its carry: three passes (two reads, one write). Each thread now
/// handles 128 bytes (32 floats): each warp reads its slice of the tile with 16-byte loads in the
/// coalesced order and turns it into runs of consecutive elements per lane by a transpose through
/// its own piece of shared memory, in 16-byte vectors kept conflict-free by an XOR swizzle
/// (`TileMap`: step 3's padding would break the vectors' alignment). A thread scans its run
/// sequentially in registers, so the block-wide scan (step 4's shuffles) works on one total per
/// thread (kTileThreads of them) instead of every element of the tile.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "scan_common.cuh"

namespace smem::scan {

// ---- Tiles of kThreads x kItems elements, kItems consecutive ones per thread (steps 5 and 6). ----

/// Elements of T in one 16-byte vector.
template <class T>
inline constexpr int kVecElems = 16 / int(sizeof(T));

//! [tile map]
/// A warp's slice of a tile, 32 x kItems elements, staged in shared memory for the transpose
/// between the coalesced global order (16-byte vector q = v 32 + lane, or element e = v 32 + lane)
/// and the blocked order of the scan (lane l holds elements l kItems .. l kItems + kItems - 1:
/// its 128 bytes, the 8 vectors 8 l .. 8 l + 7). Each warp has a slice of its own, so the
/// transposes need only `__syncwarp`, never a block barrier. The slice is kept in 16-byte
/// vectors, XOR-swizzled within each row of 8 (128 bytes): vector q is stored at q ^ (q / 8 % 8).
/// Both orders then move whole vectors without bank conflicts: the 8 lanes of a phase that write
/// one row in the coalesced order hit its 8 places in some order, and in the blocked order lanes
/// l .. l + 7 read their c-th vectors from 8 rows at 8 different places. Padding (step 3) would
/// do the same for single elements only: a vector must stay 16-byte aligned.
template <class T, int kItems>
struct TileMap {
  static constexpr int kVec = kVecElems<T>;
  /// 16-byte vectors of a lane's items: one 128-byte row of the slice, all 32 banks.
  static constexpr int kLaneVecs = 8;
  static_assert(kItems == kLaneVecs * kVec, "a lane's items are one 128-byte row of 8 vectors");
  static constexpr int kTile = 32 * kItems;
  static constexpr int kSize = kTile;
  /// Element offset of vector q in the slice.
  __host__ __device__ static constexpr int vector_offset(int q) { return (q ^ (q / kLaneVecs % 8)) * kVec; }
  /// Element offset of element e (of the coalesced order) in the slice.
  __host__ __device__ static constexpr int offset(int e) { return vector_offset(e / kVec) + e % kVec; }
  /// Vector of the coalesced order that `lane` moves in its v-th 16-byte access.
  __host__ __device__ static constexpr int vectorized(int v, int lane) { return v * 32 + lane; }
  /// Element of the coalesced order that `lane` moves in its v-th scalar access.
  __host__ __device__ static constexpr int striped(int v, int lane) { return v * 32 + lane; }
  /// Vector c of `lane`'s blocked items (items c kVec .. c kVec + kVec - 1).
  __host__ __device__ static constexpr int blocked(int lane, int c) { return lane * kLaneVecs + c; }
};

/// Shared elements of a block's tile transposes: one warp slice per warp.
template <class T, int kThreads, int kItems>
inline constexpr int kTileSmem = kThreads / 32 * TileMap<T, kItems>::kSize;
//! [tile map]

//! [tile load]
/// Loads tile `tile` (kThreads x kItems elements) of in[0, n) into `items` in blocked order:
/// warp w takes the tile's w-th slice of 32 x kItems elements, and its lane l gets the slice's
/// elements l kItems .. l kItems + kItems - 1 (identity past n). A full slice at a 16-byte aligned
/// address is read as 16-byte vectors, the others element by element; either way each warp reads
/// consecutive addresses, and the transpose through the warp's shared slice (16-byte aligned)
/// gives each lane its run in 8 vector reads. The vectors are loaded with the streaming hint
/// (`__ldcs`, evict first): every element is read once, so the L2 keeps what is reused, the tile
/// states of step 6.
template <int kThreads, int kItems, class T>
__device__ void load_tile(const T* in, long long n, long long tile, T (&items)[kItems], T identity, T* smem) {
  using Map = TileMap<T, kItems>;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long base = tile * kThreads * kItems + (long long)warp * Map::kTile;
  T* slice = smem + warp * Map::kSize;
  if (base + Map::kTile <= n && reinterpret_cast<std::uintptr_t>(in) % 16 == 0) {
    const auto* v16 = reinterpret_cast<const uint4*>(in + base);
    uint4 r[Map::kLaneVecs];  // all the loads in flight before the first store
#pragma unroll
    for (int v = 0; v < Map::kLaneVecs; ++v) r[v] = __ldcs(v16 + v * 32 + lane);  // not read-only: in may be out
#pragma unroll
    for (int v = 0; v < Map::kLaneVecs; ++v)
      *reinterpret_cast<uint4*>(slice + Map::vector_offset(Map::vectorized(v, lane))) = r[v];
  } else {
#pragma unroll
    for (int v = 0; v < kItems; ++v) {
      const int e = Map::striped(v, lane);
      slice[Map::offset(e)] = base + e < n ? in[base + e] : identity;
    }
  }
  __syncwarp();
#pragma unroll
  for (int c = 0; c < Map::kLaneVecs; ++c) {
    const uint4 r = *reinterpret_cast<const uint4*>(slice + Map::vector_offset(Map::blocked(lane, c)));
    memcpy(&items[c * Map::kVec], &r, sizeof(r));
  }
}
//! [tile load]

/// Stores blocked `items` (see load_tile) as tile `tile` of out[0, n), back through the warp's
/// shared slice in 16-byte vectors, with the streaming hint (`__stcs`); starts with `__syncwarp`,
/// so the slice may still be in use by load_tile's reads.
template <int kThreads, int kItems, class T>
__device__ void store_tile(T* out, long long n, long long tile, const T (&items)[kItems], T* smem) {
  using Map = TileMap<T, kItems>;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long base = tile * kThreads * kItems + (long long)warp * Map::kTile;
  T* slice = smem + warp * Map::kSize;
  __syncwarp();
#pragma unroll
  for (int c = 0; c < Map::kLaneVecs; ++c) {
    uint4 r;
    memcpy(&r, &items[c * Map::kVec], sizeof(r));
    *reinterpret_cast<uint4*>(slice + Map::vector_offset(Map::blocked(lane, c))) = r;
  }
  __syncwarp();
  if (base + Map::kTile <= n && reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
    auto* v16 = reinterpret_cast<uint4*>(out + base);
    uint4 r[Map::kLaneVecs];
#pragma unroll
    for (int v = 0; v < Map::kLaneVecs; ++v)
      r[v] = *reinterpret_cast<const uint4*>(slice + Map::vector_offset(Map::vectorized(v, lane)));
#pragma unroll
    for (int v = 0; v < Map::kLaneVecs; ++v) __stcs(v16 + v * 32 + lane, r[v]);
  } else {
#pragma unroll
    for (int v = 0; v < kItems; ++v) {
      const int e = Map::striped(v, lane);
      if (base + e < n) out[base + e] = slice[Map::offset(e)];
    }
  }
}

/// The inclusive scan of a thread's own items, in registers; returns their total.
template <int kItems, class T, class Op>
__device__ T thread_scan(T (&items)[kItems], Op op) {
#pragma unroll
  for (int j = 1; j < kItems; ++j) items[j] = op(items[j - 1], items[j]);
  return items[kItems - 1];
}

/// Turns a thread's inclusive item scan into the output: each item combined with `prefix`
/// (everything before the thread's first item), shifted by one for an exclusive scan.
template <int kItems, class T, class Op>
__device__ void finish_items(T (&items)[kItems], T prefix, Op op, Kind kind) {
  if (kind == Kind::exclusive) {
#pragma unroll
    for (int j = kItems - 1; j > 0; --j) items[j] = op(prefix, items[j - 1]);
    items[0] = prefix;
  } else {
#pragma unroll
    for (int j = 0; j < kItems; ++j) items[j] = op(prefix, items[j]);
  }
}

/// Threads and items per thread of steps 5 and 6: 128 bytes per thread (32 floats or ints, 16
/// doubles), so that each thread has eight 16-byte loads in flight, and 256 threads, so that the
/// tile is 32 KB: half as many tiles as with 128 threads, so half the look-backs and published
/// states per byte (a sweep of 128, 256, 384 and 512 threads picked 256, see the scan page).
inline constexpr int kTileThreads = 256;
template <class T>
inline constexpr int kTileItems = 128 / int(sizeof(T));
/// Elements of a tile of steps 5 and 6 (32 KiB), and the largest n they accept.
template <class T>
inline constexpr long long kTileElems = kTileThreads * kTileItems<T>;
template <class T>
inline constexpr long long kTileMaxN = max_n(kTileElems<T>);
/// Blocks of kTileThreads that an SM must hold at once (`__launch_bounds__`): this caps the
/// registers at 51 per thread, so that 1280 threads, 160 KB of loads, can be in flight per SM.
inline constexpr int kTileMinBlocks = 1280 / kTileThreads;

//! [reduce then scan]
/// Kernel 1: partials[tile] = the total of each tile, combined in index order.
template <class T, class Op, int kThreads = kTileThreads, int kItems = kTileItems<T>>
__global__ void __launch_bounds__(kThreads, kTileMinBlocks)
    tile_totals_kernel(const T* in, long long n, T* partials, Op op, T identity) {
  __shared__ __align__(16) T smem[kTileSmem<T, kThreads, kItems>];
  __shared__ T warp_totals[kThreads / 32];
  T items[kItems];
  load_tile<kThreads>(in, n, blockIdx.x, items, identity, smem);
  T total = thread_scan(items, op);
  block_exclusive_scan<kThreads>(total, op, identity, total, warp_totals);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

/// Kernel 2, one block: partials[0, count) becomes its exclusive scan, a tile of it at a time,
/// each tile starting from the total of those before it.
template <class T, class Op, int kThreads = kTileThreads, int kItems = kTileItems<T>>
__global__ void __launch_bounds__(kThreads) scan_partials_kernel(T* partials, long long count, Op op, T identity) {
  __shared__ __align__(16) T smem[kTileSmem<T, kThreads, kItems>];
  __shared__ T warp_totals[kThreads / 32];
  T carry = identity;
  for (long long tile = 0; tile * kThreads * kItems < count; ++tile) {
    T items[kItems];
    load_tile<kThreads>(partials, count, tile, items, identity, smem);
    T total;
    const T before = block_exclusive_scan<kThreads>(thread_scan(items, op), op, identity, total, warp_totals);
    finish_items(items, op(carry, before), op, Kind::exclusive);
    store_tile<kThreads>(partials, count, tile, items, smem);  // starts with a barrier
    carry = op(carry, total);
    __syncwarp();  // the warp done reading its slice before the next tile is staged in it
  }
}

/// Kernel 3: each tile scanned again, starting from its carry (the scanned partials).
template <class T, class Op, int kThreads = kTileThreads, int kItems = kTileItems<T>>
__global__ void __launch_bounds__(kThreads, kTileMinBlocks)
    scan_tiles_kernel(const T* in, T* out, long long n, const T* carries, Op op, T identity, Kind kind) {
  __shared__ __align__(16) T smem[kTileSmem<T, kThreads, kItems>];
  __shared__ T warp_totals[kThreads / 32];
  T items[kItems];
  load_tile<kThreads>(in, n, blockIdx.x, items, identity, smem);
  T total;
  const T before = block_exclusive_scan<kThreads>(thread_scan(items, op), op, identity, total, warp_totals);
  finish_items(items, op(carries[blockIdx.x], before), op, kind);
  store_tile<kThreads>(out, n, blockIdx.x, items, smem);
}
//! [reduce then scan]

/// The kernel of step 5's first pass: (in, n, partials, op, identity).
template <class T, class Op>
using TotalsKernel = void (*)(const T*, long long, T*, Op, T);

template <class T, class Op>
Plan<TotalsKernel<T, Op>> reduce_then_scan_plan(long long n) {
  return tile_plan<TotalsKernel<T, Op>>(tile_totals_kernel<T, Op>, n, kTileElems<T>, kTileThreads);
}

/// Workspace of step 5: one partial per tile.
template <class T>
constexpr std::size_t reduce_then_scan_bytes(long long n) {
  return align_up(std::size_t(n <= kTileElems<T> ? 1 : (n - 1) / kTileElems<T> + 1) * sizeof(T));
}

/// Scans in[0, n) into out with `op`; see scan_common.cuh for the contract.
template <class T, class Op>
cudaError_t reduce_then_scan(void* d_temp, std::size_t& temp_bytes, const T* in, T* out, long long n, Op op,
                             T identity, Kind kind, cudaStream_t stream = nullptr) {
  cudaError_t err;
  if (handle_args(d_temp, temp_bytes, reduce_then_scan_bytes<T>(n < 0 ? 0 : n), in, out, n, kTileMaxN<T>, kind, err))
    return err;
  const auto p = reduce_then_scan_plan<T, Op>(n);  // n <= kTileMaxN<T>: a kernel
  T* partials = static_cast<T*>(d_temp);
  p.kernel<<<p.grid, p.block, p.smem, stream>>>(in, n, partials, op, identity);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  scan_partials_kernel<T, Op><<<1, kTileThreads, 0, stream>>>(partials, p.grid.x, op, identity);
  if ((err = cudaGetLastError()) != cudaSuccess) return err;
  scan_tiles_kernel<T, Op><<<p.grid, p.block, 0, stream>>>(in, out, n, partials, op, identity, kind);
  return cudaGetLastError();
}

}  // namespace smem::scan
