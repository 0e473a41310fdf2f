/// \file sgemm_13_autotuned.cuh
/// \brief Step 13, shapes chosen per GPU and problem: step 12's kernel with the block, warp and
/// thread tiles and the stage count that `./cookbook tune gemm` measured fastest on GPUs like
/// this one (`autotuned`), or, for a GPU the table does not know, chosen from the GPU's
/// properties (`heuristic`).
///
/// The best tile depends on the GPU and on the problem: a 128 x 128 tile reuses each value it
/// loads more than a 64 x 64 one, but a 1000 x 1000 C has only 64 such tiles for 132 SMs, and a
/// grid that ends in a part-filled wave leaves SMs idle.
/// - **The table** is keyed on what decides the best shape: compute capability, SM count, shared
///   memory per SM and registers per SM (GPUs that agree on all four share their entries, whatever
///   their name). Each entry covers outputs up to a size M * N. `./cookbook tune gemm` times a
///   set of candidate shapes at several sizes with the benchmark and writes the fastest on the GPU
///   it runs on between the markers below (tools/tune.py).
/// - **The heuristic** estimates each of three shapes' time from the GPU's properties: the blocks
///   of the grid over the blocks the SMs hold at once (occupancy calculator: the shared memory
///   and registers decide how many fit) give whole waves, each as long as its resident tiles'
///   outputs divided by the shape's reuse (outputs per shared-memory load of a thread tile). The
///   grid that fills the SMs in the fewest, fullest waves of the most efficient tile wins.
#pragma once
#include <cuda_runtime.h>

#include "sgemm_12_multistage.cuh"

/// The tuned table, written by `./cookbook tune gemm` between the markers. Each
/// X(cc, sms, smem_per_sm, regs_per_sm, max_mn, BM, BN, BK, WM, WN, TM, TN, stages) entry says:
/// on a GPU of compute capability cc (major * 10 + minor) with `sms` SMs, `smem_per_sm` bytes of
/// shared memory and `regs_per_sm` registers per SM, for outputs of at most max_mn elements
/// (M * N), use MultistageShape<BM, BN, BK, WM, WN, TM, TN, stages>. Entries of one GPU are in
/// ascending max_mn; the tuner replaces the entries of the GPU it ran on and keeps the others.
//! [tuned table]
// BEGIN TUNED TABLE
#define SMEM_SGEMM_TUNED_TABLE(X)                                                \
  X(90, 132, 233472, 65536, 2048000LL, 64, 128, 16, 32, 64, 8, 8, 4)             \
  X(90, 132, 233472, 65536, 8388608LL, 128, 128, 16, 64, 32, 8, 8, 3)            \
  X(90, 132, 233472, 65536, 9223372036854775807LL, 64, 128, 16, 32, 64, 8, 8, 4)
// END TUNED TABLE
//! [tuned table]

namespace smem::gemm {

namespace detail {

/// Blocks of shape T's kernel that one SM holds at once (occupancy calculator, after the opt-in
/// to its dynamic shared memory), once per device; 0 when it does not fit or on error.
template <class T>
int resident_blocks() {
  static PerDevice<int, kMaxDevices> resident;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMaxDevices) return 0;
  return *resident.made_once(dev, [](int& blocks) {
    if (cudaFuncSetAttribute(multistage_kernel<T, true, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             T::kSmemBytes) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, multistage_kernel<T, true, false>, T::kThreads,
                                                      T::kSmemBytes) != cudaSuccess) {
      cudaGetLastError();
      blocks = 0;
    }
    return true;  // kept, 0 included
  });
}

}  // namespace detail

/// Every shape of step 13 (the heuristic's and the tuned table's) has tiles of at least
/// kMinTile x kMinTile, so a grid of tile_blocks(M, N, kMinTile, kMinTile) blocks bounds all
/// of theirs: within kMaxGridBlocks every shape runs, beyond it the step refuses, whatever the
/// GPU and the table (decided before any device query).
inline constexpr int kMinTile = 64;
inline bool tuned_grid_fits(int M, int N) { return tile_blocks(M, N, kMinTile, kMinTile) <= kMaxGridBlocks; }

//! [heuristic]
/// The shapes the heuristic chooses from: one tile for large outputs, one with twice the blocks,
/// one with four times the blocks and a smaller thread tile.
using HeuristicLarge = MultistageShape<128, 128, 32, 64, 32, 8, 8, 3>;
using HeuristicMedium = MultistageShape<64, 128, 16, 32, 64, 8, 8, 4>;
using HeuristicSmall = MultistageShape<64, 64, 16, 32, 32, 8, 4, 3>;

/// The heuristic's estimate of shape T's time for an M x N output on `sms` SMs, in arbitrary
/// units: whole waves of the grid, each as long as the outputs of the blocks one SM holds at once
/// divided by the thread tile's reuse (outputs per float4 shared-memory load). Infinite when the
/// shape does not fit on an SM.
template <class T>
double heuristic_cost(int M, int N, int sms) {
  const int r = detail::resident_blocks<T>();
  if (r <= 0 || sms <= 0) return 1e300;
  const double blocks = double(tiles(M, T::kBM)) * double(tiles(N, T::kBN));
  const double per_wave = double(sms) * r;
  const double waves = double((long long)((blocks + per_wave - 1) / per_wave));
  const double reuse = 4.0 * T::kTM * T::kTN / (T::kTM + T::kTN);
  return waves * r * T::kBM * T::kBN / reuse;
}

//! [split choice]
/// The split for shape T (split_tail): none unless the grid takes more than one wave and its
/// last wave of tiles would fill at most half of the block slots (the blocks the SMs hold at
/// once); then the tile rows holding that wave are split along K into as many parts as fill the
/// slots, each part at least two K-tiles long. Their blocks then run as one short wave instead
/// of one long, part-empty one. No split either where it would take the grid past kMaxGridBlocks.
template <class T>
TailSplit tail_split(int M, int N, int K) {
  const TailSplit none{0, 1, M};
  const long long slots = static_cast<long long>(detail::resident_blocks<T>()) * detail::gpu_key().sms;
  const long long tm = tiles(M, T::kBM), tn = tiles(N, T::kBN), last = slots > 0 ? tm * tn % slots : 0;
  if (tm * tn <= slots || last == 0 || 2 * last > slots) return none;
  const long long rows = (last + tn - 1) / tn;
  long long parts = slots / (rows * tn);
  if (parts > tiles(K, T::kBK) / 2) parts = tiles(K, T::kBK) / 2;
  if (parts < 2 || (tm - rows + rows * parts) * tn > kMaxGridBlocks) return none;
  return {int(rows), int(parts), int((tm - rows) * T::kBM)};
}

/// Shape T's plan, with its tail split when `split`.
template <class T>
MultistagePlan shape_plan(int M, int N, int K, const float* B, int ldb, bool split) {
  static_assert(T::kBM >= kMinTile && T::kBN >= kMinTile, "tuned_grid_fits() bounds the grids of 64 x 64 tiles up");
  return multistage_plan_with<T>(M, N, B, ldb, split ? tail_split<T>(M, N, K) : TailSplit{0, 1, M});
}
//! [split choice]

/// The plan of the shape with the lowest heuristic_cost. The large and the medium tile tie
/// wherever their grids take the same number of waves (twice the blocks of half the size, and
/// twice as many resident); the medium one then wins: `./cookbook tune gemm` timed it about as
/// fast at 2048^3 and faster at 4096^3 and 8192^3 on the H100 and the H200, and the benchmark much
/// faster where B's rows are not 16-byte aligned (results/). Other ties go to the larger tile.
inline MultistagePlan heuristic_plan_split(int M, int N, int K, const float* B, int ldb, bool split) {
  if (!tuned_grid_fits(M, N)) return {};
  const int sms = detail::gpu_key().sms;
  const double large = heuristic_cost<HeuristicLarge>(M, N, sms);
  const double medium = heuristic_cost<HeuristicMedium>(M, N, sms);
  const double small = heuristic_cost<HeuristicSmall>(M, N, sms);
  if (large < medium && large <= small) return shape_plan<HeuristicLarge>(M, N, K, B, ldb, split);
  if (medium <= small) return shape_plan<HeuristicMedium>(M, N, K, B, ldb, split);
  return shape_plan<HeuristicSmall>(M, N, K, B, ldb, split);
}
inline MultistagePlan heuristic_plan(int M, int N, int K, const float*, int, const float* B, int ldb, const float*,
                                     int) {
  return heuristic_plan_split(M, N, K, B, ldb, false);
}
//! [heuristic]

//! [autotuned dispatch]
/// The tuned table's entry for this GPU and output size, or the heuristic's choice where the
/// table has none; its tail split when `split`. The table is expanded here only.
inline MultistagePlan autotuned_plan_split(int M, int N, int K, const float* B, int ldb, bool split) {
  if (!tuned_grid_fits(M, N)) return {};
  const detail::GpuKey key = detail::gpu_key();
  const long long mn = static_cast<long long>(M) * N;
#define SMEM_SGEMM_TUNED_CASE(CC, SMS, SMEM, REGS, MAX_MN, BM, BN, BK, WM, WN, TM, TN, S)                  \
  if (key.cc == (CC) && key.sms == (SMS) && key.smem_per_sm == (SMEM) && key.regs_per_sm == (REGS) && \
      mn <= (long long)(MAX_MN))                                                                       \
    return shape_plan<MultistageShape<BM, BN, BK, WM, WN, TM, TN, S>>(M, N, K, B, ldb, split);
  SMEM_SGEMM_TUNED_TABLE(SMEM_SGEMM_TUNED_CASE)
#undef SMEM_SGEMM_TUNED_CASE
  return heuristic_plan_split(M, N, K, B, ldb, split);
}
inline MultistagePlan autotuned_plan(int M, int N, int K, const float*, int, const float* B, int ldb, const float*,
                                     int) {
  return autotuned_plan_split(M, N, K, B, ldb, false);
}
//! [autotuned dispatch]

/// The autotuned shape with its last part-filled wave split along K (tail_split).
inline MultistagePlan split_tail_plan(int M, int N, int K, const float*, int, const float* B, int ldb, const float*,
                                      int) {
  return autotuned_plan_split(M, N, K, B, ldb, true);
}

/// Launches the plan `plan_of` gives for these arguments (heuristic_plan, autotuned_plan or
/// split_tail_plan).
template <class PlanOf>
cudaError_t tuned_launch(PlanOf plan_of, int M, int N, int K, float alpha, const float* A, int lda, const float* B,
                         int ldb, float beta, float* C, int ldc, cudaStream_t stream) {
  // Arguments first: no CUDA call (the device queries) before they are checked.
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch_multistage(plan_of(M, N, K, A, lda, B, ldb, C, ldc), M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                           stream);
}

/// C = alpha * A * B + beta * C, row-major, with the heuristic's shape (no table).
inline cudaError_t heuristic(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                             float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  return tuned_launch(heuristic_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

/// C = alpha * A * B + beta * C, row-major, with the tuned shape for this GPU and size.
inline cudaError_t autotuned(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                             float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  return tuned_launch(autotuned_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

/// C = alpha * A * B + beta * C, row-major, with the tuned shape, the last part-filled wave of
/// tiles split along K (tail_split). Not bitwise reproducible where it splits: the parts of a
/// tile add into C with atomics, in whichever order they finish.
inline cudaError_t split_tail(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                              float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  return tuned_launch(split_tail_plan, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

}  // namespace smem::gemm
