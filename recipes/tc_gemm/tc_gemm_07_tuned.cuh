/// \file tc_gemm_07_tuned.cuh
/// \brief Step 7, the block, warp and stage shape chosen per GPU and problem: step 6's kernel
/// with the shape a tuner measured fastest on GPUs like this one (`tuned`), or one chosen from
/// the GPU's properties where the table has no entry (`tuned_heuristic`).
///
/// The selection is the SIMT SGEMM's (recipes/gemm/sgemm_13_autotuned.cuh): a table keyed on
/// compute capability, SM count, shared memory and registers per SM, one entry per output-size
/// class; and a heuristic that, for each of three shapes, counts the waves of resident blocks
/// the grid needs (the occupancy calculator says how many blocks fit an SM) and weighs them by
/// the warp tile's reuse (mma tiles per fragment loaded), so that a small D gets smaller blocks
/// that fill the SMs and a large one the most efficient tile.
#pragma once
#include <cuda_runtime.h>

#include "tc_gemm_06_multistage.cuh"

//! [tuned table]
/// The tuned table: X(cc, sms, smem_per_sm, regs_per_sm, max_mn, BM, BN, BK, WM, WN, stages)
/// entries, as in the SGEMM's; the first entry of the GPU's key whose max_mn is at least M N is
/// taken. `./cookbook tune tc_gemm` writes a GPU's entries from its timings of the benchmark's
/// candidate shapes (tools/tune.py says how it picks them); the H100's run is
/// `results/h100-80gb-hbm3/tc_gemm_tune.json`. The H100 and the H200 have the same key (compute
/// capability 9.0, 132 SMs, 228 KB of shared memory and 65536 registers per SM), so they share
/// their entries: outputs up to 1024 x 1024 take 128 x 64 blocks, which fill the SMs; larger ones
/// 256 x 128 blocks of eight 64 x 64 warps.
// BEGIN TUNED TABLE
#define SMEM_TC_TUNED_TABLE(X)                                              \
  X(90, 132, 233472, 65536, 1048576LL, 128, 64, 64, 64, 32, 4)              \
  X(90, 132, 233472, 65536, 9223372036854775807LL, 256, 128, 64, 64, 64, 3)
// END TUNED TABLE
//! [tuned table]

namespace smem::tc_gemm {

namespace detail {

/// Blocks of shape S's kernel one SM holds at once, once per device; 0 when it does not fit.
template <class S>
int resident_blocks() {
  static PerDevice<int, kMaxDevices> resident;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return 0;
  return *resident.made_once(dev, [](int& blocks) {
    if (cudaFuncSetAttribute(multistage_kernel<S, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             S::kSmemBytes) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, multistage_kernel<S, true>, S::kThreads,
                                                      S::kSmemBytes) != cudaSuccess) {
      cudaGetLastError();
      blocks = 0;
    }
    return true;  // kept, 0 included
  });
}

}  // namespace detail

//! [heuristic]
/// The shapes the heuristic chooses from.
using HeuristicLarge = TcShape<128, 256, 64, 64, 64, 3>;
using HeuristicMedium = TcShape<128, 128, 64, 64, 32, 4>;
using HeuristicSmall = TcShape<64, 128, 64, 32, 64, 4>;

/// Whole waves of the grid over the blocks the SMs hold at once, each as long as those blocks'
/// outputs divided by the warp tile's reuse (WM WN / (WM + WN)); infinite if S does not fit.
template <class S>
double heuristic_cost(int M, int N, int sms) {
  const int r = detail::resident_blocks<S>();
  if (r <= 0 || sms <= 0) return 1e300;
  const double blocks = double(tiles(M, S::kBM)) * double(tiles(N, S::kBN));
  const double per_wave = double(sms) * r;
  const double waves = double((long long)((blocks + per_wave - 1) / per_wave));
  const double reuse = double(S::kWM) * S::kWN / (S::kWM + S::kWN);
  return waves * r * S::kBM * S::kBN / reuse;
}

inline Plan<TcKernel> tuned_heuristic_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb,
                                           const bf16*, int, const bf16*, int) {
  const int sms = detail::gpu_key().sms;
  const double large = heuristic_cost<HeuristicLarge>(M, N, sms);
  const double medium = heuristic_cost<HeuristicMedium>(M, N, sms);
  const double small = heuristic_cost<HeuristicSmall>(M, N, sms);
  if (large <= medium && large <= small) return multistage_plan_with<HeuristicLarge>(M, N, A, lda, B, ldb);
  if (medium <= small) return multistage_plan_with<HeuristicMedium>(M, N, A, lda, B, ldb);
  return multistage_plan_with<HeuristicSmall>(M, N, A, lda, B, ldb);
}
//! [heuristic]

//! [tuned dispatch]
/// The tuned table's entry for this GPU and output size, or the heuristic's choice.
inline Plan<TcKernel> tuned_plan(int M, int N, int K, const bf16* A, int lda, const bf16* B, int ldb, const bf16* C,
                                 int ldc, const bf16* D, int ldd) {
  const detail::GpuKey key = detail::gpu_key();
  const long long mn = static_cast<long long>(M) * N;
  (void)key, (void)mn;
#define SMEM_TC_TUNED_CASE(CC, SMS, SMEM, REGS, MAX_MN, BM, BN, BK, WM, WN, STAGES)                        \
  if (key.cc == (CC) && key.sms == (SMS) && key.smem_per_sm == (SMEM) && key.regs_per_sm == (REGS) && \
      mn <= (long long)(MAX_MN))                                                                       \
    return multistage_plan_with<TcShape<BM, BN, BK, WM, WN, STAGES>>(M, N, A, lda, B, ldb);
  SMEM_TC_TUNED_TABLE(SMEM_TC_TUNED_CASE)
#undef SMEM_TC_TUNED_CASE
  return tuned_heuristic_plan(M, N, K, A, lda, B, ldb, C, ldc, D, ldd);
}
//! [tuned dispatch]

/// Launches the plan `plan_of` gives for these arguments.
template <class PlanOf>
cudaError_t tuned_launch(PlanOf plan_of, int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B,
                         int ldb, float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream) {
  // Arguments first: no CUDA call (the device queries) before they are checked.
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, D, ldd, stream);
  return launch(plan_of(M, N, K, A, lda, B, ldb, C, ldc, D, ldd), stream, M, N, K, alpha, A, lda, B, ldb, beta, C,
                ldc, D, ldd);
}

/// D = alpha * A * B + beta * C with the heuristic's shape (no table).
inline cudaError_t tuned_heuristic(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                                   float beta, const bf16* C, int ldc, bf16* D, int ldd,
                                   cudaStream_t stream = nullptr) {
  return tuned_launch(tuned_heuristic_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
}

/// D = alpha * A * B + beta * C with the tuned shape for this GPU and size.
inline cudaError_t tuned(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb, float beta,
                         const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return tuned_launch(tuned_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
}

}  // namespace smem::tc_gemm
