/// \file tc_gemm_06_multistage.cuh
/// \brief Step 6, multistage `cp.async` pipeline with warp tiling: the seeds' double buffering,
/// generalized to a ring of N stages, feeding step 5's swizzled tiles and mma.sync.
///
/// Change from step 5: the tiles are no longer copied through registers between two barriers.
/// `cp.async` moves 16-byte chunks from global memory straight into shared memory and completes
/// in commit groups, so the block keeps Stages - 1 K-windows in flight while it computes one.
/// Before the last step of a window it waits for the next window's group
/// (`cp.async.wait_group Stages - 2`) and passes one barrier, which also tells it that every warp
/// finished the window before, whose stage it refills during the next. One barrier per window
/// instead of two, the load latency hidden behind Stages - 1 windows of mma.sync, and the
/// fragments of the next step of 16 loaded while the current one multiplies.
/// The refill comes in two halves, A's tile at a window's first step and B's at its middle step.
/// A `cp.async` holds its address registers until the memory pipe takes it, and ptxas gives the
/// next copies and ldmatrix those registers: in one burst of all the copies, warps stalled on them
/// (long scoreboard); in two halves each burst waits behind fewer.
/// Two details keep the loop's instructions few: each lane computes its swizzled ldmatrix offsets
/// once (LaneFrags), and a block whose every window lies inside A and B runs a copy of the loop
/// without the bounds-checked copies; with 64 x 64 warp tiles ptxas still spills registers, but
/// only in the other loop.
/// Blocks take their tiles in groups of eight tile-rows, column by column (grouped_tile, as step
/// 13's scheduler does): a wave then reads a few panels of A and B from L2, where row by row it
/// read all of B again from DRAM once B outgrows L2.
/// The block, warp and stage shape is a template parameter (TcShape): more warps per block and
/// larger warp tiles mean more mma.sync per ldmatrix; the dynamic shared memory (Stages x 48 KB
/// for 128 x 256 x 64) goes past the 48 KB static limit, so the launch opts in.
///
/// Operands whose rows are not 16-byte aligned cannot use 16-byte `cp.async`; the same kernel
/// then fills each stage with element-wise loads through registers (correct, without overlap).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

#include "tc_gemm_sm80.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "tc_gemm_06_multistage.cuh needs cp.async and bf16 mma.sync: compile for sm_80 or newer (e.g. -arch=sm_80)"
#endif

namespace smem::tc_gemm {

//! [cp.async]
/// 16-byte copy global -> shared; bytes past src_bytes (0 to 16) are zero-filled.
__device__ __forceinline__ void cp_async_16(bf16* dst, const bf16* src, int src_bytes) {
  const unsigned s = unsigned(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

/// load_tile's copy with `cp.async` (16-byte aligned rows only): no registers, completion by commit
/// groups; what lies past the matrix is zero-filled by the copy's source size. The corner as there.
template <int ROWS, int COLS, int kThreads, class Layout>
__device__ __forceinline__ void copy_tile_async(bf16* s, const bf16* g, int ld, int r0, int c0, int rows_total,
                                                int cols_total) {
  static_assert(ROWS * COLS % (8 * kThreads) == 0, "every thread copies the same number of chunks");
  static_assert((ROWS & (ROWS - 1)) == 0 && (COLS & (COLS - 1)) == 0, "power-of-two tiles: no overflow");
#pragma unroll
  for (int i = 0; i < ROWS * COLS / (8 * kThreads); ++i) {
    const int r = chunk_row(threadIdx.x, i, kThreads, COLS), c = chunk_col(threadIdx.x, i, kThreads, COLS);
    const int gr = r0 + r, gc = c0 + c;
    const int left = cols_total - gc;  // elements of this row from gc on
    const int bytes = gr < rows_total && left > 0 ? (left >= 8 ? 16 : 2 * left) : 0;
    cp_async_16(s + Layout::offset(r, c), bytes ? g + std::size_t(gr) * ld + gc : g, bytes);
  }
}

/// copy_tile_async for a tile wholly inside the matrix: no bounds, no zero fill. `g` and `s`
/// point at the thread's first chunk (copy 0) in global and shared memory; copy i is kRowsPerPass
/// rows further in both, which in a swizzled tile is the same chunk column because the swizzle
/// repeats every 8 rows. Two address adds per 16 bytes instead of a bounds check.
template <int ROWS, int COLS, int kThreads, class Layout>
__device__ __forceinline__ void copy_tile_async_interior(bf16* s, const bf16* g, int ld) {
  constexpr int kRowsPerPass = kThreads * 8 / COLS;
  static_assert(kRowsPerPass % 8 == 0 && ROWS % kRowsPerPass == 0, "whole passes of 8-row swizzle periods");
#pragma unroll
  for (int i = 0; i < ROWS / kRowsPerPass; ++i)
    cp_async_16(s + i * kRowsPerPass * Layout::kLd, g + std::size_t(i) * kRowsPerPass * ld, 16);
}
//! [cp.async]

//! [shape]
/// Block tile BM x BN x BK, warp tile WM x WN, Stages shared-memory stages of swizzled tiles.
template <int BM, int BN, int BK, int WM, int WN, int Stages>
struct TcShape {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kWM = WM, kWN = WN, kStages = Stages;
  static constexpr int kGroupRows = 8;  ///< tile-rows per group of the block order (grouped_tile)
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN, kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kMI = WM / 16, kNJ = WN / 8;  ///< the warp's mma tiles of 16 x 8
  using LA = SwizzledTile<BK>;
  using LB = SwizzledTile<BN>;
  static constexpr int kAElems = BM * BK, kStageElems = BM * BK + BK * BN;
  static constexpr int kSmemBytes = Stages * kStageElems * int(sizeof(bf16));
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "whole warp and mma tiles");
  static_assert(BK % 64 == 0 && Stages >= 2, "128-byte swizzled rows, at least two stages");
};
//! [shape]

//! [lane frags]
/// This lane's ldmatrix rows in a stage, as byte offsets computed once. The swizzle of a row
/// depends only on row % 8, so A's row blocks 16 rows apart, and B's steps of 16 rows, are one
/// offset plus a constant: each ldmatrix then costs one add to a register, not a swizzle.
template <class S>
struct LaneFrags {
  static constexpr int kSteps = S::kBK / 16;
  unsigned a[kSteps];      // A, row wm + lane % 16, columns 16 s + lane / 16 * 8
  unsigned b[S::kNJ / 2];  // B, row ldsm_b_row(lane), columns wn + 16 j + lane / 16 * 8
  __device__ LaneFrags(int wm, int wn, int lane) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
      a[s] = 2 * S::LA::offset(wm + ldsm_a_row(lane), 16 * s + ldsm_a_col(lane));
#pragma unroll
    for (int j = 0; j < S::kNJ / 2; ++j)
      b[j] = 2 * (S::kAElems + S::LB::offset(ldsm_b_row(lane), wn + 16 * j + ldsm_b_col(lane)));
  }
  /// The fragments of step s (K columns 16 s to 16 s + 15) of the stage at shared address `stage`.
  __device__ __forceinline__ void load(unsigned (&fa)[S::kMI][4], unsigned (&fb)[S::kNJ][2], unsigned stage,
                                       int s) const {
#pragma unroll
    for (int i = 0; i < S::kMI; ++i) ldmatrix_x4(fa[i], stage + a[s] + 2 * 16 * i * S::kBK);
#pragma unroll
    for (int j = 0; j < S::kNJ / 2; ++j) {
      unsigned r[4];
      ldmatrix_x4_trans(r, stage + b[j] + 2 * 16 * s * S::kBN);
      fb[2 * j][0] = r[0], fb[2 * j][1] = r[1], fb[2 * j + 1][0] = r[2], fb[2 * j + 1][1] = r[3];
    }
  }
};
//! [lane frags]

//! [multistage kernel]
template <class S, bool kRows16>
__global__ void __launch_bounds__(S::kThreads, 1) multistage_kernel(int M, int N, int K, float alpha,
                                                                    const bf16* __restrict__ A, int lda,
                                                                    const bf16* __restrict__ B, int ldb, float beta,
                                                                    const bf16* C, int ldc, bf16* D, int ldd) {
  constexpr int BM = S::kBM, BN = S::kBN, BK = S::kBK, kThreads = S::kThreads;
  using LA = typename S::LA;
  using LB = typename S::LB;
  extern __shared__ __align__(128) bf16 smem[];  // Stages x [A tile | B tile]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const TileCoord t = grouped_tile(int(blockIdx.x), S::kGroupRows, int(tiles(M, BM)), int(tiles(N, BN)));
  const int m0 = t.m * BM, n0 = t.n * BN;
  const int wm = warp / S::kWarpsN * S::kWM, wn = warp % S::kWarpsN * S::kWN;
  const int tiles_k = int(tiles(K, BK));

  // A block inside D takes the unpredicated copies for every full window: the thread's first
  // chunk of each tile, in global and shared memory, is fixed for the whole kernel. (M - m0, not
  // m0 + BM, which is 2^31 at the last tile of an M near it.)
  const bool interior = M - m0 >= BM && N - n0 >= BN;
  const int ar = chunk_row(threadIdx.x, 0, kThreads, BK), ac = chunk_col(threadIdx.x, 0, kThreads, BK);
  const int br = chunk_row(threadIdx.x, 0, kThreads, BN), bc = chunk_col(threadIdx.x, 0, kThreads, BN);
  const bf16* a_src = A + std::size_t(interior ? m0 + ar : 0) * lda + ac;
  const bf16* b_src = B + std::size_t(br) * ldb + n0 + bc;
  const int a_dst = LA::offset(ar, ac), b_dst = S::kAElems + LB::offset(br, bc);

  // Copies A's tile (part 0) or B's (part 1) of window kt into stage `stage`. fast: a compile-time
  // flag, true in the main loop of a block whose every window is interior.
  auto load_part = [&](auto fast, int part, int stage, int kt) {
    bf16* As = smem + stage * S::kStageElems;
    bf16* Bs = As + S::kAElems;
    if constexpr (kRows16) {
      if (decltype(fast)::value || (interior && kt * BK <= K - BK)) {
        if (part == 0)
          copy_tile_async_interior<BM, BK, kThreads, LA>(As + a_dst, a_src + kt * BK, lda);
        else
          copy_tile_async_interior<BK, BN, kThreads, LB>(As + b_dst, b_src + std::size_t(kt) * BK * ldb, ldb);
      } else if constexpr (!decltype(fast)::value) {
        if (part == 0)
          copy_tile_async<BM, BK, kThreads, LA>(As, A, lda, m0, kt * BK, M, K);
        else
          copy_tile_async<BK, BN, kThreads, LB>(Bs, B, ldb, kt * BK, n0, K, N);
      }
    } else if (part == 0) {
      load_tile<BM, BK, kThreads, LA, false>(As, A, lda, m0, kt * BK, M, K);
    } else {
      load_tile<BK, BN, kThreads, LB, false>(Bs, B, ldb, kt * BK, n0, K, N);
    }
  };

  // Prologue: windows 0 .. Stages - 2 in flight, one commit group each (empty past the end).
#pragma unroll
  for (int s = 0; s < S::kStages - 1; ++s) {
    if (s < tiles_k) {
      load_part(std::false_type{}, 0, s, s);
      load_part(std::false_type{}, 1, s, s);
    }
    cp_async_commit();
  }
  cp_async_wait<S::kStages - 2>();  // window 0 has landed, for this thread
  __syncthreads();                  // and for every thread

  // The fragments of step kk + 16 are loaded while the mma.sync of step kk run (two register
  // buffers), across the window boundary too, so the barrier does not drain the pipeline.
  constexpr int kSteps = BK / 16;
  float acc[S::kMI][S::kNJ][4] = {};
  unsigned a[2][S::kMI][4], b[2][S::kNJ][2];
  const LaneFrags<S> frags(wm, wn, lane);
  const unsigned stage0 = smem_u32(smem);
  unsigned stage = stage0;  // the stage of window kt
  frags.load(a[0], b[0], stage, 0);
  // Blocks inside D whose K is a whole number of windows run a copy of the loop without the
  // bounds-checked copies: with both copy paths in one loop, ptxas spilled registers of the 64 x 64
  // warp tiles inside it.
  auto main_loop = [&](auto fast) {
    for (int kt = 0; kt < tiles_k; ++kt) {
#pragma unroll
      for (int s = 0; s < kSteps; ++s) {
        // Refill the stage window kt - 1 used (every warp is past its last read of it): A's tile at
        // the first step, B's at the middle one, one commit group for both.
        if (s == 0 || s == kSteps / 2) {
          const int next = kt + S::kStages - 1;
          if (next < tiles_k) load_part(fast, s == 0 ? 0 : 1, next % S::kStages, next);
          if (s == kSteps / 2) cp_async_commit();
        }
        if (s + 1 < kSteps) {
          frags.load(a[(s + 1) % 2], b[(s + 1) % 2], stage, s + 1);
        } else if (kt + 1 < tiles_k) {  // next window: one barrier per window
          cp_async_wait<S::kStages - 2>();
          __syncthreads();
          stage = stage0 + (kt + 1) % S::kStages * S::kStageElems * unsigned(sizeof(bf16));
          frags.load(a[(s + 1) % 2], b[(s + 1) % 2], stage, 0);
        }
        warp_mma(acc, a[s % 2], b[s % 2]);
      }
    }
  };
  if (kRows16 && interior && K % BK == 0)
    main_loop(std::true_type{});
  else
    main_loop(std::false_type{});
  cp_async_wait<0>();  // nothing real is pending; leave no copy behind the block's exit
  store_acc(acc, m0 + wm, n0 + wn, lane, M, N, alpha, beta, C, ldc, D, ldd);
}
//! [multistage kernel]

/// The plan of multistage_kernel with TcShape S: 16-byte cp.async where the rows allow it.
template <class S>
Plan<TcKernel> multistage_plan_with(int M, int N, const bf16* A, int lda, const bf16* B, int ldb) {
  return grid_plan(rows16(A, lda, B, ldb) ? multistage_kernel<S, true> : multistage_kernel<S, false>,
                   tiles(M, S::kBM) * tiles(N, S::kBN), dim3(S::kThreads), unsigned(S::kSmemBytes));
}

/// D = alpha * A * B + beta * C with any TcShape S.
template <class S>
cudaError_t multistage_with(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                            float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, D, ldd, stream);
  return launch(multistage_plan_with<S>(M, N, A, lda, B, ldb), stream, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                D, ldd);
}

/// The shape of step 6: 128 x 256 x 64 block tile, 8 warps of 64 x 64, 3 stages (144 KB).
using MultistageDefault = TcShape<128, 256, 64, 64, 64, 3>;

inline Plan<TcKernel> multistage_plan(int M, int N, int, const bf16* A, int lda, const bf16* B, int ldb, const bf16*,
                                      int, const bf16*, int) {
  return multistage_plan_with<MultistageDefault>(M, N, A, lda, B, ldb);
}

/// D = alpha * A * B + beta * C: cp.async multistage pipeline (MultistageDefault).
inline cudaError_t multistage(int M, int N, int K, float alpha, const bf16* A, int lda, const bf16* B, int ldb,
                              float beta, const bf16* C, int ldc, bf16* D, int ldd, cudaStream_t stream = nullptr) {
  return multistage_with<MultistageDefault>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, D, ldd, stream);
}

}  // namespace smem::tc_gemm
