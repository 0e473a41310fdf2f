/// \file conv2d_06_tma.cuh
/// \brief Convolution step 6 (Hopper, sm_90): TMA moves each tile both ways. One thread loads
/// the block's input tile with its halo as three TMA boxes; the outputs are staged in the same
/// shared memory and written back as one TMA store.
///
/// What changes from step 5, and why it is faster:
/// - Loads. Step 5's threads load the tile through registers (40 a thread for r = 2) with
///   ten 16-byte loads each, then store it to shared memory. Here one thread asks the TMA unit
///   for the whole tile, halo included: the tile's 128 columns of its 64 + 2r rows, and the pad
///   columns on either side (`TmaTile`), with zeros wherever a box reaches outside the image (the
///   padding, for free). An mbarrier says when all three have landed. No register holds the tile
///   in flight, so four blocks fit an SM (three for r > 3), and the loads of one block overlap the
///   compute of the others.
/// - Stores. Step 5's threads end with eight 16-byte global stores each, whose registers stay
///   locked until the stores leave. Here the threads write their outputs into the tile's shared
///   memory (its input has been read by then), and one thread hands the 64 x 128 outputs to TMA
///   as one box of `out`'s tensor map, which also clips it at the image's edges.
/// - The compute is step 5's (`coarsened_outputs`), reading its windows through `TmaTile`.
///
/// The step is limited by L2, like a copy of the same bytes: what it saves is L2 sectors. The
/// halo columns are boxes of their own, so that the tile's box starts on the tile's first column
/// (see `TmaTile`), and the maps ask for no L2 promotion.
///
/// TMA needs `width` a multiple of 4 and `in` and `out` 16-byte aligned (a tensor map's rows are
/// whole 16-byte units); for any other image the launcher runs step 5. TMA needs sm_90: a build
/// for an older architecture stops here with one message.
///
/// Bank conflicts: the compute reads step 5's windows, where the first and the last lane of a
/// warp may read a halo box's word in a bank another lane of its phase reads; the staged outputs
/// are rows of 32 consecutive 16-byte vectors a warp (see the bank model); TMA's own
/// shared-memory reads and writes take no part in the shared-memory instruction counts.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "conv2d_05_coarsened.cuh"
#include "stencil_sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "conv2d_06_tma.cuh needs TMA: compile for sm_90 or newer (e.g. -arch=sm_90)"
#endif

namespace smem::stencil {

//! [tma kernel]
/// Step 6's tile in shared memory: the rows and columns of step 5's map (the input tile with its
/// halo, column 0 at x0 - kPad), landed as three TMA boxes one after the other: the tile's own
/// kTileW columns, then the kPad columns left of them and the kPad right of them. TMA reads a box
/// row in pieces that start at the box's first column; the main box starts on the tile's first
/// column (on a 128-byte line where the image's rows are whole lines), where one box from
/// x0 - kPad would start every piece of a row a few words before a sector and read a sector
/// more for each. The first kTileH x kTileW floats later hold the staged outputs, rows of kTileW
/// floats.
template <int R>
struct TmaTile {
  using S = CoarseShape<R>;
  static constexpr int kHaloWords = (S::kInRows * S::kPad + 31) / 32 * 32;  // boxes 128-byte aligned
  static constexpr int kLeft = S::kInRows * S::kTileW, kRight = kLeft + kHaloWords, kWords = kRight + kHaloWords;
  static constexpr unsigned kBytes = S::kInRows * S::kPitch * sizeof(float);  // what lands
  /// Word of step 5's map position (row, col).
  __host__ __device__ static constexpr int offset(int row, int col) {
    return col < S::kPad                ? kLeft + row * S::kPad + col
           : col < S::kPad + S::kTileW ? row * S::kTileW + col - S::kPad
                                        : kRight + row * S::kPad + col - S::kPad - S::kTileW;
  }
  /// Vector q of the window of thread (tx, ty) in its input row ir (as step 5's).
  __host__ __device__ static constexpr int window_offset(int tx, int ty, int ir, int q) {
    return offset(ty * S::kRows + ir, 4 * (tx + q));
  }
};
template <int R>
__host__ __device__ constexpr int staged_offset(int row, int col) { return row * CoarseShape<R>::kTileW + col; }

/// Blocks of step 6 an SM should hold: four (64 registers a thread), three for r > 3, whose
/// longer rows need more registers.
template <int R>
inline constexpr int kTmaMinBlocks = R > 3 ? 3 : 4;

template <int R>
__global__ void __launch_bounds__(CoarseShape<R>::kThreads, kTmaMinBlocks<R>)
    conv2d_tma_kernel(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap halo_map,
                      const __grid_constant__ CUtensorMap out_map, int height, int width) {
  using S = CoarseShape<R>;
  using T = TmaTile<R>;
  static_assert(S::kTileH * S::kTileW <= T::kLeft, "the outputs fit where the input was");
  __shared__ alignas(128) float4 tile4[T::kWords / 4];
  __shared__ std::uint64_t full;
  float* tile = reinterpret_cast<float*>(tile4);
  const int tiles_x = tiles_along(width, S::kTileW);
  const int y0 = int(blockIdx.x / tiles_x) * S::kTileH, x0 = int(blockIdx.x % tiles_x) * S::kTileW;
  // The right halo's first column, or the image's edge where the tile reaches it: the box is then
  // all zeros either way, and x0 + kTileW would pass INT_MAX for a width near it.
  const int x_right = min(x0, width - S::kTileW) + S::kTileW;
  const bool issuer = threadIdx.x == 0 && threadIdx.y == 0;

  if (issuer) {  // the whole tile, halo and zero padding included, as three boxes
    mbar_init(&full, 1);
    fence_barrier_init();
    mbar_arrive_expect_tx(&full, T::kBytes);
    tma_load(tile, &in_map, x0, y0 - R, &full);
    tma_load(tile + T::kLeft, &halo_map, x0 - S::kPad, y0 - R, &full);
    tma_load(tile + T::kRight, &halo_map, x_right, y0 - R, &full);
  }
  __syncthreads();      // the barrier is initialized before anyone waits on it
  mbar_wait(&full, 0);  // the tile has landed
  float acc[S::kRows][S::kCols];
  coarsened_outputs<R, T>(tile, acc);
  __syncthreads();  // everyone has read the tile: it takes the outputs
#pragma unroll
  for (int oy = 0; oy < S::kRows; ++oy)
    *reinterpret_cast<float4*>(tile + staged_offset<R>(threadIdx.y * S::kRows + oy, S::kCols * threadIdx.x)) =
        make_float4(acc[oy][0], acc[oy][1], acc[oy][2], acc[oy][3]);
  fence_proxy_async();  // the staged outputs are visible to the TMA store
  __syncthreads();
  if (issuer) {
    tma_store(&out_map, x0, y0, tile);  // clipped at the image's edges
    tma_store_commit();
    tma_store_wait_read<0>();  // the tile outlives the store's reads of it
  }
}
//! [tma kernel]

/// The kernel of step 6: (maps of `in`'s tile and halo boxes, map of `out`, height, width).
using TmaConvKernel = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, int, int);

/// The plan for `radius` (every radius from 1 to kMaxRadius has its instance): one block per tile.
inline Plan<TmaConvKernel> conv2d_tma_plan(int height, int width, int radius) {
  constexpr TmaConvKernel kernels[kMaxRadius] = {conv2d_tma_kernel<1>, conv2d_tma_kernel<2>, conv2d_tma_kernel<3>,
                                                 conv2d_tma_kernel<4>, conv2d_tma_kernel<5>, conv2d_tma_kernel<6>,
                                                 conv2d_tma_kernel<7>, conv2d_tma_kernel<8>};
  static_assert(kMaxRadius == 8, "one instance per radius");
  const TmaConvKernel k = radius >= 1 && radius <= kMaxRadius ? kernels[radius - 1] : nullptr;
  using S = CoarseShape<1>;  // the output tile does not depend on the radius
  return grid_plan(k, tile_count(height, width, S::kTileH, S::kTileW), dim3(S::kThreadsX, S::kThreadsY));
}

/// The tensor maps of step 6: `in` read in boxes of the tile's columns and of the halo columns
/// on either side (kInRows rows each), `out` written in boxes of a tile. The input maps ask for
/// no L2 promotion: a 256-byte one drags a whole line into L2 for each 16-byte halo row.
inline bool conv2d_tma_maps(CUtensorMap* in_map, CUtensorMap* halo_map, CUtensorMap* out_map, const float* in,
                            const float* out, int height, int width, int radius) {
  using S = CoarseShape<1>;               // the output tile does not depend on the radius
  const int pad = (radius + 3) / 4 * 4;  // CoarseShape<radius>::kPad
  static_assert(CoarseShape<8>::kPad == 8 && CoarseShape<8>::kInRows == S::kTileH + 2 * 8);
  const long long dims[2] = {width, height};
  const int tile_box[2] = {S::kTileW, S::kTileH + 2 * radius}, halo_box[2] = {pad, S::kTileH + 2 * radius};
  const int out_box[2] = {S::kTileW, S::kTileH};
  const CUtensorMapL2promotion exact = CU_TENSOR_MAP_L2_PROMOTION_NONE;
  return make_float_map(in_map, in, 2, dims, tile_box, exact) &&
         make_float_map(halo_map, in, 2, dims, halo_box, exact) && make_float_map(out_map, out, 2, dims, out_box);
}

/// out = in convolved with the (2r + 1)^2 filter at `filter`, zero padding; see stencil_common.cuh.
/// Where TMA cannot read or write the image (width not a multiple of 4, `in` or `out` not 16-byte
/// aligned), step 5 runs; where the grid does not fit, step 5 refuses it (its tiles are the same).
inline cudaError_t conv2d_tma(const float* in, float* out, int height, int width, const float* filter, int radius,
                              cudaStream_t stream = nullptr) {
  if (Args a = check_conv2d_args(in, out, height, width, filter, radius); a != Args::launch) return args_error(a);
  const Plan<TmaConvKernel> plan = conv2d_tma_plan(height, width, radius);
  CUtensorMap in_map, halo_map, out_map;
  if (plan.kernel == nullptr || !conv2d_tma_maps(&in_map, &halo_map, &out_map, in, out, height, width, radius))
    return conv2d_coarsened(in, out, height, width, filter, radius, stream);
  return launch_with_filter(plan, filter, radius, stream, in_map, halo_map, out_map, height, width);
}

}  // namespace smem::stencil
