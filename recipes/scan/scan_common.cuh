/// \file scan_common.cuh
/// \brief What every scan step shares: the launcher contract, the launch plan, the maximum with
/// NaN, the warp and block scans and the scan-then-propagate driver of steps 1 to 4.
///
/// Every launcher has the shape of `cub::DeviceScan`:
/// \code
/// template <class T, class Op>
/// cudaError_t <step>(void* d_temp, std::size_t& temp_bytes, const T* in, T* out, long long n,
///                    Op op, T identity, Kind kind, cudaStream_t stream = nullptr);
/// \endcode
/// - `d_temp == nullptr`: size query. Sets `temp_bytes` to the workspace the call needs for this
///   `n` and returns, touching nothing (the pointers may be null then). Needs no CUDA call.
/// - Otherwise, on `stream`, writes for every i < n
///   - `Kind::inclusive`: `out[i] = in[0] op in[1] op ... op in[i]`,
///   - `Kind::exclusive`: `out[i] = identity op in[0] op ... op in[i-1]` (`out[0] = identity`),
///   using the caller's workspace: no allocation, no synchronization, capturable in a CUDA graph.
///   `in == out` (in place) is allowed. `n == 0` launches nothing. Indices are 64-bit.
/// - `op` is any device-callable binary functor, e.g. `cuda::std::plus<T>{}` (identity 0) or
///   `Max{}` below (identity `Max::identity<T>()`). It must be associative and `identity` its
///   identity on both sides (`identity op x == x op identity == x`: the tiles' tails are padded
///   with it). `op` need not be commutative: every step combines its operands in index order, only
///   grouped differently. (`cuda::maximum` is not associative once a NaN appears: use `Max`.)
/// - Accepted sizes: `0 <= n <= max_n(tile)`, at most kMaxTiles = 2^31 - 1 tiles (gridDim.x's
///   limit, one block per tile): steps 1 to 4 (tiles of 1024 elements) take n up to
///   1024 (2^31 - 1) = 2,199,023,254,528; steps 5 and 6 (tiles of 32 KiB, 32768 / sizeof(T)
///   elements) n up to (2^31 - 1) 32768 / sizeof(T): 17,592,186,036,224 for 4-byte T,
///   8,796,093,018,112 for 8-byte T. That is 8 TiB of 4-byte elements for steps 1 to 4 and 64 TiB
///   for steps 5 and 6, far more than a GPU's memory; a larger n is refused, the size query
///   included. Up to these limits no size, offset, tile number or workspace size overflows.
/// - Invalid (returns `cudaErrorInvalidValue` before any CUDA call, writes nothing, a size query
///   leaves `temp_bytes` as it was): `n < 0`, `n` above the step's limit, a `kind` that is
///   neither value; and for a launch: `in` or `out` null with `n > 0`, `in` or `out` not aligned
///   to `alignof(T)`, `in` and `out` overlapping without being equal, `d_temp` not 16-byte
///   aligned, `temp_bytes` smaller than the size query's answer.
/// - Floating-point results of steps 1 to 5 are bitwise identical from run to run on the same GPU
///   (a fixed grouping); step 6's are not in general (see its header). With `Max` every step's
///   result is the sequential scan's, bit for bit.
#pragma once
#include <cuda/std/functional>
#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace smem::scan {

//! [max]
/// The larger of a and b, with NaN: a NaN operand wins, as in numpy.max and torch.max (and
/// smem::reduction::Max), so a scan's result is NaN from the first NaN on, in every step.
/// `cuda::maximum` (`a < b ? b : a` alone) keeps a NaN as its left operand and drops it as its
/// right one, so it is not associative once a NaN appears (max(max(1, NaN), 2) = 2, max(1,
/// max(NaN, 2)) = 1): what follows a NaN would depend on each step's grouping.
/// `Max` is associative bit for bit (it returns the last NaN operand if there is one, else the
/// first of the largest; -0 and +0 tie), so every step gives the sequential scan's bits.
struct Max {
  template <class T>
  __host__ __device__ T operator()(const T& a, const T& b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b != b) return b;  // b is NaN
    }
    return a < b ? b : a;  // a NaN `a` compares false and is kept
  }
  /// -infinity for floating point, the lowest value otherwise: an identity on both sides, bit for bit.
  template <class T>
  static constexpr T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
};
//! [max]

/// Which scan a launcher computes.
enum class Kind { inclusive, exclusive };

/// What a launcher does with its arguments: answer a size query, launch, or reject them.
enum class Args { query, launch, invalid };

/// Workspace offsets and sizes are rounded up to this (also the required d_temp alignment).
inline constexpr std::size_t kTempAlign = 16;
constexpr std::size_t align_up(std::size_t x) { return (x + kTempAlign - 1) / kTempAlign * kTempAlign; }

/// Most tiles of one launch: every step's kernels run one block per tile along gridDim.x.
inline constexpr long long kMaxTiles = INT_MAX;
/// The largest n a step with tiles of `tile` elements accepts: kMaxTiles tiles.
constexpr long long max_n(long long tile) { return kMaxTiles * tile; }

//! [contract]
/// Checks a launcher's arguments against `max_n`, the step's largest n, and `needed`, the
/// workspace bytes this call needs (from the step's own size function, which is plain host
/// arithmetic). Makes no CUDA call.
template <class T>
Args check_args(const void* d_temp, std::size_t temp_bytes, std::size_t needed, const T* in, const T* out,
                long long n, long long max_n, Kind kind) {
  if (n < 0 || n > max_n || (kind != Kind::inclusive && kind != Kind::exclusive)) return Args::invalid;
  if (d_temp == nullptr) return Args::query;
  if (n > 0 && (in == nullptr || out == nullptr)) return Args::invalid;
  const auto a = reinterpret_cast<std::uintptr_t>(in), o = reinterpret_cast<std::uintptr_t>(out),
             t = reinterpret_cast<std::uintptr_t>(d_temp);
  if (a % alignof(T) != 0 || o % alignof(T) != 0 || t % kTempAlign != 0) return Args::invalid;
  const std::uintptr_t bytes = std::uintptr_t(n) * sizeof(T);  // n <= max_n: far below 2^64 / sizeof(T)
  if (n > 0 && a != o && a < o + bytes && o < a + bytes) return Args::invalid;  // partial overlap
  if (temp_bytes < needed) return Args::invalid;
  return Args::launch;
}
//! [contract]

/// The common head of every launcher: true when it must return `err` now (a size query or
/// invalid arguments; also `n == 0`, which launches nothing), false when it should launch.
template <class T>
bool handle_args(void* d_temp, std::size_t& temp_bytes, std::size_t needed, const T* in, const T* out,
                 long long n, long long max_n, Kind kind, cudaError_t& err) {
  switch (check_args(d_temp, temp_bytes, needed, in, out, n, max_n, kind)) {
    case Args::query: temp_bytes = needed; err = cudaSuccess; return true;
    case Args::invalid: err = cudaErrorInvalidValue; return true;
    case Args::launch: err = cudaSuccess; return n == 0;
  }
  return false;
}

//! [plan]
/// What a launcher launches (its first kernel, for the steps that launch several): the kernel,
/// its grid and block, and its dynamic shared memory. The benchmark reads the same plan, so what
/// it reports is what ran. A null kernel: the input does not fit the grid (cudaErrorInvalidValue).
template <class Kernel>
struct Plan {
  Kernel kernel;
  dim3 grid, block;
  unsigned smem;
  Plan<const void*> erased() const { return {reinterpret_cast<const void*>(kernel), grid, block, smem}; }
};
//! [plan]

/// The plan of a kernel with one block per tile of `tile` elements (at least one block; a null
/// kernel above kMaxTiles tiles, n > max_n(tile)).
template <class Kernel>
Plan<Kernel> tile_plan(Kernel kernel, long long n, long long tile, int threads) {
  const long long tiles = n <= tile ? 1 : (n - 1) / tile + 1;
  return {tiles <= kMaxTiles ? kernel : nullptr, dim3(unsigned(tiles)), dim3(unsigned(threads)), 0};
}

//! [warp scan]
/// Inclusive scan over the 32 lanes of the calling warp (every lane must call it): after the
/// round of distance d, lane l holds lanes max(0, l - 2d + 1) .. l combined, in order.
template <class T, class Op>
__device__ T warp_inclusive_scan(T x, Op op) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const T y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= d) x = op(y, x);
  }
  return x;
}
//! [warp scan]

//! [block scan]
/// Exclusive scan of one value per thread across the block: returns in[0] op ... op in[tid-1]
/// (identity for thread 0) and sets `total` to the whole block's combination, in every thread.
/// Each warp scans its lanes with shuffles; lane 31 of each warp stores the warp's total in
/// `warp_totals`, the kernel's shared array of one T per warp; after one barrier every warp scans
/// those totals itself (again with shuffles), so no second barrier is needed. A caller that scans
/// twice into the same `warp_totals` must put a __syncthreads() between.
template <int kThreads, class T, class Op>
__device__ T block_exclusive_scan(T x, Op op, T identity, T& total, T (&warp_totals)[kThreads / 32]) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 32");
  constexpr int kWarps = kThreads / 32;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const T inclusive = warp_inclusive_scan(x, op);
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  const T warps = warp_inclusive_scan(lane < kWarps ? warp_totals[lane] : identity, op);
  const T before_warp = __shfl_sync(0xffffffffu, warps, warp == 0 ? 0 : warp - 1);
  total = __shfl_sync(0xffffffffu, warps, kWarps - 1);
  T before_lane = __shfl_up_sync(0xffffffffu, inclusive, 1);
  if (lane == 0) before_lane = identity;
  return warp == 0 ? before_lane : op(before_warp, before_lane);
}
//! [block scan]

// ---- Steps 1 to 4: scan each tile, scan the tile totals the same way, add them back. ----

/// The kernel of steps 1 to 4: scans tile blockIdx.x of in[0, n) into out (`kind`), and when
/// `sums` is not null writes the tile's total to sums[blockIdx.x]. Reads its whole tile before
/// writing any of it, so in == out is safe.
template <class T, class Op>
using TileKernel = void (*)(const T*, T*, long long, T*, Op, T, Kind);

/// Writes a scanned tile whose inclusive scan the block holds at `at(j)`, j < kTile: out (as
/// `kind` asks), and the tile's total to sums[blockIdx.x] when sums is not null.
template <int kTile, int kThreads, class T, class At>
__device__ void write_tile(T* out, long long n, T* sums, Kind kind, T identity, At at) {
  const long long base = (long long)blockIdx.x * kTile;
  for (int j = threadIdx.x; j < kTile; j += kThreads)
    if (base + j < n) out[base + j] = kind == Kind::inclusive ? at(j) : j == 0 ? identity : at(j - 1);
  if (sums != nullptr && threadIdx.x == 0) sums[blockIdx.x] = at(kTile - 1);
}

/// Most levels a scan-then-propagate scan needs: tiles of 1024 or more elements, n <= max_n(tile),
/// so at most 2^31 - 1, 2^21, 2^11 and 2 tile totals above the input (asserted below).
inline constexpr int kMaxLevels = 5;

/// Workspace of steps 1 to 4: level l > 0 holds the tile totals of level l - 1 (level 0 is the
/// output), `count[l]` elements at `offset[l]`; the top level fits one tile. `bytes` is never 0,
/// so that a caller who allocates what the query says never passes null.
struct TreeLayout {
  int levels = 1;
  long long count[kMaxLevels] = {};
  std::size_t offset[kMaxLevels] = {};
  std::size_t bytes = kTempAlign;
};
template <class T>
constexpr TreeLayout tree_layout(long long n, long long tile) {
  TreeLayout w;
  w.count[0] = n;
  std::size_t end = 0;
  while (w.count[w.levels - 1] > tile && w.levels < kMaxLevels) {
    w.count[w.levels] = (w.count[w.levels - 1] - 1) / tile + 1;
    w.offset[w.levels] = end;
    end += align_up(std::size_t(w.count[w.levels]) * sizeof(T));
    ++w.levels;
  }
  w.bytes = end > 0 ? end : kTempAlign;
  return w;
}
static_assert(tree_layout<char>(max_n(1024), 1024).count[kMaxLevels - 1] <= 1024, "the top level fits one tile");

//! [add carry]
/// x[i] = op(carry[b], x[i]) for every element of every tile b > 0: the exclusive scan of the
/// tile totals, added to the tiles they precede. Block b handles tile b + 1.
template <class T, class Op>
__global__ void add_carry_kernel(T* x, long long n, const T* carry, long long tile, Op op) {
  const long long b = blockIdx.x + 1LL;
  const T c = carry[b];
  for (long long i = b * tile + threadIdx.x, end = b * tile + tile < n ? b * tile + tile : n; i < end;
       i += blockDim.x)
    x[i] = op(c, x[i]);
}
//! [add carry]

/// The driver of steps 1 to 4: the step's tile kernel on the input, writing each tile's total;
/// the same kernel, exclusive and in place, on those totals, level after level until one tile
/// holds them all; then each level's scanned totals added to the tiles of the level below.
/// Every kernel runs on `stream`, in order: no synchronization.
template <class T, class Op>
cudaError_t scan_then_propagate(TileKernel<T, Op> kernel, long long tile, int threads, void* d_temp,
                                std::size_t& temp_bytes, const T* in, T* out, long long n, Op op, T identity,
                                Kind kind, cudaStream_t stream) {
  const TreeLayout w = tree_layout<T>(n < 0 ? 0 : n, tile);
  cudaError_t err;
  if (handle_args(d_temp, temp_bytes, w.bytes, in, out, n, max_n(tile), kind, err)) return err;
  const auto level = [&](int l) {
    return l == 0 ? out : reinterpret_cast<T*>(static_cast<char*>(d_temp) + w.offset[l]);
  };
  for (int l = 0; l < w.levels; ++l) {  // up: scan each level, totals into the next
    const auto p = tile_plan(kernel, w.count[l], tile, threads);
    p.kernel<<<p.grid, p.block, p.smem, stream>>>(l == 0 ? in : level(l), level(l), w.count[l],
                                                  l + 1 < w.levels ? level(l + 1) : nullptr, op, identity,
                                                  l == 0 ? kind : Kind::exclusive);
    if ((err = cudaGetLastError()) != cudaSuccess) return err;
  }
  for (int l = w.levels - 2; l >= 0; --l) {  // down: every tile but the first gets its carry
    const unsigned tiles = unsigned(w.count[l + 1]);
    add_carry_kernel<<<tiles - 1, threads, 0, stream>>>(level(l), w.count[l], level(l + 1), tile, op);
    if ((err = cudaGetLastError()) != cudaSuccess) return err;
  }
  return cudaSuccess;
}

}  // namespace smem::scan
