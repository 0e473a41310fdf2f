/// \file conv2d_01_naive.cuh
/// \brief Convolution step 1, naive: one thread per output, every tap read from global memory,
/// the filter too.
///
/// Thread (x, y) reads its (2r + 1)^2 input pixels and the (2r + 1)^2 taps and sums their
/// products. The reads are coalesced (neighbouring threads read neighbouring pixels of the same
/// row) and the L1 cache catches most of the overlap between neighbours, but each output still
/// issues two global loads per tap, and the filter's loads compete with the image's for the
/// same load pipeline. The kernel is written over a filter *source*; step 2 keeps this kernel
/// and changes only the source.
#pragma once
#include <cuda_runtime.h>

#include "stencil_common.cuh"

namespace smem::stencil {

/// Block of the direct steps: 32 x 8 threads, one output each.
inline constexpr int kDirectX = 32, kDirectY = 8;

/// The filter read from global memory.
struct GlobalFilter {
  const float* taps;
  __device__ float operator()(int i) const { return __ldg(taps + i); }
};

//! [direct kernel]
/// out = in convolved with the filter that `f` reads (f(i * (2r + 1) + j) is tap (i, j)).
template <class Filter>
__global__ void __launch_bounds__(kDirectX * kDirectY)
    conv2d_direct_kernel(const float* __restrict__ in, float* __restrict__ out, int height, int width, Filter f,
                         int radius) {
  const int tiles_x = tiles_along(width, kDirectX);
  const long long y = (long long)(blockIdx.x / tiles_x) * kDirectY + threadIdx.y;
  const long long x = (long long)(blockIdx.x % tiles_x) * kDirectX + threadIdx.x;
  if (y >= height || x >= width) return;
  const int k = 2 * radius + 1;
  float acc = 0.0f;
  for (int i = 0; i < k; ++i) {
    const long long yy = y + i - radius;
    if (yy < 0 || yy >= height) continue;  // zero padding: the row contributes nothing
    for (int j = 0; j < k; ++j) {
      const long long xx = x + j - radius;
      if (xx >= 0 && xx < width) acc = fmaf(f(i * k + j), __ldg(in + yy * width + xx), acc);
    }
  }
  out[y * width + x] = acc;
}
//! [direct kernel]

/// The plan of conv2d_direct_kernel with a given filter source; steps 1 and 2.
template <class Filter>
Plan<void (*)(const float*, float*, int, int, Filter, int)> conv2d_direct_plan(int height, int width) {
  return grid_plan(conv2d_direct_kernel<Filter>, tile_count(height, width, kDirectY, kDirectX),
                   dim3(kDirectX, kDirectY));
}

inline Plan<void (*)(const float*, float*, int, int, GlobalFilter, int)> conv2d_naive_plan(int height, int width,
                                                                                          int) {
  return conv2d_direct_plan<GlobalFilter>(height, width);
}

/// out = in convolved with the (2r + 1)^2 filter at `filter`, zero padding; see stencil_common.cuh.
inline cudaError_t conv2d_naive(const float* in, float* out, int height, int width, const float* filter, int radius,
                                cudaStream_t stream = nullptr) {
  if (Args a = check_conv2d_args(in, out, height, width, filter, radius); a != Args::launch) return args_error(a);
  return launch(conv2d_naive_plan(height, width, radius), stream, in, out, height, width, GlobalFilter{filter},
                radius);
}

}  // namespace smem::stencil
