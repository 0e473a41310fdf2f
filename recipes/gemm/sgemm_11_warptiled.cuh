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
/// loads, outer product and epilogue live in gemm_common.cuh, because the pipelined steps 12
/// and 13 share them.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_common.cuh"

namespace smem::gemm {

//! [warptiled kernel]
template <class T, bool kVec>
__global__ void __launch_bounds__(T::kThreads, T::kMinBlocks)
    warptiled_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, int lda,
                     const float* __restrict__ B, int ldb, float beta, float* __restrict__ C, int ldc, bool cvec) {
  constexpr int BM = T::kBM, BN = T::kBN, BK = T::kBK, kThreads = T::kThreads;
  static_assert(T::kALoads * 4 * kThreads == BM * BK && T::kBLoads * 4 * kThreads == BK * BN,
                "every thread loads the same number of float4");
  __shared__ __align__(16) float As[2][T::kAFloats];
  __shared__ __align__(16) float Bs[2][T::kBFloats];

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const auto blk = grouped_block(tiles(M, BM), tiles(N, BN), int(blockIdx.x));
  const int m0 = blk.m * BM, n0 = blk.n * BN;

  float4 ra[T::kALoads], rb[T::kBLoads];  // the next K-tile, in flight through registers
  auto load_global = [&](int k0) {
#pragma unroll
    for (int r = 0; r < T::kALoads; ++r) {
      const int m = T::stage_a_m(tid, r), k = k0 + T::stage_a_k(tid, r);
      ra[r] = m0 + m < M ? load4_row(A + std::size_t(m0 + m) * lda, k, K, kVec) : make_float4(0, 0, 0, 0);
    }
#pragma unroll
    for (int r = 0; r < T::kBLoads; ++r) {
      const int k = k0 + T::stage_b_k(tid, r), n = n0 + T::stage_b_n(tid, r);
      rb[r] = k < K ? load4_row(B + std::size_t(k) * ldb, n, N, kVec) : make_float4(0, 0, 0, 0);
    }
  };
  auto store_shared = [&](int buf) {
#pragma unroll
    for (int r = 0; r < T::kALoads; ++r) {
      const int m = T::stage_a_m(tid, r), k = T::stage_a_k(tid, r);
      As[buf][T::a_offset(k + 0, m)] = ra[r].x;  // transposed: four rows of As
      As[buf][T::a_offset(k + 1, m)] = ra[r].y;
      As[buf][T::a_offset(k + 2, m)] = ra[r].z;
      As[buf][T::a_offset(k + 3, m)] = ra[r].w;
    }
#pragma unroll
    for (int r = 0; r < T::kBLoads; ++r)
      *reinterpret_cast<float4*>(&Bs[buf][T::b_offset(T::stage_b_k(tid, r), T::stage_b_n(tid, r))]) = rb[r];
  };

  float acc[T::kTM][T::kTN] = {};
  load_global(0);
  store_shared(0);
  __syncthreads();
  const int tiles_k = tiles(K, BK);
  for (int kt = 0; kt < tiles_k; ++kt) {
    const int buf = kt & 1;
    if (kt + 1 < tiles_k) load_global((kt + 1) * BK);  // in flight during the compute below
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[T::kTM], b[T::kTN];
      load_fragments<T>(As[buf], Bs[buf], k, warp, lane, a, b);
      outer_product<T>(acc, a, b);
    }
    // The other buffer was last read in iteration kt - 1, before the barrier that ended it.
    if (kt + 1 < tiles_k) store_shared(buf ^ 1);
    __syncthreads();
  }
  store_tile<T>(acc, m0, n0, warp, lane, M, N, alpha, beta, C, ldc, cvec);
}
//! [warptiled kernel]

/// The kernel of step 11: GemmKernel's arguments and whether C allows float4 stores (steps 12 and
/// 13 add a TailSplit: MultistageKernel).
using WarpGemmKernel = void (*)(int, int, int, float, const float*, int, const float*, int, float, float*, int, bool);

/// The tile shapes of step 11: 128 x 128 x 8 block tile, 8 warps of 64 x 32, 8 x 8 per thread.
using WarptiledShape = WarpTiling<128, 128, 8, 64, 32, 8, 8>;

/// The plan of warptiled_kernel with WarpTiling T: float4 global loads where the pointers and
/// leading dimensions of A and B allow them.
template <class T>
Plan<WarpGemmKernel> warptiled_plan_with(int M, int N, const float* A, int lda, const float* B, int ldb) {
  const bool vec = lda % 4 == 0 && ldb % 4 == 0 && aligned16(A) && aligned16(B);
  return grid_plan(vec ? warptiled_kernel<T, true> : warptiled_kernel<T, false>,
                   tile_blocks(M, N, T::kBM, T::kBN), dim3(T::kThreads));
}

/// C = alpha * A * B + beta * C with any WarpTiling T; any sizes and leading dimensions.
template <class T>
cudaError_t warptiled_with(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                           float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  if (Args a = check_args(M, N, K, alpha, A, lda, B, ldb, C, ldc); a != Args::launch)
    return finish_without_launch(a, M, N, beta, C, ldc, stream);
  const bool cvec = ldc % 4 == 0 && aligned16(C);
  return launch(warptiled_plan_with<T>(M, N, A, lda, B, ldb), stream, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc,
                cvec);
}

inline Plan<WarpGemmKernel> warptiled_plan(int M, int N, int, const float* A, int lda, const float* B, int ldb,
                                           const float*, int) {
  return warptiled_plan_with<WarptiledShape>(M, N, A, lda, B, ldb);
}

/// C = alpha * A * B + beta * C, row-major, warptiled (WarptiledShape).
inline cudaError_t warptiled(int M, int N, int K, float alpha, const float* A, int lda, const float* B, int ldb,
                             float beta, float* C, int ldc, cudaStream_t stream = nullptr) {
  return warptiled_with<WarptiledShape>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, stream);
}

}  // namespace smem::gemm
