/// \file transpose.cuh
/// \brief The transpose family: its one step list (SMEM_TRANSPOSE_STEPS), and the Variant enum,
/// names, dispatchers and step table generated from it, which the tests and benchmarks iterate
/// over. Adding a step is one header, its `#include` here and one line in the list.
#pragma once
#include <cuda_runtime.h>

#include "../smem_steps.cuh"
#include "transpose_00_copy.cuh"
#include "transpose_01_smem_copy.cuh"
#include "transpose_02_naive.cuh"
#include "transpose_03_smem_tile.cuh"
#include "transpose_04_padded.cuh"
#include "transpose_05_swizzled.cuh"
#include "transpose_06_vectorized.cuh"

/// The ladder, in order: X(step, name, header, summary). `name` is the variant, the launcher
/// (`name(rows, cols, in, out, stream)`) and its plan (`name##_plan(rows, cols, in, out)`).
#define SMEM_TRANSPOSE_STEPS(X)                                                                      \
  X(0, copy, "transpose_00_copy.cuh", "The roof: a plain copy with the transpose's tiling and block shape.") \
  X(1, smem_copy, "transpose_01_smem_copy.cuh",                                                      \
    "The shared-memory roof: the copy of step 0 staged through a shared tile.")                      \
  X(2, naive, "transpose_02_naive.cuh", "Naive: coalesced reads, writes strided down the columns.")   \
  X(3, smem_tile, "transpose_03_smem_tile.cuh",                                                      \
    "Shared-memory tile 32 x 32: coalesced both ways, 32-way bank conflicts on the column read.")    \
  X(4, padded, "transpose_04_padded.cuh", "Padded 32 x 33 tile: one unused word per row, conflict-free.") \
  X(5, swizzled, "transpose_05_swizzled.cuh", "XOR-swizzled 32 x 32 tile: conflict-free without padding.") \
  X(6, vectorized, "transpose_06_vectorized.cuh",                                                    \
    "Coarsened and vectorized: 16-byte accesses, a register transpose and a swizzled tile of 16-byte chunks.")

namespace smem::transpose {

/// Variant, Step, kSteps[], kAllVariants[] and name(v), from the step list.
SMEM_STEP_TABLE(SMEM_TRANSPOSE_STEPS)

/// True for the variants that transpose (all but the two copy roofs).
constexpr bool transposes(Variant v) { return v != Variant::copy && v != Variant::smem_copy; }

/// Runs one variant: out = transpose(in) (or out = in for the copy roofs).
template <class T>
cudaError_t run(Variant v, int rows, int cols, const T* in, T* out, cudaStream_t stream = nullptr) {
  switch (v) {
#define SMEM_RUN(step, name, header, summary) \
  case Variant::name: return name(rows, cols, in, out, stream);
    SMEM_TRANSPOSE_STEPS(SMEM_RUN)
#undef SMEM_RUN
  }
  return cudaErrorInvalidValue;
}

/// The launch plan variant v uses for these arguments (valid ones), as the benchmark reports it.
template <class T>
Plan<const void*> plan(Variant v, int rows, int cols, const T* in, const T* out) {
  switch (v) {
#define SMEM_PLAN(step, name, header, summary) \
  case Variant::name: return name##_plan(rows, cols, in, out).erased();
    SMEM_TRANSPOSE_STEPS(SMEM_PLAN)
#undef SMEM_PLAN
  }
  return {nullptr, dim3(), dim3(), 0};
}

}  // namespace smem::transpose
