/// \file histogram_04_runs.cuh
/// \brief Step 4, run aggregation: a thread reads chunks of consecutive samples and adds each run
/// of samples with the same counter once.
///
/// What changes from step 3 (`per_lane` copies): a thread no longer takes one sample per grid
/// stride but a chunk of kChunk consecutive samples (16 bytes: 16 `std::uint8_t` or 4 `float`),
/// chunk after chunk with a grid-wide stride, and it keeps a Run (histogram_common.cuh): the
/// counter of its last samples and their number. It issues an atomic only when the counter
/// changes, adding the whole run at once. Data whose neighbours fall in the same bin (images,
/// sorted or slowly varying signals, and the skewed input where 90% of the samples are in one bin)
/// then needs a fraction of the atomics; fewer lanes take part in each request, so fewer of them
/// meet on one counter or one bank.
///
/// When it does not help: on uniform data runs are one sample long and each sample costs a compare
/// more. And a warp issues an atomic whenever any of its lanes ends a run, so the instructions
/// issued shrink only when whole warps see long runs; what shrinks otherwise is the work of each
/// atomic. With 32 per-lane copies (`std::uint8_t`) the atomics were already one wavefront each:
/// step 4 then only pays; with fewer copies (more bins) it cuts the lanes that share a counter.
/// The loads are still one sample per load instruction: step 5 fixes that.
#pragma once
#include <cuda_runtime.h>

#include "histogram_common.cuh"

namespace smem::histogram {

/// Samples per chunk: 16 bytes of them.
template <class T>
inline constexpr int kChunk = 16 / int(sizeof(T));

//! [runs]
template <class T>
__global__ void __launch_bounds__(kThreads)
    runs_kernel(const T* __restrict__ samples, long long n, Counter* __restrict__ counts, Even<T> rule, int copies) {
  extern __shared__ Counter hist[];  // copies x privatized bins, step 3's per-lane layout
  count_in_lane_copies(hist, rule, copies, counts, [&](auto& add) {
    Run run;
    const long long chunks = (n - 1) / kChunk<T> + 1, stride = (long long)gridDim.x * kThreads;  // n >= 1 here
    for (long long c = (long long)blockIdx.x * kThreads + threadIdx.x; c < chunks; c += stride) {
#pragma unroll
      for (int k = 0; k < kChunk<T>; ++k)
        if (c * kChunk<T> + k < n) run.take(rule.privatized(samples[c * kChunk<T> + k]), add);
    }
    run.flush(add);
  });
}
//! [runs]

/// One copy of the privatized counters in kSharedBudget.
template <class T>
constexpr bool runs_fits(int bins) {
  return fits_shared<T>(bins);
}

template <class T>
Plan<void (*)(const T*, long long, Counter*, Even<T>, int)> runs_plan(long long n, int bins) {
  if (!runs_fits<T>(bins)) return {nullptr, dim3(), dim3(), 0};
  const int pbins = privatized_bins<T>(bins), words = copies_that_fit(pbins, 32) * pbins;
  return fill_plan<runs_kernel<T>>(n, unsigned(words * sizeof(Counter)), privatized_per_block(words));
}

/// counts = histogram of samples[0, n), runs of equal counters added once; see
/// histogram_common.cuh for the contract. `float` samples: at most kMaxSharedBins bins.
template <class T>
cudaError_t runs(const T* samples, long long n, Counter* counts, int bins, Level<T> lower, Level<T> upper,
                 cudaStream_t stream = nullptr) {
  const Even<T> rule = Even<T>::make(bins, lower, upper);
  if (!valid_args(samples, n, counts, rule.valid, runs_fits<T>(bins))) return cudaErrorInvalidValue;
  const int copies = copies_that_fit(privatized_bins<T>(bins), 32);
  return zero_and_launch(runs_plan<T>(n, bins), 1, counts, bins, n, stream, samples, n, counts, rule, copies);
}

}  // namespace smem::histogram
