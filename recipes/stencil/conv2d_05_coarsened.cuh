/// \file conv2d_05_coarsened.cuh
/// \brief Convolution step 5, thread coarsening with register reuse along rows, and 16-byte
/// loads: each thread computes 8 x 4 outputs from windows of its input rows held in registers.
///
/// What changes from step 3, and why it is faster:
/// - Step 3 reads (2r + 1)^2 shared words per output: for a 5 x 5 filter at 4 bytes a word,
///   100 bytes of shared traffic and 25 load instructions for every 8 bytes of global traffic,
///   so shared memory, not DRAM, sets its pace. Here a thread owns a block of 8 rows x 4
///   consecutive columns of outputs. It walks the 8 + 2r input rows this block needs once; for
///   each it loads the window of 4 + 2r pixels (as 16-byte vectors) into registers, and adds that
///   row's contribution to every output that uses it: up to 2r + 1 output rows x 4 columns x
///   2r + 1 taps, all from the same registers. For r = 2 that is 3 vector loads per row, 36 per
///   32 outputs, instead of 25 scalar loads per output.
/// - The radius is a template parameter (the launcher dispatches r = 1 .. 8 to its instance), so
///   the loops unroll, the window stays in registers, and every tap is a constant-bank operand
///   of its FMA: no load instruction at all for the filter.
/// - The block (32 x 8 threads) covers a 128 x 64 output tile, so the halo costs (64 + 2r)(128 +
///   2 pad) / (64 x 128) of one read, and the tile is loaded with 16-byte loads: each warp request
///   moves 512 contiguous bytes, with all of the block's loads issued before any of them is
///   stored. The halo columns are rounded up to whole vectors (pad = r rounded up to a multiple of
///   4), so every vector of the tile is aligned in global and in shared memory.
/// - Stores are 16-byte vectors too.
///
/// 16-byte accesses need `width` a multiple of 4 and `in` and `out` 16-byte aligned; otherwise the
/// same kernel loads and stores element by element (same tile, same compute).
///
/// Bank conflicts: a warp's window loads are 32 consecutive 16-byte vectors of one row, its tile
/// stores 32 consecutive vectors: conflict-free (see the bank model).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "stencil_common.cuh"

namespace smem::stencil {

//! [coarsened map]
/// The shape of step 5 for radius R. Shared tile: kInRows rows of kPitch floats; word
/// offset(row, col) holds image pixel (y0 - R + row, x0 - kPad + col).
template <int R>
struct CoarseShape {
  static constexpr int kThreadsX = 32, kThreadsY = 8, kThreads = kThreadsX * kThreadsY;
  static constexpr int kCols = 4, kRows = 8;  // outputs per thread: 8 rows x 4 consecutive columns
  static constexpr int kTileW = kThreadsX * kCols, kTileH = kThreadsY * kRows;
  static constexpr int kPad = (R + 3) / 4 * 4;  // halo columns, rounded up to whole vectors
  static constexpr int kPitch = kTileW + 2 * kPad, kInRows = kTileH + 2 * R;
  static constexpr int kVecsPerRow = kPitch / 4, kVecs = kInRows * kVecsPerRow;
  static constexpr int kLoads = (kVecs + kThreads - 1) / kThreads;  // vectors each thread loads
  /// Vectors of a thread's window: columns 4 tx + kPad - R .. 4 tx + 3 + kPad + R of a row.
  static constexpr int kWindow = (kCols - 1 + kPad + R) / 4 + 1;
  __host__ __device__ static constexpr int offset(int row, int col) { return row * kPitch + col; }
  /// Tile vector v of the load: row v / kVecsPerRow, columns 4 (v % kVecsPerRow) .. + 3.
  __host__ __device__ static constexpr int load_offset(int v) {
    return offset(v / kVecsPerRow, 4 * (v % kVecsPerRow));
  }
  /// Vector q of the window of thread (tx, ty) in its input row ir.
  __host__ __device__ static constexpr int window_offset(int tx, int ty, int ir, int q) {
    return offset(ty * kRows + ir, 4 * (tx + q));
  }
};
//! [coarsened map]

//! [coarsened compute]
/// The thread's 8 x 4 outputs from the tile in shared memory (corner (y0 - R, x0 - kPad)), whose
/// window vectors `Map::window_offset` finds (step 6 lays the same tile out as three boxes).
/// Input row ir of the thread's block feeds output rows ir - 2R .. ir (tap row ir - oy).
template <int R, class Map = CoarseShape<R>>
__device__ inline void coarsened_outputs(const float* tile, float (&acc)[CoarseShape<R>::kRows][CoarseShape<R>::kCols]) {
  using S = CoarseShape<R>;
  constexpr int K = 2 * R + 1;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int oy = 0; oy < S::kRows; ++oy)
#pragma unroll
    for (int c = 0; c < S::kCols; ++c) acc[oy][c] = 0.0f;
#pragma unroll
  for (int ir = 0; ir < S::kRows + 2 * R; ++ir) {
    float w[4 * S::kWindow];
#pragma unroll
    for (int q = 0; q < S::kWindow; ++q) {
      const float4 f = *reinterpret_cast<const float4*>(tile + Map::window_offset(tx, ty, ir, q));
      w[4 * q] = f.x, w[4 * q + 1] = f.y, w[4 * q + 2] = f.z, w[4 * q + 3] = f.w;
    }
#pragma unroll
    for (int oy = 0; oy < S::kRows; ++oy) {
      const int i = ir - oy;  // the tap row this input row is for output row oy
      if (i < 0 || i >= K) continue;
#pragma unroll
      for (int c = 0; c < S::kCols; ++c)
#pragma unroll
        for (int j = 0; j < K; ++j) acc[oy][c] = fmaf(c_filter[i * K + j], w[c + j + S::kPad - R], acc[oy][c]);
    }
  }
}

/// Stores the thread's 8 x 4 outputs of the tile at (y0, x0), those inside the image.
template <int R>
__device__ inline void store_coarsened(float* __restrict__ out, int height, int width, long long y0, long long x0,
                                       const float (&acc)[CoarseShape<R>::kRows][CoarseShape<R>::kCols], bool vec) {
  using S = CoarseShape<R>;
  const long long x = x0 + S::kCols * threadIdx.x;
#pragma unroll
  for (int oy = 0; oy < S::kRows; ++oy) {
    const long long y = y0 + threadIdx.y * S::kRows + oy;
    if (y >= height) break;
    float* o = out + y * width + x;
    if (vec && x < width) {
      *reinterpret_cast<float4*>(o) = make_float4(acc[oy][0], acc[oy][1], acc[oy][2], acc[oy][3]);
    } else if (!vec) {
#pragma unroll
      for (int c = 0; c < S::kCols; ++c)
        if (x + c < width) o[c] = acc[oy][c];
    }
  }
}
//! [coarsened compute]

//! [coarsened kernel]
template <int R>
__global__ void __launch_bounds__(CoarseShape<R>::kThreads)
    conv2d_coarsened_kernel(const float* __restrict__ in, float* __restrict__ out, int height, int width,
                            bool vec) {
  using S = CoarseShape<R>;
  __shared__ float4 tile4[S::kVecs];
  float* tile = reinterpret_cast<float*>(tile4);
  const int tiles_x = tiles_along(width, S::kTileW);
  const long long y0 = (long long)(blockIdx.x / tiles_x) * S::kTileH;
  const long long x0 = (long long)(blockIdx.x % tiles_x) * S::kTileW;
  const int tid = threadIdx.y * S::kThreadsX + threadIdx.x;

  // Load: every vector of the tile into registers first, then into shared memory.
  float4 v[S::kLoads];
#pragma unroll
  for (int l = 0; l < S::kLoads; ++l) {
    const int e = tid + l * S::kThreads;
    const long long y = y0 - R + e / S::kVecsPerRow, x = x0 - S::kPad + 4 * (e % S::kVecsPerRow);
    if (e >= S::kVecs) break;
    if (vec) {  // width % 4 == 0: a vector is wholly inside the image or wholly outside
      v[l] = y >= 0 && y < height && x >= 0 && x < width ? __ldg(reinterpret_cast<const float4*>(in + y * width + x))
                                                         : make_float4(0.f, 0.f, 0.f, 0.f);
    } else {
      v[l] = make_float4(fetch2d(in, height, width, y, x), fetch2d(in, height, width, y, x + 1),
                         fetch2d(in, height, width, y, x + 2), fetch2d(in, height, width, y, x + 3));
    }
  }
#pragma unroll
  for (int l = 0; l < S::kLoads; ++l) {
    const int e = tid + l * S::kThreads;
    if (e < S::kVecs) *reinterpret_cast<float4*>(tile + S::load_offset(e)) = v[l];
  }
  __syncthreads();

  float acc[S::kRows][S::kCols];
  coarsened_outputs<R>(tile, acc);
  store_coarsened<R>(out, height, width, y0, x0, acc, vec);
}
//! [coarsened kernel]

/// True when the image allows 16-byte accesses: width a multiple of 4, both pointers aligned.
inline bool conv2d_vector_ok(const float* in, const float* out, int width) {
  return width % 4 == 0 && (reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(out)) % 16 == 0;
}

/// The instance of the kernel for `radius` (every radius from 1 to kMaxRadius has one).
inline Plan<void (*)(const float*, float*, int, int, bool)> conv2d_coarsened_plan(int height, int width, int radius) {
  using Kernel = void (*)(const float*, float*, int, int, bool);
  constexpr Kernel kernels[kMaxRadius] = {conv2d_coarsened_kernel<1>, conv2d_coarsened_kernel<2>,
                                          conv2d_coarsened_kernel<3>, conv2d_coarsened_kernel<4>,
                                          conv2d_coarsened_kernel<5>, conv2d_coarsened_kernel<6>,
                                          conv2d_coarsened_kernel<7>, conv2d_coarsened_kernel<8>};
  static_assert(kMaxRadius == 8, "one instance per radius");
  const Kernel k = radius >= 1 && radius <= kMaxRadius ? kernels[radius - 1] : nullptr;
  using S = CoarseShape<1>;  // the output tile does not depend on the radius
  return grid_plan(k, tile_count(height, width, S::kTileH, S::kTileW), dim3(S::kThreadsX, S::kThreadsY));
}

/// out = in convolved with the (2r + 1)^2 filter at `filter`, zero padding; see stencil_common.cuh.
inline cudaError_t conv2d_coarsened(const float* in, float* out, int height, int width, const float* filter,
                                    int radius, cudaStream_t stream = nullptr) {
  if (Args a = check_conv2d_args(in, out, height, width, filter, radius); a != Args::launch) return args_error(a);
  return launch_with_filter(conv2d_coarsened_plan(height, width, radius), filter, radius, stream, in, out, height,
                            width, conv2d_vector_ok(in, out, width));
}

}  // namespace smem::stencil
