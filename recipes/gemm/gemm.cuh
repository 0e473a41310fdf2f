/// \file gemm.cuh
/// \brief The SGEMM family: its one step list (SMEM_GEMM_STEPS), and the Variant enum, names,
/// dispatchers and step table generated from it, which the tests and benchmarks iterate over.
/// Adding a step is one header, its `#include` here and one line in the list.
///
/// Every launcher computes, row-major, C = alpha * A * B + beta * C (A M x K with lda >= K,
/// B K x N with ldb >= N, C M x N with ldc >= N) and follows gemm_common.cuh's contract.
///
/// Steps 15 to 17 (TMA, wgmma, setmaxnreg) need the arch-specific target sm_90a: they join the list when
/// SMEM_GEMM_SM90A is defined, which the project's CMake does when it builds for sm_90a only.
#pragma once
#include <cuda_runtime.h>

#include "../smem_steps.cuh"
#include "gemm_common.cuh"
#include "sgemm_01_naive.cuh"
#include "sgemm_02_coalesced.cuh"
#include "sgemm_03_full_k_strip.cuh"
#include "sgemm_04_tiled.cuh"
#include "sgemm_05_padded.cuh"
#include "sgemm_06_double_buffered.cuh"
#include "sgemm_07_blocktile_1d.cuh"
#include "sgemm_08_blocktile_2d.cuh"
#include "sgemm_09_vectorized.cuh"
#include "sgemm_10_conflict_free.cuh"
#include "sgemm_11_warptiled.cuh"
#include "sgemm_12_multistage.cuh"
#include "sgemm_13_autotuned.cuh"
#include "sgemm_14_split_tf32.cuh"
#if defined(SMEM_GEMM_SM90A)
#include "sgemm_15_split_wgmma.cuh"
#include "sgemm_16_presplit.cuh"
#include "sgemm_17_split_tuned.cuh"
#endif

/// The ladder, in order: X(step, name, header, summary). `name` is the variant, the launcher
/// (`name(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream)`) and its plan
/// (`name##_plan(M, N, K, A, lda, B, ldb, C, ldc)`).
#define SMEM_GEMM_STEPS(X)                                                                           \
  X(1, naive, "sgemm_01_naive.cuh", "Naive: one thread per element of C, thread x indexes the rows of C.") \
  X(2, coalesced, "sgemm_02_coalesced.cuh", "Coalesced: the naive kernel with thread x indexing the columns of C.") \
  X(3, full_k_strip, "sgemm_03_full_k_strip.cuh",                                                    \
    "Full-K strip: a block stages whole 16-row and 16-column strips of A and B in dynamic shared memory.") \
  X(4, tiled_16, "sgemm_04_tiled.cuh",                                                               \
    "Tiled 16 x 16: a sliding K window in two shared tiles, two barriers per window, zero-filled edges.") \
  X(4, tiled_32, "sgemm_04_tiled.cuh", "Tiled 32 x 32: the same kernel with 32 x 32 tiles.")          \
  X(5, tiled_32_padded, "sgemm_05_padded.cuh", "Padded 32 x 33 tiles: step 4's kernel with one unused word per row.") \
  X(6, double_buffered, "sgemm_06_double_buffered.cuh",                                              \
    "Double-buffered 32 x 32 tiles: two copies of each tile, one barrier per window.")               \
  X(7, blocktile_1d, "sgemm_07_blocktile_1d.cuh", "1D register blocktiling: each thread computes a column of 8 elements of C.") \
  X(8, blocktile_2d, "sgemm_08_blocktile_2d.cuh", "2D register blocktiling: each thread computes an 8 x 8 block of C.") \
  X(9, vectorized, "sgemm_09_vectorized.cuh",                                                        \
    "Vectorized: 128-bit global and shared loads, a transposed A tile, double buffering.")           \
  X(10, conflict_free, "sgemm_10_conflict_free.cuh",                                                 \
    "Conflict-free A tile: step 9's kernel with the transposed A tile's rows padded by 4 floats.")   \
  X(11, warptiled, "sgemm_11_warptiled.cuh",                                                         \
    "Warptiling: block, warp and thread tiles, each warp owning a sub-tile of C; loads staged through registers.") \
  X(12, multistage, "sgemm_12_multistage.cuh",                                                       \
    "Multistage: cp.async copies into a ring of shared-memory stages, several K-tiles ahead of the compute.") \
  X(13, heuristic, "sgemm_13_autotuned.cuh",                                                         \
    "Heuristic: step 12's kernel with a shape chosen from the GPU's SMs, shared memory and registers.") \
  X(13, autotuned, "sgemm_13_autotuned.cuh",                                                         \
    "Autotuned: step 12's kernel with the shape ./cookbook tune gemm measured fastest on GPUs like this one.") \
  X(13, split_tail, "sgemm_13_autotuned.cuh",                                                        \
    "Split tail: the autotuned shape, its last part-filled wave of tiles split along K, parts added with atomics.") \
  X(14, split_tf32, "sgemm_14_split_tf32.cuh",                                                       \
    "Split TF32: each operand as two TF32 values, three mma.sync products each, fp32-level accuracy.") \
  SMEM_GEMM_HOPPER_STEPS(X)

/// Hopper's steps (sm_90a), as above: in the list where SMEM_GEMM_SM90A is defined.
#if defined(SMEM_GEMM_SM90A)
#define SMEM_GEMM_HOPPER_STEPS(X)                                                                    \
  X(15, split_wgmma, "sgemm_15_split_wgmma.cuh",                                                     \
    "Split TF32 on wgmma: TMA-loaded fp32 tiles, C^T = B^T A^T with B^T split in registers, persistent blocks.") \
  X(16, split_presplit, "sgemm_16_presplit.cuh",                                                     \
    "A split once: a pass writes A's hi and lo planes, step 15's kernel loads both by TMA and only multiplies.") \
  X(17, split_tuned, "sgemm_17_split_tuned.cuh",                                                     \
    "Split tuned: step 16 with its tile height, ring depth and tile-group height chosen per GPU and size.")
#else
#define SMEM_GEMM_HOPPER_STEPS(X)
#endif

namespace smem::gemm {

/// Variant, Step, kSteps[], kAllVariants[] and name(v), from the step list.
SMEM_STEP_TABLE(SMEM_GEMM_STEPS)

/// Runs one variant: C = alpha * A * B + beta * C.
inline cudaError_t run(Variant v, int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                       float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  switch (v) {
#define SMEM_RUN(step, name, header, summary) \
  case Variant::name: return name(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
    SMEM_GEMM_STEPS(SMEM_RUN)
#undef SMEM_RUN
  }
  return cudaErrorInvalidValue;
}

/// The launch plan variant v uses for these (valid) arguments, as the benchmark reports it; a
/// null kernel where the variant cannot run the problem (e.g. the full-K strip beyond its K).
inline Plan<const void*> plan(Variant v, int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                              const float* C, int ldc) {
  switch (v) {
#define SMEM_PLAN(step, name, header, summary) \
  case Variant::name: return name##_plan(M, N, K, A, lda, B, ldb, C, ldc).erased();
    SMEM_GEMM_STEPS(SMEM_PLAN)
#undef SMEM_PLAN
  }
  return {nullptr, dim3(), dim3(), 0};
}

}  // namespace smem::gemm
