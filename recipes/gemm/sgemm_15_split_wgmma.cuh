/// \file sgemm_15_split_wgmma.cuh
/// \brief Step 15, split TF32 on Hopper: step 14's split and three sums, with TMA loads of the fp32
/// tiles, the products on `wgmma`, a producer warpgroup and persistent blocks (sm_90a).
///
/// What changes from step 14, and why it is faster: `wgmma` takes Hopper's tensor cores past what
/// `mma.sync` reaches (tc_gemm's ladder) and reads one operand straight from shared memory, TMA
/// fills the stages without the consumers' instructions, and a persistent block keeps its ring
/// full across tiles.
///
/// `wgmma` takes 32-bit operands from shared memory only K-major (k contiguous in a row), and B is
/// N-major, which TMA cannot transpose. So the kernel computes C^T = B^T A^T: `wgmma`'s A operand,
/// which may come from registers in any layout, is B^T, and its B operand is A's tile as TMA wrote
/// it, A[m][k] rows of 32 floats, K-major. Each consumer thread loads its B^T fragment elements
/// from B's tile and splits them in registers (b_hi, b_lo); A's tile is split once per stage by the
/// consumers together, hi written back in place and lo into a tile of the same layout beside it.
/// Per k-step of 8, three `wgmma` m64n128k8: big += b_hi a_hi, small += b_lo a_hi + b_hi a_lo.
/// Only `wgmma`'s register operand can hold a low part; the other one lives in shared memory.
///
/// The sums are step 14's: big restarts on each K-tile and is added to sum in fp32, small runs over
/// all of K, and C takes split_sum(sum, small). The accumulators are C^T's: a thread holds rows n
/// and pairs of columns m, stored to C one float each.
///
/// A consumer never drains its products inside a tile: each k-step commits big's product and
/// small's two as two groups, and waits only until the groups of the k-step before it remain, so
/// B^T's fragments of the next k-step (two sets of registers, in turn) are loaded and split, and
/// big is added into sum at the end of a K-tile, while the tensor cores still multiply. The blocks
/// walk their tiles in the family's grouped order (grouped_block, groups of 8 tile-rows): the 132
/// tiles in flight on an H100 or H200 share 8 row panels of A and about 16 column panels of B,
/// where a walk along columns would, at 8192^3, take 64 row panels (all of A) for 2 columns.
///
/// Where TMA cannot read a matrix's rows (a base off 16 bytes, or a leading dimension not a
/// multiple of 4 floats), the launcher runs step 14.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "../sm90/sm90.cuh"
#include "sgemm_14_split_tf32.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "sgemm_15_split_wgmma.cuh needs TMA, wgmma and setmaxnreg: compile for sm_90a (e.g. -arch=sm_90a)"
#endif

namespace smem::gemm {

//! [split wgmma shape]
/// A tile of BM x 128 of C per block and K-tiles of 32 floats (one 128-byte swizzle span), in a
/// ring of `Stages` stages of A's tile, A's lo tile and B's tile; one producer warpgroup and two
/// consumers, each 64 columns n of C (rows of C^T) by all BM rows m (a `wgmma` m64nBMk8); the
/// blocks walk the tiles in groups of `Group` tile-rows.
template <int BM, int Stages, int Group>
struct SplitWgmmaShapeOf {
  static_assert(BM == 64 || BM == 128, "the wgmma widths of wgmma_tf32");
  static constexpr int kBM = BM, kBN = 128, kBK = 32, kStages = Stages, kGroup = Group, kConsumers = 2;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  /// setmaxnreg: 128 x 24 + 256 x 240 registers, what the launch gives 384 threads (168 each).
  static constexpr int kProducerRegs = 24, kConsumerRegs = 240;
  using LA = sm90::TmaTile<float, kBM, kBK>;  ///< A's tile A[m][k], and its lo tile
  using LB = sm90::TmaTile<float, kBK, kBN>;  ///< B's tile B[k][n]: four panels of 32 columns
  static constexpr int kAElems = LA::kElems, kStageElems = 2 * kAElems + LB::kElems;
  static constexpr unsigned kLoadBytes = (kAElems + LB::kElems) * sizeof(float);  ///< TMA's bytes per stage
  /// Step 16's kernel takes A split already: TMA loads its lo tile too, and no stage is split.
  static constexpr bool kPresplit = false;
  static constexpr unsigned kSmemBytes = LA::smem_bytes(kStages * kStageElems * sizeof(float));
  /// The split pass: consumer thread ct (0 to 255) splits 16-byte chunk c = ct + 256 i of A's tile
  /// (i < BM / 32), row c / 8, columns 4 (c % 8) to 4 (c % 8) + 3; a warp covers four whole rows.
  static constexpr int kSplitChunks = kAElems / 4 / (128 * kConsumers);
  __host__ __device__ static constexpr int split_row(int c) { return c / 8; }
  __host__ __device__ static constexpr int split_col(int c) { return 4 * (c % 8); }
  /// B^T's fragment rows of lane `lane` of warp `v` (0 to 7 over both consumers): columns n and
  /// n + 8 of the tile, n = 16 v + lane / 4, at k = lane % 4 and k + 4 of each k-step.
  __host__ __device__ static constexpr int frag_n(int v, int lane) { return 16 * v + lane / 4; }
};
/// Step 15's shape: 128 x 128 tiles, 4 stages (48 KB each), groups of 8 tile-rows.
using SplitWgmmaShape = SplitWgmmaShapeOf<128, 4, 8>;
//! [split wgmma shape]

/// d[N / 2] = a (64 x 8 TF32, registers: this thread's fragment) * B (8 x N TF32, shared memory at
/// descriptor b) + (accumulate ? d : 0), one warpgroup, N = 64 or 128. scale-d is a predicate, so
/// `accumulate` may vary at run time.
template <int N>
__device__ __forceinline__ void wgmma_tf32(float (&d)[N / 2], const unsigned (&a)[4], std::uint64_t b,
                                           bool accumulate) {
  if constexpr (N == 128)
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
        SMEM_ACC64
        "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
        : SMEM_ACC8(0), SMEM_ACC8(8), SMEM_ACC8(16), SMEM_ACC8(24), SMEM_ACC8(32), SMEM_ACC8(40), SMEM_ACC8(48),
          SMEM_ACC8(56)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(int(accumulate)));
  else
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "
        "%23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
        : SMEM_ACC8(0), SMEM_ACC8(8), SMEM_ACC8(16), SMEM_ACC8(24)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(int(accumulate)));
}

/// The kernel of step 15: (a_map, b_map, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc); A and B
/// themselves are read only where C's element is not finite (fp32_dot).
using SplitWgmmaKernel = void (*)(const CUtensorMap, const CUtensorMap, int, int, int, float, const float*, int,
                                  const float*, int, float, float*, int);

//! [split wgmma kernel]
template <class S>
__global__ void __launch_bounds__(S::kThreads, 1)
    split_wgmma_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map, int M,
                       int N, int K, float alpha, const float* A, int lda, const float* B, int ldb, float beta,
                       float* C, int ldc) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using LA = typename S::LA;
  using LB = typename S::LB;
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[S::kStages], empty[S::kStages];
  float* smem = reinterpret_cast<float*>(LA::align(smem_raw));
  const int tiles_m = tiles(M, S::kBM), tiles_n = tiles(N, S::kBN), tiles_k = tiles(K, S::kBK);
  const unsigned num_tiles = unsigned(tiles_m) * unsigned(tiles_n);  // below 2^31: the plan's limit

  if (threadIdx.x == 0) {
    for (int s = 0; s < S::kStages; ++s) sm90::mbar_init(&full[s], 1), sm90::mbar_init(&empty[s], S::kConsumers);
    sm90::fence_barrier_init();
  }
  __syncthreads();

  if (sm90::warpgroup() == 0) {  // producer: one thread loads every K-tile of every tile of this block
    sm90::regs_down<S::kProducerRegs>();
    if (threadIdx.x == 0) {
      int s = 0;
      unsigned phase = 0;  // of the stage's current use: a fresh barrier's previous phase counts as done
      for (unsigned tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        const TileCoord blk = grouped_block(tiles_m, tiles_n, int(tile), S::kGroup);  // the family's order
        for (int kt = 0; kt < tiles_k; ++kt) {
          sm90::mbar_wait(&empty[s], phase ^ 1);
          float* st = smem + s * S::kStageElems;
          sm90::mbar_arrive_expect_tx(&full[s], S::kLoadBytes);
          sm90::tma_load(st, &a_map, kt * S::kBK, blk.m * S::kBM, &full[s]);
          if constexpr (S::kPresplit)  // A's lo plane: rows M on of the same map
            sm90::tma_load(st + S::kAElems, &a_map, kt * S::kBK, M + blk.m * S::kBM, &full[s]);
          for (int p = 0; p < S::kBN / LB::kSpan; ++p)
            sm90::tma_load(st + 2 * S::kAElems + p * LB::kPanel, &b_map, blk.n * S::kBN + LB::kSpan * p,
                           kt * S::kBK, &full[s]);
          if (++s == S::kStages) s = 0, phase ^= 1;
        }
      }
    }
    return;
  }

  sm90::regs_up<S::kConsumerRegs>();
  const int ct = threadIdx.x - 128, t = ct % 128, w = sm90::warpgroup() - 1, q = t % 4;
  const int n_row = 64 * w + S::frag_n(t / 32, t % 32);  // this thread's B^T rows: n_row and n_row + 8
  int s = 0;
  unsigned phase = 0;
  unsigned frag[2][2][4];  // B^T's fragments of two k-steps in turn: [k-step % 2][hi, lo]
  for (unsigned tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
    // sum starts at -0, which x + -0 leaves x (a +0 would turn a big of -0 into +0); big is set
    // too, since the asm reads it ("+f"), though each K-tile's first product ignores it.
    float sum[S::kBM / 2], big[S::kBM / 2], small[S::kBM / 2];
#pragma unroll
    for (int i = 0; i < S::kBM / 2; ++i) sum[i] = -0.0f, big[i] = 0.0f;
    for (int kt = 0; kt < tiles_k; ++kt) {
      sm90::mbar_wait(&full[s], phase);
      float* As = smem + s * S::kStageElems;
      float* Alo = As + S::kAElems;
      const float* Bs = Alo + S::kAElems;
      if constexpr (!S::kPresplit) {
        // The split pass over A's tile: hi in place, lo into its tile; both consumers, then a barrier.
#pragma unroll
        for (int i = 0; i < S::kSplitChunks; ++i) {
          const int c = ct + 256 * i, at = LA::offset(S::split_row(c), S::split_col(c));
          const float4 x = *reinterpret_cast<const float4*>(As + at);
          uint4 hi, lo;
          tf32_split(x.x, hi.x, lo.x), tf32_split(x.y, hi.y, lo.y), tf32_split(x.z, hi.z, lo.z);
          tf32_split(x.w, hi.w, lo.w);
          *reinterpret_cast<uint4*>(As + at) = hi;
          *reinterpret_cast<uint4*>(Alo + at) = lo;
        }
        sm90::fence_proxy_async();  // the split tiles, written by threads, are read by wgmma
        sm90::named_barrier(1, 128 * S::kConsumers);
      }
      // Each k-step commits two groups, big's product and then small's two, and waits only for
      // the groups of the k-step before it: the loads and splits of one k-step, and the sum of a
      // K-tile, run while the tensor cores multiply.
#pragma unroll
      for (int k8 = 0; k8 < S::kBK / 8; ++k8) {
        unsigned(&bh)[4] = frag[k8 % 2][0];
        unsigned(&bl)[4] = frag[k8 % 2][1];
        sm90::wgmma_wait<2>();  // the groups of two k-steps back, the last to read bh and bl, are done
        if (k8 == 1 && kt > 0 && t == 0)  // so is the K-tile before, and its stage is free
          sm90::mbar_arrive(&empty[s == 0 ? S::kStages - 1 : s - 1]);
        const int k = 8 * k8 + q;
        const float b[4] = {Bs[LB::offset(k, n_row)], Bs[LB::offset(k, n_row + 8)], Bs[LB::offset(k + 4, n_row)],
                            Bs[LB::offset(k + 4, n_row + 8)]};
#pragma unroll
        for (int e = 0; e < 4; ++e) tf32_split(b[e], bh[e], bl[e]);
        sm90::wgmma_fence();
        // A k-step of 8 floats is a 32-byte move of the start address inside the swizzle span.
        const std::uint64_t a_hi = LA::template desc<false>(As + 8 * k8), a_lo = LA::template desc<false>(Alo + 8 * k8);
        wgmma_tf32<S::kBM>(big, bh, a_hi, k8 > 0);
        sm90::wgmma_commit();
        wgmma_tf32<S::kBM>(small, bl, a_hi, kt > 0 || k8 > 0);
        wgmma_tf32<S::kBM>(small, bh, a_lo, true);
        sm90::wgmma_commit();
      }
      sm90::wgmma_wait<1>();  // big's last group is done; small's runs on under the sum
      sm90::fence_acc(big);
#pragma unroll
      for (int i = 0; i < S::kBM / 2; ++i) sum[i] += big[i];
      if (++s == S::kStages) s = 0, phase ^= 1;
    }
    sm90::wgmma_wait<0>();
    sm90::fence_acc(small);
    if (t == 0) sm90::mbar_arrive(&empty[s == 0 ? S::kStages - 1 : s - 1]);
    // C^T's accumulators: row n (acc_row), columns m and m + 1 (acc_col); step 14's store_split.
    const TileCoord blk = grouped_block(tiles_m, tiles_n, int(tile), S::kGroup);
    const int m0 = blk.m * S::kBM, n0 = blk.n * S::kBN;
    store_split<S::kBM / 2>([&](int i) { return split_sum(sum[i], small[i]); },
                            [&](int i, int& m, int& n) {  // accumulator i = 4 j + 2 h + e
                              n = n0 + 64 * w + sm90::acc_row(t, i / 2 % 2), m = m0 + sm90::acc_col(t, i / 4) + i % 2;
                            },
                            M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  }
#else
  __trap();  // built for a target without wgmma (sm_90 without "a", or sm_100)
#endif
}
//! [split wgmma kernel]

/// The TMA kernel's plan: one block per SM, at most one per tile; null beyond kMaxGridBlocks tiles
/// (asked before the device is) or without a device.
template <class S = SplitWgmmaShape>
Plan<SplitWgmmaKernel> split_wgmma_tma_plan(int M, int N) {
  const long long tiles_mn = tile_blocks(M, N, S::kBM, S::kBN);
  int dev = 0, sms = 0;
  if (tiles_mn > kMaxGridBlocks || cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    sms = 0;
  return grid_plan<SplitWgmmaKernel>(sms > 0 ? split_wgmma_kernel<S> : nullptr, tiles_mn < sms ? tiles_mn : sms,
                                     dim3(S::kThreads), S::kSmemBytes);
}

/// The plan of step 15: the TMA kernel's where TMA can read A's and B's rows, step 14's elsewhere.
inline Plan<const void*> split_wgmma_plan(int M, int N, int K, const float* A, int lda, const float* B, int ldb,
                                          const float* C, int ldc) {
  if (!sm90::tma_rows(A, lda) || !sm90::tma_rows(B, ldb))
    return split_tf32_plan(M, N, K, A, lda, B, ldb, C, ldc).erased();
  return split_wgmma_tma_plan(M, N).erased();
}

/// C = alpha * A * B + beta * C, row-major, split TF32 on wgmma; step 14 where TMA cannot read a
/// matrix's rows.
inline cudaError_t split_wgmma(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                               float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  using S = SplitWgmmaShape;
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  if (!sm90::tma_rows(A, lda) || !sm90::tma_rows(B, ldb))
    return split_tf32(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
  const Plan<SplitWgmmaKernel> p = split_wgmma_tma_plan(M, N);
  CUtensorMap a_map, b_map;
  if (p.kernel == nullptr || !S::LA::make_map(&a_map, A, M, K, lda) || !S::LB::make_map(&b_map, B, K, N, ldb))
    return cudaErrorInvalidValue;
  return launch(p, stream, a_map, b_map, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace smem::gemm
