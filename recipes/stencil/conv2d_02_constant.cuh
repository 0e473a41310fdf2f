/// \file conv2d_02_constant.cuh
/// \brief Convolution step 2, the filter in constant memory: step 1's kernel, reading its taps
/// from `c_filter`.
///
/// What changes from step 1: the taps come from the constant cache instead of global memory.
/// All 32 threads of a warp read the same tap at the same moment, which is exactly what the
/// constant cache serves best: one broadcast per warp, without occupying the global load
/// pipeline. Each output now issues one global load per tap instead of two. The launcher copies
/// the filter into `c_filter` on the stream first (stencil_common.cuh); the kernel itself is
/// step 1's, with another filter source.
#pragma once
#include <cuda_runtime.h>

#include "conv2d_01_naive.cuh"

namespace smem::stencil {

//! [constant source]
/// The filter read from constant memory.
struct ConstantFilter {
  __device__ float operator()(int i) const { return c_filter[i]; }
};
//! [constant source]

inline Plan<void (*)(const float*, float*, int, int, ConstantFilter, int)> conv2d_constant_plan(int height, int width,
                                                                                               int) {
  return conv2d_direct_plan<ConstantFilter>(height, width);
}

/// out = in convolved with the (2r + 1)^2 filter at `filter`, zero padding; see stencil_common.cuh.
inline cudaError_t conv2d_constant(const float* in, float* out, int height, int width, const float* filter,
                                   int radius, cudaStream_t stream = nullptr) {
  if (Args a = check_conv2d_args(in, out, height, width, filter, radius); a != Args::launch) return args_error(a);
  return launch_with_filter(conv2d_constant_plan(height, width, radius), filter, radius, stream, in, out, height, width,
                            ConstantFilter{}, radius);
}

}  // namespace smem::stencil
