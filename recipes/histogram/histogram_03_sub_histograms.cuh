/// \file histogram_03_sub_histograms.cuh
/// \brief Step 3, several sub-histograms per block: the block's atomics spread over copies of the
/// histogram, which the merge adds up. Two layouts, two variants: one copy per warp (`per_warp`),
/// and copies interleaved by lane (`per_lane`).
///
/// What changes from step 2: a block keeps `copies` copies of its histogram and each thread adds
/// to one of them. An atomic costs a shared-memory wavefront per distinct word in its busiest
/// bank, and lanes of one request that name the same counter are served one after the other;
/// with one copy both happen whenever lanes' samples fall in nearby or equal bins.
/// - `per_warp`: warp w adds to copy `w % copies`, a whole histogram (warp_copy_offset()). Warps
///   no longer meet on a counter, which is what older GPUs paid for; but a warp's 32 lanes still
///   share one copy, so its bank conflicts, and its lanes on one bin, are those of step 2.
/// - `per_lane`: lane l adds to copy `l % copies`, and the copies of a bin are neighbours
///   (lane_copy_offset(): word `bin * copies + copy`). With 32 copies a lane's word is always in
///   its own bank: any request is one wavefront, whatever the data, and lanes that hit the same
///   bin hit different words. With fewer copies (more bins), `32 / copies` lanes share a copy.
///
/// `copies` is the largest power of two (up to the warps of a block, or up to 32) whose copies
/// fit in kSharedBudget (64 KB): 32 per-lane copies of 256 counters (the `std::uint8_t` case),
/// 16 of 1024. The merge reads every copy of a bin, in the rotated order of lane_merge_copy()
/// so that a warp's 32 reads sit in 32 banks. The price is the zeroing and the merge, `copies`
/// times larger, and the occupancy the shared memory costs.
#pragma once
#include <cuda_runtime.h>

#include "histogram_common.cuh"

namespace smem::histogram {

/// Step 3's two layouts of the copies.
enum class Copies { per_warp, per_lane };

/// How many copies a variant keeps for `pbins` privatized bins.
constexpr int sub_histogram_copies(Copies layout, int pbins) {
  return copies_that_fit(pbins, layout == Copies::per_warp ? kThreads / 32 : 32);
}

//! [sub histograms]
/// The per-warp copies: copy c (used by warps c, c + copies, ...) is a whole histogram of
/// `pbins` counters, and the counter of bin b is word `c * pbins + b`.
__host__ __device__ constexpr int warp_copy_offset(int bin, int copy, int pbins) { return copy * pbins + bin; }

template <Copies kLayout, class T>
__global__ void __launch_bounds__(kThreads) sub_histograms_kernel(const T* __restrict__ samples, long long n,
                                                                  Counter* __restrict__ counts, Even<T> rule,
                                                                  int copies) {
  extern __shared__ Counter hist[];  // copies x privatized bins
  const int pbins = rule.privatized_bins();
  zero_shared(hist, copies * pbins);
  __syncthreads();
  const int copy = (kLayout == Copies::per_warp ? threadIdx.x / 32 : threadIdx.x % 32) % copies;
  const long long stride = (long long)gridDim.x * kThreads;
  for (long long i = (long long)blockIdx.x * kThreads + threadIdx.x; i < n; i += stride) {
    const int b = rule.privatized(samples[i]);
    if (b >= 0)
      atomicAdd(&hist[kLayout == Copies::per_warp ? warp_copy_offset(b, copy, pbins) : lane_copy_offset(b, copy, copies)],
                1u);
  }
  __syncthreads();
  if constexpr (kLayout == Copies::per_lane) {
    merge_lane_copies(hist, pbins, copies, rule, counts);
  } else {
    for (int i = threadIdx.x; i < pbins; i += kThreads) {  // 32 consecutive counters per warp and copy
      Counter c = 0;
      for (int w = 0; w < copies; ++w) c += hist[warp_copy_offset(i, w, pbins)];
      add_to_output(rule, i, c, counts);
    }
  }
}
//! [sub histograms]

/// One copy of the privatized counters in kSharedBudget (then at least one copy fits).
template <class T>
constexpr bool sub_histograms_fits(int bins) {
  return fits_shared<T>(bins);
}
template <class T>
constexpr bool per_warp_fits(int bins) {
  return sub_histograms_fits<T>(bins);
}
template <class T>
constexpr bool per_lane_fits(int bins) {
  return sub_histograms_fits<T>(bins);
}

/// The kernel of steps 3 and 4: (samples, n, counts, rule, copies).
template <class T>
using CopiesKernel = void (*)(const T*, long long, Counter*, Even<T>, int);

template <Copies kLayout, class T>
Plan<CopiesKernel<T>> sub_histograms_plan(long long n, int bins) {
  if (!sub_histograms_fits<T>(bins)) return {nullptr, dim3(), dim3(), 0};
  const int pbins = privatized_bins<T>(bins), words = sub_histogram_copies(kLayout, pbins) * pbins;
  return fill_plan<sub_histograms_kernel<kLayout, T>>(n, unsigned(words * sizeof(Counter)),
                                                      privatized_per_block(words));
}
template <class T>
Plan<CopiesKernel<T>> per_warp_plan(long long n, int bins) {
  return sub_histograms_plan<Copies::per_warp, T>(n, bins);
}
template <class T>
Plan<CopiesKernel<T>> per_lane_plan(long long n, int bins) {
  return sub_histograms_plan<Copies::per_lane, T>(n, bins);
}

/// The launcher of both layouts.
template <Copies kLayout, class T>
cudaError_t sub_histograms(const T* samples, long long n, Counter* counts, int bins, Level<T> lower, Level<T> upper,
                           cudaStream_t stream) {
  const Even<T> rule = Even<T>::make(bins, lower, upper);
  if (!valid_args(samples, n, counts, rule.valid, sub_histograms_fits<T>(bins))) return cudaErrorInvalidValue;
  const int copies = sub_histogram_copies(kLayout, privatized_bins<T>(bins));
  return zero_and_launch(sub_histograms_plan<kLayout, T>(n, bins), 1, counts, bins, n, stream, samples, n, counts, rule,
                         copies);
}

/// counts = histogram of samples[0, n), one sub-histogram per warp; see histogram_common.cuh for
/// the contract. `float` samples: at most kMaxSharedBins bins.
template <class T>
cudaError_t per_warp(const T* samples, long long n, Counter* counts, int bins, Level<T> lower, Level<T> upper,
                     cudaStream_t stream = nullptr) {
  return sub_histograms<Copies::per_warp>(samples, n, counts, bins, lower, upper, stream);
}

/// counts = histogram of samples[0, n), sub-histograms interleaved by lane; see
/// histogram_common.cuh for the contract. `float` samples: at most kMaxSharedBins bins.
template <class T>
cudaError_t per_lane(const T* samples, long long n, Counter* counts, int bins, Level<T> lower, Level<T> upper,
                     cudaStream_t stream = nullptr) {
  return sub_histograms<Copies::per_lane>(samples, n, counts, bins, lower, upper, stream);
}

}  // namespace smem::histogram
