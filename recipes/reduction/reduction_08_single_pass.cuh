/// \file reduction_08_single_pass.cuh
/// \brief Step 8, single pass: the last block to finish reduces the partials.
///
/// What changes from step 7: one kernel instead of two. Every block reduces its share exactly as
/// in step 7 and stores its partial; then thread 0 makes the store visible device-wide
/// (`__threadfence()`) and takes a ticket from a counter in the workspace (`atomicAdd` on an
/// unsigned int: the only atomic, and not on a value). The block that draws the last ticket knows
/// that every partial is written; it reads them (bypassing L1) and reduces them in index order,
/// whichever block it is, so the result is the same bits every run: no floating-point atomics.
/// It also saves the second launch and the gap between the two kernels, which matters for
/// small inputs. The counter is zeroed by a `cudaMemsetAsync` on the same stream before the
/// kernel (the workspace comes uninitialized from the caller); a single-block grid needs none.
/// The counter is a template parameter of the kernel, so that step 10 can swap in one that
/// needs no memset.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "reduction_common.cuh"

namespace smem::reduction {

/// Load through L2 only (the partials were written by other SMs in this launch).
template <class T>
__device__ T load_cg(const T* p) {
  if constexpr (sizeof(T) == 4 || sizeof(T) == 8) return __ldcg(p);
  else return *static_cast<const volatile T*>(p);
}

//! [zeroed counter]
/// The ticket counter of step 8: an unsigned int that the launcher zeroes before every launch
/// (it counts at most kMaxGridBlocks tickets).
struct ZeroedCounter {
  unsigned* word;
  /// This block's ticket, 0 .. gridDim.x - 1.
  __device__ unsigned take() const { return atomicAdd(word, 1u); }
  /// Run by the block with the last ticket: nothing to do, the next launch zeroes the word.
  __device__ void leave() const {}
  cudaError_t prepare(cudaStream_t stream) const { return cudaMemsetAsync(word, 0, sizeof(unsigned), stream); }
};
//! [zeroed counter]

//! [single pass]
template <class T, class Op, int kThreads, int kUnroll, Load kLoad, class BlockReduce, class Counter>
__global__ void __launch_bounds__(kThreads, kMinBlocks<kThreads, kUnroll>)
    single_pass_kernel(const T* __restrict__ in, long long n, T* out, T* partials, Counter counter, Op op,
                       T identity) {
  __shared__ typename BlockReduce::template TempStorage<T> storage;  // the block stage's, used twice
  T v = thread_reduce<kThreads, kUnroll, kLoad>(in, n, op, identity);
  v = BlockReduce::reduce(v, op, storage);
  if (counter.word == nullptr) {  // a single block: no partials
    if (threadIdx.x == 0) *out = v;
    return;
  }
  __shared__ bool last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    __threadfence();  // the partial is visible to every block before the ticket is taken
    last = counter.take() == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  v = identity;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += kThreads) v = op(v, load_cg(partials + b));
  v = BlockReduce::reduce(v, op, storage);  // same order whichever block is last: deterministic
  if (threadIdx.x == 0) {
    *out = v;
    counter.leave();
  }
}
//! [single pass]

/// Workspace of steps 8 to 10: one partial per block, then the counter (at most 8 bytes). One layout, used by the
/// size query and by the launcher.
struct SinglePassLayout {
  std::size_t counter;  ///< offset of the counter
  std::size_t bytes;    ///< total
};
template <class T, int kThreads>
constexpr SinglePassLayout single_pass_layout(long long n) {
  const std::size_t partials = align_up(std::size_t(stride_tiles<T, kThreads>(n)) * sizeof(T));
  return {partials, partials + kTempAlign};
}

/// The kernel of steps 8 to 10: (in, n, out, partials, counter, op, identity).
template <class T, class Op, class Counter = ZeroedCounter>
using SinglePassKernel = void (*)(const T*, long long, T*, T*, Counter, Op, T);

template <class T, class Op, int kThreads = kStrideThreads, int kUnroll = kStrideUnroll, Load kLoad = kStrideLoad,
          int kWaves = kStrideWaves, class BlockReduce = ShuffleBlockReduce<kThreads>, class Counter = ZeroedCounter>
Plan<SinglePassKernel<T, Op, Counter>> single_pass_plan(long long n) {
  return stride_plan<T, kThreads, kWaves, single_pass_kernel<T, Op, kThreads, kUnroll, kLoad, BlockReduce, Counter>>(
      n);
}

/// The launcher of steps 8 to 10, given the plan (and so the block reduction and the counter).
template <class T, class Op, class Counter>
cudaError_t single_pass_launch(const Plan<SinglePassKernel<T, Op, Counter>>& p, SinglePassLayout w, void* d_temp,
                               const T* in, long long n, T* out, Op op, T identity, cudaStream_t stream) {
  T* partials = static_cast<T*>(d_temp);
  Counter counter{nullptr};
  if (p.grid.x > 1) {
    counter.word = reinterpret_cast<decltype(counter.word)>(static_cast<char*>(d_temp) + w.counter);
    if (cudaError_t err = counter.prepare(stream); err != cudaSuccess) return err;
  }
  p.kernel<<<p.grid, p.block, p.smem, stream>>>(in, n, out, partials, counter, op, identity);
  return cudaGetLastError();
}

/// *out = reduction of in[0, n) with `op`, in one kernel; see reduction_common.cuh for the contract.
template <int kThreads = kStrideThreads, int kUnroll = kStrideUnroll, Load kLoad = kStrideLoad,
          int kWaves = kStrideWaves, class T, class Op>
cudaError_t single_pass(void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                        T identity, cudaStream_t stream = nullptr) {
  const SinglePassLayout w = single_pass_layout<T, kThreads>(n);
  cudaError_t err;
  if (handle_args(d_temp, temp_bytes, w.bytes, in, n, out, err)) return err;
  return single_pass_launch(single_pass_plan<T, Op, kThreads, kUnroll, kLoad, kWaves>(n), w, d_temp, in, n, out,
                            op, identity, stream);
}

}  // namespace smem::reduction
