/// \file histogram_01_global_atomics.cuh
/// \brief Step 1, global atomics: every sample adds one to its bin in global memory.
///
/// Each thread walks the samples with a grid-wide stride, computes the bin of each and
/// `atomicAdd`s one to `counts[bin]` in global memory; the launcher zeroes `counts` first, on the
/// stream (histogram_common.cuh, zero_and_launch()). It is the textbook starting point and it is
/// correct for any number of bins, but every sample is one atomic that travels to the L2 cache,
/// and the atomics on one address are serialized there: with few bins, and worst of all with one
/// bin that most samples fall in, the L2's atomic units are the bottleneck, not the DRAM. It is
/// also what the later steps fall back to when the bins do not fit shared memory, so step 6 is
/// measured against it.
#pragma once
#include <cuda_runtime.h>

#include "histogram_common.cuh"

namespace smem::histogram {

//! [global atomics]
template <class T>
__global__ void __launch_bounds__(kThreads)
    global_atomics_kernel(const T* __restrict__ samples, long long n, Counter* __restrict__ counts, Even<T> rule) {
  const long long stride = (long long)gridDim.x * kThreads;  // 64-bit: n may exceed 2^31
  for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < n; i += stride) {
    const int b = rule.bin(samples[i]);
    if (b >= 0) atomicAdd(counts + b, 1u);
  }
}
//! [global atomics]

/// Any number of bins.
template <class T>
constexpr bool global_atomics_fits(int bins) {
  return bins >= 1;
}

template <class T>
Plan<void (*)(const T*, long long, Counter*, Even<T>)> global_atomics_plan(long long n, int bins) {
  if (!global_atomics_fits<T>(bins)) return {nullptr, dim3(), dim3(), 0};
  return fill_plan<global_atomics_kernel<T>>(n, 0, 16LL * kThreads);
}

/// counts = histogram of samples[0, n) in `bins` equal bins over [lower, upper); see
/// histogram_common.cuh for the contract. Any number of bins.
template <class T>
cudaError_t global_atomics(const T* samples, long long n, Counter* counts, int bins, Level<T> lower, Level<T> upper,
                           cudaStream_t stream = nullptr) {
  const Even<T> rule = Even<T>::make(bins, lower, upper);
  if (!valid_args(samples, n, counts, rule.valid, global_atomics_fits<T>(bins))) return cudaErrorInvalidValue;
  return zero_and_launch(global_atomics_plan<T>(n, bins), 1, counts, bins, n, stream, samples, n, counts, rule);
}

}  // namespace smem::histogram
