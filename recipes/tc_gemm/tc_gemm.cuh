/// \file tc_gemm.cuh
/// \brief The tensor-core GEMM family (bf16 in and out, fp32 accumulation): its one step list
/// (SMEM_TC_GEMM_STEPS), and the Variant enum, names, dispatchers and step table generated from
/// it, which the tests and benchmarks iterate over.
///
/// Every launcher computes, row-major, D = alpha * A * B + beta * C and follows
/// tc_gemm_common.cuh's contract.
///
/// Steps 8 to 16 (TMA, wgmma, setmaxnreg) are Hopper's and need the arch-specific target sm_90a:
/// they join the list when SMEM_TC_GEMM_SM90A is defined, which the project's CMake does when it
/// builds for sm_90a only (a GPU or CMAKE_CUDA_ARCHITECTURES of 90 is built as 90a). A build for
/// another architecture gets steps 1 to 7.
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
#if defined(SMEM_TC_GEMM_SM90A)
#include "tc_gemm_08_tma.cuh"
#include "tc_gemm_09_wgmma.cuh"
#include "tc_gemm_10_ring.cuh"
#include "tc_gemm_11_specialized.cuh"
#include "tc_gemm_12_persistent.cuh"
#include "tc_gemm_13_cluster.cuh"
#include "tc_gemm_14_overlapped.cuh"
#include "tc_gemm_15_gpc_order.cuh"
#include "tc_gemm_16_tuned_hopper.cuh"
#endif

/// The ladder, in order: X(step, name, header, summary). `name` is the variant, the launcher
/// (`name(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream)`) and its plan
/// (`name##_plan(M, N, K, A, lda, B, ldb, C, ldc, D, ldd)`).
#define SMEM_TC_GEMM_AMPERE_STEPS(X)                                                                        \
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

/// Hopper's steps (sm_90a), in order, as above.
#if defined(SMEM_TC_GEMM_SM90A)
#define SMEM_TC_GEMM_HOPPER_STEPS(X)                                                                    \
  X(8, tma, "tc_gemm_08_tma.cuh", "TMA loads into 128-byte-swizzled stages on mbarriers, mma.sync from them.") \
  X(9, wgmma, "tc_gemm_09_wgmma.cuh", "wgmma from shared-memory descriptors: one warpgroup, TMA double buffering.") \
  X(10, ring, "tc_gemm_10_ring.cuh",                                                                    \
    "A four-stage full/empty mbarrier ring, two consumer warpgroups, one wgmma group in flight.")      \
  X(11, specialized, "tc_gemm_11_specialized.cuh",                                                      \
    "Warp specialization: a TMA producer warpgroup, setmaxnreg moves registers to the consumers.")   \
  X(12, persistent, "tc_gemm_12_persistent.cuh",                                                        \
    "Persistent blocks over a tile scheduler; the epilogue through shared memory and a TMA store.") \
  X(13, cluster, "tc_gemm_13_cluster.cuh",                                                              \
    "Clusters of two blocks: B multicast by TMA to both, tiles walked in groups for L2 reuse.")     \
  X(14, overlapped, "tc_gemm_14_overlapped.cuh",                                                        \
    "The epilogue's TMA stores spread behind the next tile's wgmma groups.")                           \
  X(15, gpc_order, "tc_gemm_15_gpc_order.cuh",                                                          \
    "Clusters placed in the tile walk by the GPC they run on: one GPC reads the same A tile in step.") \
  X(16, tuned_hopper, "tc_gemm_16_tuned_hopper.cuh",                                                    \
    "Step 15 with the tile, ring, cluster and group shape tuned for GPUs like this one.")
#else
#define SMEM_TC_GEMM_HOPPER_STEPS(X)
#endif

/// The family's step list: steps 1 to 7, then Hopper's where the build targets sm_90a.
#define SMEM_TC_GEMM_STEPS(X) SMEM_TC_GEMM_AMPERE_STEPS(X) SMEM_TC_GEMM_HOPPER_STEPS(X)

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
