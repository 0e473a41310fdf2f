/// \file conv2d_03_halo_tile.cuh
/// \brief Convolution step 3, an input tile with its halo in shared memory: the block loads
/// (T + 2r)^2 pixels once and computes T^2 outputs from them.
///
/// What changes from step 2: in step 2 each pixel is loaded by up to (2r + 1)^2 threads, and
/// only the L1 cache stands between those loads and L2. Here a block of 32 x 8 threads owns a
/// T x T = 32 x 32 output tile; it first copies the input tile it needs, the output tile plus a
/// halo of r pixels on every side (zeros outside the image), into shared memory, with each pixel
/// read from global memory once per block, then computes every output from shared memory. The
/// global traffic per output falls from (2r + 1)^2 loads to (T + 2r)^2 / T^2 of one, the halo's
/// share (1.27 for r = 2). The price: (2r + 1)^2 shared loads per output, each a full warp
/// request, and a barrier between the load and the compute.
///
/// Bank conflicts: in the load, a warp writes consecutive words; in the compute, lane tx reads
/// word (row, tx + j): 32 consecutive words. Both are conflict-free (see the bank model).
#pragma once
#include <cuda_runtime.h>

#include "stencil_common.cuh"

namespace smem::stencil {

//! [halo map]
/// The input tile of step 3: (kTile + 2r)^2 floats, row-major; pixel (row, col) of the tile is
/// image pixel (y0 - r + row, x0 - r + col).
__host__ __device__ constexpr int halo_pitch(int radius) { return kTile + 2 * radius; }
__host__ __device__ constexpr int halo_offset(int radius, int row, int col) {
  return row * halo_pitch(radius) + col;
}
//! [halo map]

//! [halo tile kernel]
static __global__ void __launch_bounds__(kTile * kTileRows)
    conv2d_halo_tile_kernel(const float* __restrict__ in, float* __restrict__ out, int height, int width,
                            int radius) {
  extern __shared__ float tile[];
  const int tiles_x = tiles_along(width, kTile);
  const long long y0 = (long long)(blockIdx.x / tiles_x) * kTile, x0 = (long long)(blockIdx.x % tiles_x) * kTile;
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTile + tx;
  const int pitch = halo_pitch(radius), k = 2 * radius + 1;

  // Load the tile and its halo, consecutive threads on consecutive pixels of a row.
  for (int e = tid; e < pitch * pitch; e += kTile * kTileRows) {
    const int row = e / pitch, col = e % pitch;
    tile[halo_offset(radius, row, col)] = fetch2d(in, height, width, y0 - radius + row, x0 - radius + col);
  }
  __syncthreads();

  // Each thread: column tx of rows ty, ty + 8, ty + 16, ty + 24 of the output tile.
  for (int q = 0; q < kTile / kTileRows; ++q) {
    const int r = ty + q * kTileRows;
    float acc = 0.0f;
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j) acc = fmaf(c_filter[i * k + j], tile[halo_offset(radius, r + i, tx + j)], acc);
    if (y0 + r < height && x0 + tx < width) out[(y0 + r) * width + x0 + tx] = acc;
  }
}
//! [halo tile kernel]

inline Plan<void (*)(const float*, float*, int, int, int)> conv2d_halo_tile_plan(int height, int width, int radius) {
  return grid_plan(conv2d_halo_tile_kernel, tile_count(height, width, kTile, kTile), dim3(kTile, kTileRows),
                   unsigned(halo_pitch(radius) * halo_pitch(radius) * sizeof(float)));
}

/// out = in convolved with the (2r + 1)^2 filter at `filter`, zero padding; see stencil_common.cuh.
inline cudaError_t conv2d_halo_tile(const float* in, float* out, int height, int width, const float* filter,
                                    int radius, cudaStream_t stream = nullptr) {
  if (Args a = check_conv2d_args(in, out, height, width, filter, radius); a != Args::launch) return args_error(a);
  return launch_with_filter(conv2d_halo_tile_plan(height, width, radius), filter, radius, stream, in, out, height,
                            width, radius);
}

}  // namespace smem::stencil
