/// \file reduction_09_cub_block.cuh
/// \brief Step 9, the single-pass kernel of step 8 with `cub::BlockReduce` as the block stage.
///
/// What changes from step 8: the hand-written warp-shuffle block reduction is replaced by
/// `cub::BlockReduce<T, kThreads, cub::BLOCK_REDUCE_WARP_REDUCTIONS>`, the library's version of
/// the same algorithm (each warp reduces by shuffles, then one warp reduces the warp results),
/// on the library's TempStorage, which step 8's kernel declares as it declares its own. The load
/// loop, the grid, and the last-block finish are step 8's. This shows how little of the kernel
/// the block stage is, and the code a reader must maintain is shorter.
#pragma once
#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>

#include <cstddef>

#include "reduction_08_single_pass.cuh"

namespace smem::reduction {

//! [cub block reduce]
/// The block stage of step 8 through CUB, on CUB's TempStorage, which the kernel declares; the
/// result is valid in thread 0.
template <int kThreads>
struct CubBlockReduce {
  template <class T>
  using BlockReduce = cub::BlockReduce<T, kThreads, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;
  template <class T>
  using TempStorage = typename BlockReduce<T>::TempStorage;
  template <class T, class Op>
  __device__ static T reduce(T v, Op op, TempStorage<T>& storage) {
    return BlockReduce<T>(storage).Reduce(v, op);
  }
};
//! [cub block reduce]

template <class T, class Op, int kThreads = kStrideThreads, int kUnroll = kStrideUnroll, Load kLoad = kStrideLoad,
          int kWaves = kStrideWaves>
Plan<SinglePassKernel<T, Op>> cub_block_plan(long long n) {
  return single_pass_plan<T, Op, kThreads, kUnroll, kLoad, kWaves, CubBlockReduce<kThreads>>(n);
}

/// *out = reduction of in[0, n) with `op`, in one kernel; see reduction_common.cuh for the contract.
template <int kThreads = kStrideThreads, int kUnroll = kStrideUnroll, Load kLoad = kStrideLoad,
          int kWaves = kStrideWaves, class T, class Op>
cudaError_t cub_block(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                      T identity, cudaStream_t stream = nullptr) {
  const SinglePassLayout w = single_pass_layout<T, kThreads>(n);
  cudaError_t err;
  if (handle_args(d_temp, temp_bytes, w.bytes, in, n, out, err)) return err;
  return single_pass_launch(cub_block_plan<T, Op, kThreads, kUnroll, kLoad, kWaves>(n), w, d_temp, in, n, out, op,
                            identity, stream);
}

}  // namespace smem::reduction
