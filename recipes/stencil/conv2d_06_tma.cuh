/// \file conv2d_06_tma.cuh
/// \brief Convolution step 6 (Hopper, sm_90): a resident grid of blocks, each walking a run of
/// step 5's tiles; TMA copies the next tile into a second shared buffer while the block computes
/// the current one.
///
/// What changes from step 5, and why it is faster:
/// - A block of step 5 loads its tile, waits for it, computes, stores and exits: the loads of a
///   block never overlap its own compute, and they pass through 40 registers a thread. Here one
///   thread asks the TMA unit for the whole tile, halo included: one box of (128 + 2 pad) x
///   (64 + 2r) floats of the image's tensor map, which lands exactly in step 5's shared map
///   (`CoarseShape`), with zeros wherever it reaches outside the image (the padding, for free).
///   No register holds it, and TMA asks the L2 for whole lines.
/// - Two buffers: while the block computes tile k from one, tile k + step lands in the other.
///   An mbarrier per buffer tells the threads when its bytes have landed.
/// - The grid is resident: as many blocks as the SMs hold at once (three for r = 1 .. 3, two
///   above), block b taking tiles b, b + grid, b + 2 grid, ... in step 5's order, so at each step
///   the blocks work on consecutive tiles, as step 5's waves do, and no partial last wave idles.
/// - The compute and the stores are step 5's (`coarsened_outputs`, `store_coarsened`).
///
/// TMA needs `width` a multiple of 4 and `in` 16-byte aligned (a tensor map's rows are whole
/// 16-byte units), and the 16-byte stores `out` 16-byte aligned; for any other image the launcher
/// runs step 5. TMA needs sm_90: a build for an older architecture stops here with one message.
///
/// Bank conflicts: the compute reads step 5's windows (see the bank model); the TMA writes whole
/// boxes and takes no part in the shared-memory instruction counts.
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
/// Dynamic shared memory of step 6: two tiles and their two mbarriers.
template <int R>
inline constexpr unsigned kTmaSmemBytes = 2 * kTmaTileBytes<R> + 2 * sizeof(std::uint64_t);

template <int R>
__global__ void __launch_bounds__(CoarseShape<R>::kThreads, R <= 3 ? 3 : 2)
    conv2d_tma_kernel(const __grid_constant__ CUtensorMap map, float* __restrict__ out, int height, int width) {
  using S = CoarseShape<R>;
  extern __shared__ __align__(128) unsigned char buffers[];  // two tiles, kTmaTileBytes<R> apart, then full[2]
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(buffers + 2 * kTmaTileBytes<R>);
  const auto buffer = [&](int b) { return reinterpret_cast<float*>(buffers + b * kTmaTileBytes<R>); };
  const long long tiles_x = (width + S::kTileW - 1) / S::kTileW;
  const long long tiles = tiles_x * ((height + S::kTileH - 1) / S::kTileH);
  // Tile k at (k / tiles_x, k % tiles_x), as in step 5; this block takes every gridDim.x-th.
  const auto corner_y = [&](long long k) { return k / tiles_x * S::kTileH; };
  const auto corner_x = [&](long long k) { return k % tiles_x * S::kTileW; };
  const bool issuer = threadIdx.x == 0 && threadIdx.y == 0;
  const auto fetch = [&](long long k, int b) {  // the issuing thread: tile k into buffer b
    mbar_arrive_expect_tx(&full[b], S::kVecs * 16u);
    tma_load_2d(buffer(b), &map, int(corner_x(k)) - S::kPad, int(corner_y(k)) - R, &full[b]);
  };

  if (issuer) {
    mbar_init(&full[0]);
    mbar_init(&full[1]);
    fetch(blockIdx.x, 0);
  }
  __syncthreads();  // the barriers are initialized before anyone waits on them
  for (long long k = blockIdx.x, i = 0; k < tiles; k += gridDim.x, ++i) {
    const int b = int(i & 1);  // tile i of this block is in buffer i % 2, phase i / 2 of its mbarrier
    // The next tile into the other buffer, which everyone finished reading at the previous step.
    if (issuer && k + gridDim.x < tiles) fetch(k + gridDim.x, b ^ 1);
    mbar_wait(&full[b], unsigned(i >> 1) & 1u);
    float acc[S::kRows][S::kCols];
    coarsened_outputs<R>(buffer(b), acc);
    store_coarsened<R>(out, height, width, corner_y(k), corner_x(k), acc, true);
    __syncthreads();  // buffer b is read: the next step may fetch into it
  }
}
//! [tma kernel]

/// The kernel of step 6: (map of the image, out, height, width).
using TmaConvKernel = void (*)(const CUtensorMap, float*, int, int);

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
  return grid_plan<TmaConvKernel>(conv2d_tma_kernel<R>, blocks, dim3(S::kThreadsX, S::kThreadsY),
                                  kTmaSmemBytes<R>);
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

/// The tensor map of the image, read in boxes of one tile with its halo (step 5's map for r).
inline bool conv2d_tma_map(CUtensorMap* map, const float* in, int height, int width, int radius) {
  using S = CoarseShape<1>;               // the output tile does not depend on the radius
  const int pad = (radius + 3) / 4 * 4;  // CoarseShape<radius>::kPad
  const long long dims[2] = {width, height};
  const int box[2] = {S::kTileW + 2 * pad, S::kTileH + 2 * radius};  // CoarseShape<radius>::kPitch, kInRows
  static_assert(CoarseShape<8>::kPitch == S::kTileW + 2 * 8 && CoarseShape<8>::kInRows == S::kTileH + 2 * 8);
  return make_float_map(map, in, 2, dims, box);
}

/// out = in convolved with the (2r + 1)^2 filter at `filter`, zero padding; see stencil_common.cuh.
/// Where TMA cannot read the image (width not a multiple of 4, `in` or `out` not 16-byte aligned),
/// step 5 runs.
inline cudaError_t conv2d_tma(const float* in, float* out, int height, int width, const float* filter, int radius,
                              cudaStream_t stream = nullptr) {
  if (Args a = check_conv2d_args(in, out, height, width, filter, radius); a != Args::launch) return args_error(a);
  CUtensorMap map;
  if (!conv2d_vector_ok(in, out, width) || !conv2d_tma_map(&map, in, height, width, radius))
    return conv2d_coarsened(in, out, height, width, filter, radius, stream);
  return launch_with_filter(conv2d_tma_plan(height, width, radius), filter, radius, stream, map, out, height, width);
}

}  // namespace smem::stencil
