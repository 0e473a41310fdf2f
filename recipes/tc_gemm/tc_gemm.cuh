/// \file tc_gemm.cuh
/// \brief The tensor-core GEMM family (bf16 in and out, fp32 accumulation): its one step list
/// (SMEM_TC_GEMM_STEPS), and the Variant enum, names, dispatchers and step table generated from
/// it, which the tests and benchmarks iterate over.
///
/// Every launcher computes, row-major, D = alpha * A * B + beta * C and follows
/// tc_gemm_common.cuh's contract.
#pragma once
#include <cuda_runtime.h>

#include "../smem_steps.cuh"
#include "tc_gemm_01_wmma_global.cuh"
#include "tc_gemm_02_wmma_smem.cuh"
#include "tc_gemm_03_mma_ldmatrix.cuh"
#include "tc_gemm_04_padded.cuh"
#include "tc_gemm_05_swizzled.cuh"
#include "tc_gemm_06_multistage.cuh"
#include "tc_gemm_07_tuned.cuh"
#include "tc_gemm_common.cuh"

/// The ladder, in order: X(step, name, header, summary). `name` is the variant, the launcher
/// (`name(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream)`) and its plan
/// (`name##_plan(M, N, K, A, lda, B, ldb, C, ldc, D, ldd)`).
#define SMEM_TC_GEMM_STEPS(X)                                                                            \
  X(1, wmma_global, "tc_gemm_01_wmma_global.cuh", "WMMA fragments loaded straight from global memory.")  \
  X(2, wmma_smem, "tc_gemm_02_wmma_smem.cuh",                                                            \
    "WMMA from shared-memory tiles: two barriers per K window, zero-filled boundary tiles.")              \
  X(3, mma_ldmatrix, "tc_gemm_03_mma_ldmatrix.cuh",                                                      \
    "mma.sync m16n8k16 with ldmatrix from row-major shared tiles: 8-way bank conflicts.")                \
  X(4, padded, "tc_gemm_04_padded.cuh", "Padded tiles: every row 16 bytes longer, conflict-free ldmatrix.") \
  X(5, swizzled, "tc_gemm_05_swizzled.cuh", "XOR-swizzled tiles: conflict-free without padding.")       \
  X(6, multistage, "tc_gemm_06_multistage.cuh",                                                          \
    "Multistage cp.async pipeline into swizzled stages, 64 x 64 warp tiles, one barrier per window.")   \
  X(7, tuned_heuristic, "tc_gemm_07_tuned.cuh",                                                          \
    "Step 6's kernel with a block, warp and stage shape chosen from the GPU's properties.")             \
  X(7, tuned, "tc_gemm_07_tuned.cuh", "Step 6's kernel with the shape tuned for GPUs like this one.")

namespace smem::tc_gemm {

/// Variant, Step, kSteps[], kAllVariants[] and name(v), from the step list.
SMEM_STEP_TABLE(SMEM_TC_GEMM_STEPS)

/// Runs one variant: D = alpha * A * B + beta * C.
inline cudaError_t run(Variant v, int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                       float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  switch (v) {
#define SMEM_RUN(step, name, header, summary) \
  case Variant::name: return name(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
    SMEM_TC_GEMM_STEPS(SMEM_RUN)
#undef SMEM_RUN
  }
  return cudaErrorInvalidValue;
}

/// The launch plan variant v uses for these (valid) arguments, as the benchmark reports it.
inline Plan<const void*> plan(Variant v, int M, int N, int K, const bf16* A, int lda, const bf16* B, int ldb,
                              const bf16* C, int ldc, const bf16* D, int ldd) {
  switch (v) {
#define SMEM_PLAN(step, name, header, summary) \
  case Variant::name: return name##_plan(M, N, K, A, lda, B, ldb, C, ldc, D, ldd).erased();
    SMEM_TC_GEMM_STEPS(SMEM_PLAN)
#undef SMEM_PLAN
  }
  return {nullptr, dim3(), dim3(), 0};
}

}  // namespace smem::tc_gemm
