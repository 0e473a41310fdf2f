/// \file histogram.cuh
/// \brief The histogram family: its one step list (SMEM_HISTOGRAM_STEPS), and the Variant enum,
/// names, dispatchers and step table generated from it, which the tests and benchmarks iterate
/// over. Adding a step is one header, its `#include` here and one line in the list.
///
/// Step 6 needs sm_90 (thread block clusters), like the project's builds (sm_90 by default): its
/// header stops a build for an older architecture with one `#error`.
#pragma once
#include <cuda_runtime.h>

#include "../smem_steps.cuh"
#include "histogram_01_global_atomics.cuh"
#include "histogram_02_shared_atomics.cuh"
#include "histogram_03_sub_histograms.cuh"
#include "histogram_04_runs.cuh"
#include "histogram_05_vectorized.cuh"
#include "histogram_06_cluster.cuh"
#include "histogram_common.cuh"

/// The ladder, in order: X(step, name, header, summary). `name` is the variant, the launcher
/// (`name(samples, n, counts, bins, lower, upper, stream)`), its plan (`name##_plan<T>(n, bins)`)
/// and the bins it holds (`name##_fits<T>(bins)`).
#define SMEM_HISTOGRAM_STEPS(X)                                                                             \
  X(1, global_atomics, "histogram_01_global_atomics.cuh", "One global atomic per sample, in the L2.")       \
  X(2, shared_atomics, "histogram_02_shared_atomics.cuh",                                                   \
    "A privatized histogram per block in shared memory, merged with one global atomic per bin.")            \
  X(3, per_warp, "histogram_03_sub_histograms.cuh", "One sub-histogram per warp: warps never meet on a counter.") \
  X(3, per_lane, "histogram_03_sub_histograms.cuh",                                                         \
    "Sub-histograms interleaved by lane: each lane's counters in its own bank, whatever the data.")         \
  X(4, runs, "histogram_04_runs.cuh", "Run aggregation: a run of samples in one bin added with one atomic.") \
  X(5, vectorized, "histogram_05_vectorized.cuh",                                                           \
    "16-byte loads into per-lane copies, one atomic per sample, on a resident grid: the performance step.") \
  X(6, cluster, "histogram_06_cluster.cuh",                                                                 \
    "Bins beyond one block: the histogram split over a thread block cluster's distributed shared memory.")

namespace smem::histogram {

/// Variant, Step, kSteps[], kAllVariants[] and name(v), from the step list.
SMEM_STEP_TABLE(SMEM_HISTOGRAM_STEPS)

/// Runs one variant: counts = the histogram of samples[0, n) in `bins` equal bins over [lower, upper).
template <class T>
cudaError_t run(Variant v, const T* samples, long long n, Counter* counts, int bins, Level<T> lower, Level<T> upper,
                cudaStream_t stream = nullptr) {
  switch (v) {
#define SMEM_RUN(step, name, header, summary) \
  case Variant::name: return name<T>(samples, n, counts, bins, lower, upper, stream);
    SMEM_HISTOGRAM_STEPS(SMEM_RUN)
#undef SMEM_RUN
  }
  return cudaErrorInvalidValue;
}

/// Whether variant v holds `bins` bins of samples of type T (host arithmetic, no CUDA call).
template <class T>
constexpr bool fits(Variant v, int bins) {
  switch (v) {
#define SMEM_FITS(step, name, header, summary) \
  case Variant::name: return name##_fits<T>(bins);
    SMEM_HISTOGRAM_STEPS(SMEM_FITS)
#undef SMEM_FITS
  }
  return false;
}

/// The launch plan variant v uses for n samples in `bins` bins, as the benchmark reports it.
template <class T>
Plan<const void*> plan(Variant v, long long n, int bins) {
  switch (v) {
#define SMEM_PLAN(step, name, header, summary) \
  case Variant::name: return name##_plan<T>(n, bins).erased();
    SMEM_HISTOGRAM_STEPS(SMEM_PLAN)
#undef SMEM_PLAN
  }
  return {nullptr, dim3(), dim3(), 0};
}

}  // namespace smem::histogram
