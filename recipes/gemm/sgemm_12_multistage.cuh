/// \file sgemm_12_multistage.cuh
/// \brief Step 12, multistage pipeline: `cp.async` copies global memory straight into a ring of
/// kStages shared-memory tiles, several K-tiles ahead of the compute, with one barrier per
/// K-tile; dynamic shared memory beyond the 48 KB static limit.
///
/// Step 11 stages the next K-tile through registers: the loads must land before the thread can
/// store them, which costs registers (the staging array) and ties one K-tile of latency to the
/// compute of one K-tile. `cp.async` (sm_80+) moves global memory to shared memory without
/// registers and completes in commit groups; with kStages buffers, kStages - 1 K-tiles are in
/// flight while one is computed. A copy of 4 bytes may go to any shared address, so the A tile is
/// still stored transposed (As[k][m]), one word per copy, with the lanes of a warp covering 8 K
/// values x 4 rows: the padded row (BM + 4 floats) puts those 32 words in 32 different banks.
/// B goes in 16-byte copies. The copy's source size operand zero-fills what lies past M, N or
/// K, so partial tiles need no separate path; B falls back to 4-byte copies when its pointer or
/// leading dimension is not a multiple of 16 bytes.
///
/// The loop (per K-tile kt, stage kt % kStages):
/// - at its first k, the copies for K-tile kt + kStages - 1 go into the stage that K-tile
///   kt - 1 used (every thread passed the barrier after its last read of it);
/// - at its last k, `cp.async.wait_group kStages - 2` (K-tile kt + 1 has landed for this
///   thread) and `__syncthreads()` (for every thread); then the first fragments of K-tile kt + 1
///   are read before the last outer product of K-tile kt, so the barrier does not drain the
///   fragment pipeline.
///
/// The outer products walk the thread tile's rows in serpentine order (outer_product) where it
/// holds 64 outputs or more: with this kernel's loop, ptxas then leaves fewer warps waiting on
/// the fragment reads (short-scoreboard stalls in Nsight Compute); smaller thread tiles keep row
/// order, which measured faster for them.
///
/// Blocks inside C in both dimensions take an unpredicated copy path (an address add per copy
/// instead of a bounds check); where K is also a whole number of K-tiles, they run a copy of the
/// main loop compiled with that path alone (a compile-time flag), so no K-tile tests which path it
/// takes. The one fixed shape (MultistageDefault) is large: a small C leaves SMs idle, which is
/// what step 13's tuned shapes fix.
///
/// The kernel can also split the bottom tile rows of C along K (TailSplit): step 13's
/// `split_tail` uses it to spread a last, part-filled wave of tiles over all the SMs. This
/// step's own launcher splits nothing.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "gemm_common.cuh"
#include "gemm_sm80.cuh"

namespace smem::gemm {

/// A WarpTiling with a number of pipeline stages.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int Stages>
struct MultistageShape : WarpTiling<BM, BN, BK, WM, WN, TM, TN> {
  static_assert(Stages >= 2, "at least two stages");
  static constexpr int kStages = Stages;
  static constexpr int kStageFloats = WarpTiling<BM, BN, BK, WM, WN, TM, TN>::kAFloats +
                                      WarpTiling<BM, BN, BK, WM, WN, TM, TN>::kBFloats;
  static constexpr int kSmemBytes = Stages * kStageFloats * int(sizeof(float));
  /// Copy mapping of A: thread t copies rows t / 8 + p * kARowsPerPass (pass p) and columns
  /// k = t % 8 + 8 c (chunk c) of the tile, so a warp's 32 copies are 4 rows x 8 consecutive k:
  /// 32 bytes of each row (whole sectors) and, in As[k][m], 32 different banks.
  static constexpr int kARowsPerPass = WarpTiling<BM, BN, BK, WM, WN, TM, TN>::kThreads / 8;
  static constexpr int kAPasses = BM / kARowsPerPass, kAChunks = BK / 8;
  static_assert(BM % kARowsPerPass == 0, "the A copy passes must tile BM");
  __host__ __device__ static constexpr int a_copy_row(int t, int p) { return t / 8 + p * kARowsPerPass; }
  __host__ __device__ static constexpr int a_copy_k(int t, int c) { return t % 8 + 8 * c; }
  /// Copy mapping of B: thread t copies the float4 at row t / (BN / 4) + q * kBRowsPerPass,
  /// columns 4 (t % (BN / 4)) .. + 3: a warp covers 512 contiguous bytes of a row.
  static constexpr int kBRowsPerPass = WarpTiling<BM, BN, BK, WM, WN, TM, TN>::kThreads / (BN / 4);
  static constexpr int kBPasses = BK / kBRowsPerPass;
  static_assert(kBRowsPerPass >= 1 && BK % kBRowsPerPass == 0, "the B copy passes must tile BK");
  __host__ __device__ static constexpr int b_copy_row(int t, int q) { return t / (BN / 4) + q * kBRowsPerPass; }
  __host__ __device__ static constexpr int b_copy_col(int t) { return t % (BN / 4) * 4; }
};

//! [tail split]
/// Which tiles of C a multistage grid splits along K: the last `rows` tile rows (from row
/// `first_row` of C on), each tile in `parts` blocks over consecutive ranges of K-tiles. A split
/// tile's blocks add alpha times their products into C with atomics, in any order, so C must hold
/// beta C there before the kernel runs (launch_multistage sees to it). {0, 1, M}: no split.
struct TailSplit {
  int rows, parts, first_row;
};

//! [tail split]

//! [multistage kernel]
/// kVecB: B and ldb allow 16-byte copies. C and ldc allowing float4 stores: `cvec`. kSplit: the
/// grid splits tiles as `tail` says (the first blocks take the whole tiles above the split rows,
/// in groups; the others one K range each of a split tile); without it `tail` is not read, and
/// the kernel carries none of the split's code (its registers are step 12's alone).
template <class T, bool kVecB, bool kSplit>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    multistage_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                            const float* __restrict__ B, int ldb, float beta, float* __restrict__ C,
                            int ldc, bool cvec, TailSplit tail) {
  constexpr int BM = T::kBM, BN = T::kBN, BK = T::kBK, S = T::kStages;
  extern __shared__ __align__(16) float smem[];  // S stages of [As | Bs]

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int tiles_n = tiles(N, BN), whole_rows = tiles(M, BM) - (kSplit ? tail.rows : 0);
  const int pid = int(blockIdx.x), whole = whole_rows * tiles_n, all_k = tiles(K, BK);
  const bool split = kSplit && pid >= whole;
  TileCoord blk;
  int kt0 = 0, kt1 = all_k;  // this block's K-tiles
  if (!split) {
    blk = grouped_block(whole_rows, tiles_n, pid);
  } else {
    const int t = (pid - whole) / tail.parts, part = (pid - whole) % tail.parts;
    blk = {whole_rows + t / tiles_n, t % tiles_n};
    kt0 = int(static_cast<long long>(all_k) * part / tail.parts);
    kt1 = int(static_cast<long long>(all_k) * (part + 1) / tail.parts);
  }
  const int m0 = blk.m * BM, n0 = blk.n * BN;
  const int tiles_k = kt1 - kt0;

  // Copy sources, fixed for the kernel: the thread's first A row and B row; passes add whole
  // rows. A block inside C in both dimensions takes the unpredicated path for every K-tile but
  // a partial last one, so the copies cost an address add each, not a bounds check.
  const int a_m = T::a_copy_row(tid, 0), a_k = T::a_copy_k(tid, 0);
  const int b_k = T::b_copy_row(tid, 0), b_n = T::b_copy_col(tid);
  const float* a_src = A + std::size_t(m0 + a_m < M ? m0 + a_m : 0) * lda + a_k;
  const float* b_src = B + std::size_t(b_k) * ldb + n0 + b_n;
  const bool interior = m0 <= M - BM && n0 <= N - BN;  // not m0 + BM <= M: 2^31 at M near INT_MAX
  const std::size_t a_pass = std::size_t(T::kARowsPerPass) * lda;
  const std::size_t b_pass = std::size_t(T::kBRowsPerPass) * ldb;

  auto load_tile = [&](auto fast, int stage, int kt) {
    float* As = smem + stage * T::kStageFloats + T::a_offset(a_k, a_m);
    float* Bs = smem + stage * T::kStageFloats + T::kAFloats + T::b_offset(b_k, b_n);
    const int k0 = (kt0 + kt) * BK;
    const float* a = a_src + k0;
    const float* b = b_src + std::size_t(k0) * ldb;
    if (decltype(fast)::value || (interior && k0 <= K - BK)) {
#pragma unroll
      for (int p = 0; p < T::kAPasses; ++p)
#pragma unroll
        for (int c = 0; c < T::kAChunks; ++c)
          cp_async_4(As + T::a_offset(8 * c, p * T::kARowsPerPass), a + p * a_pass + 8 * c, 4);
#pragma unroll
      for (int q = 0; q < T::kBPasses; ++q) {
        if constexpr (kVecB) {
          cp_async_16(Bs + T::b_offset(q * T::kBRowsPerPass, 0), b + q * b_pass, 16);
        } else {
#pragma unroll
          for (int c = 0; c < 4; ++c)
            cp_async_4(Bs + T::b_offset(q * T::kBRowsPerPass, c), b + q * b_pass + c, 4);
        }
      }
      return;
    }
    if constexpr (!decltype(fast)::value) {
      // Edge tiles: what lies past M, N or K is zero-filled (source size 0, source address A or B).
#pragma unroll
      for (int p = 0; p < T::kAPasses; ++p) {
        const bool row_ok = m0 + a_m + p * T::kARowsPerPass < M;
#pragma unroll
        for (int c = 0; c < T::kAChunks; ++c) {
          const bool ok = row_ok && k0 + a_k + 8 * c < K;
          cp_async_4(As + T::a_offset(8 * c, p * T::kARowsPerPass),
                     ok ? a + p * a_pass + 8 * c : A, ok ? 4 : 0);
        }
      }
#pragma unroll
      for (int q = 0; q < T::kBPasses; ++q) {
        const int gk = k0 + b_k + q * T::kBRowsPerPass, gn = n0 + b_n;
        const float* row = b + q * b_pass;
        if constexpr (kVecB) {
          const int bytes = gk < K ? (N - gn >= 4 ? 16 : N - gn > 0 ? 4 * (N - gn) : 0) : 0;
          cp_async_16(Bs + T::b_offset(q * T::kBRowsPerPass, 0), bytes ? row : B, bytes);
        } else {
#pragma unroll
          for (int c = 0; c < 4; ++c) {
            const bool ok = gk < K && gn + c < N;
            cp_async_4(Bs + T::b_offset(q * T::kBRowsPerPass, c), ok ? row + c : B, ok ? 4 : 0);
          }
        }
      }
    }
  };

  // Prologue: K-tiles 0 .. S - 2 in flight, one commit group each (empty past the end).
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < tiles_k) load_tile(std::false_type{}, s, s);
    cp_async_commit();
  }
  cp_async_wait<S - 2>();
  __syncthreads();

  float acc[T::kTM][T::kTN] = {};
  float a[2][T::kTM], b[2][T::kTN];
  int read = 0, write = S - 1;
  const float* As = smem;
  const float* Bs = smem + T::kAFloats;
  load_fragments<T>(As, Bs, 0, warp, lane, a[0], b[0]);
  // fast: a compile-time flag, true for a block inside C whose K is a whole number of K-tiles.
  auto main_loop = [&](auto fast) {
    for (int kt = 0; kt < tiles_k; ++kt) {
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        if (k == 0) {  // refill the stage K-tile kt - 1 used
          if (kt + S - 1 < tiles_k) load_tile(fast, write, kt + S - 1);
          cp_async_commit();
          write = write + 1 == S ? 0 : write + 1;
        }
        if (k < BK - 1) {
          load_fragments<T>(As, Bs, k + 1, warp, lane, a[(k + 1) % 2], b[(k + 1) % 2]);
        } else if (kt + 1 < tiles_k) {  // move to the next stage: one barrier per K-tile
          cp_async_wait<S - 2>();
          __syncthreads();
          read = read + 1 == S ? 0 : read + 1;
          As = smem + read * T::kStageFloats;
          Bs = As + T::kAFloats;
          load_fragments<T>(As, Bs, 0, warp, lane, a[0], b[0]);
        }
        outer_product<T, (T::kTM * T::kTN >= 64)>(acc, a[k % 2], b[k % 2]);
      }
    }
  };
  if (interior && K % BK == 0)
    main_loop(std::true_type{});
  else
    main_loop(std::false_type{});
  cp_async_wait<0>();  // nothing real is pending; leave no copy behind the block's exit
  if constexpr (kSplit) {
    if (split) {  // C holds beta C already: add alpha times this K range's products
      store_tile<T, true>(acc, m0, n0, warp, lane, M, N, alpha, beta, C, ldc, cvec);
      return;
    }
  }
  store_tile<T>(acc, m0, n0, warp, lane, M, N, alpha, beta, C, ldc, cvec);
}
//! [multistage kernel]

/// The kernel of steps 12 and 13: (M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, cvec, tail).
using MultistageKernel = void (*)(int, int, int, float, const float*, int, const float*, int, float, float*, int,
                                  bool, TailSplit);

/// A multistage launch: the plan, and the split its grid is laid out for.
struct MultistagePlan {
  Plan<MultistageKernel> plan;
  TailSplit tail;
  Plan<const void*> erased() const { return plan.erased(); }
};

/// The plan of multistage_kernel with MultistageShape T and split `tail`: a block per whole tile
/// and `parts` per split tile; 16-byte B copies where B and ldb allow them; T::kSmemBytes of
/// dynamic shared memory (launch() opts in above 48 KB).
template <class T>
MultistagePlan multistage_plan_with(int M, int N, const float* B, int ldb, TailSplit tail) {
  const bool vec_b = ldb % 4 == 0 && aligned16(B), split = tail.parts > 1;
  const long long tn = tiles(N, T::kBN);
  const long long blocks = (tiles(M, T::kBM) - tail.rows + static_cast<long long>(tail.rows) * tail.parts) * tn;
  const MultistageKernel k = split ? (vec_b ? multistage_kernel<T, true, true> : multistage_kernel<T, false, true>)
                                   : (vec_b ? multistage_kernel<T, true, false> : multistage_kernel<T, false, false>);
  return {grid_plan(k, blocks, dim3(T::kThreads), unsigned(T::kSmemBytes)), tail};
}
template <class T>
MultistagePlan multistage_plan_with(int M, int N, const float* B, int ldb) {
  return multistage_plan_with<T>(M, N, B, ldb, TailSplit{0, 1, M});
}

/// Launches a checked multistage plan: where it splits tiles, first C = beta C over their rows
/// (the kernel's split blocks only add to C), then the kernel.
inline cudaError_t launch_multistage(const MultistagePlan& p, int M, int N, int K, float alpha, const float* A,
                                     int lda, const float* B, int ldb, float beta, float* C, int ldc,
                                     cudaStream_t stream) {
  if (p.plan.kernel == nullptr) return cudaErrorInvalidValue;
  if (p.tail.parts > 1 && beta != 1.0f) {
    const std::size_t total = std::size_t(M - p.tail.first_row) * N;
    const unsigned blocks = unsigned(total < 4096u * 256u ? (total + 255) / 256 : 4096u);
    scale_c_kernel<float><<<blocks, 256, 0, stream>>>(M - p.tail.first_row, N, beta,
                                                      C + std::size_t(p.tail.first_row) * ldc, ldc);
  }
  const bool cvec = ldc % 4 == 0 && aligned16(C);
  return launch(p.plan, stream, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, cvec, p.tail);
}

/// C = alpha * A * B + beta * C with any MultistageShape T; any sizes and leading dimensions.
template <class T>
cudaError_t multistage_with(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                            float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch_multistage(multistage_plan_with<T>(M, N, B, ldb), M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                           stream);
}

/// The shape of step 12: 128 x 256 x 16 block tile, 8 warps of 64 x 64, 8 x 16 per thread,
/// 3 stages: 3 x (16 x 132 + 16 x 256) x 4 B = 74.5 KB of dynamic shared memory.
using MultistageDefault = MultistageShape<128, 256, 16, 64, 64, 8, 16, 3>;

inline MultistagePlan multistage_plan(int M, int N, int, const float*, int, const float* B, int ldb,
                                            const float*, int) {
  return multistage_plan_with<MultistageDefault>(M, N, B, ldb);
}

/// C = alpha * A * B + beta * C, row-major, cp.async multistage pipeline (MultistageDefault).
inline cudaError_t multistage(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                              float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  return multistage_with<MultistageDefault>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

}  // namespace smem::gemm
