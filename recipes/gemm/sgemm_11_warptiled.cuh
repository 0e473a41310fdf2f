/// \file sgemm_11_warptiled.cuh
/// \brief Step 11, warptiling: block tile, warp tile and thread tile as template parameters,
/// each warp owning one sub-tile of C; global loads staged through registers into a double
/// buffer.
///
/// Step 10 places 256 threads on a 16 x 16 grid over the block tile, so which threads form a
/// warp is an accident of the thread numbering. Here the block tile BM x BN is cut into warp
/// tiles WM x WN, and inside a warp tile the 32 lanes form a kLanesM x kLanesN grid (4 x 8 or
/// 8 x 4), each lane owning TM x TN outputs as groups of 4 rows and 4 columns spread kLanesM * 4
/// (kLanesN * 4) apart. Every shared-memory read of a warp then touches kLanesM (kLanesN)
/// consecutive float4, at most 128 bytes: conflict-free by construction for any of the shapes,
/// and each warp reads only the A rows and B columns of its own sub-tile, which is the locality
/// the register tile needs once the tile grows past 8 x 8 per thread. The lanes are placed in
/// that grid so that lanes which read the same float4 pair up (lane_m(), lane_n()): a fragment
/// read then costs 2 wavefronts instead of 4.
///
/// The K loop keeps two shared-memory buffers: while a warp computes on one, the next K-tile's
/// global loads are already in flight into registers and are stored into the other buffer
/// afterwards, so one barrier per K-tile suffices. The geometry (WarpTiling) and the fragment
/// loads, outer product and epilogue are shared with the pipelined step 12.
///
/// Measured on the H200 (results/h200/gemm.json): 0.87 x cuBLAS fp32 at 4096^3 with
/// WarptiledShape, against 0.82 for step 9 (0.83 with row-major lanes, at an earlier commit).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_args.cuh"
#include "sgemm_10_conflict_free.cuh"

namespace smem::gemm {

//! [warp tiling]
/// Block tile BM x BN x BK, warp tile WM x WN, thread tile TM x TN.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN>
struct WarpTiling {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kWM = WM, kWN = WN, kTM = TM, kTN = TN;
  static constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
  static constexpr int kThreads = kWarpsM * kWarpsN * 32;
  static constexpr int kLanesM = WM / TM, kLanesN = WN / TN;  ///< lane grid inside a warp
  static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile must divide the block tile");
  static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are made of 4 x 4 float4 groups");
  static_assert(WM % TM == 0 && WN % TN == 0 && kLanesM * kLanesN == 32, "32 lanes per warp");
  static_assert((kLanesM == 4 || kLanesM == 8) && (kLanesN == 4 || kLanesN == 8),
                "a warp's fragment read must stay within 128 bytes");
  static_assert(BK % 8 == 0, "BK: a multiple of 8");
  /// Minimum resident blocks per SM for __launch_bounds__: the register budget that fits the
  /// accumulators (255 registers from 128 accumulators up, 128 below).
  static constexpr int kMinBlocks = 65536 / (kThreads * (TM * TN >= 128 ? 255 : 128)) > 0
                                        ? 65536 / (kThreads * (TM * TN >= 128 ? 255 : 128))
                                        : 1;

  /// Transposed A tile As[k][m], rows padded by 4 floats (16-byte aligned, conflict-free store).
  static constexpr int kALd = BM + 4;
  static constexpr int kAFloats = BK * kALd, kBFloats = BK * BN;
  __host__ __device__ static constexpr int a_offset(int k, int m) { return k * kALd + m; }
  __host__ __device__ static constexpr int b_offset(int k, int n) { return k * BN + n; }
  /// A lane's place in the kLanesM x kLanesN lane grid. Bit 0 of the lane number moves along m
  /// and bit 1 along n; the other bits fill the rest of the grid. So lanes l and l ^ 2 read the
  /// same A float4 and lanes l and l ^ 1 the same B float4: both fragment reads pair, and cost 2
  /// wavefronts instead of 4 (row-major lanes pair on one of the two only).
  __host__ __device__ static constexpr int lane_m(int lane) {
    return kLanesM == 8 ? (lane & 1) | (lane >> 1 & 6) : (lane & 1) | (lane >> 3 & 2);
  }
  __host__ __device__ static constexpr int lane_n(int lane) {
    return kLanesM == 8 ? (lane >> 1 & 1) | (lane >> 3 & 2) : (lane >> 1 & 7);
  }
  /// First row (column) of the g-th group of 4 rows (columns) that lane `lane` of warp `warp`
  /// owns, relative to the block tile.
  __host__ __device__ static constexpr int thread_row(int warp, int lane, int g) {
    return (warp / kWarpsN) * WM + g * kLanesM * 4 + lane_m(lane) * 4;
  }
  __host__ __device__ static constexpr int thread_col(int warp, int lane, int g) {
    return (warp % kWarpsN) * WN + g * kLanesN * 4 + lane_n(lane) * 4;
  }
};
//! [warp tiling]

namespace detail {

//! [warp tile compute]
/// Loads the thread's A and B fragments of row k of a stage: TM / 4 and TN / 4 float4 reads.
template <class T>
__device__ __forceinline__ void load_fragments(const float* As, const float* Bs, int k, int warp,
                                               int lane, float (&a)[T::kTM], float (&b)[T::kTN]) {
#pragma unroll
  for (int g = 0; g < T::kTM / 4; ++g) {
    const float4 v = *reinterpret_cast<const float4*>(As + T::a_offset(k, T::thread_row(warp, lane, g)));
    a[4 * g + 0] = v.x, a[4 * g + 1] = v.y, a[4 * g + 2] = v.z, a[4 * g + 3] = v.w;
  }
#pragma unroll
  for (int g = 0; g < T::kTN / 4; ++g) {
    const float4 v = *reinterpret_cast<const float4*>(Bs + T::b_offset(k, T::thread_col(warp, lane, g)));
    b[4 * g + 0] = v.x, b[4 * g + 1] = v.y, b[4 * g + 2] = v.z, b[4 * g + 3] = v.w;
  }
}

/// acc += a b^T: TM x TN FFMAs.
template <class T>
__device__ __forceinline__ void outer_product(float (&acc)[T::kTM][T::kTN], const float (&a)[T::kTM],
                                              const float (&b)[T::kTN]) {
#pragma unroll
  for (int i = 0; i < T::kTM; ++i)
#pragma unroll
    for (int j = 0; j < T::kTN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}

/// C = alpha * acc + beta * C for the thread's TM x TN outputs of the block tile at (m0, n0).
template <class T>
__device__ __forceinline__ void store_tile(const float (&acc)[T::kTM][T::kTN], int m0, int n0,
                                           int warp, int lane, int M, int N, float alpha,
                                           float beta, float* C, int ldc, bool cvec) {
#pragma unroll
  for (int i = 0; i < T::kTM; ++i) {
    const int m = m0 + T::thread_row(warp, lane, i / 4) + i % 4;
    if (m >= M) continue;
    float* c = C + std::size_t(m) * ldc;
#pragma unroll
    for (int g = 0; g < T::kTN / 4; ++g)
      store4_row(c, n0 + T::thread_col(warp, lane, g), N,
                 make_float4(acc[i][4 * g], acc[i][4 * g + 1], acc[i][4 * g + 2], acc[i][4 * g + 3]),
                 alpha, beta, cvec);
  }
}
//! [warp tile compute]

/// Block tile of a linear block index, in groups of `kGroup` block rows so that consecutive
/// blocks share rows of A and columns of B in L2.
struct BlockCoord {
  int m, n;
};
__device__ __forceinline__ BlockCoord grouped_block(int tiles_m, int tiles_n) {
  constexpr int kGroup = 8;
  const int pid = int(blockIdx.x);
  const int per_group = kGroup * tiles_n;
  const int first_m = pid / per_group * kGroup;
  const int rows = tiles_m - first_m < kGroup ? tiles_m - first_m : kGroup;
  const int r = pid % per_group;
  return {first_m + r % rows, r / rows};
}

}  // namespace detail

//! [warptiled kernel]
template <class T, bool kVec>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    sgemm_warptiled_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                           const float* __restrict__ B, int ldb, float beta, float* __restrict__ C,
                           int ldc, bool cvec) {
  constexpr int BM = T::kBM, BN = T::kBN, BK = T::kBK, kThreads = T::kThreads;
  constexpr int kALoads = BM * BK / 4 / kThreads, kBLoads = BK * BN / 4 / kThreads;
  static_assert(kALoads * 4 * kThreads == BM * BK && kBLoads * 4 * kThreads == BK * BN,
                "every thread loads the same number of float4");
  __shared__ __align__(16) float As[2][T::kAFloats];
  __shared__ __align__(16) float Bs[2][T::kBFloats];

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const auto blk = detail::grouped_block(int((M + BM - 1) / BM), int((N + BN - 1) / BN));
  const int m0 = blk.m * BM, n0 = blk.n * BN;

  float ra[kALoads][4], rb[kBLoads][4];  // the next K-tile, in flight through registers
  auto load_global = [&](int k0) {
#pragma unroll
    for (int r = 0; r < kALoads; ++r) {
      const int idx = tid + r * kThreads, m = idx / (BK / 4), k = k0 + idx % (BK / 4) * 4;
      const float4 v = m0 + m < M ? detail::load4_row(A + std::size_t(m0 + m) * lda, k, K, kVec)
                                  : make_float4(0, 0, 0, 0);
      ra[r][0] = v.x, ra[r][1] = v.y, ra[r][2] = v.z, ra[r][3] = v.w;
    }
#pragma unroll
    for (int r = 0; r < kBLoads; ++r) {
      const int idx = tid + r * kThreads, k = k0 + idx / (BN / 4), n = n0 + idx % (BN / 4) * 4;
      const float4 v = k < K ? detail::load4_row(B + std::size_t(k) * ldb, n, N, kVec) : make_float4(0, 0, 0, 0);
      rb[r][0] = v.x, rb[r][1] = v.y, rb[r][2] = v.z, rb[r][3] = v.w;
    }
  };
  auto store_shared = [&](int buf) {
#pragma unroll
    for (int r = 0; r < kALoads; ++r) {
      const int idx = tid + r * kThreads, m = idx / (BK / 4), k = idx % (BK / 4) * 4;
#pragma unroll
      for (int c = 0; c < 4; ++c) As[buf][T::a_offset(k + c, m)] = ra[r][c];
    }
#pragma unroll
    for (int r = 0; r < kBLoads; ++r) {
      const int idx = tid + r * kThreads, k = idx / (BN / 4), n = idx % (BN / 4) * 4;
      *reinterpret_cast<float4*>(&Bs[buf][T::b_offset(k, n)]) = make_float4(rb[r][0], rb[r][1], rb[r][2], rb[r][3]);
    }
  };

  float acc[T::kTM][T::kTN] = {};
  load_global(0);
  store_shared(0);
  __syncthreads();
  const int tiles_k = (K + BK - 1) / BK;
  for (int kt = 0; kt < tiles_k; ++kt) {
    const int buf = kt & 1;
    if (kt + 1 < tiles_k) load_global((kt + 1) * BK);  // in flight during the compute below
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[T::kTM], b[T::kTN];
      detail::load_fragments<T>(As[buf], Bs[buf], k, warp, lane, a, b);
      detail::outer_product<T>(acc, a, b);
    }
    // The other buffer was last read in iteration kt - 1, before the barrier that ended it.
    if (kt + 1 < tiles_k) store_shared(buf ^ 1);
    __syncthreads();
  }
  detail::store_tile<T>(acc, m0, n0, warp, lane, M, N, alpha, beta, C, ldc, cvec);
}
//! [warptiled kernel]

/// The tile shapes of step 11: 128 x 128 x 8 block tile, 8 warps of 64 x 32, 8 x 8 per thread.
using WarptiledShape = WarpTiling<128, 128, 8, 64, 32, 8, 8>;

/// C = alpha * A * B + beta * C with any WarpTiling T; any sizes and leading dimensions (float4
/// global accesses where pointers and leading dimensions allow them).
template <class T>
cudaError_t sgemm_warptiled_with(int M, int N, int K, float alpha, const float* A, int lda,
                                 const float* B, int ldb, float beta, float* C, int ldc,
                                 cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  const long long blocks = (M + T::kBM - 1LL) / T::kBM * ((N + T::kBN - 1LL) / T::kBN);
  if (blocks > 0x7fffffffLL) return cudaErrorInvalidValue;
  const bool vec = lda % 4 == 0 && ldb % 4 == 0 && detail::aligned16(A) && detail::aligned16(B);
  const bool cvec = ldc % 4 == 0 && detail::aligned16(C);
  if (vec)
    sgemm_warptiled_kernel<T, true><<<unsigned(blocks), T::kThreads, 0, stream>>>(
        M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, cvec);
  else
    sgemm_warptiled_kernel<T, false><<<unsigned(blocks), T::kThreads, 0, stream>>>(
        M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, cvec);
  return cudaGetLastError();
}

/// C = alpha * A * B + beta * C, row-major, warptiled (WarptiledShape).
inline cudaError_t sgemm_warptiled(int M, int N, int K, float alpha, const float* A, int lda,
                                   const float* B, int ldb, float beta, float* C, int ldc,
                                   cudaStream_t stream = nullptr) {
  return sgemm_warptiled_with<WarptiledShape>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

inline cudaError_t sgemm_warptiled_attributes(int /*K*/, KernelAttributes* out) {
  return kernel_attributes(sgemm_warptiled_kernel<WarptiledShape, true>, WarptiledShape::kThreads, 0, out);
}

}  // namespace smem::gemm
