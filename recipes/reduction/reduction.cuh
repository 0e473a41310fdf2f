/// \file reduction.cuh
/// \brief The reduction family: every step, one Variant enum and a dispatcher, which the tests
/// and benchmarks iterate over. Adding a step is one header and one enum entry here.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "reduction_01_interleaved_divergent.cuh"
#include "reduction_02_interleaved_strided.cuh"
#include "reduction_03_sequential.cuh"
#include "reduction_04_first_add.cuh"
#include "reduction_05_warp_shuffle.cuh"
#include "reduction_06_unrolled.cuh"
#include "reduction_07_grid_stride.cuh"
#include "reduction_08_single_pass.cuh"
#include "reduction_09_cub_block.cuh"

namespace smem::reduction {

/// Every step of the ladder, in order.
enum class Variant {
  interleaved_divergent,
  interleaved_strided,
  sequential,
  first_add,
  warp_shuffle,
  unrolled,
  grid_stride,
  single_pass,
  cub_block
};

inline constexpr Variant kAllVariants[] = {Variant::interleaved_divergent, Variant::interleaved_strided,
                                           Variant::sequential,            Variant::first_add,
                                           Variant::warp_shuffle,          Variant::unrolled,
                                           Variant::grid_stride,           Variant::single_pass,
                                           Variant::cub_block};

constexpr const char* name(Variant v) {
  switch (v) {
    case Variant::interleaved_divergent: return "interleaved_divergent";
    case Variant::interleaved_strided: return "interleaved_strided";
    case Variant::sequential: return "sequential";
    case Variant::first_add: return "first_add";
    case Variant::warp_shuffle: return "warp_shuffle";
    case Variant::unrolled: return "unrolled";
    case Variant::grid_stride: return "grid_stride";
    case Variant::single_pass: return "single_pass";
    case Variant::cub_block: return "cub_block";
  }
  return "?";
}

/// Runs one variant: the size query when d_temp is null, else *out = reduction of in[0, n).
template <class T, class Op>
cudaError_t run(Variant v, void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                T identity, cudaStream_t stream = nullptr) {
  switch (v) {
    case Variant::interleaved_divergent:
      return reduce_interleaved_divergent(d_temp, temp_bytes, in, n, out, op, identity, stream);
    case Variant::interleaved_strided:
      return reduce_interleaved_strided(d_temp, temp_bytes, in, n, out, op, identity, stream);
    case Variant::sequential: return reduce_sequential(d_temp, temp_bytes, in, n, out, op, identity, stream);
    case Variant::first_add: return reduce_first_add(d_temp, temp_bytes, in, n, out, op, identity, stream);
    case Variant::warp_shuffle: return reduce_warp_shuffle(d_temp, temp_bytes, in, n, out, op, identity, stream);
    case Variant::unrolled: return reduce_unrolled(d_temp, temp_bytes, in, n, out, op, identity, stream);
    case Variant::grid_stride: return reduce_grid_stride(d_temp, temp_bytes, in, n, out, op, identity, stream);
    case Variant::single_pass: return reduce_single_pass(d_temp, temp_bytes, in, n, out, op, identity, stream);
    case Variant::cub_block: return reduce_cub_block(d_temp, temp_bytes, in, n, out, op, identity, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace smem::reduction
