/// \file sgemm_17_split_tuned.cuh
/// \brief Step 17, step 16 with its tile height, ring depth and tile-group height chosen per GPU
/// and output size (sm_90a).
///
/// Change from step 16: the shape is no longer fixed. A C of fewer 128 x 128 tiles than the GPU
/// has SMs leaves SMs idle (a 1000 x 1000 C has 64 tiles for 132 SMs), and one of a few waves
/// ends in a part-filled one; tiles of 64 x 128 (a `wgmma` m64n64k8, half the accumulators, stages
/// of 32 KB instead of 48 KB, so a deeper ring) make twice as many. On a large C the 128-row tile
/// reads less per product, and how deep the ring and how many tile-rows a group spans (L2 reuse
/// of A's planes and B's panels) are the GPU's to decide.
///
/// The selection is step 13's: a table keyed on compute capability, SM count, shared memory and
/// registers per SM, one entry per output-size class, written from the benchmark's candidate
/// timings by `./cookbook tune gemm`; where the table has no entry, a rule: 64-row tiles while the
/// 128-row ones would leave more than half the SMs idle, step 16's shape otherwise. Every shape
/// multiplies and sums in step 15's order, so C is step 15's bit for bit whatever the choice.
#pragma once
#include <cuda_runtime.h>

#include "sgemm_16_presplit.cuh"

/// The tuned table: X(cc, sms, smem_per_sm, regs_per_sm, max_mn, BM, stages, group_rows), first
/// match wins; entries of one GPU in increasing max_mn.
//! [split tuned table]
// BEGIN TUNED SPLIT TABLE
#define SMEM_GEMM_SPLIT_TUNED_TABLE(X)                        \
  X(90, 132, 233472, 65536, 2048000LL, 64, 4, 8)              \
  X(90, 132, 233472, 65536, 9223372036854775807LL, 128, 3, 8)
// END TUNED SPLIT TABLE
//! [split tuned table]

namespace smem::gemm {

/// Step 15's kernel in shape BM x 128, Stages, Group, on A's planes (step 16).
template <int BM, int Stages, int Group>
using PresplitShapeOf = PresplitOf<SplitWgmmaShapeOf<BM, Stages, Group>>;
/// The rule's shape for a C with fewer 128 x 128 tiles than half the SMs: 6 stages of 32 KB.
using NarrowPresplitShape = PresplitShapeOf<64, 6, 8>;

//! [split tuned dispatch]
/// f(S{}) for the table's shape S for this GPU and output size, else the rule's shape; step 16's
/// where 64-row tiles would pass the grid's limit (so the step refuses what step 16 refuses).
template <class F>
auto with_split_shape(int M, int N, F f) {
  if (tile_blocks(M, N, 64, 128) > kMaxGridBlocks) return f(PresplitShape{});
  const detail::GpuKey key = detail::gpu_key();
  const long long mn = static_cast<long long>(M) * N;
  (void)mn;  // read only by table entries
#define SMEM_GEMM_SPLIT_TUNED_CASE(CC, SMS, SMEM, REGS, MAX_MN, BM, STAGES, GROUP)                       \
  if (key.cc == (CC) && key.sms == (SMS) && key.smem_per_sm == (SMEM) && key.regs_per_sm == (REGS) && \
      mn <= (long long)(MAX_MN))                                                                       \
    return f(PresplitShapeOf<BM, STAGES, GROUP>{});
  SMEM_GEMM_SPLIT_TUNED_TABLE(SMEM_GEMM_SPLIT_TUNED_CASE)
#undef SMEM_GEMM_SPLIT_TUNED_CASE
  if (2 * tile_blocks(M, N, PresplitShape::kBM, PresplitShape::kBN) < key.sms) return f(NarrowPresplitShape{});
  return f(PresplitShape{});
}
//! [split tuned dispatch]

/// The plan of step 17: step 16's in the tuned shape.
inline Plan<const void*> split_tuned_plan(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                                          const float* C, int ldc) {
  return with_split_shape(M, N, [&](auto s) {
    return split_presplit_plan_with<decltype(s)>(M, N, K, A, lda, B, ldb, C, ldc);
  });
}

/// C = alpha * A * B + beta * C: step 16 in the tuned shape for this GPU and size.
inline cudaError_t split_tuned(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                               float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);  // before the GPU's key is read
  return with_split_shape(M, N, [&](auto s) {
    return split_presplit_with<decltype(s)>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
  });
}

}  // namespace smem::gemm
