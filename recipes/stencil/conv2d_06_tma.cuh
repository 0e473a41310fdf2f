/// \file conv2d_06_tma.cuh
/// \brief Convolution step 6 (Hopper, sm_90): TMA moves the tiles both ways. A resident grid
/// of blocks walks step 5's tiles; TMA loads each tile with its halo into a ring of shared
/// buffers ahead of the compute, and stores each finished tile from shared memory.
///
/// What changes from step 5, and why it is faster:
/// - Loads. A block of step 5 loads its tile, waits, computes, stores and exits: its loads never
///   overlap its own compute, and they pass through 40 registers a thread. Here one thread asks
///   the TMA unit for the whole tile, halo included: one box of (128 + 2 pad) x (64 + 2r) floats
///   of `in`'s tensor map, which lands exactly in step 5's shared map (`CoarseShape`), with zeros
///   wherever it reaches outside the image (the padding, for free). An mbarrier per buffer tells
///   the threads when its bytes have landed; the next tile is in flight while a block computes.
/// - Stores. Step 5's threads end each tile with eight 16-byte global stores each, and the
///   registers they store stay locked until the stores have left. Here the threads write their
///   outputs into the tile's own buffer (its input has been read by then), and one thread hands
///   the 64 x 128 outputs to TMA as one box of `out`'s tensor map, which also clips it at the
///   image's edges. The block goes on to the next tile while the store drains.
/// - Three buffers: tile i is computed in one, tile i + 1 lands in the next, the store of tile
///   i - 1 reads the third; the load of tile i + 1 waits only for the store of tile i - 2.
/// - The grid is resident: as many blocks as the SMs hold at once (two for r = 1 .. 3), block b
///   taking tiles b, b + grid, b + 2 grid, ... of step 5's order, so that at each step the blocks
///   work on consecutive tiles, as step 5's waves do, and no partial last wave idles.
/// - The compute is step 5's (`coarsened_outputs`).
///
/// TMA needs `width` a multiple of 4 and `in` and `out` 16-byte aligned (a tensor map's rows are
/// whole 16-byte units); for any other image the launcher runs step 5. TMA needs sm_90: a build
/// for an older architecture stops here with one message.
///
/// Bank conflicts: the compute reads step 5's windows, the staged outputs are rows of 32
/// consecutive 16-byte vectors a warp (see the bank model); TMA's own shared-memory reads and
/// writes take no part in the shared-memory instruction counts.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "conv2d_05_coarsened.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "conv2d_06_tma.cuh needs TMA: compile for sm_90 or newer (e.g. -arch=sm_90)"
#endif

namespace smem::stencil {

//! [tma kernel]
/// Bytes from one buffer of step 6 to the next: a tile, rounded up to the 128 bytes TMA aligns to.
template <int R>
inline constexpr unsigned kTmaTileBytes = (CoarseShape<R>::kVecs * 16u + 127u) / 128u * 128u;
/// Buffers of step 6: three, so that while a block computes tile i, tile i + 1 is in flight and
/// the store of tile i - 1 reads its own buffer.
inline constexpr int kTmaBuffers = 3;
/// Dynamic shared memory of step 6: the buffers and their mbarriers.
template <int R>
inline constexpr unsigned kTmaSmemBytes = kTmaBuffers * (kTmaTileBytes<R> + sizeof(std::uint64_t));

/// Word of output (row, col) of the tile staged for the TMA store, in buffer b once tile i is read:
/// rows of kTileW floats, a warp's 32 16-byte vectors of a row consecutive.
template <int R>
__host__ __device__ constexpr int staged_offset(int row, int col) { return row * CoarseShape<R>::kTileW + col; }

template <int R>
__global__ void __launch_bounds__(CoarseShape<R>::kThreads, R <= 3 ? 2 : 1)
    conv2d_tma_kernel(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
                      int height, int width) {
  using S = CoarseShape<R>;
  constexpr int N = kTmaBuffers;
  static_assert(N >= 3, "a tile computed, one stored, one in flight");
  extern __shared__ __align__(128) unsigned char buffers[];  // N tiles, kTmaTileBytes<R> apart, then full[N]
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(buffers + N * kTmaTileBytes<R>);
  const auto buffer = [&](long long i) { return reinterpret_cast<float*>(buffers + i % N * kTmaTileBytes<R>); };
  const long long tiles_x = (width + S::kTileW - 1) / S::kTileW;
  const long long tiles = tiles_x * ((height + S::kTileH - 1) / S::kTileH);
  // This block's tile i is tile k = blockIdx.x + i gridDim.x of step 5's order, at (k / tiles_x, k % tiles_x).
  const auto corner_y = [&](long long k) { return int(k / tiles_x * S::kTileH); };
  const auto corner_x = [&](long long k) { return int(k % tiles_x * S::kTileW); };
  const bool issuer = threadIdx.x == 0 && threadIdx.y == 0;
  const auto fetch = [&](long long i) {  // the issuing thread: tile i into buffer i % N
    const long long k = blockIdx.x + i * gridDim.x;
    if (k >= tiles) return;
    mbar_arrive_expect_tx(&full[i % N], S::kVecs * 16u);
    tma_load_2d(buffer(i), &in_map, corner_x(k) - S::kPad, corner_y(k) - R, &full[i % N]);
  };

  if (issuer) {
    for (int b = 0; b < N; ++b) mbar_init(&full[b]);
    for (int i = 0; i < N - 2; ++i) fetch(i);
  }
  __syncthreads();  // the barriers are initialized before anyone waits on them
  for (long long k = blockIdx.x, i = 0; k < tiles; k += gridDim.x, ++i) {
    if (issuer) {
      // Tile i + N - 2 goes into the buffer of tile i - 2, once the store of tile i - 2 has read
      // it (the store of tile i - 1 may still be reading its own).
      tma_store_wait_read<1>();
      fetch(i + N - 2);
    }
    mbar_wait(&full[i % N], unsigned(i / N) & 1u);  // tile i has landed: phase i / N of its barrier
    float acc[S::kRows][S::kCols];
    coarsened_outputs<R>(buffer(i), acc);
    __syncthreads();  // everyone has read tile i: its buffer takes the outputs
    float* staged = buffer(i);
#pragma unroll
    for (int oy = 0; oy < S::kRows; ++oy)
      *reinterpret_cast<float4*>(staged + staged_offset<R>(threadIdx.y * S::kRows + oy, S::kCols * threadIdx.x)) =
          make_float4(acc[oy][0], acc[oy][1], acc[oy][2], acc[oy][3]);
    fence_proxy_async();  // the staged outputs are visible to the TMA store
    __syncthreads();
    if (issuer) {
      tma_store_2d(&out_map, corner_x(k), corner_y(k), staged);  // clipped at the image's edges
      tma_store_commit();
    }
  }
  if (issuer) tma_store_wait_all();  // the stores have read shared memory and written out before the block exits
}
//! [tma kernel]

/// The kernel of step 6: (map of `in`, map of `out`, height, width).
using TmaConvKernel = void (*)(const CUtensorMap, const CUtensorMap, int, int);

/// Blocks of conv2d_tma_kernel<R> that all SMs hold at once, once per device; 0 when the device
/// cannot be queried (the launch then reports the error).
template <int R>
int tma_resident_blocks() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices];  // blocks + 1; 0 not known yet
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return 0;
  if (const int c = cache[dev].load(std::memory_order_relaxed); c > 0) return c - 1;
  int sms = 0, per_sm = 0;
  const int smem = int(kTmaSmemBytes<R>);
  if (cudaFuncSetAttribute(conv2d_tma_kernel<R>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, conv2d_tma_kernel<R>, CoarseShape<R>::kThreads, smem) !=
          cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  cache[dev].store(sms * per_sm + 1, std::memory_order_relaxed);
  return sms * per_sm;
}

template <int R>
Plan<TmaConvKernel> tma_plan_r(int height, int width) {
  using S = CoarseShape<R>;
  const long long tiles = tile_count(height, width, S::kTileH, S::kTileW);
  const long long resident = tma_resident_blocks<R>();
  const long long blocks = resident > 0 && resident < tiles ? resident : tiles;
  return grid_plan<TmaConvKernel>(conv2d_tma_kernel<R>, blocks, dim3(S::kThreadsX, S::kThreadsY), kTmaSmemBytes<R>);
}

/// The plan for `radius` (every radius from 1 to kMaxRadius has its instance).
inline Plan<TmaConvKernel> conv2d_tma_plan(int height, int width, int radius) {
  constexpr Plan<TmaConvKernel> (*plans[kMaxRadius])(int, int) = {tma_plan_r<1>, tma_plan_r<2>, tma_plan_r<3>,
                                                                   tma_plan_r<4>, tma_plan_r<5>, tma_plan_r<6>,
                                                                   tma_plan_r<7>, tma_plan_r<8>};
  static_assert(kMaxRadius == 8, "one instance per radius");
  if (radius < 1 || radius > kMaxRadius) return {nullptr, dim3(), dim3(), 0};
  return plans[radius - 1](height, width);
}

/// The tensor maps of step 6: `in` read in boxes of a tile with its halo (step 5's map for
/// `radius`), `out` written in boxes of a tile.
inline bool conv2d_tma_maps(CUtensorMap* in_map, CUtensorMap* out_map, const float* in, const float* out, int height,
                            int width, int radius) {
  using S = CoarseShape<1>;               // the output tile does not depend on the radius
  const int pad = (radius + 3) / 4 * 4;  // CoarseShape<radius>::kPad
  const long long dims[2] = {width, height};
  const int in_box[2] = {S::kTileW + 2 * pad, S::kTileH + 2 * radius};  // CoarseShape<radius>::kPitch, kInRows
  const int out_box[2] = {S::kTileW, S::kTileH};
  static_assert(CoarseShape<8>::kPitch == S::kTileW + 2 * 8 && CoarseShape<8>::kInRows == S::kTileH + 2 * 8);
  return make_float_map(in_map, in, 2, dims, in_box) && make_float_map(out_map, out, 2, dims, out_box);
}

/// out = in convolved with the (2r + 1)^2 filter at `filter`, zero padding; see stencil_common.cuh.
/// Where TMA cannot read or write the image (width not a multiple of 4, `in` or `out` not 16-byte
/// aligned), step 5 runs.
inline cudaError_t conv2d_tma(const float* in, float* out, int height, int width, const float* filter, int radius,
                              cudaStream_t stream = nullptr) {
  if (Args a = check_conv2d_args(in, out, height, width, filter, radius); a != Args::launch) return args_error(a);
  CUtensorMap in_map, out_map;
  if (!conv2d_tma_maps(&in_map, &out_map, in, out, height, width, radius))
    return conv2d_coarsened(in, out, height, width, filter, radius, stream);
  return launch_with_filter(conv2d_tma_plan(height, width, radius), filter, radius, stream, in_map, out_map, height,
                            width);
}

}  // namespace smem::stencil
