/// \file reduction.cuh
/// \brief The reduction family: its one step list (SMEM_REDUCTION_STEPS), and the Variant enum,
/// names, dispatchers and step table generated from it, which the tests and benchmarks iterate
/// over. Adding a step is one header, its `#include` here and one line in the list.
#pragma once
#include <cuda_runtime.h>

#include "../smem_steps.cuh"
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
#include "reduction_10_tagged_counter.cuh"

/// The ladder, in order: X(step, name, header, summary). `name` is the variant, the launcher
/// (`name(d_temp, temp_bytes, in, n, out, op, identity, stream)`) and its plan
/// (`name##_plan<T, Op>(n)`).
#define SMEM_REDUCTION_STEPS(X)                                                                     \
  X(1, interleaved_divergent, "reduction_01_interleaved_divergent.cuh",                             \
    "Interleaved addressing with a divergent branch: the textbook starting point.")                 \
  X(2, interleaved_strided, "reduction_02_interleaved_strided.cuh",                                 \
    "Interleaved addressing with a strided index: no divergence, bank conflicts.")                  \
  X(3, sequential, "reduction_03_sequential.cuh",                                                   \
    "Sequential addressing: conflict-free and without divergence.")                                 \
  X(4, first_add, "reduction_04_first_add.cuh", "First add during the load: every thread reads two elements.") \
  X(5, warp_shuffle, "reduction_05_warp_shuffle.cuh",                                               \
    "Warp-shuffle final stage: the last 32 values never touch shared memory.")                      \
  X(6, unrolled, "reduction_06_unrolled.cuh", "Fully unrolled: the block size is a template parameter.") \
  X(7, grid_stride, "reduction_07_grid_stride.cuh",                                                 \
    "Grid-stride loop with 16-byte vector loads and many elements per thread.")                     \
  X(8, single_pass, "reduction_08_single_pass.cuh", "Single pass: the last block to finish reduces the partials.") \
  X(9, cub_block, "reduction_09_cub_block.cuh",                                                     \
    "The single-pass kernel of step 8 with cub::BlockReduce as the block stage.")                  \
  X(10, tagged_counter, "reduction_10_tagged_counter.cuh",                                         \
    "Step 8 without the memset: a tagged counter that each launch leaves ready for the next.")

namespace smem::reduction {

/// Variant, Step, kSteps[], kAllVariants[] and name(v), from the step list.
SMEM_STEP_TABLE(SMEM_REDUCTION_STEPS)

/// Runs one variant: the size query when d_temp is null, else *out = reduction of in[0, n).
template <class T, class Op>
cudaError_t run(Variant v, void* d_temp, std::size_t& temp_bytes, const T* in, long long n, T* out, Op op,
                T identity, cudaStream_t stream = nullptr) {
  switch (v) {
#define SMEM_RUN(step, name, header, summary) \
  case Variant::name: return name(d_temp, temp_bytes, in, n, out, op, identity, stream);
    SMEM_REDUCTION_STEPS(SMEM_RUN)
#undef SMEM_RUN
  }
  return cudaErrorInvalidValue;
}

/// The launch plan (of the first kernel) variant v uses for n elements, as the benchmark
/// reports it.
template <class T, class Op>
Plan<const void*> plan(Variant v, long long n) {
  switch (v) {
#define SMEM_PLAN(step, name, header, summary) \
  case Variant::name: return name##_plan<T, Op>(n).erased();
    SMEM_REDUCTION_STEPS(SMEM_PLAN)
#undef SMEM_PLAN
  }
  return {nullptr, dim3(), dim3(), 0};
}

}  // namespace smem::reduction
