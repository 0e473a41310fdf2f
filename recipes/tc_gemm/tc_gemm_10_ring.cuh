/// \file tc_gemm_10_ring.cuh
/// \brief Step 10, a multistage mbarrier ring: full and empty barriers per stage, two consumer
/// warpgroups, and one wgmma group kept in flight.
///
/// Change from step 9: the block barrier that handed a stage back is gone. Each stage has two
/// mbarriers: `full` (TMA's bytes have landed: one arrival and the transaction count) and `empty`
/// (both warpgroups are done reading it: two arrivals). A consumer warpgroup waits on `full`,
/// issues its wgmma for the window and commits it, then waits only for the group before
/// (wgmma.wait_group 1): the tensor cores always have the next window's work queued while the
/// previous one drains, and the stage of that finished window is released on `empty`. Thread 0
/// refills a stage as soon as its `empty` phase completes, with kStages - 1 windows in flight.
/// The descriptors of every stage come from one pair built once (RingDescs): a 32-bit add per
/// wgmma instead of a descriptor built from its address.
///
/// Two warpgroups (256 threads) split a 128 x 256 tile: each owns 64 rows and issues m64n256k16,
/// 128 accumulators per thread; the four stages take 192 KB. Thread 0 is still a consumer too:
/// while it waits on `empty` its own warpgroup cannot issue (step 11 gives the copies a warp of
/// their own).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "tc_gemm_sm90.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "tc_gemm_10_ring.cuh needs wgmma: compile for sm_90a (e.g. -arch=sm_90a)"
#endif

namespace smem::tc_gemm {

/// 128 x 256 x 64 block tile, kConsumers warpgroups of 64 x 256, kStages stages.
struct RingShape : TmaStage<128, 256, 64> {
  static constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4, kConsumers = 2, kThreads = 128 * kConsumers;
  static constexpr unsigned kSmemBytes = smem_bytes(kStages);
};

//! [ring kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    ring_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, int M, int N,
                int K, float alpha, float beta, const bf16* C, int ldc, bf16* D, int ldd) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int BM = S::kBM, BN = S::kBN, BK = S::kBK, kStages = S::kStages;
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[kStages], empty[kStages];
  bf16* smem = reinterpret_cast<bf16*>(S::LA::align(smem_raw));
  const TileCoord t = row_major_tile(int(tiles(N, BN)));
  const int m0 = t.m * BM, n0 = t.n * BN;
  const int tiles_k = int(tiles(K, BK));
  const int wg = warpgroup();  // this warpgroup's 64 rows
  const RingDescs<S> descs(smem);

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1), mbar_init(&empty[s], S::kConsumers);
    fence_barrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0)
    for (int s = 0; s < kStages && s < tiles_k; ++s) S::load(smem + s * S::kElems, &a_map, &b_map, m0, n0, s, &full[s]);

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
    wgmma_wait<1>();  // window kt - 1's group is done: release its stage
    fence_acc(acc);
    if (kt > 0) {
      const int done = (kt - 1) % kStages;
      if (threadIdx.x % 128 == 0) mbar_arrive(&empty[done]);
      if (threadIdx.x == 0 && kt - 1 + kStages < tiles_k) {
        mbar_wait(&empty[done], unsigned((kt - 1) / kStages) % 2);
        S::load(smem + done * S::kElems, &a_map, &b_map, m0, n0, kt - 1 + kStages, &full[done]);
      }
    }
  }
  wgmma_wait<0>();
  fence_acc(acc);
  store_wgmma_acc<BN>(acc, m0 + 64 * wg, n0, M, N, alpha, beta, C, ldc, D, ldd);
#else
  __trap();  // built for a target without wgmma (sm_90 without "a", or sm_100)
#endif
}
//! [ring kernel]

/// The plan of step 10: null unless A and B have 16-byte aligned rows.
inline Plan<TmaKernel> ring_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*, int,
                                 const bf16*, int) {
  using S = RingShape;
  return grid_plan<TmaKernel>(tma_rows(A, lda) && tma_rows(B, ldb) ? ring_kernel<S> : nullptr,
                              tiles(M, S::kBM) * tiles(N, S::kBN), dim3(S::kThreads), S::kSmemBytes);
}

/// D = alpha * A * B + beta * C: a four-stage full/empty mbarrier ring, two consumer warpgroups.
inline cudaError_t ring(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb, float beta,
                        const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return launch_tma<RingShape>(ring_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
}

}  // namespace smem::tc_gemm
