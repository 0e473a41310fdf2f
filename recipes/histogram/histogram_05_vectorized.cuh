/// \file histogram_05_vectorized.cuh
/// \brief Step 5, vectorized and coarsened: 16-byte loads, two of them in flight per thread in
/// blocks of 1024, on a resident grid, counted with one shared atomic per sample into step 3's
/// per-lane copies.
///
/// What changes from step 3 (`per_lane`): the samples are read as 16-byte vectors (`uint4`: 16
/// `std::uint8_t` or 4 `float` per load instruction) through for_each_sample_vectorized(): each
/// thread issues kVectorizedUnroll loads before it counts any of their samples, so a warp keeps
/// 1 KB in flight, and blocks of 1024 threads, two per SM, are the 64 warps an SM holds at most; a resident grid (as many blocks as the GPU holds, each walking the
/// input with a grid-wide stride) then covers the DRAM latency. The loads are marked
/// streaming (`__ldcs`): no sample is read twice. A pointer off a 16-byte boundary costs only a
/// few scalar loads at each end. For `std::uint8_t` a load instruction used to fetch one byte per
/// lane; now it fetches 16, and what is left per sample is the byte extraction, the address and
/// one shared atomic into the lane's own copy: 32 copies of 256 counters put lane l's counter in
/// bank l, so the atomic is one wavefront whatever the data.
///
/// Step 4's runs are not carried over: with per-lane copies an atomic never waits for another
/// lane's, so a run saves little, while its compare and its data-dependent branch cost every
/// sample (the results on the page compare the two steps).
///
/// Bins: as steps 2 to 4, at most kMaxSharedBins privatized counters (more: cudaErrorInvalidValue).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "histogram_common.cuh"

namespace smem::histogram {

/// Step 5's block and loads in flight: 1024 threads (two blocks per SM, so at most 32 registers
/// a thread), two 16-byte loads each.
inline constexpr int kVectorizedThreads = 1024, kVectorizedUnroll = 2;

//! [vector loop]
/// Calls f(x) for every sample of samples[0, n), spread over the grid (steps 5 and 6). The
/// samples before the first 16-byte boundary and after the last whole vector (fewer than 16 bytes
/// each) go one to a thread; the rest is read as 16-byte vectors (`uint4`), Unroll of them per
/// thread in flight: vector `base + u * threads` for u < Unroll, `base` striding over the grid,
/// so that each of the Unroll loads of a warp reads 512 consecutive bytes.
template <int Unroll, class T, class F>
__device__ void for_each_sample_vectorized(const T* __restrict__ samples, long long n, F&& f) {
  constexpr int kVec = 16 / int(sizeof(T));
  const long long misalign = (long long)(reinterpret_cast<std::uintptr_t>(samples) % 16 / sizeof(T));
  const long long head = misalign == 0 ? 0 : (kVec - misalign < n ? kVec - misalign : n);
  const long long vecs = (n - head) / kVec, tail = head + vecs * kVec;
  const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x, threads = (long long)gridDim.x * blockDim.x;
  if (tid < head) f(samples[tid]);
  if (tid < n - tail) f(samples[tail + tid]);
  const uint4* v = reinterpret_cast<const uint4*>(samples + head);
  for (long long base = tid; base < vecs; base += threads * Unroll) {
    uint4 r[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      if (base + u * threads < vecs) r[u] = __ldcs(v + base + u * threads);  // streamed: read once
#pragma unroll
    for (int u = 0; u < Unroll; ++u) {
      if (base + u * threads >= vecs) break;
      T x[kVec];
      memcpy(x, &r[u], sizeof(x));
#pragma unroll
      for (int k = 0; k < kVec; ++k) f(x[k]);
    }
  }
}
//! [vector loop]

//! [vectorized]
template <class T>
__global__ void __launch_bounds__(kVectorizedThreads, 2) vectorized_kernel(const T* __restrict__ samples, long long n,
                                                              Counter* __restrict__ counts, Even<T> rule, int copies) {
  extern __shared__ Counter hist[];  // copies x privatized bins, step 3's per-lane layout
  count_in_lane_copies(hist, rule, copies, counts, [&](auto& add) {
    for_each_sample_vectorized<kVectorizedUnroll>(samples, n, [&](T x) {
      const int b = rule.privatized(x);
      if (b >= 0) add(b, 1u);
    });
  });
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
  const long long per_block = privatized_per_block(words) > 32LL * kVectorizedThreads ? privatized_per_block(words)
                                                                                   : 32LL * kVectorizedThreads;
  return fill_plan<vectorized_kernel<T>, kVectorizedThreads>(n, unsigned(words * sizeof(Counter)), per_block);
}

/// counts = histogram of samples[0, n), 16-byte loads, one atomic per sample into per-lane copies; see
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
