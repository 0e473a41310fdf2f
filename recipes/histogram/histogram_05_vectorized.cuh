/// \file histogram_05_vectorized.cuh
/// \brief Step 5, vectorized and coarsened: 16-byte loads, four of them in flight per thread, on
/// step 4's per-lane copies with run aggregation.
///
/// What changes from step 4: the samples are read as 16-byte vectors (`uint4`: 16 `std::uint8_t`
/// or 4 `float` per load instruction) through for_each_sample_vectorized() (histogram_common.cuh):
/// each thread issues kUnroll loads before it counts any of their samples, so a warp keeps 2 KB
/// in flight and a resident grid (as many blocks as the GPU holds, each walking the input with a
/// grid-wide stride) covers the DRAM latency; the loads are marked streaming (`__ldcs`): no
/// sample is read twice. A pointer off a 16-byte boundary costs only a few
/// scalar loads at each end. For `std::uint8_t` a load instruction used to fetch one byte per
/// lane; now it fetches 16, so the instructions left per sample are the byte extraction, the run
/// compare and, when the run ends, one shared atomic into the lane's own copy (32 copies of 256
/// counters: one wavefront whatever the data, and on the skewed input a long run of the popular
/// bin is added at once). What remains is the shared atomic per run: uniform `std::uint8_t` data
/// still makes one atomic per sample.
///
/// Bins: as steps 2 to 4, at most kMaxSharedBins privatized counters (more: cudaErrorInvalidValue).
#pragma once
#include <cuda_runtime.h>

#include "histogram_common.cuh"

namespace smem::histogram {

//! [vectorized]
template <class T>
__global__ void __launch_bounds__(kThreads) vectorized_kernel(const T* __restrict__ samples, long long n,
                                                              Counter* __restrict__ counts, Even<T> rule, int copies) {
  count_runs_in_lane_copies<T>(rule, copies, counts,
                               [&](auto&& take) { for_each_sample_vectorized<kUnroll>(samples, n, take); });
}
//! [vectorized]

/// One copy of the privatized counters in kSharedBudget.
template <class T>
constexpr bool vectorized_fits(int bins) {
  return fits_shared<T>(bins);
}

template <class T>
Plan<void (*)(const T*, long long, Counter*, Even<T>, int)> vectorized_plan(long long n, int bins) {
  if (!vectorized_fits<T>(bins)) return {nullptr, dim3(), dim3(), 0};
  const int pbins = privatized_bins<T>(bins), words = copies_that_fit(pbins, 32) * pbins;
  return fill_plan<vectorized_kernel<T>>(n, unsigned(words * sizeof(Counter)),
                                         privatized_per_block(words) > 64LL * kThreads ? privatized_per_block(words)
                                                                                       : 64LL * kThreads);
}

/// counts = histogram of samples[0, n), 16-byte loads, runs added once into per-lane copies; see
/// histogram_common.cuh for the contract. `float` samples: at most kMaxSharedBins bins.
template <class T>
cudaError_t vectorized(const T* samples, long long n, Counter* counts, int bins, Level<T> lower, Level<T> upper,
                       cudaStream_t stream = nullptr) {
  const Even<T> rule = Even<T>::make(bins, lower, upper);
  if (!valid_args(samples, n, counts, rule.valid, vectorized_fits<T>(bins))) return cudaErrorInvalidValue;
  const int copies = copies_that_fit(privatized_bins<T>(bins), 32);
  return zero_and_launch(vectorized_plan<T>(n, bins), 1, counts, bins, n, stream, samples, n, counts, rule, copies);
}

}  // namespace smem::histogram
