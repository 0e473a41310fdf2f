/// \file conv2d_04_cached_halo.cuh
/// \brief Convolution step 4, an output-sized tile: shared memory holds only the pixels of the
/// block's own outputs; the halo is read through the cache.
///
/// What changes from step 3: the shared tile shrinks to T x T, the size of the output tile, and
/// every thread loads exactly one pixel per output it computes: the load loop has no remainder
/// and no halo arithmetic, and the block's shared memory no longer depends on r. A tap that falls
/// inside the tile is read from shared memory; a tap in the halo is read from global memory with
/// `__ldg`, and is mostly served by L1, since the neighbouring blocks have loaded those pixels
/// into their own tiles moments before, through the same caches. The cost moves into the compute
/// loop: each tap now tests whether it lies inside the tile, and the halo reads, a fraction
/// 1 - T^2 / (T + 2r)^2 of the taps near the tile's edge, take the longer path through L1.
/// Whether that wins over step 3 depends on r and on how well L1 holds the halo.
#pragma once
#include <cuda_runtime.h>

#include "stencil_common.cuh"

namespace smem::stencil {

//! [output tile map]
/// The output-sized tile: kTile x kTile floats, row-major, pixel (row, col) = image pixel
/// (y0 + row, x0 + col).
__host__ __device__ constexpr int output_tile_offset(int row, int col) { return row * kTile + col; }
//! [output tile map]

//! [cached halo kernel]
static __global__ void __launch_bounds__(kTile * kTileRows)
    conv2d_cached_halo_kernel(const float* __restrict__ in, float* __restrict__ out, int height, int width,
                              int radius) {
  __shared__ float tile[kTile * kTile];
  const int tiles_x = tiles_along(width, kTile);
  const long long y0 = (long long)(blockIdx.x / tiles_x) * kTile, x0 = (long long)(blockIdx.x % tiles_x) * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y, k = 2 * radius + 1;

  for (int r = ty; r < kTile; r += kTileRows)
    tile[output_tile_offset(r, tx)] = fetch2d(in, height, width, y0 + r, x0 + tx);
  __syncthreads();

  for (int r = ty; r < kTile; r += kTileRows) {
    float acc = 0.0f;
    for (int i = 0; i < k; ++i) {
      const int tr = r + i - radius;  // tile row of the tap (outside [0, kTile): the halo)
      for (int j = 0; j < k; ++j) {
        const int tc = tx + j - radius;
        const float v = tr >= 0 && tr < kTile && tc >= 0 && tc < kTile ? tile[output_tile_offset(tr, tc)]
                                                                       : fetch2d(in, height, width, y0 + tr, x0 + tc);
        acc = fmaf(c_filter[i * k + j], v, acc);
      }
    }
    if (y0 + r < height && x0 + tx < width) out[(y0 + r) * width + x0 + tx] = acc;
  }
}
//! [cached halo kernel]

inline Plan<void (*)(const float*, float*, int, int, int)> conv2d_cached_halo_plan(int height, int width, int) {
  return grid_plan(conv2d_cached_halo_kernel, tile_count(height, width, kTile, kTile), dim3(kTile, kTileRows));
}

/// out = in convolved with the (2r + 1)^2 filter at `filter`, zero padding; see stencil_common.cuh.
inline cudaError_t conv2d_cached_halo(const float* in, float* out, int height, int width, const float* filter,
                                      int radius, cudaStream_t stream = nullptr) {
  if (Args a = check_conv2d_args(in, out, height, width, filter, radius); a != Args::launch) return args_error(a);
  return launch_with_filter(conv2d_cached_halo_plan(height, width, radius), filter, radius, stream, in, out, height,
                            width, radius);
}

}  // namespace smem::stencil
