/// \file tc_gemm_16_tuned_hopper.cuh
/// \brief Step 16, step 15 with its tile width, ring depth, cluster size and tile-group height
/// chosen per GPU and output size.
///
/// Change from step 15: the shape is no longer fixed. What is best depends on the GPU and on D:
/// a D of fewer 128 x 256 tiles than the GPU has SMs leaves SMs idle, and 128 x 128 tiles (half
/// the accumulators, so room for a deeper ring) fill them; on a large D the wide tile reads less
/// per flop, and how deep the ring, how many blocks share B by multicast and how many tile-rows a
/// group spans trade latency hiding, L2 traffic and L2 reuse against each other in ways that
/// differ between GPUs (the H200's memory is faster than the H100's, their SM counts match).
///
/// The selection is step 7's: a table keyed on compute capability, SM count, shared memory and
/// registers per SM, one entry per output-size class, filled from the benchmark's candidate
/// timings (`./cookbook tune tc_gemm` times every candidate shape); where the table has no entry, a rule:
/// 128 x 128 tiles while the 128 x 256 ones would leave more than half the SMs idle, step 15's
/// shape otherwise.
#pragma once
#include <cuda_runtime.h>

#include "tc_gemm_15_gpc_order.cuh"

/// The tuned table: X(cc, sms, smem_per_sm, regs_per_sm, max_mn, BN, stages, cluster_m,
/// group_rows), first match wins; entries of one GPU in increasing max_mn.
// BEGIN TUNED HOPPER TABLE
#define SMEM_TC_HOPPER_TUNED_TABLE(X)                            \
  X(90, 132, 233472, 65536, 1048576LL, 128, 6, 2, 8)             \
  X(90, 132, 233472, 65536, 16777216LL, 256, 4, 2, 4)            \
  X(90, 132, 233472, 65536, 9223372036854775807LL, 256, 4, 2, 8)
// END TUNED HOPPER TABLE

namespace smem::tc_gemm {

/// The rule's shape for a D with fewer 128 x 256 tiles than half the SMs.
using NarrowClusterShape = ClusterShapeOf<128, 6, 2, 8>;

//! [tuned hopper dispatch]
/// f(S{}) for the table's shape S for this GPU and output size, else the rule's shape.
template <class F>
auto with_tuned_shape(int M, int N, F f) {
  const detail::GpuKey key = detail::gpu_key();
  const long long mn = static_cast<long long>(M) * N;
  (void)mn;  // read only by table entries
#define SMEM_TC_HOPPER_TUNED_CASE(CC, SMS, SMEM, REGS, MAX_MN, BN, STAGES, CLUSTER_M, GROUP_ROWS)        \
  if (key.cc == (CC) && key.sms == (SMS) && key.smem_per_sm == (SMEM) && key.regs_per_sm == (REGS) && \
      mn <= (long long)(MAX_MN))                                                                       \
    return f(ClusterShapeOf<BN, STAGES, CLUSTER_M, GROUP_ROWS>{});
  SMEM_TC_HOPPER_TUNED_TABLE(SMEM_TC_HOPPER_TUNED_CASE)
#undef SMEM_TC_HOPPER_TUNED_CASE
  if (2 * tiles(M, ClusterShape::kBM) * tiles(N, ClusterShape::kBN) < key.sms) return f(NarrowClusterShape{});
  return f(ClusterShape{});
}
//! [tuned hopper dispatch]

/// The plan of step 16: step 14's kernel in the tuned shape.
inline Plan<ClusterKernel> tuned_hopper_plan(int M, int N, int K, const bf16* A, int lda, const bf16* B, int ldb,
                                              const bf16* C, int ldc, const bf16* D, int ldd) {
  return with_tuned_shape(M, N, [&](auto s) {
    return overlapped_plan_with<decltype(s)>(M, N, K, A, lda, B, ldb, C, ldc, D, ldd);
  });
}

/// D = alpha * A * B + beta * C with the tuned cluster shape for this GPU and size.
inline cudaError_t tuned_hopper(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                                float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return with_tuned_shape(M, N, [&](auto s) {
    using S = decltype(s);
    return launch_tma<S>(overlapped_plan_with<S>, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream,
                         cluster_order<S>);
  });
}

}  // namespace smem::tc_gemm
