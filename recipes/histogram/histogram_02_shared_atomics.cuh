/// \file histogram_02_shared_atomics.cuh
/// \brief Step 2, a privatized histogram per block in shared memory, merged with global atomics;
/// and the bin-edge variant (HistogramRange) on the same kernel.
///
/// What changes from step 1: each block first counts its share of the samples in its own copy of
/// the histogram, in shared memory (zeroed, then one barrier), with shared-memory atomics; after a
/// second barrier its threads add the block's counters to the output with one global atomic per
/// nonzero counter. A sample's atomic now stays in the SM (a few cycles instead of a round trip to
/// the L2), and the L2 sees one atomic per bin per block instead of one per sample, so blocks no
/// longer queue behind each other on a popular bin. For `std::uint8_t` the block counts the 256
/// byte values and maps each to its bin only in the merge (the rules' privatized()), so the loop
/// does no arithmetic at all.
///
/// What it costs: the zeroing and the merge, once per block (hence a grid that fills the GPU once
/// and walks the input grid-stride, histogram_common.cuh), and shared memory: one counter per
/// privatized bin, at most kMaxSharedBins (16384 `float` bins; more: cudaErrorInvalidValue, and
/// step 1 or step 6 are the ones to use). What it does not fix: the lanes of a warp that hit one
/// counter, or counters in one bank, are still served one after the other.
///
/// The kernel takes the rule as a parameter, so the same kernel serves `shared_atomics_range`,
/// the bin-edge variant: HistogramRange's binary search over `levels` (Range, below).
#pragma once
#include <cuda_runtime.h>

#include "histogram_common.cuh"

namespace smem::histogram {

//! [shared atomics]
template <class T, class Rule>
__global__ void __launch_bounds__(kThreads)
    shared_atomics_kernel(const T* __restrict__ samples, long long n, Counter* __restrict__ counts, Rule rule) {
  extern __shared__ Counter hist[];  // rule.privatized_bins() counters
  const int pbins = rule.privatized_bins();
  zero_shared(hist, pbins);
  __syncthreads();  // the block's histogram is zero before any thread adds to it
  const long long stride = (long long)gridDim.x * kThreads;
  for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < n; i += stride) {
    const int b = rule.privatized(samples[i]);
    if (b >= 0) atomicAdd(&hist[b], 1u);
  }
  __syncthreads();  // every sample of the block is counted
  for (int i = threadIdx.x; i < pbins; i += kThreads) add_to_output(rule, i, hist[i], counts);
}
//! [shared atomics]

/// One copy of the privatized counters in kSharedBudget.
template <class T>
constexpr bool shared_atomics_fits(int bins) {
  return fits_shared<T>(bins);
}

template <class T, class Rule = Even<T>>
Plan<void (*)(const T*, long long, Counter*, Rule)> shared_atomics_plan(long long n, int bins) {
  if (!shared_atomics_fits<T>(bins)) return {nullptr, dim3(), dim3(), 0};
  const int pbins = privatized_bins<T>(bins);
  return fill_plan<shared_atomics_kernel<T, Rule>>(n, unsigned(pbins * sizeof(Counter)), privatized_per_block(pbins));
}

/// counts = histogram of samples[0, n) in `bins` equal bins over [lower, upper); see
/// histogram_common.cuh for the contract. `float` samples: at most kMaxSharedBins bins.
template <class T>
cudaError_t shared_atomics(const T* samples, long long n, Counter* counts, int bins, Level<T> lower, Level<T> upper,
                           cudaStream_t stream = nullptr) {
  const Even<T> rule = Even<T>::make(bins, lower, upper);
  if (!valid_args(samples, n, counts, rule.valid, shared_atomics_fits<T>(bins))) return cudaErrorInvalidValue;
  return zero_and_launch(shared_atomics_plan<T>(n, bins), 1, counts, bins, n, stream, samples, n, counts, rule);
}

//! [range rule]
/// The bins of HistogramRange: bin b is `[levels[b], levels[b + 1])`, `levels` ascending in
/// device memory. The bin of x is CUB's `UpperBound(levels, bins + 1, x) - 1` (the binary search
/// of cub/device/dispatch/dispatch_histogram.cuh, SearchTransform), dropped when it is -1 or
/// `bins` (NaN compares false everywhere and lands on `bins`). Privatized like Even: byte values
/// for `std::uint8_t` (searched once per counter, in the merge), bins for `float`.
template <class T>
struct Range {
  const Level<T>* levels;
  int bins;
  bool valid;

  static Range make(int bins, const Level<T>* levels) { return {levels, bins, bins >= 1 && levels != nullptr}; }
  __device__ int bin(Level<T> x) const {
    unsigned lo = 0, count = unsigned(bins) + 1;  // CUB's UpperBound; unsigned: bins + 1 may be 2^31
    while (count > 0) {
      const unsigned half = count / 2;
      if (x < __ldg(levels + lo + half)) {
        count = half;
      } else {
        lo += half + 1;
        count -= half + 1;
      }
    }
    return lo >= 1 && lo <= unsigned(bins) ? int(lo - 1) : -1;
  }
  __host__ __device__ int privatized_bins() const { return sizeof(T) == 1 ? 256 : bins; }
  __device__ int privatized(T x) const { return sizeof(T) == 1 ? int(x) : bin(Level<T>(x)); }
  __device__ int output(int i) const { return sizeof(T) == 1 ? bin(Level<T>(i)) : i; }
};
//! [range rule]

//! [range launcher]
/// counts = histogram of samples[0, n) in the `bins` bins `[levels[b], levels[b + 1])`, like
/// `cub::DeviceHistogram::HistogramRange`: `levels` holds bins + 1 ascending levels in device
/// memory (`int` for `std::uint8_t` samples). The contract is the one of histogram_common.cuh,
/// with a null `levels` invalid in place of the checks of lower and upper.
template <class T>
cudaError_t shared_atomics_range(const T* samples, long long n, Counter* counts, int bins, const Level<T>* levels,
                                 cudaStream_t stream = nullptr) {
  const Range<T> rule = Range<T>::make(bins, levels);
  if (!valid_args(samples, n, counts, rule.valid, shared_atomics_fits<T>(bins)) ||
      reinterpret_cast<std::uintptr_t>(levels) % alignof(Level<T>) != 0)
    return cudaErrorInvalidValue;
  return zero_and_launch(shared_atomics_plan<T, Range<T>>(n, bins), 1, counts, bins, n, stream, samples, n, counts, rule);
}
//! [range launcher]

}  // namespace smem::histogram
