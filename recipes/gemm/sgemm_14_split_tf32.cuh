/// \file sgemm_14_split_tf32.cuh
/// \brief Step 14, split TF32 on the tensor cores: each fp32 operand is split into two TF32
/// values, x = hi + lo, and three `mma.sync` TF32 products per fragment pair,
/// a_hi b_hi + a_hi b_lo + a_lo b_hi, accumulated in fp32, give an fp32-level result.
///
/// Steps 1 to 13 multiply on the FMA pipe. A tensor core multiplies TF32 values (11 significant
/// bits of fp32's 24) exactly, at a rate several times the FMA pipe's, and adds in fp32: three of
/// its products per term can still beat one FMA. hi and lo, as the tensor core reads them, hold x
/// to within max(2^-22 |x|, 2^-146), with errors of either sign (tf32_split). Of the four products
/// of (a_hi + a_lo)(b_hi + b_lo), a_lo b_lo is below 2^-22 |a b| and is dropped.
///
/// What changes from step 12: the same `cp.async` ring of kStages K-tiles of fp32, read by
/// `mma.sync` fragments instead of register tiles. A warp loads each fragment of a k-step as fp32,
/// A's by `ldmatrix` (one x4 for a whole 16 x 8 fragment) and B's by 4-byte loads, and splits it
/// in registers, once per element it reads: an element of A is split by the four warps that read
/// it, one of B by two. Splitting a K-tile once per block instead, in a pass that writes hi and lo
/// tiles to shared memory, costs that memory's bandwidth (a read and two writes per element, then
/// the fragments' reads of both tiles) and a second barrier per K-tile, while the split in
/// registers costs instructions the warps issue between their products: it is the faster of the
/// two on the H200 (gemm_split.md).
///
/// The products go into three sums. The tensor core adds products to its accumulator rounding
/// toward zero (Ootomo and Yokota measured it on the A100), and that error has one sign: over a
/// long K it grows with K rather than with its square root, and dominates. So a_hi b_hi goes into
/// big, which starts from 0 on each span of 128 of K and is added to sum in fp32 (round to
/// nearest) at the span's end; the small products a_hi b_lo + a_lo b_hi, 2^-11 of C's size, go
/// into small over all of K, where the truncations they bring are 2^-11 of C's. C takes sum +
/// small at the end (split_sum), or an fp32 dot product where that is not finite (fp32_dot). sum
/// lives in shared memory, each thread's own slots, read and written once a span: three register
/// sums of a 64 x 32 warp tile (192 floats a thread) would leave too few registers for the
/// fragments and the splits between the products.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_common.cuh"

// The kit only where it builds: its own #error would be a second message.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "sgemm_14_split_tf32.cuh needs TF32 mma.sync and cp.async: compile for sm_80 or newer (e.g. -arch=sm_80)"
#else
#include "gemm_sm80.cuh"
#endif

namespace smem::gemm {

//! [split]
/// lo is kept times 2^10 (small then holds 2^10 times its sum): (x - hi) 2^10 keeps its bits in
/// TF32 down to |x| = 2^-124, where x - hi alone would lose them (a subnormal TF32) below 2^-114;
/// and it is at most |x|, so it cannot overflow.
inline constexpr float kLoScale = 1024.0f, kLoUnscale = 1.0f / 1024.0f;

/// x rounded to TF32, to nearest: `cvt.rn` (ties to even) from sm_90, cheaper than `cvt.rna`
/// (ties away), the only rounding to TF32 that PTX has before it.
__device__ __forceinline__ unsigned tf32_round(float x) {
  unsigned r;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
#else
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
#endif
  return r;
}

/// x = hi + lo 2^-10 as the tensor core reads them, in three instructions (a rounding, a
/// subtraction, a product). hi is x rounded to TF32; lo is (x - hi) 2^10 as an fp32 bit pattern,
/// not rounded: the tensor core reads an fp32 operand's TF32 truncation (its 13 low bits are
/// ignored), and lo's sign is as often x's as not, so the bits it loses pull no way on average.
/// Together they hold x to within max(2^-22 |x|, 2^-146). An |x| from the bits 0x7f7ff000
/// on (inf too) rounds to an infinite hi, and a NaN stays NaN: C's element is then not finite, and
/// the kernel computes it again in fp32 (fp32_dot).
__device__ __forceinline__ void tf32_split(float x, unsigned& hi, unsigned& lo) {
  hi = tf32_round(x);
  lo = __float_as_uint((x - __uint_as_float(hi)) * kLoScale);
}

/// The element of C before alpha and beta: sum + small 2^-10.
__device__ __forceinline__ float split_sum(float sum, float small) { return fmaf(small, kLoUnscale, sum); }

/// An element of C again where split_sum is not finite (an operand that is infinite, NaN or
/// rounds to an infinite hi; or a sum past FLT_MAX): A's row (a_row) times B's column (b_col,
/// rows ldb apart) in K fp32 FMAs, what an fp32 GEMM gives there. store_split calls it from one
/// place, after its loop over the elements, so that a kernel holds one copy of this loop, not one
/// per accumulator.
__device__ __forceinline__ float fp32_dot(int K, const float* a_row, const float* b_col, int ldb) {
  float dot = 0.0f;
  for (int k = 0; k < K; ++k) dot = fmaf(a_row[k], b_col[std::size_t(k) * ldb], dot);
  return dot;
}

/// A split kernel's epilogue over a thread's Count elements of C: element q at row m, column n
/// (at(q, m, n)), its split_sum c_of(q). C takes the finite ones at once; the others are marked,
/// a bit each, and computed by fp32_dot after the loop.
template <int Count, class CValue, class At>
__device__ __forceinline__ void store_split(CValue c_of, At at, int M, int N, int K, float alpha, const float* A,
                                            int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  static_assert(Count <= 64, "a bit per element");
  unsigned long long redo = 0;
#pragma unroll
  for (int q = 0; q < Count; ++q) {
    int m, n;
    at(q, m, n);
    const float c = c_of(q);
    if (!isfinite(c))
      redo |= 1ull << q;
    else if (m < M && n < N)
      update_c(C + std::size_t(m) * ldc + n, c, alpha, beta);
  }
  for (; redo != 0; redo &= redo - 1) {
    int m, n;
    at(__ffsll(static_cast<long long>(redo)) - 1, m, n);
    if (m < M && n < N)
      update_c(C + std::size_t(m) * ldc + n, fp32_dot(K, A + std::size_t(m) * lda, B + n, ldb), alpha, beta);
  }
}

/// d = a b + c on a 16 x 8 x 8 tile: TF32 A (row) and B (col) fragments, fp32 accumulators. Not
/// volatile: a function of its operands alone, which the compiler may schedule among the splits.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1,
                                         const float (&c)[4]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

/// Four 8 x 4-word matrices from shared memory: lane l gives the row address of row l % 8 of
/// matrix l / 8 (16 bytes, 16-byte aligned) and gets word l % 4 of row l / 4 of each matrix.
/// `ldmatrix` counts in 16-bit elements; read as 32-bit words, the same load serves TF32.
__device__ __forceinline__ void ldsm_x4(unsigned (&r)[4], const float* row) {
  const auto a = static_cast<unsigned>(__cvta_generic_to_shared(row));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}
//! [split]

//! [split shape]
/// Block tile BM x BN x BK, warp tile WM x WN (of 16 x 8 mma tiles), Stages K-tiles in the ring.
template <int BM, int BN, int BK, int WM, int WN, int Stages>
struct SplitShape {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kWM = WM, kWN = WN, kStages = Stages;
  static constexpr int kWarpsN = BN / WN, kThreads = BM / WM * kWarpsN * 32;
  static constexpr int kMi = WM / 16, kNj = WN / 8;  ///< mma tiles of a warp
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0,
                "warp tiles of 16 x 8 mma tiles, an even number across (one ldmatrix reads two B fragments)");
  static_assert((BM & (BM - 1)) == 0 && (BN & (BN - 1)) == 0 && (BK & (BK - 1)) == 0 && BK >= 8,
                "powers of two: a tile's corner plus its size fits an int; k-steps of 8");
  static_assert(Stages >= 2, "at least two stages");

  /// The ring, fp32 as in memory: As[m][k] at m (BK + 4) + k, Bs[k][n] at k (BN + 8) + n. Rows
  /// BK + 4 words apart put the 8 rows of an `ldmatrix` matrix in 8 bank quads; rows BN + 8 apart
  /// put a B fragment's 4 rows k of 8 columns n in 32 different banks. After the ring, sum: a
  /// thread's kMi kNj groups of 4 floats, group q of thread t at float4 q kThreads + t (a warp's
  /// 16-byte accesses cover 512 consecutive bytes). big spans kSpan K-tiles, 128 of K.
  static constexpr int kALd = BK + 4, kBLd = BN + 8;
  static constexpr int kAFloats = BM * kALd, kStageFloats = kAFloats + BK * kBLd;
  static constexpr int kSumFloats = BM * BN, kSpan = BK >= 128 ? 1 : 128 / BK;
  static constexpr int kSmemBytes = (Stages * kStageFloats + kSumFloats) * int(sizeof(float));
  __host__ __device__ static constexpr int a_offset(int m, int k) { return m * kALd + k; }
  __host__ __device__ static constexpr int b_offset(int k, int n) { return k * kBLd + n; }

  /// Copies: thread t moves 16-byte piece q = t + i kThreads of a tile. B's pieces in row order.
  /// A's in row order too where a row holds 8 pieces or more (BK >= 32: 8 lanes cover 128 bytes of
  /// one row, 32 banks); shorter rows in groups of 8 rows, 8 lanes down a column of pieces (rows
  /// BK + 4 words apart: 8 bank quads).
  static constexpr int kACopies = BM * BK / 4 / kThreads, kBCopies = BK * BN / 4 / kThreads;
  static_assert(kACopies * kThreads * 4 == BM * BK && kBCopies * kThreads * 4 == BK * BN, "whole copies");
  static_assert(BM % 8 == 0, "A copied in groups of 8 rows");
  __host__ __device__ static constexpr int a_copy_m(int t, int i) {
    const int q = t + i * kThreads;
    return BK >= 32 ? q / (BK / 4) : q % 8 + q / (2 * BK) * 8;
  }
  __host__ __device__ static constexpr int a_copy_k(int t, int i) {
    const int q = t + i * kThreads;
    return (BK >= 32 ? q : q / 8) % (BK / 4) * 4;
  }
  __host__ __device__ static constexpr int b_copy_k(int t, int i) { return (t + i * kThreads) / (BN / 4); }
  __host__ __device__ static constexpr int b_copy_n(int t, int i) { return (t + i * kThreads) % (BN / 4) * 4; }

  /// The warp's corner in the block tile, the rows lane l gives `ldmatrix` for A, and where lane
  /// l's B elements are (the PTX ISA's m16n8k8 TF32 fragments: A's a[r] at row l / 4 + 8 (r % 2),
  /// column l % 4 + 4 (r / 2); B's b[r] at row (k) l % 4 + 4 r, column (n) l / 4; C's c[r] at row
  /// l / 4 + 8 (r / 2), column 2 (l % 4) + r % 2). A: matrix l / 8 of the x4 is a[l / 8], rows
  /// 8 ((l / 8) % 2) + l % 8 of the mma tile at word 4 (l / 16) of the k-step.
  __host__ __device__ static constexpr int warp_m(int w) { return w / kWarpsN * WM; }
  __host__ __device__ static constexpr int warp_n(int w) { return w % kWarpsN * WN; }
  __host__ __device__ static constexpr int ldsm_a_m(int l) { return 8 * (l / 8 % 2) + l % 8; }
  __host__ __device__ static constexpr int ldsm_a_k(int l) { return 4 * (l / 16); }
  __host__ __device__ static constexpr int frag_b_k(int l, int r) { return l % 4 + 4 * r; }
  __host__ __device__ static constexpr int frag_b_n(int l) { return l / 4; }
  __host__ __device__ static constexpr int frag_c_m(int l, int r) { return l / 4 + 8 * (r / 2); }
  __host__ __device__ static constexpr int frag_c_n(int l, int r) { return 2 * (l % 4) + r % 2; }
};
//! [split shape]

//! [split kernel]
/// kVec: A, B, lda and ldb allow 16-byte copies.
template <class T, bool kVec>
__global__ void __launch_bounds__(T::kThreads, 1)
    split_tf32_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                      const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc) {
  constexpr int BM = T::kBM, BN = T::kBN, BK = T::kBK, S = T::kStages;
  extern __shared__ __align__(16) float smem[];  // S stages of [As | Bs]

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const TileCoord blk = grouped_block(tiles(M, BM), tiles(N, BN), int(blockIdx.x));
  const int m0 = blk.m * BM, n0 = blk.n * BN, tiles_k = tiles(K, BK);
  const bool interior = m0 <= M - BM && n0 <= N - BN;  // not m0 + BM <= M: 2^31 at M near INT_MAX

  // One copy of 16 bytes, or of 4 at a time without kVec; what lies past `limit` columns or
  // past the last row (`row_ok`) is zero-filled (source size 0, source address `base`).
  auto copy4 = [&](float* dst, const float* src, bool whole, bool row_ok, int col, int limit, const float* base) {
    if constexpr (kVec) {
      const int bytes = whole ? 16 : row_ok && col < limit ? (limit - col >= 4 ? 16 : 4 * (limit - col)) : 0;
      cp_async_16(dst, bytes ? src : base, bytes);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const bool ok = whole || (row_ok && col + j < limit);
        cp_async_4(dst + j, ok ? src + j : base, ok ? 4 : 0);
      }
    }
  };
  auto load_tile = [&](int stage, int kt) {
    float* As = smem + stage * T::kStageFloats;
    float* Bs = As + T::kAFloats;
    const int k0 = kt * BK;
    const bool whole = interior && k0 <= K - BK;
#pragma unroll
    for (int i = 0; i < T::kACopies; ++i) {
      const int m = T::a_copy_m(tid, i), k = T::a_copy_k(tid, i), gm = m0 + m;
      const float* src = A + std::size_t(gm < M ? gm : 0) * lda + k0 + k;
      copy4(As + T::a_offset(m, k), src, whole, gm < M, k0 + k, K, A);
    }
#pragma unroll
    for (int i = 0; i < T::kBCopies; ++i) {
      const int k = T::b_copy_k(tid, i), n = T::b_copy_n(tid, i), gk = k0 + k;
      const float* src = B + std::size_t(gk < K ? gk : 0) * ldb + n0 + n;
      copy4(Bs + T::b_offset(k, n), src, whole, gk < K, n0 + n, N, B);
    }
  };

  // Prologue: K-tiles 0 .. S - 2 in flight, one commit group each (empty past the end).
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    if (s < tiles_k) load_tile(s, s);
    cp_async_commit();
  }

  // sum: the a_hi b_hi products, added span by span in fp32, in shared memory (big holds one
  // span's); small: 2^10 (a_hi b_lo + a_lo b_hi) over all of K.
  float4* sum = reinterpret_cast<float4*>(smem + S * T::kStageFloats) + tid;  // group q at sum[q kThreads]
#pragma unroll
  for (int q = 0; q < T::kMi * T::kNj; ++q) sum[q * T::kThreads] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float big[T::kMi][T::kNj][4], small[T::kMi][T::kNj][4] = {};
  const int wm = T::warp_m(warp), wn = T::warp_n(warp);
  // One k-step of 8 from a stage of the ring: the fragments' elements read as fp32 and split in
  // registers (B's first: all of them are used by each of A's fragments); the first k-step of a
  // span starts big from 0.
  auto k_step = [&](const float* As, const float* Bs, int kk, bool first) {
    unsigned bh[T::kNj][2], bl[T::kNj][2];
#pragma unroll
    for (int j = 0; j < T::kNj; ++j)
#pragma unroll
      for (int r = 0; r < 2; ++r)
        tf32_split(Bs[T::b_offset(kk + T::frag_b_k(lane, r), wn + 8 * j + T::frag_b_n(lane))], bh[j][r], bl[j][r]);
    constexpr float zero[4] = {};
#pragma unroll
    for (int i = 0; i < T::kMi; ++i) {
      unsigned x[4], ah[4], al[4];
      ldsm_x4(x, As + T::a_offset(wm + 16 * i + T::ldsm_a_m(lane), kk + T::ldsm_a_k(lane)));
#pragma unroll
      for (int r = 0; r < 4; ++r) tf32_split(__uint_as_float(x[r]), ah[r], al[r]);
#pragma unroll
      for (int j = 0; j < T::kNj; ++j) {
        mma_tf32(small[i][j], ah, bl[j][0], bl[j][1], small[i][j]);
        mma_tf32(small[i][j], al, bh[j][0], bh[j][1], small[i][j]);
        if (first)
          mma_tf32(big[i][j], ah, bh[j][0], bh[j][1], zero);
        else
          mma_tf32(big[i][j], ah, bh[j][0], bh[j][1], big[i][j]);
      }
    }
  };

  int read = 0, write = S - 1;
  // K-tile kt: it has landed for every thread, and every warp is done with the ring's stage of
  // kt - 1, which the copies of K-tile kt + S - 1 refill; then its k-steps.
  auto k_tile = [&](int kt, bool first) {
    cp_async_wait<S - 2>();
    __syncthreads();
    if (kt + S - 1 < tiles_k) load_tile(write, kt + S - 1);
    cp_async_commit();
    write = write + 1 == S ? 0 : write + 1;
    const float *As = smem + read * T::kStageFloats, *Bs = As + T::kAFloats;
    read = read + 1 == S ? 0 : read + 1;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) k_step(As, Bs, kk, first && kk == 0);
  };
  auto add_big = [&] {
#pragma unroll
    for (int q = 0; q < T::kMi * T::kNj; ++q) {
      float4 v = sum[q * T::kThreads];
      const float* b = big[q / T::kNj][q % T::kNj];
      v.x += b[0], v.y += b[1], v.z += b[2], v.w += b[3];
      sum[q * T::kThreads] = v;
    }
  };
  // Whole spans, unrolled, so that `first` is a constant and no K-tile asks whether it is past
  // the end; then the K-tiles left, big from 0.
  const int spanned = tiles_k - tiles_k % T::kSpan;
  for (int kt0 = 0; kt0 < spanned; kt0 += T::kSpan) {
#pragma unroll
    for (int s = 0; s < T::kSpan; ++s) k_tile(kt0 + s, s == 0);
    add_big();
  }
  if (spanned < tiles_k) {
#pragma unroll
    for (int q = 0; q < T::kMi * T::kNj * 4; ++q) big[q / (4 * T::kNj)][q / 4 % T::kNj][q % 4] = 0.0f;
    for (int kt = spanned; kt < tiles_k; ++kt) k_tile(kt, false);
    add_big();
  }
  cp_async_wait<0>();  // nothing real is pending; leave no copy behind the block's exit

  // small takes C's elements before alpha and beta; store_split writes them.
#pragma unroll
  for (int g = 0; g < T::kMi * T::kNj; ++g) {
    const float4 v = sum[g * T::kThreads];  // read once: C's stores may alias it for the compiler
    float* c = small[g / T::kNj][g % T::kNj];
    c[0] = split_sum(v.x, c[0]), c[1] = split_sum(v.y, c[1]), c[2] = split_sum(v.z, c[2]), c[3] = split_sum(v.w, c[3]);
  }
  constexpr int kElems = T::kMi * T::kNj * 4;  // element q: fragment (i, j) = (q / 4 / kNj, q / 4 % kNj), slot q % 4
  store_split<kElems>([&](int q) { return small[q / 4 / T::kNj][q / 4 % T::kNj][q % 4]; },
                      [&](int q, int& m, int& n) {
                        m = m0 + wm + 16 * (q / 4 / T::kNj) + T::frag_c_m(lane, q % 4);
                        n = n0 + wn + 8 * (q / 4 % T::kNj) + T::frag_c_n(lane, q % 4);
                      },
                      M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
//! [split kernel]

/// The plan of split_tf32_kernel with SplitShape T: a block per BM x BN tile of C, 16-byte copies
/// where A, B and their leading dimensions allow them, T::kSmemBytes of dynamic shared memory.
template <class T>
Plan<GemmKernel> split_tf32_plan_with(int M, int N, const float* A, int lda, const float* B, int ldb) {
  const bool vec = aligned16(A) && aligned16(B) && lda % 4 == 0 && ldb % 4 == 0;
  return grid_plan<GemmKernel>(vec ? split_tf32_kernel<T, true> : split_tf32_kernel<T, false>,
                               tile_blocks(M, N, T::kBM, T::kBN), dim3(T::kThreads), unsigned(T::kSmemBytes));
}

/// C = alpha * A * B + beta * C with any SplitShape T; any sizes, leading dimensions and alignment.
template <class T>
cudaError_t split_tf32_with(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                            float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch(split_tf32_plan_with<T>(M, N, A, lda, B, ldb), stream, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/// The shape of step 14: 128 x 128 x 32 block tile, 8 warps of 64 x 32 (4 x 4 mma tiles; big and
/// small are 64 floats each per thread, sum 64 in shared memory), 4 stages: 4 x (128 x 36 + 32 x
/// 136) x 4 B of ring and 64 KB of sum, 204 KB. K-tiles of 32 take half the barriers per k that
/// K-tiles of 16 take; big spans four K-tiles.
using SplitTf32Default = SplitShape<128, 128, 32, 64, 32, 4>;
/// The same tiles in 2 stages, 134 KB, where a block cannot have SplitTf32Default's 204 KB (sm_80
/// gives a block up to 163 KB, sm_90 227 KB).
using SplitTf32Compact = SplitShape<128, 128, 32, 64, 32, 2>;

inline Plan<GemmKernel> split_tf32_plan(int M, int N, int, const float* A, int lda, const float* B, int ldb,
                                        const float*, int) {
  int dev = 0, optin = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
    cudaGetLastError();  // the query's own error; the launch reports what stays wrong
  if (optin >= SplitTf32Default::kSmemBytes) return split_tf32_plan_with<SplitTf32Default>(M, N, A, lda, B, ldb);
  return split_tf32_plan_with<SplitTf32Compact>(M, N, A, lda, B, ldb);
}

/// C = alpha * A * B + beta * C, row-major, split TF32 on mma.sync (SplitTf32Default, or
/// SplitTf32Compact where it does not fit).
inline cudaError_t split_tf32(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                              float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  return launch(split_tf32_plan(M, N, K, A, lda, B, ldb, C, ldc), stream, M, N, K, alpha, A, lda, B, ldb, beta, C,
                ldc);
}

}  // namespace smem::gemm
