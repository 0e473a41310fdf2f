/// \file scan_06_decoupled_look_back.cuh
/// \brief Step 6, single pass with decoupled look-back (Merrill and Garland): each tile learns
/// the total of everything before it from its predecessors' published states, so the input is
/// read once and the output written once.
///
/// What changes from step 5: one kernel instead of three, and two passes over memory instead of
/// three. Each block takes the next tile number from a counter (so a block only ever waits for
/// blocks that are already running), loads and scans its tile as in step 5, and publishes the
/// tile's total in the workspace with the flag "aggregate". Then warp 0 looks back: each lane
/// reads the state of one of the 32 preceding tiles, waits until it is published, and the warp
/// combines the aggregates, in order, back to the nearest tile that has published its inclusive
/// prefix (flag "prefix"); if none of the 32 has, it moves 32 tiles further back. The block then
/// publishes its own inclusive prefix, which lets later tiles stop there, and writes its tile.
/// A tile seldom waits long: its predecessors publish their aggregates as soon as they have
/// scanned, without waiting for their own look-back. For 4-byte types flag and value share one
/// 64-bit word, published and read with one access; 8-byte values are written before their flag
/// (release) and read after it (acquire). The flags are zeroed by a `cudaMemsetAsync` on the
/// same stream before the kernel.
///
/// Not bitwise deterministic for floating point: where the look-back stops depends on which
/// predecessors have published their prefix at that moment, so the grouping of the additions
/// (and with it the rounding) can change from run to run. Integer results are exact.
#pragma once
#include <cuda/atomic>
#include <cuda_runtime.h>

#include <cstddef>

#include "scan_05_reduce_then_scan.cuh"

namespace smem::scan {

/// A tile's state in the look-back: nothing yet, its own total, or its inclusive prefix.
enum TileFlag : unsigned { kNothing = 0, kAggregate = 1, kPrefix = 2 };

//! [tile states]
/// The published states of every tile. For 4-byte T a tile's flag and value share one 64-bit
/// word, so one relaxed atomic access publishes or reads both; otherwise the value goes to a
/// slot of its own before the flag is stored with release order, and is read after the flag is
/// loaded with acquire order (one slot per flag, so a reader never sees a half-written value).
template <class T, bool kPacked = sizeof(T) == 4>
struct TileStates;

template <class T>
struct TileStates<T, true> {
  unsigned long long* words;  // flag << 32 | the value's bits
  static constexpr std::size_t flag_bytes(long long tiles) { return std::size_t(tiles) * 8; }
  static constexpr std::size_t value_bytes(long long) { return 0; }
  __device__ void publish(long long tile, TileFlag flag, T value) const {
    unsigned bits;
    memcpy(&bits, &value, 4);
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[tile])
        .store((unsigned long long)flag << 32 | bits, cuda::memory_order_relaxed);
  }
  __device__ TileFlag read(long long tile, T& value) const {
    const unsigned long long w =
        cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(words[tile]).load(cuda::memory_order_relaxed);
    const unsigned bits = unsigned(w);
    memcpy(&value, &bits, 4);
    return TileFlag(w >> 32);
  }
};

template <class T>
struct TileStates<T, false> {
  unsigned* flags;
  T* values;  // [2 tile]: the aggregate, [2 tile + 1]: the prefix
  static constexpr std::size_t flag_bytes(long long tiles) { return std::size_t(tiles) * sizeof(unsigned); }
  static constexpr std::size_t value_bytes(long long tiles) { return 2 * std::size_t(tiles) * sizeof(T); }
  __device__ void publish(long long tile, TileFlag flag, T value) const {
    values[2 * tile + (flag == kPrefix)] = value;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(flags[tile]).store(flag, cuda::memory_order_release);
  }
  __device__ TileFlag read(long long tile, T& value) const {
    const auto flag = TileFlag(
        cuda::atomic_ref<unsigned, cuda::thread_scope_device>(flags[tile]).load(cuda::memory_order_acquire));
    if (flag != kNothing) value = values[2 * tile + (flag == kPrefix)];
    return flag;
  }
};
//! [tile states]

//! [look back]
/// Warp 0 of tile `tile`'s block: the combination, in order, of every tile before it.
template <class T, class Op, class States>
__device__ T look_back(const States& states, long long tile, Op op, T identity) {
  const int lane = threadIdx.x % 32;
  T prefix = identity;  // the tiles [end, tile), combined
  for (long long end = tile;; end -= 32) {
    const long long j = end - 32 + lane;  // this lane's tile
    T v = identity;
    TileFlag flag = kPrefix;  // before tile 0: as if a prefix of nothing
    if (j >= 0) {
      do flag = states.read(j, v);
      while (flag == kNothing);
    }
    const unsigned prefixes = __ballot_sync(0xffffffffu, flag == kPrefix);
    const int nearest = prefixes ? 31 - __clz(prefixes) : 0;  // the last lane whose tile has a prefix
    if (lane < nearest) v = identity;                         // tiles before it are inside its prefix
    prefix = op(__shfl_sync(0xffffffffu, warp_inclusive_scan(v, op), 31), prefix);
    if (prefixes) return prefix;
  }
}
//! [look back]

//! [single pass]
template <class T, class Op, int kThreads = kTileThreads, int kItems = kTileItems<T>>
__global__ void __launch_bounds__(kThreads, kTileMinBlocks)
    decoupled_look_back_kernel(const T* in, T* out, long long n, TileStates<T> states, unsigned* counter, Op op,
                               T identity, Kind kind) {
  __shared__ __align__(16) T smem[kTileSmem<T, kThreads, kItems>];
  __shared__ T warp_totals[kThreads / 32];
  __shared__ unsigned tile_number;
  __shared__ T tile_prefix;
  if (threadIdx.x == 0) tile_number = counter != nullptr ? atomicAdd(counter, 1u) : 0u;
  __syncthreads();
  const long long tile = tile_number;  // in the order the blocks started
  T items[kItems];
  load_tile<kThreads>(in, n, tile, items, identity, smem);
  T total;
  const T before = block_exclusive_scan<kThreads>(thread_scan(items, op), op, identity, total, warp_totals);
  if (threadIdx.x < 32) {
    T prefix = identity;
    if (counter != nullptr && tile == 0) {
      if (threadIdx.x == 0) states.publish(0, kPrefix, total);
    } else if (counter != nullptr) {
      if (threadIdx.x == 0) states.publish(tile, kAggregate, total);  // early: successors need not wait
      prefix = look_back(states, tile, op, identity);
      if (threadIdx.x == 0) states.publish(tile, kPrefix, op(prefix, total));
    }
    if (threadIdx.x == 0) tile_prefix = prefix;
  }
  __syncthreads();
  finish_items(items, op(tile_prefix, before), op, kind);
  store_tile<kThreads>(out, n, tile, items, smem);
}
//! [single pass]

/// Workspace of step 6: the flags (or packed states) and the tile counter, which are zeroed
/// before each launch, then the value slots of 8-byte types.
struct LookBackLayout {
  std::size_t counter;  ///< offset of the tile counter
  std::size_t zeroed;   ///< bytes zeroed before the launch: the flags and the counter
  std::size_t bytes;    ///< total
};
template <class T>
constexpr LookBackLayout look_back_layout(long long n) {
  const long long tiles = n <= kTileElems<T> ? 1 : (n - 1) / kTileElems<T> + 1;
  const std::size_t counter = align_up(TileStates<T>::flag_bytes(tiles));
  const std::size_t zeroed = counter + kTempAlign;
  return {counter, zeroed, zeroed + align_up(TileStates<T>::value_bytes(tiles))};
}

/// The kernel of step 6: (in, out, n, states, counter, op, identity, kind).
template <class T, class Op>
using LookBackKernel = void (*)(const T*, T*, long long, TileStates<T>, unsigned*, Op, T, Kind);

template <class T, class Op>
Plan<LookBackKernel<T, Op>> decoupled_look_back_plan(long long n) {
  return tile_plan<LookBackKernel<T, Op>>(decoupled_look_back_kernel<T, Op>, n, kTileElems<T>, kTileThreads);
}

/// Scans in[0, n) into out with `op`; see scan_common.cuh for the contract.
template <class T, class Op>
cudaError_t decoupled_look_back(void* d_temp, std::size_t& temp_bytes, const T* in, T* out, long long n, Op op,
                                T identity, Kind kind, cudaStream_t stream = nullptr) {
  const LookBackLayout w = look_back_layout<T>(n < 0 ? 0 : n);
  cudaError_t err;
  if (handle_args(d_temp, temp_bytes, w.bytes, in, out, n, kTileMaxN<T>, kind, err)) return err;
  const auto p = decoupled_look_back_plan<T, Op>(n);  // n <= kTileMaxN<T>: a kernel
  char* temp = static_cast<char*>(d_temp);
  TileStates<T> states;
  if constexpr (sizeof(T) == 4) states = {reinterpret_cast<unsigned long long*>(temp)};
  else states = {reinterpret_cast<unsigned*>(temp), reinterpret_cast<T*>(temp + w.zeroed)};
  unsigned* counter = nullptr;  // a single tile looks at no predecessor: no flags to reset
  if (p.grid.x > 1) {
    counter = reinterpret_cast<unsigned*>(temp + w.counter);
    if ((err = cudaMemsetAsync(d_temp, 0, w.zeroed, stream)) != cudaSuccess) return err;
  }
  p.kernel<<<p.grid, p.block, p.smem, stream>>>(in, out, n, states, counter, op, identity, kind);
  return cudaGetLastError();
}

}  // namespace smem::scan
