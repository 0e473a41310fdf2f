/// \file tc_gemm_11_specialized.cuh
/// \brief Step 11, warp specialization: a producer warpgroup issues the TMA loads, the consumer
/// warpgroups only compute, and `setmaxnreg` moves registers from the first to the others.
///
/// Change from step 10: the block gets a third warpgroup whose only job is the ring's producer
/// side. One of its threads waits on a stage's `empty` barrier and issues the stage's copies on its
/// `full` barrier as soon as the stage is released; the consumers never wait on `empty` and never
/// stop issuing wgmma for a copy. The producer needs almost no registers, the consumers hold 128
/// accumulators each, and one SM has 64K registers for the 384 threads: `setmaxnreg` lowers the
/// producer warpgroup to 40 registers per thread and raises the consumers to 232, which the
/// accumulators, descriptors and epilogue need without spilling.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "tc_gemm_sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "tc_gemm_11_specialized.cuh needs wgmma and setmaxnreg: compile for sm_90a (e.g. -arch=sm_90a)"
#endif

namespace smem::tc_gemm {

/// Step 10's tile and ring plus one producer warpgroup: 384 threads.
struct SpecializedShape : TmaStage<128, 256, 64> {
  static constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4, kConsumers = 2;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kProducerRegs = 40, kConsumerRegs = 232;
  static constexpr unsigned kSmemBytes = smem_bytes(kStages);
};

//! [specialized kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    specialized_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, int M,
                       int N, int K, float alpha, float beta, const bf16* C, int ldc, bf16* D, int ldd) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int BM = S::kBM, BN = S::kBN, BK = S::kBK, kStages = S::kStages;
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kStages], empty[kStages];
  bf16* smem = reinterpret_cast<bf16*>(S::LA::align(smem_raw));
  const TileCoord t = row_major_tile(int(tiles(N, BN)));
  const int m0 = t.m * BM, n0 = t.n * BN;
  const int tiles_k = int(tiles(K, BK));

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], S::kConsumers);
    fence_barrier_init();
  }
  __syncthreads();

  if (threadIdx.x < 128) {  // the producer warpgroup
    regs_down<S::kProducerRegs>();
    if (threadIdx.x == 0)
      for (int kt = 0; kt < tiles_k; ++kt) {
        const int s = kt % kStages;
        if (kt >= kStages) mbar_wait(&empty[s],
                                     unsigned(kt / kStages - 1) % 2);  // use n - 1 released
        S::load(smem + s * S::kElems, &a_map, &b_map, m0, n0, kt, &full[s]);
      }
    return;
  }

  regs_up<S::kConsumerRegs>();
  const int wg = warpgroup() - 1;  // this consumer's 64 rows
  const RingDescs<S> descs(smem);
  float acc[BN / 2] = {};
  for (int kt = 0; kt < tiles_k; ++kt) {
    const int s = kt % kStages;
    mbar_wait(&full[s], unsigned(kt / kStages) % 2);
    fence_acc(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16)
      wgmma_tile<BN>(acc, descs.a(s, 64 * wg, kk), descs.b(s, kk), true);
    wgmma_commit();
    wgmma_wait<1>();
    fence_acc(acc);
    if (kt > 0 && threadIdx.x % 128 == 0) mbar_arrive(&empty[(kt - 1) % kStages]);
  }
  wgmma_wait<0>();
  fence_acc(acc);
  store_wgmma_acc<BN>(acc, m0 + 64 * wg, n0, M, N, alpha, beta, C, ldc, D, ldd);
#else
  __trap();  // built for a target without wgmma and setmaxnreg (sm_90 without
             // "a", or sm_100)
#endif
}
//! [specialized kernel]

/// The plan of step 11: null unless A and B have 16-byte aligned rows.
inline Plan<TmaKernel> specialized_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*,
                                        int, const bf16*, int) {
  using S = SpecializedShape;
  return grid_plan<TmaKernel>(tma_rows(A, lda) && tma_rows(B, ldb) ? specialized_kernel<S> : nullptr,
                              tiles(M, S::kBM) * tiles(N, S::kBN), dim3(S::kThreads), S::kSmemBytes);
}

/// D = alpha * A * B + beta * C: a TMA producer warpgroup and two wgmma consumer warpgroups.
inline cudaError_t specialized(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                               float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return launch_tma<SpecializedShape>(specialized_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
}

}  // namespace smem::tc_gemm
